"""Model tasks of ingestion behind one interface, with deterministic offline implementations.

Nodes call a :class:`IngestTasks`; the offline implementation here is the embedded default. A model
implementation (Gemini) implements the same methods with structured output and falls back to these.
Every result names the section it came from, so it can be checked against the source text.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from clausewise.keys import DocId, clean_number, find_designations, object_key

Section = dict[str, Any]


class IngestTasks(Protocol):
    """What ingestion asks of a reasoner, one section (or object) at a time."""

    def spot_references(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]: ...

    def find_precedence(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]: ...

    def extract_terms(self, section: Section) -> list[dict[str, Any]]: ...

    def describe_object(self, obj: Section, referring: list[str]) -> str: ...


# ---------------------------------------------------------------- references
_OBJ = (
    r"(?P<kind>Tables?|Figures?|Fig\.|Expressions?|Equations?|Eqs?\.|Annex(?:es)?|Sections?|[Cc]lauses?|[Ss]ubclauses?)"
)
_NUMTOK = r"(?:[A-H]\s?\.?\s?)?\d{1,2}(?:\s?\.\s?\d{1,2}){0,4}[a-z]?"
_OBJECT_REF = re.compile(
    _OBJ + r"\s*(?P<first>\(?\s?" + _NUMTOK + r"\s?\)?|[A-H]\b)"
    r"(?P<more>(?:\s?(?:,|and|or|to|-)\s?(?:\(?\s?" + _NUMTOK + r"\s?\)?|[A-H]\b))*)"
)
_BARE_CLAUSE = re.compile(
    r"(?<![\w.,(])(?P<num>[1-9]\d?(?:\.\d{1,2}){1,4})(?P<para>\s?\(\s?\d{1,2}\s?\)\s?P?)?(?![\w.]*\d)(?!\s?(?:m|mm|kN|N|%|°|m2|m3)\b)"
)
_ANNEX_PARA = re.compile(r"(?<![\w.])(?P<letter>[A-H])\s?\((?P<para>\d{1,2})\)")
_SECTION_PARA = re.compile(r"(?<![\w.,])(?P<num>[1-9]\d?)\s?\((?P<para>\d{1,2})\)(?!\s?[a-z]\))")
_NEIGHBOUR = re.compile(
    r"\b(?P<dir>see above|given above|shown above|as above|see below|given below|shown below|"
    r"(?:the )?following (?:table|figure|expression|clauses?|paragraphs?))\b",
    re.I,
)
_CUE = re.compile(r"(see|in|given in|according to|accordance with|defined in|from|of|to|and|using|with|by)\s*$", re.I)


def _kind_code(kind: str) -> str:
    k = kind.lower().rstrip("s.")
    return {
        "table": "table",
        "figure": "figure",
        "fig": "figure",
        "expression": "expression",
        "equation": "expression",
        "eq": "expression",
        "annexe": "annex",
        "annex": "annex",
        "section": "clause",
        "clause": "clause",
        "subclause": "clause",
    }.get(k, k)


def _target_code(kind: str, number: str) -> str:
    number = number.strip().strip("()").strip()
    if kind == "annex":
        return "annex_" + re.sub(r"\s", "", number)[:2].rstrip(".")
    number = clean_number(number)
    return number if kind == "clause" else f"{kind}_{number}"


_OCR_VARIANTS = [("8", "B"), ("0", "D"), ("6", "G"), ("5", "S"), ("1", "I")]


def _ocr_variant(key: str, known: set[str]) -> str | None:
    """A known key that an OCR slip turned into ``key``: "Figure 81" is Figure B.1, "Annex 0" Annex D."""
    prefix, _, code = key.rpartition("_")
    for digit, letter in _OCR_VARIANTS:
        if code.startswith(digit):
            rest = code[1:].lstrip(".")
            for candidate in (f"{letter}.{rest}", f"{letter}{rest}", letter if not rest else None):
                if candidate and f"{prefix}_{candidate}" in known:
                    return f"{prefix}_{candidate}"
    return None


def spot_references(doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
    """Every reference in a section: objects, clauses, annexes, other documents, neighbours."""
    text: str = section["text"]
    refs: list[dict[str, Any]] = []
    taken: list[tuple[int, int]] = []

    def add(
        raw: str,
        span: tuple[int, int],
        target: str | None,
        kind: str,
        document: DocId | None = None,
        maybe_clause: bool = False,
    ) -> None:
        if any(a <= span[0] < b for a, b in taken):
            return
        if document is not None and document.code == doc.code:
            document = None
        if document is None and target is not None and target not in known:
            as_clause = re.sub(r"_(table|figure|expression)_", "_", target)
            # "Table 6.2 and 6.3.1.2(8)": a number after an object word may name a clause
            target = _ocr_variant(target, known) or (as_clause if maybe_clause and as_clause in known else target)
        taken.append(span)
        # References into other documents are resolved at commit, against the master list.
        refs.append(
            {
                "raw": raw,
                "span": list(span),
                "kind": kind,
                "target": target,
                "document": (document or doc).key,
                "resolved": document is None and target in known,
            }
        )

    # Other documents first ("EN 1990, 6.4.3.2"), so their clause numbers are not read as ours.
    for found, span, _ in find_designations(text):
        tail = re.match(r"\s?,?\s?(?:clause\s)?(?P<num>\d{1,2}(?:\.\d{1,2}){1,4})", text[span[1] : span[1] + 20])
        target = None
        end = span[1]
        if tail:
            target = object_key(found, tail.group("num"))
            end += tail.end()
        if found.code == doc.code:  # the document naming itself, whatever publisher it was filed under
            taken.append((span[0], end))
            continue
        add(text[span[0] : end], (span[0], end), target or found.key, "document", found)
    for m in _OBJECT_REF.finditer(text):
        kind = _kind_code(m.group("kind"))
        head = (m.start(), m.end("first"))  # "Tables 5.1": the word and the first number
        add(text[head[0] : head[1]], head, object_key(doc, _target_code(kind, m.group("first"))), kind)
        more_start = m.start("more")
        for n in re.finditer(r"\(?\s?" + _NUMTOK + r"\s?\)?|[A-H]\b", m.group("more") or ""):
            span = (more_start + n.start(), more_start + n.end())  # "Tables 5.1 and 5.2": each its own span
            add(text[span[0] : span[1]], span, object_key(doc, _target_code(kind, n.group(0))), kind, maybe_clause=True)
    for m in _ANNEX_PARA.finditer(text):
        add(m.group(0), m.span(), object_key(doc, f"annex_{m.group('letter')}"), "annex")
    for m in _BARE_CLAUSE.finditer(text):
        key = object_key(doc, m.group("num"))
        cue = _CUE.search(text[max(0, m.start() - 25) : m.start()])
        if key in known or cue:
            add(m.group(0).strip(), m.span(), key, "clause")
    for m in _SECTION_PARA.finditer(text):
        key = object_key(doc, m.group("num"))
        if key in known and _CUE.search(text[max(0, m.start() - 25) : m.start()]):
            add(m.group(0), m.span(), key, "clause")
    for m in _NEIGHBOUR.finditer(text):
        phrase = m.group("dir").lower()
        if "above" in phrase:
            target = section.get("previous")
        else:
            wanted = next((w for w in ("table", "figure", "expression") if w in phrase), None)
            target = section.get("next_" + wanted) if wanted else section.get("next")
            target = target or section.get("next")
        add(m.group(0), m.span(), target, "neighbour")
    self_key = section["key"]
    out = [r for r in refs if r["target"] != self_key]
    out.sort(key=lambda r: r["span"][0])
    return out


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
SYNONYMS: list[list[str]] = [
    ["dead load", "permanent action", "self-weight", "self weight", "permanent load"],
    ["live load", "imposed load", "variable action", "superimposed load"],
    ["snow load", "snow loading", "action due to snow"],
    ["wind load", "wind action", "wind pressure"],
    ["density", "unit weight", "weight density", "bulk weight density"],
    ["fire", "fire exposure", "fire situation", "accidental design situation"],
    ["temperature", "thermal action", "thermal actions"],
    ["impact", "collision", "accidental action"],
    ["execution", "construction stage", "construction loads"],
    ["combination factor", "psi factor", "ψ0", "ψ1", "ψ2"],
    ["reinforced concrete", "concrete"],
    ["partition", "partitions", "movable partitions"],
    ["NDP", "nationally determined parameter", "national annex", "national choice"],
]
_SYMBOL_LINE = re.compile(r"^(?P<sym>[^\s]{1,12})\s+(?P<meaning>[a-z][a-z ,()'/-]{4,120})$")
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
            if m:
                out.append({"term": m.group("sym"), "equivalent": m.group("meaning").strip(), "source": key})
    parent_title = section.get("parent_title", "").lower()
    if section["kind"] == "clause" and "definition" in parent_title and section.get("title"):
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


def merge_terms(kv: dict[str, Any], terms: list[dict[str, Any]]) -> dict[str, Any]:
    """Add terms to the kv store; a differing second value is kept and flagged as a conflict."""
    for t in terms:
        entry = kv.setdefault(t["term"].lower(), {"term": t["term"], "equivalents": [], "values": []})
        if "equivalent" in t:
            item = {"text": t["equivalent"], "source": t["source"], "type": t.get("type", "equivalent")}
            if item not in entry["equivalents"]:
                entry["equivalents"].append(item)
        if "value" in t:
            item = {"value": t["value"], "source": t["source"]}
            if item not in entry["values"]:
                entry["values"].append(item)
        entry["conflict"] = len({v["value"] for v in entry["values"]}) > 1
    return kv


def synonym_terms() -> list[dict[str, Any]]:
    """The built-in engineering thesaurus, as kv equivalents (source ``builtin_thesaurus``)."""
    out = []
    for group in SYNONYMS:
        for term in group:
            for other in group:
                if other != term:
                    out.append({"term": term, "equivalent": other, "source": "builtin_thesaurus", "type": "synonym"})
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

    def spot_references(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
        return spot_references(doc, section, known)

    def find_precedence(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
        return find_precedence(doc, section, known)

    def extract_terms(self, section: Section) -> list[dict[str, Any]]:
        return extract_terms(section)

    def describe_object(self, obj: Section, referring: list[str]) -> str:
        return describe_object(obj, referring)
