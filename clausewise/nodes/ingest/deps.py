"""What the ingestion nodes use (the run's dependencies, carried in ``IngestContext.deps``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from langgraph.runtime import Runtime

from clausewise.stores import Stores, VectorIndex
from clausewise.system import System
from clausewise.tools.ingest_tasks import IngestTasks
from clausewise.tools.models import Embedder


@dataclass
class IngestDeps:
    system: System

    @property
    def stores(self) -> Stores:
        return self.system.stores

    @property
    def embedder(self) -> Embedder:
        return self.system.embedder

    @property
    def tasks(self) -> IngestTasks:
        return self.system.ingest_tasks

    @property
    def vector_index(self) -> VectorIndex:
        return self.system.vector_index


def deps_of(runtime: Runtime[Any]) -> IngestDeps:
    """The run's ingestion dependencies (the graph's wiring puts them in the context)."""
    deps = runtime.context.deps if runtime.context is not None else None
    if not isinstance(deps, IngestDeps):
        raise RuntimeError("IngestContext.deps is not set: compile the graph with build_ingest_graph()")
    return deps
