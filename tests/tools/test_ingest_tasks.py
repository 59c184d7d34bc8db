"""Offline ingestion rules (tools/ingest_tasks.py): precedence rules and kv terms, on the ingested sample
and on small synthetic sections."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from clausewise.keys import DocId
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs
from clausewise.tools.ingest_tasks import extract_terms, find_precedence

DOC = "CEN_EN1991-9-9"


@pytest.fixture(scope="module")
def store(sample_store: SimpleNamespace) -> Stores:
    return Stores(LocalBlobs(sample_store.dir))


def _section(text: str, key: str = f"{DOC}_9.9", **extra: Any) -> dict[str, Any]:
    return {"key": key, "text": text, "kind": "clause", "title": "", **extra}


# ---------------------------------------------------------------- precedence on the sample
def _rules(store: Stores, code: str) -> list[dict[str, Any]]:
    return store.lookup("precedence", f"{DOC}_{code}") or []


@pytest.mark.parametrize(
    ("code", "evidence"), [("4.1", "4.1(1)"), ("4.2", "4.2(2)"), ("5.2", "5.2(3)"), ("table_4.1", "Table 4.1")]
)
def test_ndp_list_in_the_foreword_creates_rules(store: Stores, code: str, evidence: str) -> None:
    ndp = [r for r in _rules(store, code) if r["type"] == "ndp"]
    assert len(ndp) == 1, _rules(store, code)
    rule = ndp[0]
    assert rule["key"] == f"{DOC}_{code}"
    assert rule["evidence"] == evidence
    source = store.lookup("sections", rule["source_key"])
    assert source is not None and source["kind"] == "front"  # the foreword's national annex section
    assert "National choice is allowed" in source["text"]
    assert "National Annex" in rule["rule"]


def test_note_may_give_a_different_value_creates_a_rule(store: Stores) -> None:
    rules = _rules(store, "4.1")
    na = [r for r in rules if r["type"] == "national-annex"]
    assert na and "may give a different value" in na[0]["evidence"]
    assert na[0]["source_key"] == f"{DOC}_4.1"
    recommended = [r for r in rules if r["type"] == "recommended-value"]
    assert recommended and "0,5" in recommended[0]["evidence"]
    assert any(r["type"] == "national-annex" and "different rule" in r["evidence"] for r in _rules(store, "5.2"))


@pytest.mark.parametrize("code", ["A.1", "A.2"])
def test_annex_clauses_get_an_informative_rule(store: Stores, code: str) -> None:
    informative = [r for r in _rules(store, code) if r["type"] == "informative"]
    assert len(informative) == 1
    assert informative[0]["source_key"] == f"{DOC}_annex_A"
    assert "informative" in informative[0]["rule"]


def test_annex_itself_is_marked_informative_and_normative_clauses_are_not(store: Stores) -> None:
    assert any(r["type"] == "informative" for r in _rules(store, "annex_A"))
    for code in ("4.1", "5.2", "5.3.2", "1.1"):
        assert not any(r["type"] == "informative" for r in _rules(store, code))


def test_precedence_summary(store: Stores, sample_store: SimpleNamespace) -> None:
    total = sum(len(store.lookup("precedence", k) or []) for k in sample_store.sections)
    assert total == sample_store.output["summary"]["precedence_rules"]


# ---------------------------------------------------------------- precedence, synthetic
def test_find_precedence_units() -> None:
    doc = DocId("CEN", "EN1991-9-9")
    known = {f"{DOC}_table_4.1", f"{DOC}_A.2"}
    section = _section(
        "National choice is allowed in EN 1991-9-9 through clauses:\n4.1(1), A.2(3), Table 4.1, "
        "Figure 5.1\nThis document supersedes EN 1991-1-3:2003.",
        key=f"{DOC}_foreword",
    )
    rules = find_precedence(doc, section, known)
    ndp = {r["key"]: r for r in rules if r["type"] == "ndp"}
    assert set(ndp) == {f"{DOC}_4.1", f"{DOC}_A.2", f"{DOC}_table_4.1", f"{DOC}_figure_5.1"}
    assert all(r["source_key"] == f"{DOC}_foreword" for r in ndp.values())
    supersedes = [r for r in rules if r["type"] == "supersedes"]
    assert len(supersedes) == 1 and supersedes[0]["key"] == DOC
    assert "EN 1991-1-3:2003" in supersedes[0]["rule"]


def test_find_precedence_no_rules_in_plain_text() -> None:
    doc = DocId("CEN", "EN1991-9-9")
    assert find_precedence(doc, _section("(1) The leaf load acts vertically."), set()) == []


# ---------------------------------------------------------------- terms on the sample
@pytest.mark.parametrize(
    ("term", "meaning"),
    [
        ("ce", "exposure coefficient"),
        ("sk", "characteristic value of leaf load on the ground"),
        ("\u03bc", "shape coefficient"),
        ("s", "leaf load on the roof"),
        ("\u03c80", "factor for the combination value of a variable action"),
    ],
)
def test_symbols_with_meanings(store: Stores, term: str, meaning: str) -> None:
    entry = store.kv()[term]
    assert {"text": meaning, "source": f"{DOC}_1.3", "type": "equivalent"} in entry["equivalents"]


def test_defined_terms(store: Stores) -> None:
    entry = store.kv()["garden structure"]
    assert any(
        e["type"] == "definition" and e["source"] == f"{DOC}_1.4.3" and e["text"].startswith("light structure")
        for e in entry["equivalents"]
    )


def test_kv_summary_counts_this_documents_terms(store: Stores, sample_store: SimpleNamespace) -> None:
    own = [
        e
        for entry in store.kv().values()
        for e in entry["equivalents"] + entry["values"]
        if e["source"].startswith(DOC + "_")
    ]
    assert len(own) == sample_store.output["summary"]["kv_entries"] > 0


# ---------------------------------------------------------------- terms, synthetic
def test_extract_terms_units() -> None:
    symbols = {
        "key": f"{DOC}_1.3",
        "kind": "clause",
        "title": "Symbols",
        "text": "1.3 Symbols\nCe exposure coefficient\nsk characteristic value of snow load\nNot a symbol line.",
    }
    terms = extract_terms(symbols)
    assert {"term": "Ce", "equivalent": "exposure coefficient", "source": f"{DOC}_1.3"} in terms
    assert {"term": "sk", "equivalent": "characteristic value of snow load", "source": f"{DOC}_1.3"} in terms
    values = extract_terms(
        {
            "key": f"{DOC}_5.2",
            "kind": "clause",
            "title": "Values",
            "text": "(1) Ce = 1,0 and H = 500 m; the recommended value of psi0 is 0,7",
        }
    )
    assert {"term": "Ce", "value": "1,0", "source": f"{DOC}_5.2"} in values
    assert {"term": "H", "value": "500 m", "source": f"{DOC}_5.2"} in values
    assert {"term": "psi0", "value": "0,7", "source": f"{DOC}_5.2"} in values


def test_symbol_lists_with_capitalised_meanings_and_lines_that_lost_their_symbol() -> None:
    """ "Ct Thermal coefficient" is a symbol; a sub-heading ("Latin upper case letters"), a line whose
    symbol the scan lost ("snow load shape coefficient") and a stopword are not."""
    terms = extract_terms(
        {
            "key": f"{DOC}_1.7",
            "kind": "clause",
            "title": "Symbols",
            "text": "1.7 Symbols\nLatin upper case letters\nCt Thermal coefficient\n"
            "Tmax maximum shade air temperature\nsnow load shape coefficient\n"
            "the difference of average temperatures\nnon-linear part of the temperature",
        }
    )
    assert {t["term"] for t in terms} == {"Ct", "Tmax"}
    assert {"term": "Ct", "equivalent": "Thermal coefficient", "source": f"{DOC}_1.7"} in terms
