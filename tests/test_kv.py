"""kv rules (clausewise/kv.py): merging terms keeps and flags conflicting values, equivalents are not
repeated, the built-in thesaurus works both ways, and removing a document's sources recomputes conflicts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from clausewise.kv import equivalents_in, merge_terms, remove_kv_sources, synonym_terms
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs
from clausewise.tools.ingest_tasks import extract_terms
from clausewise.tools.query_tasks import STOPWORDS

DOC = "CEN_EN1991-9-9"


@pytest.fixture(scope="module")
def store(sample_store: SimpleNamespace) -> Stores:
    return Stores(LocalBlobs(sample_store.dir))


# ---------------------------------------------------------------- the thesaurus on the sample
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("dead load", "self-weight"),
        ("self-weight", "dead load"),
        ("live load", "imposed load"),
        ("ndp", "nationally determined parameter"),
    ],
)
def test_synonyms_both_ways(store: Stores, a: str, b: str) -> None:
    assert any(e["text"] == b for e in store.kv()[a]["equivalents"])


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


# ---------------------------------------------------------------- removing a document's sources
def test_remove_kv_sources_recomputes_conflicts() -> None:
    kv = {
        "ce": {
            "term": "Ce",
            "equivalents": [],
            "values": [{"value": "1,0", "source": "A_X_1"}, {"value": "0,8", "source": "B_Y_2"}],
            "conflict": True,
        }
    }
    out = remove_kv_sources(kv, "B_Y")
    assert out["ce"]["values"] == [{"value": "1,0", "source": "A_X_1"}]
    assert out["ce"]["conflict"] is False
    assert remove_kv_sources(kv, "A_X")["ce"]["values"] == [{"value": "0,8", "source": "B_Y_2"}]
    # a document whose key is a prefix of another's ("EN 1991-1-1" / "EN 1991-1-10") keeps the other's values
    kv2 = {"ce": {"term": "Ce", "equivalents": [], "values": [{"value": "1,0", "source": "CEN_EN1991-1-10_5.2"}]}}
    assert remove_kv_sources(kv2, "CEN_EN1991-1-1")["ce"]["values"] == kv2["ce"]["values"]


def test_a_documents_symbol_matches_only_as_written_and_never_a_stopword() -> None:
    """A symbol list's "To" (a temperature) is not the word "to", and a symbol list line read as
    "the ..." or "net ..." gives no equivalent for every question; the thesaurus still matches in any case."""
    kv = merge_terms(
        {},
        [
            {"term": "To", "equivalent": "initial temperature", "source": "CEN_A_1.6"},
            {"term": "the", "equivalent": "difference of average temperatures", "source": "CEN_A_1.6"},
            {"term": "net", "equivalent": "calorific value including moisture", "source": "CEN_A_1.6"},
            {"term": "Ce", "equivalent": "exposure coefficient", "source": "CEN_A_1.6"},
            *synonym_terms(),
        ],
    )
    found = dict(
        equivalents_in(kv, "Do I need to apply the Snow Load to the roof and Ce".split(), ignore=frozenset(STOPWORDS))
    )
    assert found.get("ce") == "exposure coefficient"
    assert "to" not in found and "the" not in found
    assert found.get("snow load") in {"snow loading", "action due to snow"}
    assert "ce" not in dict(equivalents_in(kv, "how much ce is there".split()))  # symbols are case-sensitive
    assert "net" not in dict(equivalents_in(kv, "net pressure coefficients".split()))  # a word, not a symbol
