"""Cross-references in code text: spotting them (ingestion) and checking the ones a model claims
(query), with one set of rules, and resolving references into other documents against the master list.

A reference is ``{"raw", "span", "kind", "target", "document", "resolved"}``: the words as printed,
where they are in the section's text, the kind of thing named (clause, table, figure, expression,
annex, document, neighbour), the store key it points to, and whether that key exists.
"""

from __future__ import annotations

import re
from typing import Any

from clausewise.keys import DocId, clean_number, find_designations, object_key, split_key

Section = dict[str, Any]

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


def claimed_references(section: Section, claimed: list[str], known: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """References a model says a section makes: kept only when the words are in the section's text,
    then resolved with the same rules as ingestion."""
    text = " ".join(section["text"].split())
    publisher, code, _ = split_key(section["doc_key"])
    kept, wrong = [], []
    for raw in dict.fromkeys(claimed):
        if " ".join(raw.split()) not in text:
            wrong.append(raw)
            continue
        probe = {"key": section["key"], "text": raw, "previous": section.get("previous"), "next": section.get("next")}
        found = spot_references(DocId(publisher, code), probe, known)
        kept += [dict(r, span=None) for r in found] if found else []
        if not found:
            wrong.append(raw)
    return kept, wrong


def resolve_external(
    references: dict[str, list[dict[str, Any]]], doc_key: str, ingested: set[str], exists: Any
) -> dict[str, set[str]]:
    """Mark each reference into another document resolved when that document is ingested and the
    target exists there (``exists(key)``); returns referenced document -> citing section keys."""
    external: dict[str, set[str]] = {}
    for src, refs in references.items():
        for ref in refs:
            if ref["document"] != doc_key:
                external.setdefault(ref["document"], set()).add(src)
                target_doc_visible = ref["document"] in ingested
                ref["resolved"] = target_doc_visible and (ref["target"] == ref["document"] or exists(ref["target"]))
                if not target_doc_visible:
                    ref["reason"] = "document not ingested"
    return external


def doc_display(doc_key: str) -> str:
    """``CEN_EN1991-1-3`` -> ``EN 1991-1-3``."""
    publisher, code, _ = split_key(doc_key)
    return DocId(publisher, code).display
