"""terms: symbols with their meanings, defined terms and stated values of each section, for the kv
store (merged at commit)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.nodes.ingest.deps import system_of
from clausewise.tools.parallel import map_ordered


def terms(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    tasks = system_of(runtime).ingest_tasks
    found_terms: list[dict[str, Any]] = []
    for found in map_ordered(tasks.concurrency, tasks.extract_terms, list(state["sections"].values())):
        found_terms += found
    return {"terms": found_terms}
