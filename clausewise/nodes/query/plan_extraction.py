"""plan-extraction: how many model calls this question may still spend on relevance; the batches
themselves are sent by the graph's router (``relevance_extract.extract_tasks``)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of

RESERVED_CALLS = 8  # kept for conflicts, summary and figure descriptions


def plan_extraction(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    ctx, deps = runtime.context, deps_of(runtime)
    used = deps.tasks.usage()["llm_calls"] - (state.get("usage_before") or {}).get("llm_calls", 0)
    return {"model_calls_left": max(0, ctx.max_model_calls - RESERVED_CALLS - used)}
