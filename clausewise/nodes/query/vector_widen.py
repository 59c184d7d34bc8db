"""vector-widen: the next batch of sections by vector search, for the question and each sub-question."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import Reader, bare, deps_of


def vector_widen(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    ctx, deps = runtime.context, deps_of(runtime)
    offset = state.get("vector_offset", 0)
    queries = list(dict.fromkeys([state["search_question"], *state.get("sub_questions", [])]))
    known = state.get("candidates") or {}
    read = deps.reader()
    batch: dict[str, dict[str, Any]] = {}
    order: list[tuple[float, str]] = []
    for query in queries:
        vector = deps.query_vector(query)
        # Chunks, not sections, are ranked: read on until the batch has enough distinct sections.
        seen: dict[str, float] = {}
        k = ctx.vector_batch * 4
        for hit in deps.vector_index.search(vector, k=k + offset * 4, offset=0):
            if hit.key not in seen and not heading_only(read, hit.key):
                seen[hit.key] = hit.score
        ranked = list(seen.items())[offset : offset + ctx.vector_batch]
        for key, score in ranked:
            if key not in known and key not in batch:
                batch[key] = {"via": "vector", "hop": 0, "from_key": None, "score": round(score, 4)}
            order.append((score, key))
    latest = [k for _, k in sorted(order, key=lambda x: -x[0]) if k in batch or k in known]
    latest = list(dict.fromkeys(latest))
    widened = state.get("widenings", 0) + (1 if offset else 0)
    return {
        "candidates": batch,
        "vector_offset": offset + ctx.vector_batch,
        "last_vector_batch": latest,
        "widenings": widened,
    }


def heading_only(read: Reader, key: str) -> bool:
    """A heading with nothing under it ("CHAPTER 4 EVALUATION AND RETROFIT ..."): no line of it can bear
    on the question, and in a batch it takes the place of a section that has some."""
    section = read.section(key)
    return section is not None and bare(section["text"], section.get("title"))
