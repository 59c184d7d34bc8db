"""precedence: rules that govern each section (National Annex notes, recommended values, NDP lists,
superseded editions) and the status of informative annexes over everything inside them."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.keys import code_label
from clausewise.nodes.ingest.check_document import doc_id_of
from clausewise.nodes.ingest.deps import system_of
from clausewise.tools.parallel import map_ordered


def precedence(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    tasks = system_of(runtime).ingest_tasks
    sections = state["sections"]
    known = set(sections)
    doc = doc_id_of(state["doc"])
    rules = []
    found_rules = map_ordered(
        tasks.concurrency, lambda section: tasks.find_precedence(doc, section, known), list(sections.values())
    )
    for found in found_rules:
        rules += found
    # Annex status governs every clause, table and figure inside the annex.
    for key in sections:
        annex = _annex_ancestor(sections, key)
        if annex and annex != key and sections[annex].get("status") == "informative":
            rules.append(
                {
                    "key": key,
                    "rule": f"in informative {code_label(sections[annex]['section'])}: guidance, not a requirement",
                    "type": "informative",
                    "source_key": annex,
                    "evidence": "(informative)",
                }
            )
    return {"precedence": rules}


def _annex_ancestor(sections: dict[str, dict[str, Any]], key: str) -> str | None:
    seen = 0
    while key in sections and seen < 12:
        if sections[key]["kind"] == "annex":
            return key
        key = sections[key].get("parent") or ""
        seen += 1
    return None
