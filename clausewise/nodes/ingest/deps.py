"""What the ingestion nodes use: the running :class:`~clausewise.system.System` (stores, embedder,
vector index, ingest reasoner), carried in ``IngestContext.deps``."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.system import System


def system_of(runtime: Runtime[Any]) -> System:
    """The run's system (the graph's wiring puts it in the context)."""
    system = runtime.context.deps if runtime.context is not None else None
    if not isinstance(system, System):
        raise RuntimeError("IngestContext.deps is not set: compile the graph with build_ingest_graph()")
    return system
