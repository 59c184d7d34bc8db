"""collect-passages (nodes/query/collect_passages.py). Ranking on stand-in stores: a reference to a
whole clause whose own text is only its heading lifts the first of its subclauses in the answer, not
every subclause; a reference to a clause with text of its own lifts that clause; one to a whole annex
lifts nothing. Quoting, on the
ingested sample: a short section is quoted whole with every page it lies on; extracts of a long one
are merged across short gaps only."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import query_runtime

from clausewise.nodes.query import collect_passages as collect_module
from clausewise.nodes.query.collect_passages import (
    BRIDGE_CHARS,
    CITED_DECAY,
    COVERAGE_WEIGHT,
    GAP,
    KEYWORD_WEIGHT,
    LENGTH_FROM,
    LENGTH_WEIGHT,
    OBJECT_DECAY,
    PART_COVERAGE_WEIGHT,
    PART_SPECIFIC,
    REPEATED_DECAY,
    SOFT_MATCH_WEIGHT,
    SOFT_PART_WEIGHT,
    change_record,
    chunk_span,
    collect_passages,
    contents_like,
    cross_text,
    document_share,
    glossary,
    leveled,
    merge_spans,
    near_head,
    part_aspects,
    qualified,
    rank,
)
from clausewise.nodes.query.compose import compose
from clausewise.nodes.query.deps import Reader, bare, first_subclause
from clausewise.stores.index import Hit
from clausewise.system import System
from clausewise.tools.query_tasks import OfflineQueryTasks, Terms, Vocabulary, stem

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
    k("6.1"): "6.1 Drift\n(1) Shape coefficients are given in Table 6.1; the rules of 7.1 apply.",
    k("table_6.1"): "Table 6.1 Shape coefficients\n| case | mu |\n| a | 0,8 |",
    k("4.1"): "4.1 Steps\n(1) Apply 8.1 first, then 7.1.",
    k("5.1"): "5.1 Pressure\n(1) The pressure is\nw = q c (5.1)\nwhere q is the velocity pressure.",
    k("expression_5.1"): "w = q c (5.1)",
    k("expression_5.2"): "w_i = q c_i (5.2)",
    k("5.4"): "5.4 Internal pressure\n(1) The internal pressure is given by Expression (5.2).",
    k("1.5.1"): "1.5.1\ndrifted snow\nsnow moved by the wind from one part of a roof to another",
    k("3.1"): "3.1 Drift\n(1) Drifted snow (see 1.5.1) is taken into account as 7.1 gives.",
    k("6.2"): "6.2 Overhang\n(1) The overhanging snow is shown in Figure 6.2.",
    k("figure_6.2"): "Figure 6.2 Snow overhanging the edge of a roof",
    k("1.6"): "1.6 Synlbols\n(1) The following symbols apply.\nqk characteristic value of the load\nA area of the roof",
    k("G-7"): "G-7 REFERENCES FOR APPENDIX G",
    k("G-7.2"): "G-7.2 Non-Government\nACI 440.11, Building code requirements for concrete reinforced with GFRP bars.",
    k("9.1"): "9.1 Demolition\n(1) Remove the asbestos first (see paragraphs 9.2-9.5) and the other hazards of 9.6.",
    k("9.2"): "9.2 Asbestos\n(1) An asbestos survey is made before work starts.",
    k("9.3"): "9.3 Licensed work\n(1) Most work with asbestos is licensed.",
    k("9.4"): "9.4 Respirators\n(1) Respirators are fitted to each wearer.",
    k("9.5"): "9.5 Waste\n(1) Asbestos waste is double bagged.",
    k("9.6"): "9.6 Hazards\n(1) Other hazards are removed before demolition.",
    # one rule stated twice, in the chapter on scaffolds (2) and in the one on trenches (4)
    k("2.4"): "2.4 "
    + (
        REPORT := "The person receiving the inspection report must keep it at the site where the "
        "inspection was carried out until the work is completed and then keep it at an office for three months."
    ),
    k("4.3"): "4.3 Trenches\n(1) A trench is inspected at the start of every shift by a competent person.",
    k("4.4"): "4.4 " + REPORT,
}
PARENT_TITLES = {k("1.5.1"): "Terms and definitions"}
TITLES = {k("G-7"): "REFERENCES FOR APPENDIX G", k("G-7.2"): "Non-Government"}  # as the store holds them
KINDS = {
    k("figure_6.2"): "figure",
    k("table_6.1"): "table",
    k("expression_5.1"): "expression",
    k("expression_5.2"): "expression",
}
REFERENCES = {
    k("5.2"): [{"target": k("5.3")}],
    k("8.1"): [{"target": k("7.1")}],
    k("1.1"): [{"target": k("annex_A")}, {"target": k("7.1")}],
    k("6.1"): [{"target": k("table_6.1"), "span": [41, 50]}, {"target": k("7.1"), "span": [60, 63]}],
    k("4.1"): [{"target": k("8.1")}, {"target": k("7.1")}],
    k("3.1"): [{"target": k("1.5.1")}, {"target": k("7.1")}],
    k("6.2"): [{"target": k("figure_6.2"), "span": [47, 57]}],
    k("5.4"): [{"target": k("expression_5.2"), "span": [60, 76]}],
    k("9.1"): [
        *({"target": k(code), "raw": "paragraphs 9.2-9.5", "span": [54, 72]} for code in ("9.2", "9.3", "9.4", "9.5")),
        {"target": k("9.6"), "raw": "9.6", "span": [105, 108]},
    ],
}

PRECEDENCE = {k("annex_A"): [{"type": "informative", "rule": "informative", "source_key": k("annex_A")}]}


def parent(key: str) -> str | None:
    """ "5.3.1" sits in "5.3", "5.2" in "5", "A.1" in "Annex A"; an annex is a chapter of its own."""
    code = key.rsplit("_", 1)[1]
    up = code.rsplit(".", 1)[0] if "." in code else None
    return k(f"annex_{up}" if up and up.isalpha() else up) if up else None


def deps_with(
    soft: dict[str, float] | None = None,
    terms: Terms | None = None,
    bm25: dict[str, float] | None = None,
    soft_by_query: dict[str, dict[str, float]] | None = None,
    cross: Any = None,
) -> Any:
    """Stand-in stores and reasoner; ``soft`` is the embedder's soft match of each passage (None: the
    embedder gives none), ``soft_by_query`` that of some queries in its place; ``terms`` the question's
    weighted terms (none by default); ``bm25`` the keyword index's BM25 of each section (none by
    default); ``cross`` the cross-encoder (none by default)."""
    bm25 = bm25 or {}

    def soft_match(query: str, texts: list[str], weight: Any = None, stored: Any = None) -> list[float] | None:
        matches = (soft_by_query or {}).get(query, soft)
        if matches is None:
            return None
        return [next(v for key, v in matches.items() if SECTIONS[key] in text) for text in texts]

    def lookup(table: str, key: str) -> Any:
        if table == "references":
            return REFERENCES.get(key, [])
        if table == "precedence":
            return PRECEDENCE.get(key, [])
        if table == "sections":
            kind = KINDS.get(key, "clause")
            if key not in SECTIONS:
                return None
            return {
                "text": SECTIONS[key],
                "parent": parent(key),
                "kind": kind,
                "title": TITLES.get(key),
                "parent_title": PARENT_TITLES.get(key),
            }
        raise KeyError(key)

    def doc_table(doc: str, table: str) -> dict[str, Any]:
        keys = [key for key in SECTIONS if key.startswith(doc + "_")]
        return {key: entry for key in keys if (entry := lookup(table, key)) is not None}

    stores = SimpleNamespace(lookup=lookup, doc_table=doc_table, token_vectors=lambda keys: {})
    return SimpleNamespace(
        stores=stores,
        reader=lambda: Reader(stores),  # type: ignore[arg-type]
        terms=lambda question: terms or Terms(),
        embedder=SimpleNamespace(soft_match=soft_match),
        keyword_index=SimpleNamespace(scores=lambda tokens, keys: {key: bm25[key] for key in keys if key in bm25}),
        vocabulary=lambda: Vocabulary.of_sections([]),
        cross_encoder=lambda: cross,
    )


def passage(key: str) -> dict[str, Any]:
    text = SECTIONS[key]
    return {
        "key": key,
        "document": "T-1",
        "section": key.rsplit("_", 1)[1],
        "kind": KINDS.get(key, "clause"),
        "title": text.split("\n")[0],
        "text": text,
        "spans": [[0, len(text)]],
        "page": 1,
        "pages": [1],
    }


@pytest.fixture(autouse=True)
def fused_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are of the fused order, the signals the learned ranker reads: no ranker is read
    (the learned ranker's own tests, at the end, install theirs)."""
    monkeypatch.setattr(collect_module, "RANKER", Path("/nonexistent/ranker.onnx"))


def test_a_reference_to_a_heading_lifts_its_first_subclause_only() -> None:
    similarity = {k("5.2"): 0.9, k("5.3.1"): 0.3, k("5.3.2"): 0.3, k("5.3.10"): 0.3, k("7.1"): 0.5, k("8.1"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    order = [p["key"] for p in ranked]
    score = {p["key"]: p["score"] for p in ranked}
    assert order[:2] == [k("5.2"), k("5.3.1")]
    assert score[k("5.3.1")] > score[k("7.1")] > score[k("5.3.2")] == score[k("5.3.10")]
    assert score[k("5.3.1")] == round(score[k("5.2")] * CITED_DECAY, 4)


def test_the_sections_the_question_names_come_first_without_lifting_what_they_cite() -> None:
    """Named by number, 4.1 comes first whatever its similarity; 8.1 and 7.1, which it cites, are not
    lifted with it: they stay after 5.2."""
    similarity = {k("5.2"): 0.6, k("4.1"): 0.3, k("8.1"): 0.1, k("7.1"): 0.1}
    passages = [passage(key) for key in similarity]
    named = rank(deps_with(), {"search_question": "q", "named": {k("4.1"): "*"}}, passages, [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in named][:2] == [k("4.1"), k("5.2")]
    plain = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in plain][0] == k("5.2")


def test_a_named_section_that_is_only_its_heading_is_not_put_first() -> None:
    """5.3 is a heading over subclauses, and 5.3.1 is in the answer: named by number, 5.3 has nothing
    to read, so it stays where its signals put it (after 5.2); 4.1, named, with a line of text,
    still comes first. Without its subclause in the answer, 5.3 named comes first."""
    similarity = {k("5.2"): 0.6, k("4.1"): 0.3, k("5.3"): 0.5, k("5.3.1"): 0.2, k("7.1"): 0.1}
    state = {"search_question": "q", "named": {k("4.1"): "*", k("5.3"): "*"}}
    order = [p["key"] for p in rank(deps_with(), state, [passage(key) for key in similarity], [similarity])]  # type: ignore[arg-type]
    assert order[0] == k("4.1")
    assert order.index(k("5.2")) < order.index(k("5.3"))
    del similarity[k("5.3.1")]
    alone = [p["key"] for p in rank(deps_with(), state, [passage(key) for key in similarity], [similarity])]  # type: ignore[arg-type]
    assert set(alone[:2]) == {k("4.1"), k("5.3")}


def test_a_reference_to_a_clause_with_text_lifts_that_clause() -> None:
    similarity = {k("5.2"): 0.1, k("5.3.1"): 0.1, k("7.1"): 0.3, k("8.1"): 0.9}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked][:2] == [k("8.1"), k("7.1")]
    assert {p["key"]: p["score"] for p in ranked}[k("5.3.1")] < 0.5


def test_a_range_lifts_its_first_member_in_the_answer_only() -> None:
    """ "see paragraphs 9.2-9.5" points to a topic, which 9.2 opens: 9.2 is lifted as a clause 9.1
    cites, and so is 9.6, named on its own; 9.3 to 9.5 keep their own scores, behind a clause more
    similar to the question. With 9.2 not in the answer, the range lifts 9.3, its first member there."""
    similarity = {k("9.1"): 0.9, k("7.1"): 0.5, **{k(c): 0.2 for c in ("9.2", "9.3", "9.4", "9.5", "9.6")}}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert score[k("9.2")] == score[k("9.6")] == round(score[k("9.1")] * CITED_DECAY, 4)
    assert [p["key"] for p in ranked][:4] == [k("9.1"), k("9.2"), k("9.6"), k("7.1")]
    assert max(score[k("9.3")], score[k("9.4")], score[k("9.5")]) < score[k("7.1")] < score[k("9.6")]

    del similarity[k("9.2")]
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert score[k("9.3")] == round(score[k("9.1")] * CITED_DECAY, 4) > score[k("7.1")] > score[k("9.4")]


def test_of_two_passages_that_bear_alike_the_shorter_comes_first() -> None:
    """Reading costs: a passage whose quoted text runs past ``LENGTH_FROM`` loses ``LENGTH_WEIGHT`` per
    e-fold of it, so one alike but shorter comes first (the long one's key sorts first, so a tie would
    not put the short one first); a much more similar long one still comes first."""
    assert LENGTH_WEIGHT > 0
    long = {**passage(k("5.3.10")), "text": "x " * (LENGTH_FROM * 4)}
    short = {**passage(k("5.3.2")), "text": "x " * (LENGTH_FROM // 2)}

    def ranked(similarity: dict[str, float]) -> list[dict[str, Any]]:
        return rank(deps_with(), {"search_question": "q"}, [long, short], [similarity])  # type: ignore[arg-type]

    alike = ranked({k("5.3.10"): 0.6, k("5.3.2"): 0.6})
    assert [p["key"] for p in alike] == [k("5.3.2"), k("5.3.10")]
    score = {p["key"]: p["score"] for p in alike}
    assert round(score[k("5.3.2")] - score[k("5.3.10")], 4) == round(LENGTH_WEIGHT * math.log(8), 4)
    assert [p["key"] for p in ranked({k("5.3.10"): 0.75, k("5.3.2"): 0.6})] == [k("5.3.10"), k("5.3.2")]


def test_a_reference_to_a_whole_annex_lifts_nothing() -> None:
    """A scope lists the chapters: the clause it cites is lifted, the annex it names keeps its own score."""
    similarity = {k("1.1"): 0.9, k("annex_A"): 0.2, k("7.1"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked] == [k("1.1"), k("7.1"), k("annex_A")]
    assert score[k("7.1")] == round(score[k("1.1")] * CITED_DECAY, 4)
    assert score[k("annex_A")] < 0.5


def test_an_annex_heading_is_bare_and_stands_for_its_first_clause() -> None:
    """An annex's heading is its label, its standing (as a scan reads it: "(i nformative)") and its
    title, wrapped or not: nothing to read there. Its clauses are numbered by its letter."""
    assert bare("Annex E\n(i nformative)\nFire load densities")
    assert bare(
        "Annex A\n(Normative)\nIsotherms of national minimum and maximum shade air\ntemperatures",
        "Isotherms of national minimum and maximum shade air",
    )
    assert not bare("Annex C\n(informative)\nSnow maps\n(1) This Annex presents the European snow maps.", "Snow maps")
    among = {k("A.2"), k("A.1"), k("A1.1"), k("A1.10"), k("A1.2"), k("annex_A1")}
    assert first_subclause(k("annex_A"), among) == k("A.1")
    assert first_subclause(k("annex_A1"), among) == k("A1.1")
    assert first_subclause(k("5.3"), {k("5.3.2"), k("5.3.10")}) == k("5.3.2")


def test_a_reference_to_an_annex_that_is_only_its_heading_lifts_its_first_clause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ "T0 may be taken from annex A": an annex whose text is only its heading (label, standing, a title
    run over two lines) stands for its first clause, as a bare numbered heading stands for its first
    subclause. A.1 is lifted as a cited clause; the annex heading itself gains nothing."""
    monkeypatch.setitem(
        SECTIONS,
        k("annex_A"),
        "Annex A\n(Normative)\nIsotherms of national minimum and maximum shade air\ntemperatures",
    )
    monkeypatch.setitem(SECTIONS, k("A.1"), "A.1 General\n(3) If no information is available T0 may be taken as 10 C.")
    monkeypatch.setitem(SECTIONS, k("6.3"), "6.3 Range\n(2) The initial temperature T0 may be taken from annex A.")
    monkeypatch.setitem(
        REFERENCES, k("6.3"), [{"target": k("annex_A"), "raw": "annex A", "kind": "annex", "span": [66, 73]}]
    )
    similarity = {k("6.3"): 0.9, k("annex_A"): 0.1, k("A.1"): 0.1, k("7.1"): 0.5}
    monkeypatch.setitem(TITLES, k("annex_A"), "Isotherms of national minimum and maximum shade air")
    passages = [{**passage(key), "title": TITLES.get(key, passage(key)["title"])} for key in similarity]
    ranked = rank(deps_with(), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked][:3] == [k("6.3"), k("A.1"), k("7.1")]
    assert score[k("A.1")] == round(score[k("6.3")] * CITED_DECAY, 4)
    assert score[k("annex_A")] < score[k("7.1")]


def test_a_top_level_section_named_by_its_title_is_lifted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guide's clause points to a section of its introduction by title ("see Inspecting surfaces"):
    that section has no parent, as a whole annex has none, but the words name its text, not a chapter.
    It is lifted; the annex the same clause names by number ("Annex A") is not."""
    monkeypatch.setitem(
        SECTIONS, k("inspecting"), "Inspecting surfaces\nJudge a finish from a normal viewing position."
    )
    monkeypatch.setitem(
        SECTIONS,
        k("2.2"),
        "2.2 Concrete floors\n(1) Cracks seen from the normal viewing position (see Inspecting surfaces) and Annex A.",
    )
    monkeypatch.setitem(
        REFERENCES,
        k("2.2"),
        [
            {"target": k("inspecting"), "raw": "Inspecting surfaces", "kind": "clause", "span": [68, 87]},
            {"target": k("annex_A"), "raw": "Annex A", "kind": "annex", "span": [93, 100]},
        ],
    )
    similarity = {k("2.2"): 0.9, k("inspecting"): 0.1, k("annex_A"): 0.1, k("7.1"): 0.3}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked][:2] == [k("2.2"), k("inspecting")]
    assert score[k("inspecting")] == round(score[k("2.2")] * CITED_DECAY, 4)
    assert score[k("annex_A")] < score[k("7.1")]


def test_a_cited_table_inherits_less_than_a_cited_clause_but_follows_the_clause_naming_it() -> None:
    """6.1 names Table 6.1, then 7.1: the table comes right after 6.1 (reading order), though a cited
    table keeps ``OBJECT_DECAY`` of the citing score and a cited clause the larger ``CITED_DECAY``."""
    similarity = {k("6.1"): 0.9, k("table_6.1"): 0.1, k("7.1"): 0.1, k("8.1"): 0.7}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert OBJECT_DECAY < CITED_DECAY
    assert score[k("table_6.1")] == round(score[k("6.1")] * OBJECT_DECAY, 4)
    assert score[k("7.1")] == round(score[k("6.1")] * CITED_DECAY, 4)
    assert [p["key"] for p in ranked] == [k("6.1"), k("table_6.1"), k("7.1"), k("8.1")]
    named = REFERENCES[k("6.1")][0]
    REFERENCES[k("6.1")][0] = dict(named, span=None)  # a reference the quoted text does not hold: no follower
    try:
        ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    finally:
        REFERENCES[k("6.1")][0] = named
    # on its own standing the table comes after 8.1, a direct hit it would pass with CITED_DECAY
    assert [p["key"] for p in ranked] == [k("6.1"), k("7.1"), k("8.1"), k("table_6.1")]
    assert score[k("6.1")] * OBJECT_DECAY < score[k("8.1")] < score[k("6.1")] * CITED_DECAY


def test_a_table_the_clause_names_twice_keeps_more_of_its_score(monkeypatch: Any) -> None:
    """6.1 names Table 6.1 twice (its rule reads the values there): the table keeps ``REPEATED_DECAY``
    of 6.1's score, not ``OBJECT_DECAY``, and passes 8.1, a direct hit it stays behind when named once."""
    similarity = {k("6.1"): 0.9, k("table_6.1"): 0.1, k("8.1"): 0.77}
    named = REFERENCES[k("6.1")]
    monkeypatch.setitem(REFERENCES, k("6.1"), [named[0], dict(named[0], span=[70, 79]), *named[1:]])
    monkeypatch.setattr(collect_module, "MAX_FOLLOWERS", 0)  # on its own standing, not as a follower
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert OBJECT_DECAY < REPEATED_DECAY <= CITED_DECAY
    assert score[k("table_6.1")] == round(score[k("6.1")] * REPEATED_DECAY, 4)
    assert [p["key"] for p in ranked] == [k("6.1"), k("table_6.1"), k("8.1")]
    monkeypatch.setitem(REFERENCES, k("6.1"), named)  # named once
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("6.1"), k("8.1"), k("table_6.1")]


def test_a_table_lifts_the_clause_it_is_printed_in_that_names_it(monkeypatch: Any) -> None:
    """Table 6.1 is a direct hit and 6.1, the clause it is printed in, which names it, is not: the
    clause says what the table is for ("must not exceed ... Table 6.1"), so it comes next, lifted to
    ``CITED_DECAY`` x the table's score. A clause that holds the table without naming it is not lifted."""
    import sys

    here = sys.modules[__name__]
    printed_in = here.parent
    monkeypatch.setattr(here, "parent", lambda key: k("6.1") if key == k("table_6.1") else printed_in(key))
    similarity = {k("table_6.1"): 0.9, k("6.1"): 0.1, k("8.1"): 0.5}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked] == [k("table_6.1"), k("6.1"), k("8.1")]
    assert abs(score[k("6.1")] - score[k("table_6.1")] * CITED_DECAY) < 1e-3

    monkeypatch.setitem(REFERENCES, k("6.1"), [{"target": k("7.1"), "span": [60, 63]}])
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("table_6.1"), k("8.1"), k("6.1")]


def test_a_cited_definition_inherits_what_a_cited_table_does() -> None:
    """3.1 points to the definition of its term, then to 7.1: the definition gives wording, not a rule,
    and keeps the smaller ``OBJECT_DECAY`` of 3.1's score; 7.1 keeps ``CITED_DECAY``."""
    similarity = {k("3.1"): 0.9, k("1.5.1"): 0.1, k("7.1"): 0.1}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert score[k("1.5.1")] == round(score[k("3.1")] * OBJECT_DECAY, 4)
    assert score[k("7.1")] == round(score[k("3.1")] * CITED_DECAY, 4)
    assert [p["key"] for p in ranked] == [k("3.1"), k("7.1"), k("1.5.1")]


def test_sections_lifted_alike_come_in_the_order_the_lifting_section_names_them() -> None:
    """4.1 names 8.1, then 7.1: both inherit the same score from it, and 8.1 comes first."""
    similarity = {k("4.1"): 0.9, k("7.1"): 0.1, k("8.1"): 0.1}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert score[k("7.1")] == score[k("8.1")]
    assert [p["key"] for p in ranked] == [k("4.1"), k("8.1"), k("7.1")]


def test_an_expression_its_clause_already_quotes_goes_to_the_back() -> None:
    """Expression (5.1) is quoted in 5.1's text above it: it goes to the back and 5.1 lists it in
    ``restates``. Expression (5.2), quoted nowhere before it, stays before it (after the text passages,
    as an expression among the key places does)."""
    similarity = {k("5.1"): 0.9, k("expression_5.1"): 0.8, k("expression_5.2"): 0.7, k("7.1"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("5.1"), k("7.1"), k("expression_5.2"), k("expression_5.1")]
    assert ranked[0]["restates"] == [k("expression_5.1")] and [p["rank"] for p in ranked] == [1, 2, 3, 4]
    assert not any("restates" in p for p in ranked[1:])
    similarity[k("expression_5.1")] = 0.95  # ahead of its clause: nothing above quotes it
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("5.1"), k("7.1"), k("expression_5.1"), k("expression_5.2")]
    assert not any("restates" in p for p in ranked)


def test_of_two_passages_with_the_same_words_the_one_printed_among_the_key_passages_stays() -> None:
    """2.4 (page 5) and 4.4 (page 20) state one rule in the same words. 4.3 is printed on page 20 and
    comes first: 4.4 takes the place of 2.4, which goes to the back, and 4.4 names it in ``same_text``.
    With 4.3 far from both, the first of the twins keeps its place."""
    page = {k("4.3"): 20, k("2.4"): 5, k("4.4"): 20, k("7.1"): 40, k("8.1"): 60}
    similarity = {k("4.3"): 0.9, k("2.4"): 0.8, k("4.4"): 0.7, k("7.1"): 0.5, k("8.1"): 0.4}

    def ranked_keys() -> list[dict[str, Any]]:
        passages = [passage(key) | {"page": page[key], "pages": [page[key]]} for key in similarity]
        return rank(deps_with(), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]

    ranked = ranked_keys()
    assert [p["key"] for p in ranked] == [k("4.3"), k("4.4"), k("7.1"), k("8.1"), k("2.4")]
    assert ranked[1]["same_text"] == [k("2.4")] and [p["rank"] for p in ranked] == [1, 2, 3, 4, 5]
    page[k("4.3")] = 80
    ranked = ranked_keys()
    assert [p["key"] for p in ranked] == [k("4.3"), k("2.4"), k("7.1"), k("8.1"), k("4.4")]
    assert ranked[1]["same_text"] == [k("4.4")]


def test_a_cited_figure_does_not_follow_its_clause_and_leaves_the_key_places_to_text(monkeypatch: Any) -> None:
    """A figure's passage is its caption (the drawing is an image). Cited by 6.2, Figure 6.2 keeps
    ``OBJECT_DECAY`` of 6.2's score but does not follow it as a table would: 7.1 passes it. Among the
    key places (2 here) on its own standing, it goes right after them, and 6.2, which cites it, names
    it in ``figures`` for the brief to show its image there."""
    monkeypatch.setattr(collect_module, "KEY_PASSAGES", 2)
    similarity = {k("6.2"): 0.9, k("figure_6.2"): 0.1, k("7.1"): 0.7, k("8.1"): 0.3, k("5.3.10"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("6.2"), k("7.1"), k("figure_6.2"), k("8.1"), k("5.3.10")]
    assert {p["key"]: p["score"] for p in ranked}[k("figure_6.2")] == round(ranked[0]["score"] * OBJECT_DECAY, 4)
    assert not any("figures" in p for p in ranked)  # nothing moved
    similarity[k("figure_6.2")] = 0.85  # second on its own standing
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("6.2"), k("7.1"), k("figure_6.2"), k("8.1"), k("5.3.10")]
    assert ranked[0]["figures"] == [k("figure_6.2")] and "figures" not in ranked[1]
    assert [p["rank"] for p in ranked] == [1, 2, 3, 4, 5]
    assert [p["tier"] for p in ranked][:3] == ["key", "key", "supporting"]


def test_an_expression_among_the_key_places_goes_right_after_them(monkeypatch: Any) -> None:
    """An expression's passage is its formula as a scan's text layer reads it ("FR J.l (4.2)"). Cited
    by 5.4, Expression (5.2) follows it; among the key places (2 here) it goes right after them, as a
    figure does, and 5.4 names it in ``expressions`` for the brief to show its image there. Past the
    key places it keeps its place after the clause citing it."""
    monkeypatch.setattr(collect_module, "KEY_PASSAGES", 2)
    similarity = {k("5.4"): 0.9, k("expression_5.2"): 0.1, k("7.1"): 0.7, k("8.1"): 0.3, k("5.3.10"): 0.2}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("5.4"), k("7.1"), k("expression_5.2"), k("8.1"), k("5.3.10")]
    assert ranked[0]["expressions"] == [k("expression_5.2")] and "figures" not in ranked[0]
    assert [p["tier"] for p in ranked][:3] == ["key", "key", "supporting"]
    similarity.update({k("5.4"): 0.5, k("7.1"): 0.9, k("8.1"): 0.8})
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked][2:4] == [k("5.4"), k("expression_5.2")]
    assert not any("expressions" in p for p in ranked)


def test_front_matter_among_the_key_places_goes_right_after_them(monkeypatch: Any) -> None:
    """A title page or a foreword the order puts first (its words on the question's topic) is not read
    first: it goes right after the key places (2 here), in its order, and names no figure."""
    monkeypatch.setattr(collect_module, "KEY_PASSAGES", 2)
    similarity = {k("1.1"): 0.95, k("7.1"): 0.9, k("8.1"): 0.7, k("5.3.10"): 0.2}
    passages = [passage(key) for key in similarity]
    passages[0]["kind"] = "front"
    ranked = rank(deps_with(), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("7.1"), k("8.1"), k("1.1"), k("5.3.10")]
    assert [p["tier"] for p in ranked][:3] == ["key", "key", "supporting"]
    passages[0]["kind"] = "clause"  # the same passage as a clause keeps its first place
    ranked = rank(deps_with(), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]
    assert ranked[0]["key"] == k("1.1")


def test_a_figure_whose_key_states_a_value_keeps_its_place_among_the_key_passages(monkeypatch: Any) -> None:
    """A figure's passage that quotes its key past the caption, with a sentence that states a value
    ("The recommended value of h0 is 5,0 m"), is read as text: second on its own standing, it stays
    second. Its drawing's labels ("1,0 F 0 h") state nothing and move it after the key places."""
    monkeypatch.setattr(collect_module, "KEY_PASSAGES", 2)
    similarity = {k("6.2"): 0.9, k("figure_6.2"): 0.85, k("7.1"): 0.7, k("8.1"): 0.3, k("5.3.10"): 0.2}
    caption = "Figure 6.2 - Recommended value of the reduction factor"
    for body, kept in (
        ("1,0 F 0 h0 is the clearance below which no reduction is made. The recommended value of h0 is 5,0 m", True),
        ("1,0 F 0 h h0 h1 0,5", False),
    ):
        passages = [passage(key) for key in similarity]
        figure = next(p for p in passages if p["key"] == k("figure_6.2"))
        figure["text"] = f"{caption}\n{body}"
        figure["spans"] = [[0, len(figure["text"])]]
        ranked = rank(deps_with(), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]
        order = [p["key"] for p in ranked]
        assert order == (
            [k("6.2"), k("figure_6.2"), k("7.1"), k("8.1"), k("5.3.10")]
            if kept
            else [k("6.2"), k("7.1"), k("figure_6.2"), k("8.1"), k("5.3.10")]
        )


def test_coverage_is_a_share_of_the_terms_some_passage_has() -> None:
    """The question's "freak" is in no passage: 6.1, which has all of the rest ("drift"), gains the whole
    ``COVERAGE_WEIGHT`` over 5.3.10, which has none, however heavily the missing word weighs."""
    terms = Terms()
    terms.add("drift", 2.0, "question")
    terms.add("freak", 8.0, "question")
    similarity = {k("6.1"): 0.5, k("5.3.10"): 0.5}
    ranked = rank(deps_with(terms=terms), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked][0] == k("6.1")
    assert round(score[k("6.1")] - score[k("5.3.10")], 4) == round(COVERAGE_WEIGHT, 4)


def _two_part_question(drift_weight: float, accidental_weight: float) -> tuple[Any, dict[str, Any]]:
    """Stand-ins for a question on drift with one part on accidental matters, its terms so weighted."""
    whole, drift, accidental = Terms(), Terms(), Terms()
    whole.add(stem("drift"), drift_weight, "question")
    whole.add(stem("accidental"), accidental_weight, "question")
    drift.add(stem("drift"), drift_weight, "question")
    accidental.add(stem("accidental"), accidental_weight, "question")
    deps = deps_with()
    deps.terms = {"q": whole, "On drift?": drift, "On accidental matters?": accidental}.__getitem__
    return deps, {"search_question": "q", "sub_questions": ["On drift?", "On accidental matters?"]}


def test_a_passage_that_answers_one_part_of_the_question_gains_by_that_parts_coverage(monkeypatch: Any) -> None:
    """A question mostly on drift with one part on accidental matters: 8.1, which has the part's every
    term but under half of the whole question's weight, comes before 5.3.10, which has none and is a
    little more similar; by ``PART_COVERAGE_WEIGHT`` x its best part's coverage (all of it: the part's
    terms weigh ``PART_SPECIFIC``), on top of its share of the whole question's terms."""
    deps, state = _two_part_question(16.0, PART_SPECIFIC)
    similarity = {k("6.1"): 0.5, k("8.1"): 0.5, k("5.3.10"): 0.75}

    def ranked() -> list[dict[str, Any]]:
        return rank(deps, state, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]

    score = {p["key"]: p["score"] for p in ranked()}
    assert [p["key"] for p in ranked()] == [k("6.1"), k("8.1"), k("5.3.10")]
    gained = COVERAGE_WEIGHT * (PART_SPECIFIC / (16.0 + PART_SPECIFIC) + PART_COVERAGE_WEIGHT * 1.0)
    assert round(score[k("8.1")] - score[k("5.3.10")], 4) == round(gained - 0.25, 4)
    monkeypatch.setattr(collect_module, "PART_COVERAGE_WEIGHT", 0.0)
    assert [p["key"] for p in ranked()] == [k("6.1"), k("5.3.10"), k("8.1")]


def test_a_part_of_few_and_common_words_counts_by_what_it_says() -> None:
    """The same part asked in one common word (its terms weigh a sixth of ``PART_SPECIFIC``): every
    passage with that word covers it whole, so it counts a sixth as much, and 8.1 gains a sixth of the
    part's ``PART_COVERAGE_WEIGHT``."""
    light = PART_SPECIFIC / 6
    deps, state = _two_part_question(16.0, light)
    similarity = {k("6.1"): 0.5, k("8.1"): 0.5, k("5.3.10"): 0.7}
    ranked = rank(deps, state, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    gained = COVERAGE_WEIGHT * (light / (16.0 + light) + PART_COVERAGE_WEIGHT / 6)
    assert round(score[k("8.1")] - score[k("5.3.10")], 4) == round(gained - 0.2, 4)
    assert [p["key"] for p in ranked] == [k("6.1"), k("5.3.10"), k("8.1")]


def test_bm25_counts_as_a_share_of_the_answers_best() -> None:
    """The keyword index's BM25 of each section (FTS5 over its whole text) is fused as a share of the
    answer's best: of two passages alike in all else, the one with the better BM25 comes first, ahead
    by ``KEYWORD_WEIGHT`` times the difference of their shares."""
    similarity = {k("6.1"): 0.5, k("5.3.10"): 0.5}
    bm25 = {k("6.1"): 2.0, k("5.3.10"): 8.0}
    ranked = rank(deps_with(bm25=bm25), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    score = {p["key"]: p["score"] for p in ranked}
    assert [p["key"] for p in ranked] == [k("5.3.10"), k("6.1")]
    assert round(score[k("5.3.10")] - score[k("6.1")], 4) == round(KEYWORD_WEIGHT * (1 - 2.0 / 8.0), 4)


def test_a_bare_heading_comes_after_the_sections_with_text() -> None:
    """ "5.3 Roof shape coefficients" alone has nothing to read: a clause with text, a little less
    similar to the question, comes first; the heading stays in the answer."""
    heading = passage(k("5.3"))
    similarity = {k("5.3"): 0.8, k("7.1"): 0.6}
    ranked = rank(deps_with(), {"search_question": "q"}, [heading, passage(k("7.1"))], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("7.1"), k("5.3")]


def test_a_list_of_symbols_comes_after_the_clauses_that_use_them() -> None:
    """A symbols list (its title read through OCR's slips, "Synlbols") matches many of a question's
    terms, but it is where a symbol is looked up: a clause a little less similar comes first, and the
    list stays in the answer."""
    similarity = {k("1.6"): 0.8, k("7.1"): 0.6}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("7.1"), k("1.6")]
    assert glossary({"title": "Abbreviations and acronyms"}) and glossary({"title": "Notation"})
    assert not glossary({"title": "F10 notification requirements"}) and not glossary({"title": "Nominal values"})
    assert glossary({"title": "Normative references"}) and glossary({"title": "Bibliography"})
    assert not glossary({"title": "References to other parts of EN 1991"})


def test_a_part_of_a_list_of_publications_comes_after_the_clauses() -> None:
    """ "Non-Government" under "REFERENCES FOR APPENDIX G" is a list of publications like its heading
    (which names it, first word or last): a clause a little less similar comes first; both stay."""
    assert glossary({"title": "REFERENCES FOR APPENDIX G"}) and not glossary({"title": "Non-Government"})
    similarity = {k("G-7.2"): 0.8, k("7.1"): 0.6}
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == [k("7.1"), k("G-7.2")]


def test_a_record_of_the_documents_revisions_goes_with_the_contents_pages() -> None:
    """A "Revision Summary Sheet" names the clauses a revision touched in the question's words, so it
    is near the question, but what they say is in those clauses: it goes to the back with the contents
    pages (background), behind a clause much less similar. A front-matter section on another subject is
    not background, though like all front matter it is not read before the clause (it goes after the
    key places, here the end of a short answer)."""
    record = {
        **passage(k("7.1")),
        "key": f"{DOC}_revision-summary-sheet",
        "section": "revision-summary-sheet",
        "kind": "front",
        "title": "REVISION SUMMARY SHEET",
        "text": "Added 1609.2.3 on vertical lift fabric hangar doors; revised 1609.1.2 on hangar wind loads.",
    }
    foreword = {**record, "key": f"{DOC}_climate-change", "section": "climate-change", "title": "Climate change"}
    for front, listed in ((record, True), (foreword, False)):
        similarity = {front["key"]: 0.9, k("7.1"): 0.3}
        ranked = rank(deps_with(), {"search_question": "q"}, [front, passage(k("7.1"))], [similarity])  # type: ignore[arg-type]
        assert [p["key"] for p in ranked] == [k("7.1"), front["key"]]
        assert (ranked[-1]["tier"] == "background") is listed
    assert change_record({"kind": "front", "section": "change-no-date-location", "title": "Change No. Date Location"})
    assert change_record({"kind": "front", "section": "record", "title": "Record of amendments"})
    assert not change_record({"kind": "clause", "section": "4.1", "title": "Changes of use"})
    assert not change_record({"kind": "front", "section": "x", "title": "Revision of the design"})


def test_an_informative_annex_comes_after_a_normative_clause_of_nearly_the_same_standing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Guidance in an informative annex (ingest marks the annex so) follows a normative clause a little
    less similar to the question, by ``INFORMATIVE_PENALTY``; without it the annex would come first."""
    similarity = {k("annex_A"): 0.62, k("7.1"): 0.6}

    def order() -> list[str]:
        ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
        return [p["key"] for p in ranked]

    assert order() == [k("7.1"), k("annex_A")]
    monkeypatch.setattr(collect_module, "INFORMATIVE_PENALTY", 0.0)
    assert order() == [k("annex_A"), k("7.1")]


def test_a_contents_fragment_ends_its_lines_in_page_numbers_a_table_in_values() -> None:
    """Lines ending in page numbers make a contents fragment; a table's rows ending in values ("beer
    10,0", "fuel 7,8 to 9,8") do not, though each line ends in digits."""

    def passage_of(text: str) -> dict[str, Any]:
        return {"kind": "annex", "text": text}

    contents = "ANNEX A 31\nANNEX B 33\nANNEX C 36\nBibliography 40"
    densities = "Products Density\nbeer 10,0\nmilk 10,0\nwater, fresh 10,0\nfuel 7,8 to 9,8\ndiesel 8,3"
    assert contents_like(passage_of(contents)) and not contents_like(passage_of(densities))


def test_a_documents_share_is_its_largest_among_the_question_and_its_sub_questions() -> None:
    """A question across two parts: the fire part holds none of the 15 sections nearest the whole
    question, but most of those nearest the sub-question on the fire combination, and that share counts."""
    snow = [{"key": f"S_{i}", "document": "snow"} for i in range(20)]
    fire = [{"key": f"F_{i}", "document": "fire"} for i in range(12)]
    question = {p["key"]: 0.9 for p in snow} | {p["key"]: 0.3 for p in fire}
    fire_part = {p["key"]: 0.2 for p in snow} | {p["key"]: 0.8 for p in fire}
    share = document_share(snow + fire, [question, fire_part])
    assert share == {"snow": 1.0, "fire": 12 / 15}
    assert document_share(snow + fire, [question]) == {"snow": 1.0}


def test_a_passage_nearest_a_sub_question_keeps_the_largest_share_whatever_its_document(monkeypatch: Any) -> None:
    """A question across two parts: the execution part has one passage in the answer, the one nearest
    the sub-question on the erection stage. Its document's small share does not hold it back behind
    the snow part's passages that are less similar than it."""
    snow = [k(code) for code in ("5.3.1", "5.3.2", "5.3.10", "5.1", "6.2", "3.1")]
    execution = k("8.1")
    passages = [passage(key) for key in snow] + [{**passage(execution), "document": "T-2"}]
    question = dict(zip(snow, (0.60, 0.58, 0.56, 0.54, 0.52, 0.50), strict=True)) | {execution: 0.40}
    # the erection sub-question is as near its nearest snow passage as the question is to its own, so
    # levelling the queries' similarities (tested below) moves nothing here
    erection = {key: 0.30 for key in snow} | {snow[0]: 0.60, execution: 0.55}

    def order() -> list[str]:
        ranked = rank(deps_with(), {"search_question": "q"}, passages, [question, erection])  # type: ignore[arg-type]
        return [p["key"] for p in ranked]

    assert order().index(execution) == 3  # after the snow passages more similar than it (0.60, 0.58, 0.56)
    monkeypatch.setattr(collect_module, "SHARE_KEPT", 0)
    assert order().index(execution) == len(passages) - 1  # held back by its document's share of 1 in 7


def test_each_querys_nearest_passages_compete_as_equals() -> None:
    """A sub-question in plain words is less similar to every passage than the question's scene-setting
    sentence. Its nearest clause (0.45) is raised by what it falls short of the question's nearest
    (0.70): it comes among the first, not after the four passages nearest the scene."""
    scene = [k(code) for code in ("5.3.1", "5.3.2", "5.3.10", "5.1")]
    answer = k("6.2")
    passages = [passage(key) for key in [*scene, answer]]
    question = dict(zip(scene, (0.70, 0.66, 0.62, 0.58), strict=True)) | {answer: 0.30}
    plain_words = {key: 0.20 for key in scene} | {answer: 0.45}
    assert leveled([question, plain_words]) == pytest.approx(question | {answer: 0.70})
    raw = {key: max(question[key], plain_words[key]) for key in question}
    state = {"search_question": "q"}
    levelled = [p["key"] for p in rank(deps_with(), state, passages, [question, plain_words])]  # type: ignore[arg-type]
    assert levelled.index(answer) <= 1
    alone = [p["key"] for p in rank(deps_with(), state, passages, [raw])]  # type: ignore[arg-type]
    assert alone.index(answer) == len(passages) - 1  # one query: nothing to level


def test_a_part_the_first_passages_leave_unanswered_gets_its_best_passage_among_them(monkeypatch: Any) -> None:
    """A question of two parts, roofs and asbestos: the roof passages score higher (their words are the
    question's, BM25), so the asbestos part's best passage, 9.2, comes last of six. Once 5.3.1 has
    answered the roof part, the next place goes to 9.2 (score 0.80 plus ``ASPECT_WEIGHT`` x what it
    answers of the asbestos part, all of it: 0.85) before 5.3.2 (0.825, answering only the part already
    answered). Without the parts' weight, or for a question of one part, the order is the scores'."""
    roofs = [k(code) for code in ("5.3.1", "5.3.2", "5.3.10", "5.1", "6.2")]
    asbestos = k("9.2")
    question = dict(zip(roofs, (0.80, 0.795, 0.79, 0.785, 0.78), strict=True)) | {asbestos: 0.2}
    asbestos_part = {key: 0.2 for key in roofs} | {asbestos: 0.5}  # levelled: 9.2 as near as 5.3.1 is
    bm25 = {roofs[0]: 1.0} | {key: 0.3 for key in roofs[1:]}
    passages = [passage(key) for key in [*roofs, asbestos]]
    state = {"search_question": "q", "sub_questions": ["On the roofs?", "On the asbestos?"]}

    def order(state: dict[str, Any] = state, by_query: list[dict[str, float]] | None = None) -> list[str]:
        by_query = by_query or [question, question, asbestos_part]
        return [p["key"] for p in rank(deps_with(bm25=bm25), state, passages, by_query)]  # type: ignore[arg-type]

    assert order() == [roofs[0], asbestos, *roofs[1:]]
    one_part = {"search_question": "q", "sub_questions": ["On the roofs?"]}
    assert order(one_part, [question, asbestos_part]) == [*roofs, asbestos]
    monkeypatch.setattr(collect_module, "ASPECT_WEIGHT", 0.0)
    assert order() == [*roofs, asbestos]


def test_what_a_passage_answers_of_a_part_runs_from_its_best_to_past_its_nearest_few(monkeypatch: Any) -> None:
    """A part's best passage answers it whole (1), those past its ``ASPECT_DEPTH`` nearest not at all
    (0), those between in proportion; the whole question is not a part of itself."""
    monkeypatch.setattr(collect_module, "ASPECT_DEPTH", 4)
    keys = [k(code) for code in ("5.3.1", "5.3.2", "5.3.10", "5.1", "6.2", "9.2")]
    passages = [passage(key) for key in keys]
    roof = {key: 0.8 - 0.1 * i for i, key in enumerate(keys)}
    state = {"search_question": "q", "sub_questions": ["q", "On the roofs?", "On the rest?"]}
    coverage = {key: 0.0 for key in keys}
    aspects = part_aspects(state, passages, [{}, roof, roof], [coverage, coverage, coverage])  # type: ignore[arg-type]
    assert len(aspects) == 2
    assert [round(aspects[0][key], 3) for key in keys] == [1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
    assert (
        part_aspects(
            {"search_question": "q", "sub_questions": ["q", "On the roofs?"]},
            passages,
            [{}, roof],
            [coverage, coverage],
        )
        == []
    )  # type: ignore[arg-type]


def test_the_head_of_the_list_is_read_again_word_by_word() -> None:
    """The embedder's soft match of the first passages (each content word of the question against the
    passage's words in context) moves, among them, the one that says what was asked in other words
    up; a passage the soft match rates below the head's average goes down. The rest keep their order."""
    similarity = {k("7.1"): 0.6, k("8.1"): 0.58, k("5.3.10"): 0.1}
    plain = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in plain] == [k("7.1"), k("8.1"), k("5.3.10")]
    soft = {k("7.1"): 0.30, k("8.1"): 0.50, k("5.3.10"): 0.40}
    read = rank(deps_with(soft), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in read][:2] == [k("8.1"), k("7.1")]
    before, after = {p["key"]: p["score"] for p in plain}, {p["key"]: p["score"] for p in read}
    assert round(after[k("8.1")] - before[k("8.1")], 4) == round(SOFT_MATCH_WEIGHT * (0.50 - 0.40), 4)


def test_a_passage_that_says_what_one_part_asks_gains_by_that_parts_soft_match() -> None:
    """A long question's parts: a passage that covers one sub-question's words well (8.1, on the second
    part) gains ``SOFT_PART_WEIGHT`` x its lead over the head's average for that part, and moves above
    one the whole question's soft match rates the same. A sub-question that is the question itself
    adds nothing."""
    similarity = {k("7.1"): 0.6, k("8.1"): 0.59, k("5.3.10"): 0.1}
    whole = {k("7.1"): 0.40, k("8.1"): 0.40, k("5.3.10"): 0.40}
    parts = {"first part": dict(whole), "second part": {k("7.1"): 0.30, k("8.1"): 0.60, k("5.3.10"): 0.30}}
    state = {"search_question": "q", "sub_questions": ["first part", "second part"]}
    plain = rank(deps_with(whole), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in plain][:2] == [k("7.1"), k("8.1")]
    read = rank(deps_with(whole, soft_by_query=parts), state, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in read][:2] == [k("8.1"), k("7.1")]
    before, after = {p["key"]: p["score"] for p in plain}, {p["key"]: p["score"] for p in read}
    assert round(after[k("8.1")] - before[k("8.1")], 4) == round(SOFT_PART_WEIGHT * (0.60 - 0.40), 4)
    itself = {"search_question": "q", "sub_questions": ["q"]}
    same = rank(
        deps_with({k("7.1"): 0.3, k("8.1"): 0.5, k("5.3.10"): 0.4}),
        itself,
        [passage(key) for key in similarity],
        [similarity],
    )  # type: ignore[arg-type]
    alone = rank(
        deps_with({k("7.1"): 0.3, k("8.1"): 0.5, k("5.3.10"): 0.4}),
        {"search_question": "q"},
        [passage(key) for key in similarity],
        [similarity],
    )  # type: ignore[arg-type]
    assert [(p["key"], p["score"]) for p in same] == [(p["key"], p["score"]) for p in alone]


def test_the_head_is_read_from_the_token_vectors_kept_at_ingest(
    sample_store: SimpleNamespace, embedder: Any, monkeypatch: Any, tmp_path: Path
) -> None:
    """A passage quoted from the start of its section is soft-matched by the token vectors ingest kept,
    not by a run of the model: the answer is the one the model gives, and no such passage is run."""
    from clausewise.graph.query import build_query_graph
    from clausewise.tools.models import soft_text

    system = System(stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=tmp_path)
    question = "What load from fallen leaves should be taken on a pergola roof?"
    ran: list[str] = []
    run = embedder._run
    monkeypatch.setattr(embedder, "_run", lambda batch: (ran.extend(batch), run(batch))[1])

    def answer() -> list[tuple[str, float]]:
        embedder._token_cache.clear()
        ran.clear()
        result = build_query_graph(system).invoke({"question": question})
        return [(p["key"], p["score"]) for p in result["passages"]]

    kept = answer()
    whole = {soft_text(s.get("title"), s["text"].strip()) for s in sample_store.sections.values()}
    assert len(kept) > 5 and not whole & set(ran)
    read_by_model = len(ran)
    monkeypatch.setattr(system.stores, "token_vectors", lambda keys: {})
    by_model = answer()
    assert [k for k, _ in kept] == [k for k, _ in by_model]
    assert [s for _, s in kept] == pytest.approx([s for _, s in by_model], abs=1e-3)
    assert len(whole & set(ran)) >= 5 and len(ran) > read_by_model + 5


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
    # the headings it sits under, outermost first, for the brief to show: 5.3.2 is in 5.3, in 5
    above = [system.stores.lookup("sections", k)["title"] for k in ("CEN_EN1991-9-9_5", "CEN_EN1991-9-9_5.3")]
    assert passage["within"] == [t for t in above if t and t != section["title"]] and passage["within"]


def _one_extract(key: str, section: dict[str, Any]) -> dict[str, Any]:
    """A query state whose extracts are the first words of one section."""
    return {
        "question": "q",
        "started": 0.0,
        "search_question": "q",
        "extracts": {key: [{"start": 0, "text": section["text"][:40], "pages": section["pages"][:1], "score": 1.0}]},
        "candidates": {},
    }


def test_an_annex_is_cited_as_annex_a_in_the_passage_and_the_brief(
    sample_store: SimpleNamespace, embedder: Any
) -> None:
    """The store keys an annex "annex_A"; the answer an engineer reads cites it as "Annex A"."""
    system = System(
        stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=Path("/x")
    )
    key = "CEN_EN1991-9-9_annex_A"
    section = system.stores.lookup("sections", key)
    assert section["section"] == "annex_A" and section["kind"] == "annex"
    state = _one_extract(key, section)
    runtime = query_runtime(system)
    (passage,) = collect_passages(state, runtime)["passages"]  # type: ignore[arg-type]
    assert passage["section"] == "Annex A"
    brief = compose({**state, "passages": [passage]}, runtime)["answer_markdown"]  # type: ignore[arg-type]
    assert "EN 1991-9-9 Annex A" in brief and "annex_A**" not in brief


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
    start, end = text.index("(3) Where"), text.index(near) + len(near)  # the two NOTEs bring their paragraph
    assert near.startswith("NOTE 1")
    assert passage["spans"] == [[0, len(lines[0])], [start, end]]
    assert passage["text"] == lines[0] + GAP + text[start:end]
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


def test_a_quoted_note_brings_the_paragraph_it_qualifies() -> None:
    """An extract that begins at a NOTE is widened back over the NOTEs before it to the paragraph they
    are notes to; one that begins in a paragraph, or a NOTE straight under the heading, is not."""
    text = (
        "3.1 General\n(4)P Design situations shall follow the process.\n(5) A transient situation should be"
        " associated with a nominal duration.\nNOTE 1 Return periods may be set.\nNOTE 2 A minimum velocity may"
        " be set.\n(6) Weather windows."
    )
    note2 = text.index("NOTE 2")
    assert qualified(text, [(note2, note2 + 10)]) == [(text.index("(5)"), note2 + 10)]
    six = text.index("(6)")
    assert qualified(text, [(six, len(text))]) == [(six, len(text))]
    bare = "3.2 Other\nNOTE A note under the heading.\n(1) A rule."
    assert qualified(bare, [(bare.index("NOTE"), 20)]) == [(bare.index("NOTE"), 20)]


def test_a_quoted_list_item_brings_the_sentence_the_list_goes_on_from() -> None:
    """An extract that begins at a list's item is read with what the list is of: the NOTE that opens it
    and the paragraph that NOTE qualifies ("a human impact load" before "a) 2,5 kN ..."); a long list's
    opening is quoted beside the item, the items between left out."""
    from clausewise.nodes.query.collect_passages import LEAD_REACH

    text = (
        "4.12 Accidental actions\n(2) Falls of equipment should be taken into account.\n"
        "(3) Where relevant, a human impact load should be taken into account as an accidental action.\n"
        "NOTE The design value may be defined in the National Annex. Examples of values are:\n"
        "a) 2,5 kN applied over an area 200 mm x 200 mm, to account for stumbling effects\n"
        "b) 6,0 kN applied over an area 300 mm x 300 mm, to account for falling effects\n(4) Effects are assessed."
    )
    item = text.index("b) 6,0")
    assert qualified(text, [(item, item + 20)]) == [(text.index("(3) Where"), item + 20)]
    items = "".join(f"- item {n} of a long list of cases, each a line of its own in the clause\n" for n in range(40))
    long = "5.1 Cases\n(1) The cases are:\n" + items
    last = long.index("- item 39")
    assert last - long.index("(1)") > LEAD_REACH
    assert qualified(long, [(last, len(long))]) == [
        (long.index("(1)"), long.index("- item 0") - 1),
        (last, len(long)),
    ]
    plain = "5.2 Rule\n(1) A rule with a value of 2,0 kN.\n(2) Another rule."
    assert qualified(plain, [(plain.index("(2)"), len(plain))]) == [(plain.index("(2)"), len(plain))]


def test_extracts_merge_across_short_gaps_only() -> None:
    assert merge_spans([(500, 600), (0, 100), (50, 120)]) == [(0, 120), (500, 600)]
    assert merge_spans([(0, 100), (100 + BRIDGE_CHARS, 900)], bridge=BRIDGE_CHARS) == [(0, 900)]
    assert merge_spans([(0, 100), (101 + BRIDGE_CHARS, 900)], bridge=BRIDGE_CHARS) == [
        (0, 100),
        (101 + BRIDGE_CHARS, 900),
    ]


def test_a_table_is_cited_as_its_key_numbers_it_also_from_a_store_that_labelled_it_otherwise(
    sample_store: SimpleNamespace, embedder: Any, monkeypatch: Any
) -> None:
    """An earlier release stored "Table 7.4a" as "Table 7.4A": the passage's label comes from its key,
    which keeps the number as printed, so such a store needs no new ingest."""
    system = System(
        stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=Path("/x")
    )
    key = "CEN_EN1991-9-9_table_5.1"
    section = system.stores.lookup("sections", key)
    assert section["section"] == "Table 5.1"
    doc_table = system.stores.doc_table

    def older(doc: str, table: str) -> dict[str, Any]:
        entries = doc_table(doc, table)
        return {**entries, key: {**section, "section": "TABLE 5.1"}} if table == "sections" else entries

    monkeypatch.setattr(system.stores, "doc_table", older)
    state = _one_extract(key, section)
    (passage,) = collect_passages(state, query_runtime(system))["passages"]  # type: ignore[arg-type]
    assert passage["section"] == "Table 5.1"


def test_the_sections_the_search_found_are_kept_though_no_paragraph_has_the_questions_words(
    sample_store: SimpleNamespace, embedder: Any
) -> None:
    """Relevance found no paragraph of a section with the question's words ("check the trench" where it
    says "inspect the excavation"), but the search found it: nearest or far down, or through a reference
    from a relevant one. It stays in the answer (a long one quoted from the lines it was found by), beside
    what relevance found. Before, only the 25 nearest (and the 20 nearest each sub-question) stayed, and a
    guide's paragraph beside a relevant one ("use a substitute substance") was dropped. None stays when
    relevance found nothing at all, nor when a model read them and found nothing; nor a heading alone."""
    system = System(
        stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=Path("/x")
    )
    near, far, cited = "CEN_EN1991-9-9_5.3.2", "CEN_EN1991-9-9_5.3.1", "CEN_EN1991-9-9_A.1"
    heading = "CEN_EN1991-9-9_annex_A"  # a heading alone says nothing: not kept
    found = "CEN_EN1991-9-9_table_5.1"
    table = system.stores.lookup("sections", found)
    state = {
        "question": "q",
        "started": 0.0,
        "search_question": "how is the load on the roof worked out?",
        "candidates": {
            near: {"via": "vector", "hop": 0, "from_key": None, "score": 0.6},
            far: {"via": "vector", "hop": 0, "from_key": None, "score": 0.3},
            cited: {"via": "reference", "hop": 1, "from_key": near, "score": 0.9},
            heading: {"via": "neighbour", "hop": 1, "from_key": cited},
            found: {"via": "keyword", "hop": 0, "from_key": None, "score": 0.1},
        },
        "extracts": {
            near: [],
            far: [],
            cited: [],
            heading: [],
            found: [{"start": 0, "text": table["text"][:40], "pages": table["pages"][:1], "score": 2.0}],
        },
    }
    passages = {p["key"]: p for p in collect_passages(state, query_runtime(system))["passages"]}  # type: ignore[arg-type]
    assert set(passages) == {near, far, cited, found}
    for key in (near, far, cited):
        section = system.stores.lookup("sections", key)
        assert passages[key]["text"] and passages[key]["text"] in section["text"].strip()
        assert passages[key]["via"] == state["candidates"][key]["via"]  # type: ignore[index]
    unread = state | {"extracts": {found: state["extracts"][found]}}  # type: ignore[index]
    assert [p["key"] for p in collect_passages(unread, query_runtime(system))["passages"]] == [found]  # type: ignore[arg-type]
    nothing = state | {"extracts": {near: [], far: [], cited: [], heading: [], found: []}}
    assert collect_passages(nothing, query_runtime(system))["passages"] == []  # type: ignore[arg-type]

    class ModelTasks(OfflineQueryTasks):
        name = "gemini"  # a model read the section and found nothing: it stays dropped

    model = System(stores=sample_store.stores, embedder=embedder, query_tasks=ModelTasks(), cache_dir=Path("/x"))
    assert [p["key"] for p in collect_passages(state, query_runtime(model))["passages"]] == [found]  # type: ignore[arg-type]


def test_numbered_paragraphs_that_follow_one_another_under_one_heading_are_read_together() -> None:
    """A guide numbering its paragraphs through: "358" to "362" under one heading, in the answer in any
    places, are read one after another in number order at the place of the first of them read, each
    its own passage; "364" (363 is not in the answer) stays where it is; "365" under another heading and
    numbered clauses ("5.2", "5.3") are not moved. A run longer than ``RUN_CHARS`` is read in pieces
    grown from its best placed paragraph."""
    from clausewise.nodes.query.collect_passages import RUN_CHARS, _paragraph_runs

    heading = {"HSE_G1_inspections": {"section": "inspections", "parent": None}, "HSE_G1_water": {"section": "water"}}
    sections: dict[str, dict[str, Any]] = {**heading}
    for n in (358, 359, 360, 361, 362, 364):
        sections[f"HSE_G1_{n}"] = {"section": str(n), "parent": "HSE_G1_inspections"}
    sections["HSE_G1_365"] = {"section": "365", "parent": "HSE_G1_water"}
    sections.update({k("5.2"): {"section": "5.2", "parent": k("5")}, k("5.3"): {"section": "5.3", "parent": k("5")}})
    read = SimpleNamespace(section=sections.get)

    def passage(key: str, section: str, chars: int = 100) -> dict[str, Any]:
        document = "HSG-G1" if key.startswith("HSE") else "EN T-1"
        return {"key": key, "document": document, "section": section, "kind": "clause", "text": "x" * chars}

    order = [("HSE_G1_365", "365"), (k("5.2"), "5.2"), ("HSE_G1_360", "360"), ("HSE_G1_364", "364")]
    order += [(k("5.3"), "5.3"), ("HSE_G1_358", "358"), ("HSE_G1_359", "359")]
    order += [(k(f"7.{n}"), f"7.{n}") for n in range(1, 60)] + [("HSE_G1_362", "362"), ("HSE_G1_361", "361")]
    out = _paragraph_runs(read, [passage(*row) for row in order])
    assert len(out) == len(order)
    assert [p["section"] for p in out[:10]] == ["365", "5.2", "358", "359", "360", "361", "362", "364", "5.3", "7.1"]
    # a run too long to read at once: the best placed paragraph (360) and its better placed neighbours
    size = RUN_CHARS // 3
    long = [passage(key, section, size) if key.startswith("HSE") else passage(key, section) for key, section in order]
    out = [p["section"] for p in _paragraph_runs(read, long)]
    assert out[:6] == ["365", "5.2", "358", "359", "360", "364"]
    assert out[-2:] == ["361", "362"]  # the rest of the run, read together where the first of them stood
    # by the learned ranker, only the paragraphs it reads among the first are read in runs: 361 and
    # 362, far down, keep their places
    joinable = {"HSE_G1_360", "HSE_G1_358", "HSE_G1_359", "HSE_G1_365"}
    out = [p["section"] for p in _paragraph_runs(read, [passage(*row) for row in order], joinable)]
    assert out[:7] == ["365", "5.2", "358", "359", "360", "364", "5.3"]
    assert out[-2:] == ["362", "361"]


# ---------------------------------------------------------------- the learned ranker
def _ranker_file(path: Path, weights: dict[str, float], width: int | None = None) -> Path:
    """A stand-in learned ranker (an ONNX graph): each passage's score is its signals weighted by ``weights``."""
    import onnx
    from onnx import TensorProto, helper

    names = collect_module.FEATURES
    width = width or len(names)
    w = [weights.get(names[i], 0.0) if i < len(names) else 0.0 for i in range(width)]
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["signals", "weights"], ["score"])],
        "stand_in_ranker",
        [helper.make_tensor_value_info("signals", TensorProto.FLOAT, [None, width])],
        [helper.make_tensor_value_info("score", TensorProto.FLOAT, [None, 1])],
        [helper.make_tensor("weights", TensorProto.FLOAT, [width, 1], w)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.write_bytes(model.SerializeToString())
    return path


def test_the_learned_ranker_orders_the_passages_and_a_cited_table_follows_the_clause_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A ranker that reads the similarity backwards (and puts tables last) puts the least similar first:
    the fused order is replaced, not merely nudged; 6.1's Table 6.1 still comes right after 6.1, which
    names it (its standing comes from 6.1); each passage's score is the ranker's."""
    similarity = {k("6.1"): 0.5, k("table_6.1"): 0.1, k("7.1"): 0.6, k("8.1"): 0.7, k("3.1"): 0.2}
    passages = [passage(key) for key in similarity]
    fused = [p["key"] for p in rank(deps_with(), {"search_question": "q"}, passages, [similarity])]  # type: ignore[arg-type]
    assert fused[0] == k("8.1")
    monkeypatch.setattr(
        collect_module, "RANKER", _ranker_file(tmp_path / "r.onnx", {"similarity": -1.0, "table": -10.0})
    )
    monkeypatch.setattr(collect_module, "FUSED_SHARE", 0.0)  # the learned places alone
    ranked = rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    order = [p["key"] for p in ranked]
    assert order[:3] == [k("3.1"), k("6.1"), k("table_6.1")]
    assert order[3:] == [k("7.1"), k("8.1")]
    assert {p["key"]: p["score"] for p in ranked}[k("3.1")] == 0.0  # the first place, negated


def test_the_learned_places_are_blended_with_the_fused_places_and_a_long_passage_pays_for_its_length(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Fused order 8.1, 7.1, 6.1 (its table after it), 3.1; a ranker reading the similarity backwards
    puts them 3.1, 6.1, 7.1, 8.1, the table last. Each passage's place is its learned place plus half its
    fused place: 6.1 (1 + 1) and 3.1 (0 + 2) tie and keep their fused order, 7.1 (2 + 0.5) and 8.1
    (3 + 0) follow. Made long, 3.1 pays LENGTH_PLACES per e-fold of its length and goes last but the table."""
    similarity = {k("6.1"): 0.5, k("table_6.1"): 0.1, k("7.1"): 0.6, k("8.1"): 0.7, k("3.1"): 0.2}
    monkeypatch.setattr(
        collect_module, "RANKER", _ranker_file(tmp_path / "r.onnx", {"similarity": -1.0, "table": -10.0})
    )

    def ranked(long: str | None = None) -> list[dict[str, Any]]:
        passages = [passage(key) for key in similarity]
        for p in passages:
            if p["key"] == long:
                p["text"] += " more words" * 300  # about 3,300 characters: 1.9 e-folds beyond LENGTH_FROM
        return rank(deps_with(), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]

    out = ranked()
    assert [p["key"] for p in out] == [k("6.1"), k("table_6.1"), k("3.1"), k("7.1"), k("8.1")]
    assert {p["key"]: p["score"] for p in out}[k("3.1")] == pytest.approx(-2.0)
    assert [p["key"] for p in ranked(long=k("3.1"))] == [k("6.1"), k("table_6.1"), k("7.1"), k("8.1"), k("3.1")]


def test_a_table_the_ranker_reads_far_down_is_not_brought_forward_by_the_clause_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """6.1 names Table 6.1, whose standing in the fused order comes from it: in the fused order the
    table follows 6.1. A ranker that reads tables last (and the rest by similarity) leaves it last:
    a clause's table is brought forward only when the ranker reads it among the first 10 on its own."""
    others = [k(c) for c in ("5.2", "5.3.1", "5.3.2", "5.3.10", "7.1", "8.1", "1.1", "4.1", "5.1", "5.4", "3.1")]
    similarity = {k("6.1"): 0.9, k("table_6.1"): 0.3, **{key: 0.85 - 0.03 * i for i, key in enumerate(others)}}

    def order() -> list[str]:
        passages = [passage(key) for key in similarity]
        return [p["key"] for p in rank(deps_with(), {"search_question": "q"}, passages, [similarity])]  # type: ignore[arg-type]

    assert order()[:2] == [k("6.1"), k("table_6.1")]
    monkeypatch.setattr(
        collect_module, "RANKER", _ranker_file(tmp_path / "r.onnx", {"similarity": 1.0, "table": -10.0})
    )
    monkeypatch.setattr(collect_module, "FUSED_SHARE", 0.0)  # the learned places alone
    learned = order()
    assert learned[0] == k("6.1") and learned[1:-1] == others and learned[-1] == k("table_6.1")


def test_the_signals_the_ranker_reads_are_those_the_fused_order_is_made_of() -> None:
    """``features``, when given, is filled with each passage's signals, one per name the ranker reads
    (the similarity, the fused score, the lift from 6.1 to its table, places and gaps in the answer)."""
    similarity = {k("6.1"): 0.5, k("table_6.1"): 0.1, k("7.1"): 0.6}
    features: dict[str, dict[str, float]] = {}
    rank(deps_with(), {"search_question": "q"}, [passage(key) for key in similarity], [similarity], None, features)  # type: ignore[arg-type]
    assert set(features) == set(similarity)
    assert all(
        set(f) >= set(collect_module.FEATURES) - {"soft_match", "soft_part", "read_again"} for f in features.values()
    )
    table = features[k("table_6.1")]
    assert table["similarity"] == pytest.approx(0.1) and table["table"] == 1.0
    assert table["lift"] > 0 and table["lifted"] == pytest.approx(table["fused"] + table["lift"])
    assert features[k("7.1")]["similarity_place"] == 0.0 and features[k("7.1")]["similarity_gap"] == 0.0
    assert features[k("6.1")]["similarity_gap"] == pytest.approx(-0.1)


def test_the_ranker_reads_where_a_passage_stands_among_the_nearest_its_heading_chapter_and_best_place() -> None:
    """Three of the four passages are printed under 5.3 (chapter 5): their heading's and chapter's share
    of the nearest passages is 3/4, 7.1's 1/4; 7.1 is the nearest to the sub-question, so its best
    place is the first however far it is from the whole question; the fused order's first passages
    under its heading and chapter are counted; a value is a number, not a clause's paragraph number."""
    question = {k("5.3.1"): 0.9, k("5.3.2"): 0.8, k("5.3.10"): 0.7, k("7.1"): 0.1}
    part = {k("7.1"): 0.9, k("5.3.1"): 0.2}
    features: dict[str, dict[str, float]] = {}
    passages = [passage(key) for key in question]
    passages[0]["text"] += " The coefficient is 0,8 or 1,2 for 30 m."
    state = {"search_question": "q", "sub_questions": ["q", "part"]}
    rank(deps_with(), state, passages, [question, part], None, features)  # type: ignore[arg-type]
    for key in (k("5.3.1"), k("5.3.2"), k("5.3.10")):
        assert features[key]["parent_share"] == pytest.approx(0.75)
        assert features[key]["chapter_share"] == pytest.approx(0.75)
        assert features[key]["head_parent"] == 3.0 and features[key]["head_chapter"] == 3.0
    assert features[k("7.1")]["parent_share"] == pytest.approx(0.25) and features[k("7.1")]["head_chapter"] == 1.0
    assert features[k("7.1")]["query_place"] == 0.0
    assert features[k("5.3.10")]["query_place"] == pytest.approx(math.log1p(2))
    assert features[k("5.3.1")]["numbers"] > 0 and features[k("5.3.10")]["numbers"] == 0.0


def test_the_ranker_reads_how_many_of_the_first_passages_are_printed_on_the_pages_around_a_passage() -> None:
    """Of the passages the fused order reads first, those printed in the same document within
    ``PAGE_REACH`` pages of a passage, the passage itself left out: a guide whose numbered paragraphs
    keep no heading above them still prints a topic's rules pages together."""
    assert collect_module.PAGE_REACH == 1
    printed = {"5.2": [10], "5.3.1": [11], "5.3.2": [12, 13], "5.3.10": [40], "7.1": [14], "8.1": [9]}
    passages = []
    for code, pages in printed.items():
        passages.append(passage(k(code)) | {"page": pages[0], "pages": pages})
    passages[1]["document"] = "T-2"  # page 11 of another document is no neighbour
    head = passages[:4]
    near = near_head(passages, head)
    assert near[k("5.2")] == 0.0  # page 10: page 11 is another document's, 5.3.2 starts on 12
    assert near[k("5.3.2")] == 0.0 and near[k("5.3.10")] == 0.0
    assert near[k("7.1")] == 1.0  # page 14, past the head: 5.3.2 ends on 13
    assert near[k("8.1")] == 1.0  # page 9: 5.2 on 10
    features: dict[str, dict[str, float]] = {}
    similarity = {p["key"]: 0.9 - 0.1 * i for i, p in enumerate(passages)}
    rank(deps_with(), {"search_question": "q"}, passages, [similarity], None, features)  # type: ignore[arg-type]
    assert features[k("7.1")]["head_pages"] == 1.0 and features[k("5.3.10")]["head_pages"] == 0.0


@pytest.mark.parametrize("broken", ["missing", "not a model", "other width", "no numbers"])
def test_without_a_usable_ranker_the_fused_order_stands(
    broken: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """No ranker installed, a damaged file, a ranker for other signals, one that gives NaN: the answer
    keeps every passage in the fused order, and a broken ranker is named in the log."""
    similarity = {k("6.1"): 0.5, k("table_6.1"): 0.45, k("7.1"): 0.6, k("8.1"): 0.7, k("3.1"): 0.2}
    fused = [
        p["key"] for p in rank(deps_with(), {"search_question": "q"}, [passage(x) for x in similarity], [similarity])
    ]  # type: ignore[arg-type]
    path = tmp_path / f"{broken.replace(' ', '_')}.onnx"
    if broken == "not a model":
        path.write_bytes(b"\x00\x01 this is not an ONNX file")
    elif broken == "other width":
        _ranker_file(path, {"similarity": -1.0}, width=len(collect_module.FEATURES) + 3)
    elif broken == "no numbers":
        _ranker_file(path, {"similarity": math.nan})
    monkeypatch.setattr(collect_module, "RANKER", path)
    with caplog.at_level("WARNING", logger=collect_module.__name__):
        ranked = rank(deps_with(), {"search_question": "q"}, [passage(x) for x in similarity], [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked] == fused
    assert (str(path) in caplog.text) == (broken != "missing")


def test_the_installed_ranker_reads_as_many_signals_as_collect_passages_gives() -> None:
    """The ranker shipped with the package loads and scores rows of exactly ``FEATURES``' width."""
    import numpy as np

    collect_module._ranker.cache_clear()
    session = collect_module._ranker(str(Path(collect_module.__file__).with_name("ranker.onnx")))
    assert session is not None
    (out, *_) = session.run(
        None, {session.get_inputs()[0].name: np.zeros((3, len(collect_module.FEATURES)), np.float32)}
    )
    assert np.isfinite(np.asarray(out)).all() and np.asarray(out).size == 3


class _Judge:
    """A stand-in cross-encoder: each text's score by the first of ``scores``' keys its text holds;
    ``fail`` raises instead, ``scores`` None gives NaN."""

    def __init__(self, scores: dict[str, float] | None, fail: bool = False) -> None:
        self._scores, self._fail, self.read = scores, fail, []

    def scores(self, query: str, texts: list[str]) -> list[float]:
        if self._fail:
            raise RuntimeError("the model is down")
        self.read.append((query, texts))
        if self._scores is None:
            return [math.nan] * len(texts)
        return [next(v for key, v in self._scores.items() if SECTIONS[key] in text) for text in texts]


def test_the_cross_encoder_reads_the_first_passages_again_and_moves_them_by_its_places(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The ranker reads the similarity backwards: 3.1, 6.1, 7.1, 8.1 (the fused places left out). A
    cross-encoder that reads 8.1 best and 3.1 worst moves each by CROSS_SHARE x its place by it: 3.1
    (0 + 3), 6.1 (1 + 2), 7.1 (2 + 1), 8.1 (3 + 0) tie and keep their order at 0.5; at 2, 8.1 comes
    first and 3.1 last. It reads the question with each passage's headings, title and text, and only
    the first CROSS_PASSAGES: the rest keep their order after them."""
    similarity = {k("6.1"): 0.5, k("7.1"): 0.6, k("8.1"): 0.7, k("3.1"): 0.2}
    monkeypatch.setattr(collect_module, "RANKER", _ranker_file(tmp_path / "r.onnx", {"similarity": -1.0}))
    monkeypatch.setattr(collect_module, "FUSED_SHARE", 0.0)
    judge = _Judge({k("8.1"): 4.0, k("7.1"): 3.0, k("6.1"): 2.0, k("3.1"): 1.0})

    def order() -> list[str]:
        passages = [passage(key) for key in similarity]
        state = {"question": "the question", "search_question": "q"}
        return [p["key"] for p in rank(deps_with(cross=judge), state, passages, [similarity])]  # type: ignore[arg-type]

    monkeypatch.setattr(collect_module, "CROSS_SHARE", 0.0)
    assert order() == [k("3.1"), k("6.1"), k("7.1"), k("8.1")]
    monkeypatch.setattr(collect_module, "CROSS_SHARE", 2.0)
    assert order() == [k("8.1"), k("7.1"), k("6.1"), k("3.1")]
    state = {"question": "the question", "search_question": "q"}
    ranked = rank(deps_with(cross=judge), state, [passage(key) for key in similarity], [similarity])  # type: ignore[arg-type]
    assert all(type(p["score"]) is float for p in ranked)  # a plain number: the state is serialised
    query, texts = judge.read[-1]
    assert query == "the question" and texts[0] == cross_text(passage(k("3.1")))
    monkeypatch.setattr(collect_module, "CROSS_PASSAGES", 2)  # it reads 3.1 and 6.1 only: 6.1 first
    assert order() == [k("6.1"), k("3.1"), k("7.1"), k("8.1")]
    assert len(judge.read[-1][1]) == 2


def test_the_cross_encoder_does_not_lift_front_matter(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """8.1 made a title page: the cross-encoder reads it best, yet it keeps its last place among those read."""
    similarity = {k("6.1"): 0.5, k("7.1"): 0.6, k("8.1"): 0.7, k("3.1"): 0.2}
    monkeypatch.setattr(collect_module, "RANKER", _ranker_file(tmp_path / "r.onnx", {"similarity": -1.0}))
    monkeypatch.setattr(collect_module, "FUSED_SHARE", 0.0)
    monkeypatch.setattr(collect_module, "CROSS_SHARE", 2.0)
    judge = _Judge({k("8.1"): 9.0, k("7.1"): 3.0, k("6.1"): 2.0, k("3.1"): 1.0})
    passages = [passage(key) | ({"kind": "front"} if key == k("8.1") else {}) for key in similarity]
    ranked = rank(deps_with(cross=judge), {"search_question": "q"}, passages, [similarity])  # type: ignore[arg-type]
    assert [p["key"] for p in ranked][-1] == k("8.1")


@pytest.mark.parametrize("fail", [True, False])
def test_a_cross_encoder_that_fails_or_gives_no_numbers_leaves_the_order_and_says_so(
    fail: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    similarity = {k("6.1"): 0.5, k("7.1"): 0.6, k("8.1"): 0.7, k("3.1"): 0.2}
    monkeypatch.setattr(collect_module, "RANKER", _ranker_file(tmp_path / "r.onnx", {"similarity": -1.0}))
    monkeypatch.setattr(collect_module, "CROSS_SHARE", 2.0)

    def order(cross: Any) -> list[str]:
        passages = [passage(key) for key in similarity]
        return [p["key"] for p in rank(deps_with(cross=cross), {"search_question": "q"}, passages, [similarity])]  # type: ignore[arg-type]

    with caplog.at_level("WARNING", logger=collect_module.__name__):
        assert order(_Judge(None, fail=fail)) == order(None)
    assert "cross-encoder" in caplog.text


def test_a_cross_text_is_the_headings_above_the_label_and_the_quoted_text() -> None:
    p = {"section": "5.2", "title": "Roof snow", "within": ["Snow", "Loads"], "text": "(1) The load ..."}
    assert cross_text(p) == "Snow > Loads > 5.2 Roof snow\n(1) The load ..."
