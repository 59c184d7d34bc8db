"""collect-passages: the answer's passages, one per extract of every relevant section, with document,
section, page and how each was reached; computed once, read by conflict-check and compose."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of

_VIA_ORDER = {"vector": 0, "keyword": 0, "reference": 1, "neighbour": 2}


def collect_passages(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    deps = deps_of(runtime)
    cands = state.get("candidates") or {}
    passages = []
    for key, parts in (state.get("extracts") or {}).items():
        section = deps.section(key)
        if not parts or section is None:
            continue
        c = cands.get(key, {"via": "vector", "hop": 0, "from_key": None})
        for part in parts:
            passages.append(
                {
                    "key": key,
                    "document": section["document"],
                    "section": section["section"],
                    "kind": section["kind"],
                    "title": section.get("title"),
                    "page": part["pages"][0],
                    "pages": part["pages"],
                    "text": part["text"],
                    "hop": c["hop"],
                    "via": c["via"],
                    "from_key": c.get("from_key"),
                    "score": part["score"],
                }
            )
    passages.sort(key=lambda p: (p["hop"], _VIA_ORDER.get(p["via"], 3), -p["score"], p["document"], p["page"]))
    return {"passages": passages}
