"""decompose: the question split into the sub-questions each searched on its own."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of
from clausewise.nodes.query.triage import QueryInputError


def decompose(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    deps = deps_of(runtime)
    if not deps.stores.visible_documents():
        raise QueryInputError(
            f"no documents are ingested in {deps.stores.blobs.describe()}; run `clausewise ingest` first"
        )
    return {"sub_questions": deps.tasks.decompose(state["search_question"])}
