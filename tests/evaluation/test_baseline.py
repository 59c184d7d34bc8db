"""The naive baseline (clausewise.evaluation.baseline): top-k chunks of the configured vector index as
passages, with fakes, then over the ingested sample with the real index and embedder."""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from clausewise.evaluation import baseline, naive_answer, naive_answer_fn, passage_hits, run_eval
from clausewise.stores.index import Hit


class FakeEmbedder:
    def __init__(self) -> None:
        self.queries: list[str] = []

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return np.full(4, len(self.queries), dtype=np.float32)


class FakeIndex:
    """Returns its hits in order; records every search; advances ``clock`` by ``cost`` per search."""

    def __init__(self, hits: list[Hit], clock: list[float] | None = None, cost: float = 0.0) -> None:
        self.hits = hits
        self.searches: list[tuple[list[float], int]] = []
        self.clock, self.cost = clock, cost

    def search(self, vector: np.ndarray, k: int = 10, offset: int = 0) -> list[Hit]:
        self.searches.append((vector.tolist(), k))
        if self.clock is not None:
            self.clock[0] += self.cost
        return self.hits[offset : offset + k]


class FakeStores:
    def __init__(self, sections: dict[str, dict[str, Any]]) -> None:
        self.sections = sections

    def lookup(self, table: str, key: str) -> dict[str, Any] | None:
        assert table == "sections"
        if "/" in key:
            raise KeyError(key)
        return self.sections.get(key)


def chunk(key: str, page: int, text: str, n: int = 0) -> dict[str, Any]:
    return {
        "key": key,
        "chunk": n,
        "text": text,
        "page": page,
        "kind": "clause",
        "document": "EN 1991-1-3",
        "doc_key": "CEN_EN1991-1-3",
    }


HITS = [Hit("CEN_EN1991-1-3_5.2", 0.91234, chunk("CEN_EN1991-1-3_5.2", 21, "EN 1991-1-3 5.2\nCe windswept", 1))]
HITS += [
    Hit(f"CEN_EN1991-1-3_4.{i}", 0.5 - i / 100, chunk(f"CEN_EN1991-1-3_4.{i}", 18, f"text {i}")) for i in range(12)
]
SECTIONS = {
    "CEN_EN1991-1-3_5.2": {"document": "EN 1991-1-3", "section": "5.2", "kind": "clause", "pages": [20, 21, 22]}
}


def test_naive_answer_returns_the_top_chunks_as_passages(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [50.0]
    monkeypatch.setattr(baseline, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    index, embedder = FakeIndex(HITS, clock, cost=1.25), FakeEmbedder()
    answer = naive_answer("snow?", index=index, embedder=embedder, stores=FakeStores(SECTIONS))

    assert embedder.queries == ["snow?"] and index.searches == [([1.0] * 4, 10)]
    assert [p["key"] for p in answer["passages"]] == ["CEN_EN1991-1-3_5.2"] + [
        f"CEN_EN1991-1-3_4.{i}" for i in range(9)
    ]
    assert answer["passages"][0] == {
        "key": "CEN_EN1991-1-3_5.2",
        "document": "EN 1991-1-3",
        "section": "5.2",
        "kind": "clause",
        "page": 21,
        "pages": [21],
        "text": "EN 1991-1-3 5.2\nCe windswept",
        "hop": 0,
        "via": "vector",
        "from_key": None,
        "score": 0.9123,
    }
    assert answer["passages"][1]["section"] == ""  # no section entry: still a passage
    assert answer["question"] == "snow?"
    assert answer["trace"] == {
        "mode": "naive",
        "llm_calls": 0,
        "tokens": 0,
        "widenings": 0,
        "hops": 0,
        "elapsed_s": 1.25,
    }
    assert answer["answer_markdown"].splitlines()[:3] == [
        "Top 10 passages by vector similarity:",
        "",
        "1. EN 1991-1-3 5.2 (page 21)",
    ]
    assert answer["answer_markdown"].splitlines()[3] == "2. EN 1991-1-3  (page 18)"  # no section: empty field
    # the chunk's own page only: page 22 of the section is not claimed
    evidence = {"doc": "EN 1991-1-3", "page": 21, "ref": "", "must_contain": "Ce windswept"}
    assert passage_hits(evidence, answer["passages"][0])
    assert not passage_hits(evidence | {"page": 22}, answer["passages"][0])


def test_naive_answer_with_odd_keys_or_no_hits() -> None:
    stores, embedder = FakeStores(SECTIONS), FakeEmbedder()
    odd = Hit("bad/key", 0.1, chunk("bad/key", 1, "x") | {"kind": None})
    answer = naive_answer("x", index=FakeIndex([odd]), embedder=embedder, stores=stores, k=5)
    assert [(p["key"], p["section"], p["kind"]) for p in answer["passages"]] == [("bad/key", "", "")]
    empty = naive_answer("x", index=FakeIndex([]), embedder=embedder, stores=stores)
    assert empty["passages"] == [] and empty["answer_markdown"] == "No passages found."


def test_naive_answer_fn_searches_the_index_it_is_given() -> None:
    assert inspect.signature(naive_answer_fn).parameters["index"].default is inspect.Parameter.empty
    with pytest.raises(TypeError):
        naive_answer_fn(FakeStores(SECTIONS), FakeEmbedder())  # type: ignore[call-arg]
    index = FakeIndex(HITS)
    answer_fn = naive_answer_fn(FakeStores(SECTIONS), FakeEmbedder(), index=index, k=3)
    assert [p["key"] for p in answer_fn("a")["passages"]] == [h.key for h in HITS[:3]]
    assert [p["page"] for p in answer_fn("b")["passages"]] == [21, 18, 18]
    assert [k for _, k in index.searches] == [3, 3]


# Written from the sample's text (clausewise/sample/text.json), not from what retrieval returns: Table 5.1
# is on page 6 and the scope clause 1.1 on page 3 (cover, foreword, then Section 1 from page 3).
WINDSWEPT_QUESTION = {
    "id": "s1",
    "question": "What is the exposure coefficient for a windswept site?",
    "evidence": [
        {"doc": "EN 1991-9-9", "page": 6, "ref": "Table 5.1", "must_contain": "Windswept: open site with no shelter"},
        {"doc": "EN 1991-9-9", "page": 3, "ref": "1.1", "must_contain": "sheds, pergolas, carports"},
        {"doc": "EN 1991-9-9", "page": 7, "ref": "Table 5.1", "must_contain": "Windswept", "essential": False},
    ],
    "must_values": ["0,8", "CC1"],
}


def test_naive_baseline_over_the_ingested_sample(sample_store: Any, embedder: Any, tmp_path: Path) -> None:
    """The real local index and embedder: the table is retrieved on its page, the scope clause is not
    (it does not answer the question), and the wrong page of the table never hits."""
    from clausewise.stores import Stores
    from clausewise.stores.index import LocalVectorIndex
    from clausewise.stores.local import LocalBlobs

    stores = Stores(LocalBlobs(sample_store.dir))
    answer_fn = naive_answer_fn(stores, embedder, index=LocalVectorIndex(stores))
    answer = answer_fn(WINDSWEPT_QUESTION["question"])
    passages = answer["passages"]
    assert len(passages) == 10
    assert passages[0]["key"] == "CEN_EN1991-9-9_table_5.1" and passages[0]["page"] == 6
    for p in passages:
        assert p["key"].startswith(sample_store.doc_key + "_") and p["via"] == "vector" and p["hop"] == 0
        assert p["pages"] == [p["page"]] and p["text"]
        assert p["section"] == sample_store.sections[p["key"]]["section"]
    assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)

    result = run_eval([WINDSWEPT_QUESTION], answer_fn, baseline_fn=answer_fn, out_dir=tmp_path)
    for label in ("system", "naive"):
        (row,) = result["rows"][label]
        assert (row["essential_hits"], row["essential_total"]) == (1, 2)
        assert (row["all_hits"], row["all_total"]) == (1, 3)
        assert row["missed"] == ["EN 1991-9-9 p3 1.1", "EN 1991-9-9 p7 Table 5.1"]
        assert (row["value_hits"], row["missed_values"]) == (1, ["CC1"])
        assert result[label]["essential_recall"] == 0.5 and result[label]["model_calls"] == 0
    saved = json.loads((tmp_path / "naive" / "s1.json").read_text())
    assert saved["trace"]["mode"] == "naive" and saved["passages"][0]["key"] == "CEN_EN1991-9-9_table_5.1"
