"""The question sets kept in eval/ (written from the PDFs, not from clausewise's answers): each loads as
`clausewise eval` reads it, and, where ../shared/corpus is present, every evidence phrase is printed on
the page its item names, as the scorer matches it (lower case, whitespace collapsed, commas as dots)."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from clausewise.evaluation import load_questions
from clausewise.evaluation.scoring import normalise_text

SETS = sorted((Path(__file__).resolve().parents[2] / "eval").glob("*.jsonl"))
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FILES = {  # an item's "doc" -> its PDF
    "EN 1991-1-1": "raw/EN_1991-1-1_2002.pdf",
    "EN 1991-1-2": "raw/EN_1991-1-2_2002.pdf",
    "EN 1991-1-3": "raw/EN_1991-1-3_2003.pdf",
    "EN 1991-1-4": "raw/EN_1991-1-4_2005.pdf",
    "EN 1991-1-5": "raw/EN_1991-1-5_2003.pdf",
    "EN 1991-1-6": "raw/EN_1991-1-6_2005.pdf",
    "EN 1991-1-7": "raw/EN_1991-1-7_2006.pdf",
    "UFC3-301-01": "public/UFC_3-301-01_2023_C4.pdf",
    "FEMA-P-58-6": "public/FEMA_P-58-6_2018.pdf",
    "HSG150": "public/HSE_HSG150_2006.pdf",
    "Guide-tolerances-materials-workmanship": "public/MBIE_Tolerances_Guide_2015.pdf",
}


def test_there_are_sets() -> None:
    assert len(SETS) >= 3


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_a_set_loads_with_essential_evidence_for_every_question(path: Path) -> None:
    questions = load_questions(path)
    assert len(questions) >= 8
    for q in questions:
        assert any(e.get("essential", True) for e in q["evidence"]), q["id"]
        assert all(e["doc"] in FILES for e in q["evidence"]), q["id"]


@pytest.mark.corpus
@pytest.mark.parametrize("path", SETS, ids=lambda p: p.name)
def test_every_evidence_phrase_is_on_its_page(path: Path) -> None:
    needed = {FILES[e["doc"]] for q in load_questions(path) for e in q["evidence"]}
    if not all((CORPUS / f).exists() for f in needed):
        pytest.skip("../shared/corpus is absent")
    pages: dict[tuple[str, int], str] = {}
    missing = []
    for q in load_questions(path):
        for e in q["evidence"]:
            at = (FILES[e["doc"]], e["page"])
            if at not in pages:
                with pymupdf.open(CORPUS / at[0]) as doc:
                    pages[at] = normalise_text(doc[at[1] - 1].get_text())
            if normalise_text(e["must_contain"]) not in pages[at]:
                missing.append(f"{q['id']} {e['doc']} p{e['page']} {e['must_contain']!r}")
    assert not missing
