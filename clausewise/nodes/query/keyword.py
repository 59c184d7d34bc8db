"""keyword: a few rare keywords, expanded with the kv store; every section holding any of them (FTS5);
and the sections the question names by number ("Table 6.2", "5.2(7)", "Section 5 of EN 1991-1-5")."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import bare, deps_of, first_subclause
from clausewise.references import Resolver, named_sections


def keyword(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    ctx, deps = runtime.context, deps_of(runtime)
    terms = deps.terms(state["search_question"])
    words = deps.tasks.keywords(state["search_question"], terms)
    hits = deps.keyword_index.search(words, limit=ctx.max_keyword_sections) if words else []
    candidates = {
        key: {"via": "keyword", "hop": 0, "from_key": None, "score": round(score, 3), "keywords": words}
        for key, score in hits
    }
    resolver = Resolver(deps.stores)
    named: dict[str, str] = {}
    for n in named_sections(state["search_question"], resolver):
        key = n["keys"][0]
        if len(n["keys"]) > 1:  # a number several documents hold, asked without a document: the nearest
            near = deps.vector_index.similarity(deps.query_vector(state["search_question"]), n["keys"])
            key = max(n["keys"], key=lambda k: near[k].score if k in near else -1.0)
        section = deps.section(key) or {}
        if bare(section.get("text", ""), section.get("title")):  # a bare heading stands for its first subclause
            key = first_subclause(key, resolver.sections(section["doc_key"])) or key
        named.setdefault(key, n["focus"])
        candidates[key] = {"via": "named", "hop": 0, "from_key": None, "ref": n["raw"], "focus": n["focus"]}
    return {"candidates": candidates, "named": named}
