"""conflict-check: passages that disagree, highlighted and never resolved (the reasoner decides what
disagrees); at most ``MAX_CONFLICTS``, those about the passages read first."""

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
    # Those about the passages read first come first, so the cap keeps them.
    rank = {p["key"]: i for i, p in enumerate(passages)}
    found.sort(key=lambda c: min((rank.get(k, len(rank)) for k in c.get("passages") or []), default=len(rank)))
    return {"conflicts": found[:MAX_CONFLICTS]}
