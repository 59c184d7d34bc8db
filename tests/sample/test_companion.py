"""The companion sample (clausewise/sample/companion.json): a second fictional code, EN 1991-9-8, that
cites the main sample EN 1991-9-9 by clause and table. Its text as data, both PDF variants, both
documents ingested into one store, and the demo question answered over them without any passage
quoted twice."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pymupdf
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from clausewise.sample import COMPANION_TITLE, PAGE_HEIGHT, PAGE_WIDTH, SAMPLE_TITLE, TEXTS, write_sample_pdf
from clausewise.sample.text import (
    Expression,
    Heading,
    Lines,
    Paragraph,
    Symbol,
    Table,
    load_text,
)

MAIN, COMPANION = "CEN_EN1991-9-9", "CEN_EN1991-9-8"
QUESTION = "Which exposure coefficient Ce applies to a sheltered site, and what may the National Annex change?"


def _words(text: str) -> str:
    return " ".join(text.split())


def _sentences(blocks: list[Any]) -> set[str]:
    out = set()
    for b in blocks:
        if isinstance(b, Paragraph):
            out.add(_words(b.text))
        elif isinstance(b, Lines):
            out.update(_words(line) for line in b.lines)
    return out


@pytest.fixture(scope="module")
def companion_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_pdf(tmp_path_factory.mktemp("companion") / "EN_1991-9-8_2025.pdf", text="companion")


@pytest.fixture(scope="module")
def companion_scanned_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_pdf(
        tmp_path_factory.mktemp("companion-scan") / "EN_1991-9-8_2025_scan.pdf",
        scanned=True,
        designation="EN 1991-9-8",
        text="companion",
    )


# ---------------------------------------------------------------- the text as data
def test_the_companion_ships_in_the_package_and_loads() -> None:
    assert TEXTS == {"main": "text.json", "companion": "companion.json"}
    raw = json.loads(files("clausewise.sample").joinpath("companion.json").read_text(encoding="utf-8"))
    assert set(raw) >= {"cover", "foreword", "body"}
    assert "not a standard" in raw["cover"]["notice"] and "fictional" in " ".join(raw["cover"]["title_lines"])

    text = load_text("EN 1991-9-8", 2025, "companion")
    kinds = Counter(type(b).__name__ for b in text.body)
    assert kinds["Table"] == 1 and kinds["Expression"] == 1 and kinds["PageBreak"] == 1 and kinds["Figure"] == 0
    assert kinds["Symbol"] >= 5 and kinds["Heading"] > 15 and kinds["Paragraph"] > 25
    assert text.body[0] == Heading("Section 1 General", gap_before=0)
    (table,) = (b for b in text.body if isinstance(b, Table))
    assert table.caption == "Table 2.1 \u2014 Garden factor cg and \u03c8 factors for gusts"
    assert table.header == ["Site category", "cg", "\u03c80", "\u03c82"] and len(table.rows) == 3
    assert all(len(row) == len(table.header) == len(table.col_widths) for row in table.rows)
    (expression,) = (b for b in text.body if isinstance(b, Expression))
    assert expression.number == "(3.1)"
    clauses = [b.text.split()[0] for b in text.body if isinstance(b, Heading) and re.match(r"\d\.\d", b.text)]
    assert clauses[:2] == ["1.1", "1.2"] and "2.2" in clauses and "3.1" in clauses
    assert any(isinstance(b, Paragraph) and b.text.startswith("NOTE") for b in text.body)
    assert any(isinstance(b, Symbol) and b.symbol == "qg" for b in text.body)
    assert " ".join(text.cover.title_lines) == COMPANION_TITLE != SAMPLE_TITLE


def test_the_companion_cites_the_main_sample_by_clause_and_table_and_fills_in_its_own_designation() -> None:
    text = load_text("EN 1234-8", 2031, "companion")
    dump = repr(text)
    assert "{designation}" not in dump and "{year}" not in dump
    assert text.cover.reference == "Ref. No. EN 1234-8:2031 (E)"
    assert text.foreword[1].text.startswith("This document (EN 1234-8:2031) is")  # type: ignore[union-attr]
    body = " ".join(_sentences(text.body))
    for cited in ("EN 1991-9-9, Table 5.1", "EN 1991-9-9, Table 4.1", "EN 1991-9-9, 5.2(4)", "EN 1991-9-9, 1.3"):
        assert cited in body  # the cited designation is the main sample's, whatever this one is called


def test_the_two_codes_share_no_sentence() -> None:
    main = load_text("EN 1991-9-9", 2025)
    companion = load_text("EN 1991-9-8", 2025, "companion")
    assert not (_sentences(main.foreword + main.body) & _sentences(companion.foreword + companion.body))
    assert main.cover.notice != companion.cover.notice and main.cover.label != companion.cover.label


def test_unknown_texts_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown sample text 'appendix'"):
        write_sample_pdf(tmp_path / "x.pdf", text="appendix")
    with pytest.raises(ValueError, match="unknown sample text"):
        load_text("EN 1", 2025, "appendix")
    assert not (tmp_path / "x.pdf").exists()


# ---------------------------------------------------------------- the PDFs
def _body_words(doc: pymupdf.Document) -> str:
    """The words of every page after the cover, without the running header and page number."""
    pages = []
    for page in list(doc)[1:]:
        lines = page.get_text().splitlines()
        assert lines[0].endswith(":2025 (E)") and lines[1].isdigit()
        pages.append(" ".join(lines[2:]))
    return _words(" ".join(pages))


def test_the_companion_pdf_round_trips_its_text(companion_pdf: Path) -> None:
    text = load_text("EN 1991-9-8", 2025, "companion")
    with pymupdf.open(companion_pdf) as doc:
        assert 3 <= doc.page_count <= 5
        assert doc.metadata["title"] == f"EN 1991-9-8:2025 - {COMPANION_TITLE}"  # from the companion's cover
        assert doc.metadata["creationDate"] == "D:20250101000000Z"
        for page in doc:
            assert (page.rect.width, page.rect.height) == (PAGE_WIDTH, PAGE_HEIGHT)
            assert page.get_images() == []
        cover = _words(doc[0].get_text())
        assert "EN 1991-9-8:2025" in cover and _words(text.cover.notice) in cover
        body = _body_words(doc)
    # every paragraph and line comes back whole and in order, even across the page break
    at = 0
    for block in text.foreword + text.body:
        pieces = [block.text] if isinstance(block, Paragraph) else block.lines if isinstance(block, Lines) else []
        for piece in pieces:
            found = body.find(_words(piece), at)
            assert found >= 0, piece
            at = found
    assert "Table 2.1 \u2014 Garden factor cg and \u03c8 factors for gusts" in body
    assert "qg = cp \u00b7 cg \u00b7 qb (3.1)" in body


def test_the_scanned_companion_is_an_image_per_page_with_the_same_words(
    companion_pdf: Path, companion_scanned_pdf: Path
) -> None:
    with pymupdf.open(companion_scanned_pdf) as scan, pymupdf.open(companion_pdf) as born:
        assert scan.page_count == born.page_count
        assert scan.metadata["title"] == born.metadata["title"]
        for scanned_page, born_page in zip(scan, born, strict=True):
            assert len(scanned_page.get_image_info()) == 1 and scanned_page.get_drawings() == []
            assert {span["type"] for span in scanned_page.get_texttrace()} == {3}
            assert scanned_page.get_text().split() == born_page.get_text().split()


def test_the_default_sample_is_unchanged_and_every_variant_deterministic(tmp_path: Path, sample_pdf: Path) -> None:
    def sha(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    explicit = write_sample_pdf(tmp_path / "main.pdf", designation="EN 1991-9-9", text="main")
    assert sha(explicit) == sha(sample_pdf)
    first = write_sample_pdf(tmp_path / "c1.pdf", scanned=True, text="companion")
    again = write_sample_pdf(tmp_path / "c2.pdf", scanned=True, designation="EN 1991-9-8", text="companion")
    assert sha(first) == sha(again)  # the companion's own designation is the default
    old_demo = write_sample_pdf(tmp_path / "old.pdf", scanned=True, designation="EN 1991-9-8")
    assert sha(old_demo) != sha(first)


# ---------------------------------------------------------------- both ingested into one store
@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory,
    ingest_pdf: Callable[..., Any],
    sample_pdf: Path,
    companion_scanned_pdf: Path,
) -> SimpleNamespace:
    """The demo's store: the main sample born-digital, then the companion scanned-style."""
    store_dir = tmp_path_factory.mktemp("demo-store")
    _, main_out = ingest_pdf(store_dir, sample_pdf)
    stores, companion_out = ingest_pdf(store_dir, companion_scanned_pdf)
    return SimpleNamespace(dir=store_dir, stores=stores, main=main_out, companion=companion_out)


def test_both_ingest_and_the_master_list_has_both(both: SimpleNamespace) -> None:
    assert (both.main["status"], both.main["doc_key"]) == ("ingested", MAIN)
    assert (both.companion["status"], both.companion["doc_key"]) == ("ingested", COMPANION)
    docs = both.stores.documents()
    assert docs[MAIN]["status"] == docs[COMPANION]["status"] == "ingested"
    assert docs[COMPANION]["title"] == f"EN 1991-9-8:2025 - {COMPANION_TITLE}"
    assert any(src.startswith(COMPANION + "_") for src in docs[MAIN]["referenced_by"])  # cited by the companion
    sections = both.stores.doc_table(COMPANION, "sections")
    for key in ("1.1", "1.3", "2.1", "2.2", "3.1", "3.2", "table_2.1", "expression_3.1"):
        assert f"{COMPANION}_{key}" in sections
    assert "Ce = 1,2" in _words(sections[f"{COMPANION}_2.2"]["text"])
    # the note printed under Table 2.1, inside its box, is a line under its rows, not a row of its own
    table = sections[f"{COMPANION}_table_2.1"]
    assert _words(table["text"].split("\n")[-1]).startswith("a) The categories follow the rows")
    assert table["rows"][-1][0].startswith("Sheltered") and len(table["rows"]) == 4


def test_the_companions_references_to_the_main_sample_point_into_it(both: SimpleNamespace) -> None:
    main_sections = set(both.stores.doc_table(MAIN, "sections"))
    references = both.stores.doc_table(COMPANION, "references")
    cited = [r for refs in references.values() for r in refs if "1991-9-9" in r["raw"]]
    assert len(cited) >= 10
    for ref in cited:
        assert ref["document"] == MAIN, ref
        assert ref["target"] == MAIN or ref["target"].startswith(MAIN + "_"), ref
        assert ref["target"] == MAIN or ref["target"] in main_sections, ref  # a place that exists there
    targets = {r["target"] for r in cited}
    assert {f"{MAIN}_1.3", f"{MAIN}_1.4", f"{MAIN}_5.2"} <= targets
    by_source = {src: {r["target"] for r in refs} for src, refs in references.items()}
    assert f"{MAIN}_5.2" in by_source[f"{COMPANION}_2.2"]  # "see EN 1991-9-9, 5.2(4)"
    assert f"{MAIN}_1.3" in by_source[f"{COMPANION}_1.3"]  # "the meaning it has in EN 1991-9-9, 1.3"


def test_the_demo_answer_quotes_no_text_twice(both: SimpleNamespace, embedder: Any, tmp_path: Path) -> None:
    from clausewise.graph.query import build_query_graph
    from clausewise.graph.state import QueryContext

    graph = build_query_graph(
        stores=both.stores, embedder=embedder, checkpointer=InMemorySaver(), cache_dir=tmp_path / "cache"
    )
    answer = graph.invoke(
        {"question": QUESTION}, config={"configurable": {"thread_id": "demo"}}, context=QueryContext()
    )
    passages = answer["passages"]
    assert passages, answer["answer_markdown"]
    texts = Counter(_words(p["text"]) for p in passages)
    assert [t for t, n in texts.items() if n > 1] == []
    keys = [p["key"] for p in passages]
    assert len(keys) == len(set(keys))
    assert any(k.startswith(MAIN + "_") for k in keys) and any(k.startswith(COMPANION + "_") for k in keys)
    assert f"{MAIN}_table_5.1" in keys
