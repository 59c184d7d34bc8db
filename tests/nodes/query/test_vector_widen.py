"""vector-widen (nodes/query/vector_widen.py): each call takes the next batch of sections by vector search;
batches do not overlap, sections already candidates are not added again, widenings are counted."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import query_runtime

from clausewise.graph.state import merge_keyed
from clausewise.nodes.query.vector_widen import vector_widen
from clausewise.system import System
from clausewise.tools.query_tasks import OfflineQueryTasks

QUESTION = "What is the exposure coefficient for a sheltered garden?"


@pytest.fixture
def widen(sample_store: SimpleNamespace, embedder: Any) -> Any:
    system = System(
        stores=sample_store.stores, embedder=embedder, query_tasks=OfflineQueryTasks(), cache_dir=Path("/nonexistent")
    )
    runtime = query_runtime(system, vector_batch=4)
    return lambda state: vector_widen(state, runtime)


def test_successive_batches_do_not_overlap_and_count_widenings(widen: Any) -> None:
    state: dict[str, Any] = {"search_question": QUESTION, "candidates": {}, "widenings": 0}
    batches = []
    for i in range(3):
        update = widen(state)
        batch = update["last_vector_batch"]
        assert len(batch) == 4
        assert set(update["candidates"]) == set(batch)  # nothing was known: every key is new
        assert all(
            c == {"via": "vector", "hop": 0, "from_key": None, "score": c["score"]}
            for c in update["candidates"].values()
        )
        scores = [update["candidates"][key]["score"] for key in batch]
        assert scores == sorted(scores, reverse=True)  # best first
        assert (update["vector_offset"], update["widenings"]) == (4 * (i + 1), i)  # the first batch is no widening
        batches.append(batch)
        state = {**state, **update, "candidates": merge_keyed(state["candidates"], update["candidates"])}
    assert len({key for batch in batches for key in batch}) == 12
    assert min(state["candidates"][k]["score"] for k in batches[0]) >= max(
        state["candidates"][k]["score"] for k in batches[1]
    )


def test_known_candidates_stay_in_the_batch_but_are_not_added_again(widen: Any) -> None:
    first = widen({"search_question": QUESTION, "candidates": {}, "widenings": 0})
    known_key = first["last_vector_batch"][0]
    known = {known_key: {"via": "keyword", "hop": 0, "from_key": None}}

    again = widen({"search_question": QUESTION, "candidates": known, "widenings": 0})

    assert again["last_vector_batch"] == first["last_vector_batch"]
    assert set(again["candidates"]) == set(first["last_vector_batch"]) - {known_key}


def test_a_heading_with_nothing_under_it_takes_no_place_in_a_batch(widen: Any, sample_store: SimpleNamespace) -> None:
    """A bare heading ("5 Snow load on roofs" over 5.1, 5.2) has no line that can bear on the question:
    in a batch it would take the place of a section that has some, and at the batch's tail it would stop
    the widening whatever lies further on. Batches through the whole store hold every other section."""
    from clausewise.nodes.query.deps import bare

    sections = sample_store.sections
    headings = {k for k, s in sections.items() if bare(s["text"], s.get("title"))}
    assert headings, "the sample has bare headings"
    state: dict[str, Any] = {"search_question": QUESTION, "candidates": {}, "widenings": 0}
    seen: set[str] = set()
    for _ in range(len(sections) // 4 + 2):
        update = widen(state)
        seen |= set(update["last_vector_batch"])
        state = {**state, **update, "candidates": merge_keyed(state["candidates"], update["candidates"])}
    assert not seen & headings
    assert len(seen) >= 0.8 * (len(sections) - len(headings))
