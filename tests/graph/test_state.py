"""The state's reducers (graph/state.py): ``merge_pages`` (Send workers' page results arrive in any order),
``merge_keyed`` and ``add_turns``."""

from __future__ import annotations

import random
from functools import reduce
from typing import Any, get_type_hints

from hypothesis import given, settings
from hypothesis import strategies as st

from clausewise.graph.state import RESET, IngestContext, IngestState, add_turns, merge_keyed, merge_pages


def _page(n: int, tag: str = "") -> dict[str, Any]:
    return {"page": n, "lines": [{"text": f"page {n}{tag}"}], "objects": []}


def test_none_and_empty_inputs() -> None:
    assert merge_pages(None, None) == []
    assert merge_pages([], []) == []
    assert merge_pages(None, [_page(2), _page(1)]) == [_page(1), _page(2)]
    assert merge_pages([_page(3), _page(1)], None) == [_page(1), _page(3)]


def test_result_is_sorted_by_page() -> None:
    merged = merge_pages([_page(5), _page(2)], [_page(9), _page(1), _page(4)])
    assert [p["page"] for p in merged] == [1, 2, 4, 5, 9]


def test_duplicates_keep_one_entry_per_page() -> None:
    merged = merge_pages([_page(1, "a"), _page(2)], [_page(1, "b"), _page(2)])
    assert [p["page"] for p in merged] == [1, 2]
    assert merged[0] in (_page(1, "a"), _page(1, "b"))


def test_reducer_does_not_mutate_its_inputs() -> None:
    left, right = [_page(2)], [_page(1)]
    merge_pages(left, right)
    assert left == [_page(2)] and right == [_page(1)]


def test_one_worker_at_a_time_in_random_order() -> None:
    """How LangGraph applies it: the running value folded with one worker's update after another."""
    rng = random.Random(7)
    for _ in range(20):
        pages = list(range(1, 40))
        rng.shuffle(pages)
        merged = reduce(lambda acc, n: merge_pages(acc, [_page(n)]), pages, None)
        assert [p["page"] for p in merged] == list(range(1, 40))
        assert merged == [_page(n) for n in range(1, 40)]


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.lists(st.integers(1, 60), min_size=0, max_size=60),
    st.randoms(use_true_random=False),
    st.integers(1, 6),
)
def test_property_order_and_batching_do_not_matter(pages: list[int], rnd: random.Random, batches: int) -> None:
    updates = [_page(n) for n in pages]
    rnd.shuffle(updates)
    # split the shuffled updates into several batches, as parallel supersteps would deliver them
    cuts = sorted(rnd.randint(0, len(updates)) for _ in range(batches - 1))
    chunks = [updates[a:b] for a, b in zip([0, *cuts], [*cuts, len(updates)], strict=True)]
    merged = reduce(merge_pages, chunks, None)
    assert [p["page"] for p in merged] == sorted(set(pages))
    assert merged == [_page(n) for n in sorted(set(pages))]


def test_page_results_key_is_declared_with_the_reducer() -> None:
    """Parallel Send workers write page_results; without a reducer LangGraph would reject the writes."""
    hint = get_type_hints(IngestState, include_extras=True)["page_results"]
    assert merge_pages in getattr(hint, "__metadata__", ())


def test_context_defaults_and_descriptions() -> None:
    ctx = IngestContext()
    assert ctx.max_file_mb == 200 and ctx.max_pages == 2000 and ctx.crop_images is True
    for f in IngestContext.__dataclass_fields__.values():
        assert f.metadata.get("description"), f"context field {f.name} has no description"


def test_merge_keyed_and_add_turns() -> None:
    assert merge_keyed({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}
    assert merge_keyed({"a": 1}, {"a": 3}) == {"a": 3}
    assert merge_keyed({"a": 1}, {RESET: True, "c": 1}) == {"c": 1}
    assert merge_keyed(None, None) == {}
    assert len(add_turns([{"q": i} for i in range(19)], [{"q": 19}, {"q": 20}])) == 20
