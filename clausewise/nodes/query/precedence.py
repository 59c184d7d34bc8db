"""precedence: the rules that govern each contributing section (National Annex choices, NDPs,
informative annexes, superseded editions), from the section itself and its ancestors."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of


def precedence(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """Rules governing each contributing section, its ancestors and its document."""
    read = deps_of(runtime).reader()
    keys = [k for k, v in (state.get("extracts") or {}).items() if v]
    rules, seen = [], set()
    for key in keys:
        chain, cursor = [], key
        for _ in range(8):
            section = read.section(cursor)
            if section is None:
                break
            chain.append(cursor)
            cursor = section.get("parent") or ""
        for governed in chain:
            for rule in read.lookup("precedence", governed) or []:
                marker = (key, rule["rule"])
                if marker not in seen:
                    seen.add(marker)
                    rules.append(
                        {
                            "key": key,
                            "rule": rule["rule"],
                            "source_key": rule["source_key"],
                            "type": rule.get("type"),
                            "via": governed if governed != key else None,
                        }
                    )
    return {"precedence": rules}
