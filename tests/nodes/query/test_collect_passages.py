"""collect-passages (nodes/query/collect_passages.py). Ranking on stand-in stores: a reference to a
whole clause whose own text is only its heading lifts the first of its subclauses in the answer, not
every subclause; a reference to a clause with text of its own lifts that clause; one to a whole annex
lifts nothing. Quoting, on the
ingested sample: a short section is quoted whole with every page it lies on; extracts of a long one
are merged across short gaps only."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from helpers import query_runtime

from clausewise.nodes.query.collect_passages import (
    BRIDGE_CHARS,
    CITED_DECAY,
    GAP,
    SOFT_MATCH_WEIGHT,
    chunk_span,
    collect_passages,
    merge_spans,
    rank,
)
from clausewise.nodes.query.deps import Reader
from clausewise.stores.index import Hit
from clausewise.system import System
from clausewise.tools.query_tasks import OfflineQueryTasks, Terms

DOC = "XX_T-1"


def k(code: str) -> str:
    return f"{DOC}_{code}"


SECTIONS = {
    k("5.2"): "5.2 Load arrangements\n(1) The load arrangements should be determined using 5.3.",
    k("5.3"): "5.3 Roof shape coefficients",  # a heading over subclauses
    k("5.3.1"): "5.3.1 General\n(1) 5.3 gives roof shape coefficients for all roofs.",
    k("5.3.2"): "5.3.2 Monopitch roofs\n(1) The coefficient for monopitch roofs is given in Table 5.2.",
    k("5.3.10"): "5.3.10 Later roofs\n(1) Something else about roofs in general.",
    k("7.1"): "7.1 Other matters\n(1) Text on another subject entirely, long enough to stand alone.",
    k("8.1"): "8.1 Accidental matters\n(1) Further text that cites 7.1 for its rules.",
    k("1.1"): "1.1 Scope\n(1) Annex A gives maps of the matters; 7.1 gives the rules for them.",
    k("annex_A"): "Annex A (informative) Maps\nA chapter of maps, long enough to have text of its own.",
}
REFERENCES = {
    k("5.2"): [{"target": k("5.3")}],
    k("8.1"): [{"target": k("7.1")}],
    k("1.1"): [{"target": k("annex_A")}, {"target": k("7.1")}],
}


def parent(key: str) -> str | None:
    """ "5.3.1" sits in "5.3", "5.2" in "5"; an annex is a chapter of its own."""
    code = key.rsplit("_", 1)[1]
    return k(code.rsplit(".", 1)[0]) if "." in code else None


def deps_with(soft: dict[str, float] | None = None) -> Any:
    """Stand-in stores and reasoner; ``soft`` is the embedder's soft match of each passage (None: the
    embedder gives none)."""

    def lookup(table: str, key: str) -> Any:
        if table == "references":
            return REFERENCES.get(key, [])
        if table == "sections":
            return {"text": SECTIONS[key], "parent": parent(key), "kind": "clause"} if key in SECTIONS else None
        raise KeyError(key)

    def doc_table(doc: str, table: str) -> dict[str, Any]:
        keys = [key for key in SECTIONS if key.startswith(doc + "_")]
        return {key: entry for key in keys if (entry := lookup(table, key)) is not None}

    stores = SimpleNamespace(lookup=lookup, doc_table=doc_table)
    return SimpleNamespace(
        stores=stores,
        reader=lambda: Reader(stores),  # type: ignore[arg-type]
        terms=lambda question: Terms(),
        embedder=SimpleNamespace(
            soft_match=lambda query, texts: (
                None
                if soft is None
                else [next(v for key, v in soft.items() if SECTIONS[key] in text) for text in texts]
            )
        ),
    )


def passage(key: str) -> dict[str, Any]:
    text = SECTIONS[key]
    return {
        "key": key,
        "document": "T-1",
        "section": key.rsplit("_", 1)[1],
        "kind": "clause",
        "title": text.split("\n")[0],
        "text": text,
        "spans": [[0, len(text)]],
        "page": 1,
        "pages": [1],
    }


def test_a_reference_to_a_heading_lifts_its_first_subclause_only() -> None:
    similarity = {k("5.2"): 0.9, k("5.3.1"): 0.3, k("5.3.2"): 0.3, k("5.3.10"): 0.3, k("7.1"): 0.5, k("8.1"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], similarity)  # type: ignore[arg-type]
    order = [p["key"] for p in ranked]
    score = {p["key"]: p["score"] for p in ranked}
    assert order[:2] == [k("5.2"), k("5.3.1")]
    assert score[k("5.3.1")] > score[k("7.1")] > score[k("5.3.2")] == score[k("5.3.10")]
    assert score[k("5.3.1")] == round(score[k("5.2")] * CITED_DECAY, 4)


def test_a_reference_to_a_clause_with_text_lifts_that_clause() -> None:
    similarity = {k("5.2"): 0.1, k("5.3.1"): 0.1, k("7.1"): 0.3, k("8.1"): 0.9}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], similarity)  # type: ignore[arg-type]
    assert [p["key"] for p in ranked][:2] == [k("8.1"), k("7.1")]
    assert {p["key"]: p["score"] for p in ranked}[k("5.3.1")] < 0.5


def test_a_reference_to_a_whole_annex_lifts_nothing() -> None:
    """A scope lists the chapters: the clause it cites is lifted, the annex it names keeps its own score."""
    similarity = {k("1.1"): 0.9, k("annex_A"): 0.2, k("7.1"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], similarity)  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked] == [k("1.1"), k("7.1"), k("annex_A")]
    assert score[k("7.1")] == round(score[k("1.1")] * CITED_DECAY, 4)
    assert score[k("annex_A")] < 0.5


def test_a_bare_heading_comes_after_the_sections_with_text() -> None:
    """ "5.3 Roof shape coefficients" alone has nothing to read: a clause with text, a little less
    similar to the question, comes first; the heading stays in the answer."""
    heading = passage(k("5.3"))
    similarity = {k("5.3"): 0.8, k("7.1"): 0.6}
    ranked = rank(deps_with(), {"search_question": "q"}, [heading, passage(k("7.1"))], similarity)  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("7.1"), k("5.3")]


def test_the_head_of_the_list_is_read_again_word_by_word() -> None:
    """The embedder's soft match of the first passages (each content word of the question against the
    passage's words in context) moves, among them, the one that says what was asked in other words
    up; a passage the soft match rates below the head's average goes down. The rest keep their order."""
    similarity = {k("7.1"): 0.6, k("8.1"): 0.58, k("5.3.10"): 0.1}
    plain = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], similarity)  # type: ignore[arg-type]
    assert [p["key"] for p in plain] == [k("7.1"), k("8.1"), k("5.3.10")]
    soft = {k("7.1"): 0.30, k("8.1"): 0.50, k("5.3.10"): 0.40}
    read = rank(deps_with(soft), {"search_question": "q"}, [passage(key) for key in similarity], similarity)  # type: ignore[arg-type]
    assert [p["key"] for p in read][:2] == [k("8.1"), k("7.1")]
    before, after = {p["key"]: p["score"] for p in plain}, {p["key"]: p["score"] for p in read}
    assert round(after[k("8.1")] - before[k("8.1")], 4) == round(SOFT_MATCH_WEIGHT * (0.50 - 0.40), 4)


def test_a_short_section_is_quoted_whole_with_its_pages(sample_store: SimpleNamespace, embedder: Any) -> None:
    system = System(
        stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=Path("/x")
    )
    key = "CEN_EN1991-9-9_5.3.2"
    section = system.stores.lookup("sections", key)
    assert len(section["pages"]) == 2  # the section runs onto a second page
    piece = section["text"][:60]
    state = {
        "search_question": "q",
        "extracts": {key: [{"start": 0, "text": piece, "pages": section["pages"][:1], "score": 1.0}]},
        "candidates": {},
    }
    (passage,) = collect_passages(state, query_runtime(system))["passages"]  # type: ignore[arg-type]
    assert passage["text"] == section["text"].strip() and passage["spans"] == [[0, len(section["text"])]]
    assert passage["pages"] == section["pages"] and passage["page"] == section["pages"][0]


def test_the_lines_nearest_the_question_are_quoted_too(
    sample_store: SimpleNamespace, embedder: Any, monkeypatch: Any
) -> None:
    """A long section's passage quotes its extracts and the lines of its chunk nearest the question,
    though they share no word with it (an archive's shelving, a clause on books and documents)."""
    monkeypatch.setattr("clausewise.nodes.query.collect_passages.WHOLE_SECTION_CHARS", 50)
    key = "CEN_EN1991-9-9_5.3.2"
    text = sample_store.stores.lookup("sections", key)["text"]
    lines = text.split("\n")
    assert len(lines) >= 4 and len(text) > 50 + 2 * BRIDGE_CHARS
    near = "\n".join(lines[-2:])
    chunk = {"key": key, "text": f"EN 1991-9-9 5.3.2 heading\n{near}"}
    index = SimpleNamespace(similarity=lambda vector, keys: {key: Hit(key, 0.7, chunk)} if key in keys else {})
    system = System(
        stores=sample_store.stores,
        embedder=embedder,
        vector_index=index,  # type: ignore[arg-type]
        query_tasks=OfflineQueryTasks(),
        cache_dir=Path("/x"),
    )
    state = {
        "search_question": "q",
        "extracts": {key: [{"start": 0, "text": lines[0], "pages": [1], "score": 1.0}]},
        "candidates": {},
    }
    (passage,) = collect_passages(state, query_runtime(system))["passages"]  # type: ignore[arg-type]
    start = text.index(near)
    assert passage["spans"] == [[0, len(lines[0])], [start, start + len(near)]]
    assert passage["text"] == lines[0] + GAP + near
    assert passage["score"] >= 0.7  # the chunk's similarity is the passage's


def test_a_quoted_chunk_is_widened_to_its_paragraphs() -> None:
    """A chunk is cut at lines: quoted, it runs from the start of the paragraph it begins in to the end
    of the one it ends in, unless those lie more than PARAGRAPH_REACH characters away."""
    text = "5.1 Title\n(1) First line of one\nsecond line of one.\n(2) Start of two\nend of two.\n(3) Three."
    chunk = "EN 9 5.1 Title\nsecond line of one.\n(2) Start of two"
    assert chunk_span(text, chunk) == (text.index("(1)"), text.index("\n(3)"))
    assert chunk_span(text, "EN 9 5.1 Title\nnot in the text") is None
    long_one = "5.1 Title\n(1) " + "word " * 200 + "\nlast line of one.\n(2) Two."
    start = long_one.index("last line")
    assert chunk_span(long_one, "h\nlast line of one.") == (start, start + len("last line of one."))


def test_extracts_merge_across_short_gaps_only() -> None:
    assert merge_spans([(500, 600), (0, 100), (50, 120)]) == [(0, 120), (500, 600)]
    assert merge_spans([(0, 100), (100 + BRIDGE_CHARS, 900)], bridge=BRIDGE_CHARS) == [(0, 900)]
    assert merge_spans([(0, 100), (101 + BRIDGE_CHARS, 900)], bridge=BRIDGE_CHARS) == [
        (0, 100),
        (101 + BRIDGE_CHARS, 900),
    ]
