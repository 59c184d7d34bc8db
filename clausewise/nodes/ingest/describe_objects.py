"""describe-objects: a description of every table and figure, from its caption, text and the
sentences citing it (a model also looks at the cropped image and the page's text)."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.nodes.ingest.deps import system_of
from clausewise.tools.parallel import map_ordered


def page_context(state: IngestState) -> tuple[dict[tuple[int, str, Any], bytes], dict[int, str]]:
    """Each table/figure's cropped PNG by (page, kind, raw number), and each page's text."""
    images: dict[tuple[int, str, Any], bytes] = {}
    texts: dict[int, str] = {}
    for page in state.get("page_results") or []:
        texts[page["page"]] = "\n".join(ln["text"] for ln in page.get("lines") or [])
        for obj in page.get("objects") or []:
            if obj.get("png"):
                images[(page["page"], obj["kind"], obj["number"])] = obj["png"]
    return images, texts


def describe_objects(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    tasks = system_of(runtime).ingest_tasks
    sections = state["sections"]
    citing: dict[str, list[str]] = {}
    for section in sections.values():
        for m in re.finditer(r"[^.\n]*\b(Table|Figure)\s?([A-H]?\.?\d{1,2}(?:\.\d{1,2})?)[^.\n]*", section["text"]):
            citing.setdefault(f"{m.group(1).lower()}_{m.group(2)}", []).append(m.group(0).strip())
    images, texts = page_context(state)

    def describe(section: dict[str, Any]) -> str:
        referring = citing.get(f"{section['kind']}_{section['number']}", [])
        page: int = section["pages"][0] if section.get("pages") else -1
        png = images.get((page, section["kind"], section.get("raw_number", section["number"])))
        return tasks.describe_object(section, referring, image=png, page_text=texts.get(page, ""))

    objects = [(key, s) for key, s in sections.items() if s["kind"] in ("table", "figure")]
    described = map_ordered(tasks.concurrency, describe, [s for _, s in objects])
    return {"descriptions": {key: text for (key, _), text in zip(objects, described, strict=True)}}
