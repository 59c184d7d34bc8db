"""Running a step's reasoner calls side by side, in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypedDict, TypeVar

T = TypeVar("T")
U = TypeVar("U")


class Usage(TypedDict):
    """A reasoner's counters in the answer trace's terms, cumulative over the reasoner's life."""

    mode: str
    llm_calls: int
    tokens: int
    degraded: list[str]


def offline_usage() -> Usage:
    return {"mode": "offline", "llm_calls": 0, "tokens": 0, "degraded": []}


def map_ordered(concurrency: int, fn: Callable[[U], T], items: Sequence[U]) -> list[T]:
    """``[fn(x) for x in items]``, at most ``concurrency`` at a time, results in the order of ``items``
    (inline, no thread, when ``concurrency`` is 1 or there is one item). Threads carry the caller's
    context, so LangChain callbacks and LangGraph config reach the calls."""
    workers = min(max(1, int(concurrency or 1)), len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    from langchain_core.runnables.config import ContextThreadPoolExecutor  # langchain loads in 0.15 s: when needed

    with ContextThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


__all__: list[Any] = ["Usage", "map_ordered", "offline_usage"]
