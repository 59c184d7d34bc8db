"""Document-level enrichment after the sections are merged: references, precedence, kv terms,
figure and table descriptions (run as parallel branches), then chunking for the vector index."""

from __future__ import annotations

import re
from typing import Any

from clausewise.keys import DocId
from clausewise.tools.tasks import IngestTasks

Sections = dict[str, dict[str, Any]]


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
    for key, section in sections.items():
        refs = tasks.spot_references(doc, section, known)
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
    for section in sections.values():
        for rule in tasks.find_precedence(doc, section, known):
            rules.append(rule)
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
    for section in state["sections"].values():
        terms += tasks.extract_terms(section)
    return terms


def describe_objects(tasks: IngestTasks, state: dict[str, Any]) -> dict[str, str]:
    sections: Sections = state["sections"]
    citing: dict[str, list[str]] = {}
    for section in sections.values():
        for m in re.finditer(r"[^.\n]*\b(Table|Figure)\s?([A-H]?\.?\d{1,2}(?:\.\d{1,2})?)[^.\n]*", section["text"]):
            citing.setdefault(f"{m.group(1).lower()}_{m.group(2)}", []).append(m.group(0).strip())
    out = {}
    for key, section in sections.items():
        if section["kind"] in ("table", "figure"):
            out[key] = tasks.describe_object(section, citing.get(f"{section['kind']}_{section['number']}", []))
    return out


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
