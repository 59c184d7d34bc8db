"""keyword: a few rare keywords, expanded with the kv store; every section holding any of them (FTS5)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of


def keyword(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    ctx, deps = runtime.context, deps_of(runtime)
    terms = deps.terms(state["search_question"])
    words = deps.tasks.keywords(state["search_question"], terms)
    hits = deps.keyword_index.search(words, limit=ctx.max_keyword_sections) if words else []
    return {
        "candidates": {
            key: {"via": "keyword", "hop": 0, "from_key": None, "score": round(score, 3), "keywords": words}
            for key, score in hits
        }
    }
