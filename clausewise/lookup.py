"""Finding sections and documents from what a user types: a store key in any case, a designation
with a clause or object ("EN 1991-1-3 5.3.2", "EN 1991-1-3 Table 5.2"), or a bare code ("5.3.2",
"Table 5.2") looked for in every ingested document; near misses are offered as suggestions."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from clausewise.keys import find_designations, is_safe_key, object_key, split_key
from clausewise.stores import Stores

_OBJECT = re.compile(
    r"^(?P<kind>table|tab\.?|figure|fig\.?|expression|equation|eq\.?|annex|clause|section)?[\s_]*"
    r"\(?(?P<number>[A-Za-z]?[A-Za-z0-9]*(?:[.\-][A-Za-z0-9]+)*[a-z]?(?:\([A-Za-z0-9]+\))?)\)?$",
    re.I,
)
_KINDS = {"tab": "table", "fig": "figure", "equation": "expression", "eq": "expression"}


@dataclass
class Found:
    keys: list[str] = field(default_factory=list)  # sections that match
    suggestions: list[str] = field(default_factory=list)  # near misses when nothing matches


def object_code(text: str) -> str | None:
    """ "Table 5.2" / "table_5.2" / "5.3.2" / "Annex A" / "Expression (5.1)" as a key's object code."""
    m = _OBJECT.match(" ".join(text.split()))
    if not m or not m.group("number"):
        return None
    kind = (m.group("kind") or "").lower().rstrip(".")
    kind = _KINDS.get(kind, kind)
    number = m.group("number")
    if kind in ("", "clause", "section"):
        return number
    return f"{kind}_{number.upper() if kind == 'annex' else number}"


def find_sections(stores: Stores, text: str) -> Found:
    """The sections ``text`` names (usually one; a bare code may be in several documents)."""
    text = text.strip()
    documents = sorted(stores.visible_documents())
    if is_safe_key(text) and _exists(stores, text):
        return Found([text])
    candidates: list[str] = []
    designations = find_designations(text)
    if designations:
        found, (_, end), _ = designations[0]
        code = object_code(text[end:].replace("_", " ").strip(" ,:"))
        doc_key = next((d for d in documents if d.split("_", 1)[1] == found.code), found.key)
        if code:
            candidates = [object_key(doc_key, code)]
    elif text.count("_") >= 2:  # a key typed in another case: CEN_EN1991-1-3_Table_5.2
        try:
            publisher, doc_code, code_part = split_key(text)
        except ValueError:
            code_part = ""
        code = object_code(code_part.replace("_", " ")) if code_part else None
        if code:
            candidates = [object_key(d, code) for d in documents if d.lower() == f"{publisher}_{doc_code}".lower()]
    else:
        code = object_code(text)
        if code:
            candidates = [object_key(d, code) for d in documents]
    keys = [k for k in candidates if is_safe_key(k) and _exists(stores, k)]
    if keys:
        return Found(keys)
    known = [k for d in documents for k in stores.doc_table(d, "sections")]
    lowered = {k.lower(): k for k in known}
    probes = [text, *candidates]
    close = [lowered[m] for p in probes for m in difflib.get_close_matches(p.lower(), list(lowered), n=5, cutoff=0.75)]
    return Found([], list(dict.fromkeys(close))[:5])


def find_document(stores: Stores, text: str) -> str | None:
    """The ingested document ``text`` names (its key, or a designation in any spelling)."""
    documents = stores.visible_documents()
    if text in documents:
        return text
    lowered = {d.lower(): d for d in documents}
    if text.lower() in lowered:
        return lowered[text.lower()]
    designations = find_designations(text)
    if designations:
        found = designations[0][0]
        return next((d for d in documents if d.split("_", 1)[1] == found.code), None)
    return None


def _exists(stores: Stores, key: str) -> bool:
    try:
        return stores.lookup("sections", key) is not None
    except (KeyError, ValueError):
        return False
