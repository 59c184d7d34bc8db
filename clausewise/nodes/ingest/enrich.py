"""Document-level enrichment after the sections are merged: references, precedence, kv terms,
figure and table descriptions (run as parallel branches), then chunking for the vector index.

Within a branch, the reasoner's calls (one per section or object) run on up to ``tasks.concurrency``
threads (the offline reasoner has none: its calls run inline), and results are kept in section order."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from langchain_core.runnables.config import ContextThreadPoolExecutor

from clausewise.keys import DocId
from clausewise.tools.tasks import IngestTasks

Sections = dict[str, dict[str, Any]]
T = TypeVar("T")
U = TypeVar("U")


def _map(tasks: Any, fn: Callable[[U], T], items: Sequence[U]) -> list[T]:
    """``[fn(x) for x in items]`` with at most ``tasks.concurrency`` calls at once, in order."""
    workers = min(max(1, int(getattr(tasks, "concurrency", 1) or 1)), len(items))
    if workers <= 1:
        return [fn(x) for x in items]
    with ContextThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def _doc(state: dict[str, Any]) -> DocId:
    d = state["doc"]
    return DocId(d["publisher"], d["code"], d.get("edition"))


def with_neighbours(sections: Sections) -> Sections:
    """Each section learns the next table/figure/expression after it ("the following table")."""
    keys = list(sections)
    for i, key in enumerate(keys):
        for kind in ("table", "figure", "expression"):
            sections[key][f"next_{kind}"] = next((k for k in keys[i + 1 : i + 12] if sections[k]["kind"] == kind), None)
        parent = sections[key].get("parent")
        sections[key]["parent_title"] = sections[parent]["title"] if parent in sections else ""
    return sections


def find_references(tasks: IngestTasks, state: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    sections: Sections = state["sections"]
    known = set(sections)
    doc = _doc(state)
    out = {}
    found = _map(tasks, lambda section: tasks.spot_references(doc, section, known), list(sections.values()))
    for (key, section), refs in zip(sections.items(), found, strict=True):
        # A claimed reference must be in the source text where it says it is.
        refs = [r for r in refs if section["text"][r["span"][0] : r["span"][1]] == r["raw"]]
        if refs:
            out[key] = refs
    return out


def find_precedence(tasks: IngestTasks, state: dict[str, Any]) -> list[dict[str, Any]]:
    sections: Sections = state["sections"]
    known = set(sections)
    doc = _doc(state)
    rules = []
    for found in _map(tasks, lambda section: tasks.find_precedence(doc, section, known), list(sections.values())):
        rules += found
    # Annex status governs every clause, table and figure inside the annex.
    for key in sections:
        annex = _annex_ancestor(sections, key)
        if annex and annex != key and sections[annex].get("status") == "informative":
            rules.append(
                {
                    "key": key,
                    "rule": f"in informative {sections[annex]['section'].replace('_', ' ').title()}: "
                    "guidance, not a requirement",
                    "type": "informative",
                    "source_key": annex,
                    "evidence": "(informative)",
                }
            )
    return rules


def _annex_ancestor(sections: Sections, key: str) -> str | None:
    seen = 0
    while key in sections and seen < 12:
        if sections[key]["kind"] == "annex":
            return key
        key = sections[key].get("parent") or ""
        seen += 1
    return None


def extract_terms(tasks: IngestTasks, state: dict[str, Any]) -> list[dict[str, Any]]:
    terms = []
    for found in _map(tasks, tasks.extract_terms, list(state["sections"].values())):
        terms += found
    return terms


def _takes_image(tasks: Any) -> bool:
    """Whether ``tasks.describe_object`` accepts the ``image`` and ``page_text`` keywords."""
    try:
        params = inspect.signature(tasks.describe_object).parameters
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return True
    return "image" in params and "page_text" in params


def page_context(state: dict[str, Any]) -> tuple[dict[tuple[int, str, Any], bytes], dict[int, str]]:
    """Each table/figure's cropped PNG by (page, kind, raw number), and each page's text."""
    images: dict[tuple[int, str, Any], bytes] = {}
    texts: dict[int, str] = {}
    for page in state.get("page_results") or []:
        texts[page["page"]] = "\n".join(ln["text"] for ln in page.get("lines") or [])
        for obj in page.get("objects") or []:
            if obj.get("png"):
                images[(page["page"], obj["kind"], obj["number"])] = obj["png"]
    return images, texts


def describe_objects(tasks: IngestTasks, state: dict[str, Any]) -> dict[str, str]:
    sections: Sections = state["sections"]
    citing: dict[str, list[str]] = {}
    for section in sections.values():
        for m in re.finditer(r"[^.\n]*\b(Table|Figure)\s?([A-H]?\.?\d{1,2}(?:\.\d{1,2})?)[^.\n]*", section["text"]):
            citing.setdefault(f"{m.group(1).lower()}_{m.group(2)}", []).append(m.group(0).strip())
    images, texts = page_context(state) if _takes_image(tasks) else ({}, None)

    def describe(section: dict[str, Any]) -> str:
        referring = citing.get(f"{section['kind']}_{section['number']}", [])
        if texts is None:
            return tasks.describe_object(section, referring)
        page: int = section["pages"][0] if section.get("pages") else -1
        png = images.get((page, section["kind"], section.get("raw_number", section["number"])))
        return tasks.describe_object(  # type: ignore[call-arg]
            section, referring, image=png, page_text=texts.get(page, "")
        )

    objects = [(key, s) for key, s in sections.items() if s["kind"] in ("table", "figure")]
    described = _map(tasks, describe, [s for _, s in objects])
    return {key: text for (key, _), text in zip(objects, described, strict=True)}


def make_chunks(sections: Sections, descriptions: dict[str, str], chunk_chars: int) -> list[dict[str, Any]]:
    """Chunks of each section, heading included, split at line boundaries; page of each chunk start."""
    chunks = []
    for key, s in sections.items():
        if s["kind"] == "contents":
            continue
        heading = f"{s['document']} {s['section']} {s.get('title') or ''}".strip()
        body = s["text"]
        if s["kind"] == "figure":  # a drawing's OCR is mostly noise: its caption and description say more
            body = "\n".join(filter(None, [descriptions.get(key), body[:300]]))
        elif s["kind"] == "table" and descriptions.get(key):
            body = descriptions[key] + "\n" + body
        lines = body.split("\n")
        start, offset, n = 0, 0, 0
        while start < len(lines):
            size, end = len(heading), start
            while end < len(lines) and (end == start or size + len(lines[end]) + 1 <= chunk_chars):
                size += len(lines[end]) + 1
                end += 1
            text = "\n".join(lines[start:end])
            page = s["pages"][0]
            for pos, pno in s.get("page_map", []):
                if pos <= offset:
                    page = pno
            chunks.append(
                {
                    "key": key,
                    "chunk": n,
                    "text": f"{heading}\n{text}",
                    "page": page,
                    "kind": s["kind"],
                    "document": s["document"],
                    "doc_key": s["doc_key"],
                }
            )
            offset += len(text) + 1
            n += 1
            start = end
    return chunks
