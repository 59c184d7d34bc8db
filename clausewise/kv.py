"""The kv store's rules in one place: how terms are merged (a differing second value is kept and
flagged as a conflict, never overwritten), the built-in thesaurus, removing a document's terms, the
equivalents a question's words bring in, and the recorded conflicts a set of passages touches.

An entry is ``term (lower case) -> {"term", "equivalents": [{"text", "source", "type"}],
"values": [{"value", "source"}], "conflict"}``; sources are section keys (or ``builtin_thesaurus``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

THESAURUS_SOURCE = "builtin_thesaurus"

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


def _flag(entry: dict[str, Any]) -> dict[str, Any]:
    entry["conflict"] = len({v["value"] for v in entry["values"]}) > 1
    return entry


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
        _flag(entry)
    return kv


def synonym_terms() -> list[dict[str, Any]]:
    """The built-in engineering thesaurus, as kv equivalents (source ``builtin_thesaurus``)."""
    out = []
    for group in SYNONYMS:
        for term in group:
            for other in group:
                if other != term:
                    out.append({"term": term, "equivalent": other, "source": THESAURUS_SOURCE, "type": "synonym"})
    return out


def has_thesaurus(kv: dict[str, Any]) -> bool:
    return any(v.get("source") == THESAURUS_SOURCE for e in kv.values() for v in e.get("equivalents", []))


def replace_document_terms(kv: dict[str, Any], doc_key: str, terms: list[dict[str, Any]]) -> dict[str, Any]:
    """The kv store with ``doc_key``'s old terms replaced by ``terms`` (and the thesaurus present)."""
    kv = remove_kv_sources(kv, doc_key)
    if not has_thesaurus(kv):
        kv = merge_terms(kv, synonym_terms())
    return merge_terms(kv, terms)


def remove_kv_sources(kv: dict[str, Any], doc_key: str) -> dict[str, Any]:
    """Drop every kv value and equivalent that came from ``doc_key``; drop emptied terms."""
    prefix = doc_key + "_"
    out = {}
    for term, entry in kv.items():
        values = [v for v in entry.get("values", []) if not v["source"].startswith(prefix)]
        equivalents = [e for e in entry.get("equivalents", []) if not e["source"].startswith(prefix)]
        if values or equivalents:
            out[term] = _flag({**entry, "values": values, "equivalents": equivalents})
    return out


def equivalents_in(
    kv: dict[str, Any], words: list[str], per_term: int = 8, ignore: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """(term, equivalent text) for every kv term the question's words contain ("dead load" ->
    "self-weight", "Ce" -> "exposure coefficient"); definitions are not equivalents. A thesaurus term
    matches in any case; a term a document defines (a symbol) only as written, so "To" (a temperature)
    is not the word "to", and one that is a lower-case word ("net") is a misread list line, never a match.
    A term that is one of the ``ignore`` words (stopwords) never matches."""
    lowered = " " + " ".join(w.lower() for w in words) + " "
    written = " " + " ".join(words) + " "
    out: list[tuple[str, str]] = []
    for key, entry in kv.items():
        if len(key) < 2 or key in ignore:
            continue
        equivalents = [eq for eq in entry.get("equivalents", [])[:per_term] if eq.get("type") != "definition"]
        if not equivalents:
            continue
        thesaurus = all(eq.get("source") == THESAURUS_SOURCE for eq in equivalents)
        text, term = (lowered, key) if thesaurus else (written, entry.get("term") or key)
        if not thesaurus and len(term) > 2 and term.isalpha() and term.islower():
            continue  # a word, not a symbol: a list line misread ("Hu net calorific value" as "net")
        if f" {term} " not in text and not (len(term) > 4 and term in text):
            continue
        out.extend((key, eq["text"]) for eq in equivalents)
    return out


def recorded_conflicts(
    kv: dict[str, Any], passages: list[dict[str, Any]], alike: Callable[[str, list[str]], bool] | None = None
) -> list[dict[str, Any]]:
    """Terms the kv store recorded with differing values, where the passages use the term and quote
    one of the sections that gave a value; with ``alike``, only those it accepts for (term, sources):
    a symbol recorded with another value elsewhere may name another quantity or another case."""
    used = {p["key"] for p in passages}
    text = " ".join(p["text"] for p in passages)
    conflicts = []
    for entry in kv.values():
        if not entry.get("conflict") or len(entry["term"]) < 2:
            continue
        sources = sorted({v["source"] for v in entry["values"]})
        if len(sources) > 1 and used & set(sources) and re.search(rf"(?<!\w){re.escape(entry['term'])}(?!\w)", text):
            if alike is not None and not alike(entry["term"], sources):
                continue
            conflicts.append(
                {
                    "topic": f"{entry['term']} has differing recorded values",
                    "passages": sources[:6],
                    "note": ", ".join(f"{v['value']} ({v['source']})" for v in entry["values"][:6]),
                }
            )
    return conflicts
