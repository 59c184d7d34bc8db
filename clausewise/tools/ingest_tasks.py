"""Model tasks of ingestion behind one interface, with deterministic offline implementations.

Nodes call a :class:`IngestTasks`; the offline implementation here is the embedded default. A model
implementation (Gemini) implements the same methods with structured output and falls back to these.
Every result names the section it came from, so it can be checked against the source text.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Protocol

from clausewise.keys import DocId, clean_number, find_designations, object_key
from clausewise.references import spot_references
from clausewise.tools.parallel import Usage, offline_usage
from clausewise.tools.query_tasks import STOPWORDS as _STOPWORDS
from clausewise.tools.query_tasks import is_definition

Section = dict[str, Any]


class IngestTasks(Protocol):
    """Everything ingestion's nodes ask of a reasoner, one section (or object) a call."""

    name: str
    concurrency: int  # a step's calls run on up to this many threads (1: inline)

    def usage(self) -> Usage:
        """Model calls, tokens and degraded tasks so far (all zero offline)."""

    def spot_references(self, doc: DocId, section: Section, known: Collection[str]) -> list[dict[str, Any]]: ...

    def find_precedence(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]: ...

    def extract_terms(self, section: Section) -> list[dict[str, Any]]: ...

    def describe_object(
        self, obj: Section, referring: list[str], *, image: bytes | None = None, page_text: str = ""
    ) -> str:
        """A table or figure from its caption, text and citing sentences; a model also looks at the
        cropped ``image`` and its page's text."""


# ---------------------------------------------------------------- precedence
_NA_NOTE = re.compile(
    r"(National Annex|national annex)[^.]{0,120}?\b(may|can|will|should)\b[^.]{0,160}\.|"
    r"(may|can) be (given|specified|defined|set|chosen|determined|found)[^.]{0,40}National Annex[^.]*\.|"
    r"[Tt]he recommended values? (?:is|are|of)[^.]{0,160}(?:\.\s|\.$)",
)
_NDP_LIST = re.compile(r"National choice is allowed", re.I)
_SUPERSEDES = re.compile(r"(supersedes|replaces|withdrawn)[^.]{0,200}\.", re.I)
_REF_NUM = re.compile(
    r"(?<![\w.])(?P<num>(?:[A-H]|[1-9]\d?)(?:\.\d{1,2}){0,4})\s?\(\s?(?P<para>\d{1,2})\s?\)|(?<![\w.])(?:Table|Figure)\s(?P<obj>[A-H]?\.?\d{1,2}(?:\.\d{1,2})?)"
)


def find_precedence(doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
    """Rules that govern a section, and rules a section states about others (foreword NDP lists)."""
    text: str = section["text"]
    key = section["key"]
    rules: list[dict[str, Any]] = []
    if section["kind"] == "annex" and section.get("status"):
        rules.append(
            {
                "key": key,
                "rule": f"Annex {section['section'].removeprefix('annex_')} is "
                f"{section['status']}"
                + (" (guidance only, not a requirement)" if section["status"] == "informative" else ""),
                "type": section["status"],
                "source_key": key,
                "evidence": section["title"],
            }
        )
    for m in _NA_NOTE.finditer(text):
        span = m.group(0).strip()
        rule_type = "recommended-value" if span.lower().startswith("the recommended") else "national-annex"
        rules.append({"key": key, "rule": span, "type": rule_type, "source_key": key, "evidence": span})
    if _NDP_LIST.search(text):
        listing = text[_NDP_LIST.search(text).end() :]  # type: ignore[union-attr]
        for m in _REF_NUM.finditer(listing):
            if m.group("obj"):
                target = object_key(doc, f"table_{clean_number(m.group('obj'))}")
                if target not in known:
                    target = object_key(doc, f"figure_{clean_number(m.group('obj'))}")
                raw = m.group(0)
            else:
                num = m.group("num")
                target = object_key(doc, f"annex_{num}" if re.fullmatch(r"[A-H]", num) else num)
                raw = m.group(0)
            rules.append(
                {
                    "key": target,
                    "rule": f"Nationally Determined Parameter: national choice is "
                    f"allowed in {raw} (listed in the foreword); check the National Annex",
                    "type": "ndp",
                    "source_key": key,
                    "evidence": raw,
                }
            )
    for m in _SUPERSEDES.finditer(text):
        for found, _, raw in find_designations(m.group(0)):
            if found.key != doc.key:
                rules.append(
                    {
                        "key": doc.key,
                        "rule": f"{doc.display} {m.group(1).lower()} {raw}",
                        "type": "supersedes",
                        "source_key": key,
                        "evidence": m.group(0).strip(),
                    }
                )
    return rules


# ---------------------------------------------------------------- kv terms
_SYMBOL_LINE = re.compile(r"^(?P<sym>[^\s]{1,12})\s+(?P<meaning>[A-Za-z][A-Za-z ,()'/-]{4,120})$")
# A word where a symbol should be: a line that lost its symbol ("snow load shape coefficient") or a
# list's sub-heading ("Latin upper case letters").
_WORD_NOT_SYMBOL = re.compile(r"[A-Z]?[a-z]{4,}|[a-z]+-[a-z-]+|.*[,;:]")
_VALUE = re.compile(
    r"(?P<name>\b[A-Za-z][A-Za-z0-9,]{0,5})\s?=\s?(?P<value>[-+]?\d+(?:,\d+)?)(?P<unit>\s?(?:kN/m2|kN/m3|kN/m|kN|m|mm|°C|%))?(?![\d,])"
)
_RECOMMENDED = re.compile(r"recommended value (?:of|for) (?P<name>[^ ]{1,20}) is (?P<value>[-+]?\d+(?:,\d+)?)")


def extract_terms(section: Section) -> list[dict[str, Any]]:
    """Symbols with meanings, defined terms, and values stated in a section."""
    out: list[dict[str, Any]] = []
    key = section["key"]
    title = (section.get("title") or "").lower()
    text: str = section["text"]
    if "symbol" in title:
        for line in text.split("\n")[1:]:
            m = _SYMBOL_LINE.match(line.strip())
            if m and not _WORD_NOT_SYMBOL.fullmatch(m.group("sym")) and m.group("sym").lower() not in _STOPWORDS:
                out.append({"term": m.group("sym"), "equivalent": m.group("meaning").strip(), "source": key})
    if is_definition(section) and section.get("title"):
        definition = " ".join(text.split("\n")[2:])[:300]
        if definition:
            out.append(
                {"term": section["title"].strip(), "equivalent": definition, "source": key, "type": "definition"}
            )
    for m in _VALUE.finditer(text):
        out.append({"term": m.group("name"), "value": m.group("value") + (m.group("unit") or ""), "source": key})
    for m in _RECOMMENDED.finditer(text):
        out.append({"term": m.group("name"), "value": m.group("value"), "source": key})
    return out


# ---------------------------------------------------------------- descriptions
def describe_object(obj: Section, referring: list[str]) -> str:
    """Caption, the object's own text, and what the sections that cite it say about it."""
    parts = [obj.get("caption") or obj.get("title") or ""]
    body = obj["text"].split("\n", 1)[1] if "\n" in obj["text"] else ""
    if obj["kind"] == "figure" and body:
        parts.append(f"Text in the figure: {body[:300]}")
    elif obj["kind"] == "table" and obj.get("rows"):
        header = [c for c in obj["rows"][0] if c]
        parts.append(f"Table with {len(obj['rows'])} rows; columns: {', '.join(header)[:200]}")
    parts += [f"Cited: {s[:300]}" for s in referring[:3]]
    return "\n".join(p for p in parts if p)


class OfflineTasks:
    """The deterministic reasoner: rules over the text, no model, no network."""

    name = "offline"
    concurrency = 1

    def usage(self) -> Usage:
        return offline_usage()

    def spot_references(self, doc: DocId, section: Section, known: Collection[str]) -> list[dict[str, Any]]:
        return spot_references(doc, section, known)

    def find_precedence(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
        return find_precedence(doc, section, known)

    def extract_terms(self, section: Section) -> list[dict[str, Any]]:
        return extract_terms(section)

    def describe_object(
        self, obj: Section, referring: list[str], *, image: bytes | None = None, page_text: str = ""
    ) -> str:
        return describe_object(obj, referring)  # rules read text only: no image, no page
