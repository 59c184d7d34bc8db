"""reply: a greeting or a repeated question answered briefly, without a search."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.compose import usage_since
from clausewise.nodes.query.deps import deps_of


def reply(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """Greeting or a repeat: a short answer, no search."""
    deps = deps_of(runtime)
    text = state.get("reply") or ""
    return {
        "passages": [],
        "images": [],
        "precedence": [],
        "conflicts": [],
        "unfollowed_references": [],
        "unresolved_references": [],
        "answer_markdown": text,
        "trace": {
            **usage_since(deps, state),
            "widenings": 0,
            "hops": 0,
            "elapsed_s": round(time.perf_counter() - state["started"], 3),
            "route": state["route"],
        },
        "history": [{"question": state["question"], "answer": text}] if state["route"] == "chat" else [],
    }
