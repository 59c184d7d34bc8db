"""Offline ingestion tasks (tools/tasks.py): references, precedence and kv terms -- on the ingested
sample and on small synthetic sections."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from clausewise.keys import DocId
from clausewise.nodes.ingest.enrich import describe_objects, make_chunks
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs
from clausewise.tools.tasks import (
    OfflineTasks,
    extract_terms,
    find_precedence,
    merge_terms,
    spot_references,
    synonym_terms,
)

DOC = "CEN_EN1991-9-9"


@pytest.fixture(scope="module")
def store(sample_store: SimpleNamespace) -> Stores:
    return Stores(LocalBlobs(sample_store.dir))


def _refs(store: Stores, code: str) -> list[dict[str, Any]]:
    return store.lookup("references", f"{DOC}_{code}") or []


def _ref(store: Stores, code: str, raw: str) -> dict[str, Any]:
    found = [r for r in _refs(store, code) if r["raw"].strip() == raw]
    assert found, f"no reference {raw!r} from {code}: {[r['raw'] for r in _refs(store, code)]}"
    return found[0]


# ---------------------------------------------------------------- references on the sample
@pytest.mark.parametrize(
    ("source", "raw", "target", "kind"),
    [
        ("1.3", "Expression (5.1)", "expression_5.1", "expression"),
        ("5.1", "Expression (5.1)", "expression_5.1", "expression"),
        ("1.5", "Table 4.1", "table_4.1", "table"),
        ("1.5", "Figure 5.1", "figure_5.1", "figure"),
        ("5.1", "Table 5.1", "table_5.1", "table"),
        ("1.1", "Annex A", "annex_A", "annex"),
        ("4.1", "Annex A", "annex_A", "annex"),
        ("1.5", "5.2(3)", "5.2", "clause"),
        ("4.1", "5.1(3)", "5.1", "clause"),
        ("1.1", "4.1", "4.1", "clause"),
        ("A.2", "1.3", "1.3", "clause"),
        ("foreword", "Section 4", "4", "clause"),
    ],
)
def test_internal_references_resolve(store: Stores, source: str, raw: str, target: str, kind: str) -> None:
    ref = _ref(store, source, raw)
    assert ref["target"] == f"{DOC}_{target}"
    assert ref["kind"] == kind
    assert ref["document"] == DOC
    assert ref["resolved"] is True
    assert store.lookup("sections", ref["target"]) is not None


@pytest.mark.parametrize("code", ["4.2", "5.2"])
def test_the_following_table_is_the_next_table(store: Stores, code: str) -> None:
    ref = _ref(store, code, "the following table")
    assert ref["kind"] == "neighbour" and ref["resolved"] is True
    assert ref["target"] == store.lookup("sections", f"{DOC}_{code}")["next_table"]  # type: ignore[index]
    assert ref["target"] == {"4.2": f"{DOC}_table_4.1", "5.2": f"{DOC}_table_5.1"}[code]


def test_reference_spans_are_verbatim(store: Stores, sample_store: SimpleNamespace) -> None:
    for key, section in sample_store.sections.items():
        for ref in store.lookup("references", key) or []:
            start, end = ref["span"]
            assert section["text"][start:end] == ref["raw"], (key, ref)
            assert ref["target"] != key  # a section does not cite itself


@pytest.mark.parametrize(
    ("source", "raw", "target"),
    [("1.1", "EN 1990", "CEN_EN1990"), ("1.1", "ISO 4355", "ISO_ISO4355"), ("1.1", "EN 1991-1-3", "CEN_EN1991-1-3"),
     ("5.1", "EN 1991-1-1", "CEN_EN1991-1-1")],
)
def test_other_documents_are_unresolved_until_ingested(store: Stores, source: str, raw: str, target: str) -> None:
    ref = _ref(store, source, raw)
    assert ref["target"] == target and ref["document"] == target and ref["kind"] == "document"
    assert ref["resolved"] is False
    assert ref["reason"] == "document not ingested"


@pytest.mark.parametrize("target", ["CEN_EN1990", "ISO_ISO4355", "CEN_EN1991-1-3", "CEN_EN1991-1-1"])
def test_referenced_documents_are_listed_as_referenced_only(store: Stores, target: str) -> None:
    entry = store.documents()[target]
    assert entry["status"] == "referenced-only"
    assert entry["referenced_by"] and all(k.startswith(DOC + "_") for k in entry["referenced_by"])
    assert entry["referenced_by"] == sorted(set(entry["referenced_by"]))
    assert f"{DOC}_1.2" in entry["referenced_by"]  # the normative references clause names all four
    assert entry["code"] == {"CEN_EN1990": "EN 1990", "ISO_ISO4355": "ISO 4355", "CEN_EN1991-1-3": "EN 1991-1-3",
                             "CEN_EN1991-1-1": "EN 1991-1-1"}[target]


def test_the_documents_own_designation_is_not_a_reference(store: Stores) -> None:
    assert DOC not in [r["document"] for r in _refs(store, "foreword") if r["document"] != DOC]
    assert store.documents()[DOC]["referenced_by"] == []


def test_summary_counts_match_the_references_store(store: Stores, sample_store: SimpleNamespace) -> None:
    refs = [r for k in sample_store.sections for r in (store.lookup("references", k) or [])]
    summary = sample_store.output["summary"]
    assert summary["references"] == len(refs)
    assert summary["references_unresolved"] == sum(1 for r in refs if not r["resolved"])
    assert summary["references_internal"] == summary["references_resolved"]  # every internal reference resolved


# ---------------------------------------------------------------- references, synthetic
def _section(text: str, key: str = f"{DOC}_9.9", **extra: Any) -> dict[str, Any]:
    return {"key": key, "text": text, "kind": "clause", "title": "", **extra}


def test_spot_references_units() -> None:
    doc = DocId("CEN", "EN1991-9-9")
    known = {f"{DOC}_table_5.1", f"{DOC}_5.2", f"{DOC}_annex_A"}
    text = ("See EN 1990, 6.4.3.2 and Table 5.1 or Figure 5.2; the values given in 5.2(3) and in Annex B apply. "
            "For this document see EN 1991-9-9.")
    refs = spot_references(doc, _section(text), known)
    by_raw: dict[str, list[dict[str, Any]]] = {}
    for r in refs:
        by_raw.setdefault(r["raw"].strip(), []).append(r)
    assert by_raw["EN 1990, 6.4.3.2"][0]["target"] == "CEN_EN1990_6.4.3.2"
    assert by_raw["EN 1990, 6.4.3.2"][0]["document"] == "CEN_EN1990"
    assert by_raw["Table 5.1"][0]["target"] == f"{DOC}_table_5.1" and by_raw["Table 5.1"][0]["resolved"] is True
    assert by_raw["Figure 5.2"][0]["target"] == f"{DOC}_figure_5.2" and by_raw["Figure 5.2"][0]["resolved"] is False
    assert by_raw["5.2(3)"][0]["target"] == f"{DOC}_5.2" and by_raw["5.2(3)"][0]["resolved"] is True
    assert by_raw["Annex B"][0]["target"] == f"{DOC}_annex_B" and by_raw["Annex B"][0]["resolved"] is False
    assert not any(r["document"] == "CEN_EN1990" and r["target"] == f"{DOC}_6.4.3.2" for r in refs)
    assert "EN 1991-9-9" not in by_raw  # itself
    assert [r["span"][0] for r in refs] == sorted(r["span"][0] for r in refs)


@pytest.mark.parametrize(
    ("text", "targets"),
    [("see Tables 5.1 and 5.2", {"table_5.1", "table_5.2"}), ("Annexes A and B apply", {"annex_A", "annex_B"}),
     ("Figures 5.1, 5.2 and 5.3", {"figure_5.1", "figure_5.2", "figure_5.3"})],
)
def test_every_number_of_a_multiple_reference_is_a_reference(text: str, targets: set[str]) -> None:
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section(text), set())
    assert {r["target"] for r in refs} == {f"{DOC}_{t}" for t in targets}


def test_neighbour_references() -> None:
    doc = DocId("CEN", "EN1991-9-9")
    section = _section("As given above, the values in the following figure apply.",
                       previous=f"{DOC}_9.8", next=f"{DOC}_9.10", next_figure=f"{DOC}_figure_9.1")
    refs = {r["raw"]: r["target"] for r in spot_references(doc, section, set())}
    assert refs == {"given above": f"{DOC}_9.8", "the following figure": f"{DOC}_figure_9.1"}


def test_own_designation_is_not_a_reference_under_a_publisher_override() -> None:
    doc = DocId("BSI", "EN1991-9-9")
    refs = spot_references(doc, _section("This document (EN 1991-9-9:2025) is a sample.", key="BSI_EN1991-9-9_fw"),
                           set())
    assert [r for r in refs if r["kind"] == "document"] == []


# ---------------------------------------------------------------- precedence on the sample
def _rules(store: Stores, code: str) -> list[dict[str, Any]]:
    return store.lookup("precedence", f"{DOC}_{code}") or []


@pytest.mark.parametrize(("code", "evidence"), [("4.1", "4.1(1)"), ("4.2", "4.2(2)"), ("5.2", "5.2(3)"),
                                                ("table_4.1", "Table 4.1")])
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
    section = _section("National choice is allowed in EN 1991-9-9 through clauses:\n4.1(1), A.2(3), Table 4.1, "
                       "Figure 5.1\nThis document supersedes EN 1991-1-3:2003.", key=f"{DOC}_foreword")
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


# ---------------------------------------------------------------- kv on the sample
@pytest.mark.parametrize(
    ("term", "meaning"),
    [("ce", "exposure coefficient"), ("sk", "characteristic value of leaf load on the ground"),
     ("\u03bc", "shape coefficient"), ("s", "leaf load on the roof"),
     ("\u03c80", "factor for the combination value of a variable action")],
)
def test_symbols_with_meanings(store: Stores, term: str, meaning: str) -> None:
    entry = store.kv()[term]
    assert {"text": meaning, "source": f"{DOC}_1.3", "type": "equivalent"} in entry["equivalents"]


def test_defined_terms(store: Stores) -> None:
    entry = store.kv()["garden structure"]
    assert any(e["type"] == "definition" and e["source"] == f"{DOC}_1.4.3" and e["text"].startswith("light structure")
               for e in entry["equivalents"])


@pytest.mark.parametrize(("a", "b"), [("dead load", "self-weight"), ("self-weight", "dead load"),
                                      ("live load", "imposed load"), ("ndp", "nationally determined parameter")])
def test_synonyms_both_ways(store: Stores, a: str, b: str) -> None:
    assert any(e["text"] == b for e in store.kv()[a]["equivalents"])


def test_kv_summary_counts_this_documents_terms(store: Stores, sample_store: SimpleNamespace) -> None:
    own = [e for entry in store.kv().values() for e in entry["equivalents"] + entry["values"]
           if e["source"].startswith(DOC + "_")]
    assert len(own) == sample_store.output["summary"]["kv_entries"] > 0


# ---------------------------------------------------------------- kv, synthetic
def test_merge_terms_flags_a_value_conflict() -> None:
    kv = merge_terms({}, [{"term": "Ce", "value": "1,0", "source": "CEN_A_5.2"}])
    assert kv["ce"]["conflict"] is False
    kv = merge_terms(kv, [{"term": "ce", "value": "1,0", "source": "CEN_B_5.2"}])  # same value: agreement
    assert kv["ce"]["conflict"] is False and len(kv["ce"]["values"]) == 2
    kv = merge_terms(kv, [{"term": "Ce", "value": "0,8", "source": "CEN_B_5.3"}])
    assert kv["ce"]["conflict"] is True
    assert {"value": "1,0", "source": "CEN_A_5.2"} in kv["ce"]["values"]  # never silently overwritten
    assert {"value": "0,8", "source": "CEN_B_5.3"} in kv["ce"]["values"]
    kv = merge_terms(kv, [{"term": "Ce", "value": "0,8", "source": "CEN_B_5.3"}])  # a repeat is not a new value
    assert len(kv["ce"]["values"]) == 3


def test_merge_terms_equivalents_deduplicated() -> None:
    term = {"term": "sk", "equivalent": "ground value", "source": "CEN_A_1.3"}
    kv = merge_terms(merge_terms({}, [term]), [term])
    assert kv["sk"]["equivalents"] == [{"text": "ground value", "source": "CEN_A_1.3", "type": "equivalent"}]
    assert kv["sk"]["term"] == "sk"


def test_extract_terms_units() -> None:
    symbols = {"key": f"{DOC}_1.3", "kind": "clause", "title": "Symbols",
               "text": "1.3 Symbols\nCe exposure coefficient\nsk characteristic value of snow load\nNot a symbol line."}
    terms = extract_terms(symbols)
    assert {"term": "Ce", "equivalent": "exposure coefficient", "source": f"{DOC}_1.3"} in terms
    assert {"term": "sk", "equivalent": "characteristic value of snow load", "source": f"{DOC}_1.3"} in terms
    values = extract_terms({"key": f"{DOC}_5.2", "kind": "clause", "title": "Values",
                            "text": "(1) Ce = 1,0 and H = 500 m; the recommended value of psi0 is 0,7"})
    assert {"term": "Ce", "value": "1,0", "source": f"{DOC}_5.2"} in values
    assert {"term": "H", "value": "500 m", "source": f"{DOC}_5.2"} in values
    assert {"term": "psi0", "value": "0,7", "source": f"{DOC}_5.2"} in values


def test_two_documents_with_different_values_conflict_in_kv() -> None:
    a = extract_terms({"key": "CEN_EN1_5.2", "kind": "clause", "title": "", "text": "Ce = 1,0"})
    b = extract_terms({"key": "BSI_NA-EN1_2.3", "kind": "clause", "title": "", "text": "Ce = 0,9"})
    kv = merge_terms(merge_terms({}, a), b)
    assert kv["ce"]["conflict"] is True
    assert {v["source"] for v in kv["ce"]["values"]} == {"CEN_EN1_5.2", "BSI_NA-EN1_2.3"}


def test_synonym_terms_are_symmetric() -> None:
    pairs = {(t["term"], t["equivalent"]) for t in synonym_terms()}
    assert ("dead load", "self-weight") in pairs and ("self-weight", "dead load") in pairs
    assert all((b, a) in pairs for a, b in pairs)
    assert all(t["source"] == "builtin_thesaurus" for t in synonym_terms())


# ---------------------------------------------------------------- descriptions and chunks
def test_descriptions_use_caption_rows_and_citing_text(sample_store: SimpleNamespace) -> None:
    descriptions = describe_objects(OfflineTasks(), {"sections": sample_store.sections})
    t51 = descriptions[f"{DOC}_table_5.1"]
    assert t51.startswith("Table 5.1 \u2014 Exposure coefficient Ce for different sites")
    assert "columns: Topography, Ce" in t51
    assert "Cited:" in t51
    assert set(descriptions) == {f"{DOC}_table_4.1", f"{DOC}_table_5.1", f"{DOC}_figure_5.1"}


def test_chunks_carry_heading_page_and_respect_the_size(sample_store: SimpleNamespace) -> None:
    chunks = make_chunks(sample_store.sections, {}, 300)
    assert {c["key"] for c in chunks} == {k for k, s in sample_store.sections.items() if s["kind"] != "contents"}
    for c in chunks:
        section = sample_store.sections[c["key"]]
        assert c["text"].startswith(f"EN 1991-9-9 {section['section']}")
        assert c["page"] in section["pages"]
    five_one = [c for c in chunks if c["key"] == f"{DOC}_5.1"]
    assert [c["chunk"] for c in five_one] == list(range(len(five_one))) and len(five_one) > 1
    assert {c["page"] for c in five_one} == {5, 6}  # the chunk after the page break is on page 6
