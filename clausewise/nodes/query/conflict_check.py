"""conflict-check: passages that disagree, highlighted and never resolved (the reasoner decides what
disagrees)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of

MAX_CONFLICTS = 20


def conflict_check(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    deps = deps_of(runtime)
    passages = state.get("passages") or []
    found = deps.tasks.find_conflicts(passages, state.get("precedence") or [], deps.stores.kv())
    return {"conflicts": found[:MAX_CONFLICTS]}
