"""references: every cross-reference each section makes (clauses, tables, figures, expressions,
annexes, other documents, neighbours), each checked to be in the source text where it claims to be."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.nodes.ingest.check_document import doc_id_of
from clausewise.nodes.ingest.deps import system_of
from clausewise.references import SectionTitles
from clausewise.tools.parallel import map_ordered


def references(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    tasks = system_of(runtime).ingest_tasks
    sections = state["sections"]
    known = SectionTitles({key: section.get("title") or "" for key, section in sections.items()})  # see spot_references
    doc = doc_id_of(state["doc"])
    out = {}
    found = map_ordered(
        tasks.concurrency, lambda section: tasks.spot_references(doc, section, known), list(sections.values())
    )
    for (key, section), refs in zip(sections.items(), found, strict=True):
        # A claimed reference must be in the source text where it says it is.
        refs = [r for r in refs if section["text"][r["span"][0] : r["span"][1]] == r["raw"]]
        if refs:
            out[key] = refs
    return {"references": out}
