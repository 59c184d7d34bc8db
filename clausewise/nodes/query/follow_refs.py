"""follow-refs: the references of every relevant section not yet followed (2nd and 3rd order), and
neighbours for "see above / the following table", become candidates one hop further; so do the clauses
printed between two relevant sections found directly, up to ``BETWEEN_REACH`` apart (a document prints a
topic's rules together: the ones between may not share a word with the question). References are
resolved here, against the documents visible now (references.Resolver): a reference into a document
ingested after the citing one leads into it."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import RESET, QueryContext, QueryState
from clausewise.keys import OBJECT_KINDS, document_of
from clausewise.nodes.query.deps import Reader, bare, deps_of, lineage
from clausewise.references import (
    NOT_FOUND,
    NOT_INGESTED,
    Resolver,
    claimed_references,
    doc_display,
    paragraph_named,
)


def follow_refs(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """References of every relevant section not yet followed become candidates one hop further."""
    deps, max_hops = deps_of(runtime), runtime.context.max_hops
    extracts = state.get("extracts") or {}
    cands = state.get("candidates") or {}
    followed = state.get("followed") or {}
    resolver = Resolver(deps.stores)
    read = deps.reader()
    new: dict[str, dict[str, Any]] = {}
    unfollowed = list(state.get("unfollowed_references") or [])
    unresolved = list(state.get("unresolved_references") or [])
    done: dict[str, int] = {}
    rejected: list[dict[str, Any]] = list(state.get("rejected_references") or [])
    for key, parts in extracts.items():
        if not parts or key in followed:
            continue
        done[key] = 1
        hop = cands.get(key, {}).get("hop", 0)
        section = read.section(key) or {}
        refs = read.lookup("references", key) or []
        targets = []
        for ref in refs:
            s, e = ref["span"]
            if section.get("text", "")[s:e] != ref["raw"]:
                continue  # a reference must be in the source text where it claims to be
            targets.append(ref)
        claimed = [r for part in parts for r in part.get("claimed_refs") or []]
        if claimed:
            checked, wrong = claimed_references(
                section, claimed, set(deps.stores.doc_table(section["doc_key"], "sections"))
            )
            targets += checked
            rejected += [{"from_key": key, "ref": r, "reason": "not in the source text"} for r in wrong]
        # The clause a table or figure hangs from, and the table a clause introduces, are neighbours.
        if section.get("kind") in OBJECT_KINDS and section.get("parent"):
            targets.append(
                {
                    "raw": "parent clause",
                    "target": section["parent"],
                    "kind": "neighbour",
                    "document": section["doc_key"],
                    "resolved": True,
                }
            )
        # A clause found directly is read beside the clauses next to it under the same heading: a rule's
        # general case, its limits or its other case are often its siblings, in words the question lacks.
        if hop == 0 and section and section.get("kind") not in OBJECT_KINDS:  # {}: its document was just deleted
            targets += [
                {
                    "raw": "sibling clause",
                    "target": t,
                    "kind": "neighbour",
                    "document": section["doc_key"],
                    "resolved": True,
                }
                for t in siblings(read, section)
            ]
        for ref in targets:
            raw = ref["raw"].strip()
            found = resolver.resolve(ref, key)
            if found.reason == NOT_INGESTED:
                unresolved.append(
                    {
                        "from_key": key,
                        "ref": raw,
                        "document": ref["document"],
                        "reason": f"{NOT_INGESTED} ({doc_display(ref['document'])})",
                    }
                )
                continue
            target = found.key
            if target == found.document:
                continue  # the whole document: nothing to read
            if not target or read.section(target) is None:
                if ref["kind"] != "neighbour":
                    reason = NOT_FOUND
                    if found.document != document_of(key):
                        reason += f" ({doc_display(found.document)})"
                    unresolved.append({"from_key": key, "ref": raw, "reason": reason})
                continue
            if hop + 1 > max_hops:
                unfollowed.append({"from_key": key, "ref": raw, "target": target})
                continue
            para = paragraph_named(raw)
            entry = {
                "via": "neighbour" if ref["kind"] == "neighbour" else "reference",
                "hop": hop + 1,
                "from_key": key,
                "ref": raw,
            }
            if para:
                entry["focus"] = para
            elif re.search(r"_(table|figure|expression)_", target):
                entry["focus"] = "*"  # a cited table, figure or expression is shown whole
            if target not in cands and target not in new:
                new[target] = entry
            elif target in extracts and not extracts[target] and entry.get("focus") and target not in new:
                new[target] = entry  # read again, now for the paragraph the reference names
    direct = {k for k, parts in extracts.items() if parts and cands.get(k, {}).get("hop", 0) == 0}
    if max_hops >= 1 and direct & done.keys():  # pairs of sections followed before were walked then
        for target, key in between(read, direct):
            if target not in cands and target not in new:
                new[target] = {"via": "neighbour", "hop": 1, "from_key": key, "ref": "clause between relevant ones"}
    reread: dict[str, list[dict[str, Any]]] = {k: [] for k in new if k in extracts}
    update: dict[str, Any] = {
        "candidates": new,
        "followed": done,
        "hops": max(state.get("hops", 0), 1 if new else 0),
        "unfollowed_references": _unique(unfollowed),
        "unresolved_references": _unique(unresolved),
        "rejected_references": _unique(rejected),
    }
    if reread:
        update["extracts"] = {k: v for k, v in extracts.items() if k not in reread} | {RESET: True}
    if new:
        update["hops"] = max(state.get("hops", 0), max(e["hop"] for e in new.values()))
    return update


BETWEEN_REACH = 5  # two relevant sections found directly this many clauses apart or nearer: those between are read


def between(read: Reader, direct: set[str]) -> list[tuple[str, str]]:
    """The clauses printed between two of the ``direct`` sections (relevant, found directly) of one
    document, at most ``BETWEEN_REACH`` clauses apart in reading order (tables, figures and expressions
    and bare headings passed over), each with the section before it."""
    found: list[tuple[str, str]] = []
    for key in sorted(direct):
        walked: list[str] = []
        other = read.section((read.section(key) or {}).get("next") or "")
        steps = 0
        while other is not None and steps < BETWEEN_REACH:
            if other.get("kind") not in OBJECT_KINDS:
                if other["key"] in direct:
                    found += [(k, key) for k in walked]
                    break
                if not bare(other.get("text", ""), other.get("title")):
                    steps += 1
                    if other.get("kind") in ("clause", "annex"):
                        walked.append(other["key"])
            other = read.section(other.get("next") or "")
    return found


def siblings(read: Reader, section: dict[str, Any]) -> list[str]:
    """The clauses just before and just after ``section`` under the same parent (tables, figures,
    expressions and the section's own subclauses passed over; front matter and contents are no one's
    siblings)."""
    parent, key = section.get("parent"), section["key"]
    found = []
    for direction in ("previous", "next"):
        other = read.section(section.get(direction) or "")
        for _ in range(200):  # a chain is finite; the bound guards against a store with a loop in it
            if other is None or (
                other.get("kind") not in OBJECT_KINDS and all(s["key"] != key for s in lineage(read, other))
            ):
                break
            other = read.section(other.get(direction) or "")
        if direction == "previous":  # the previous sibling's last subclause comes first: its lineage reaches it
            other = next((s for s in lineage(read, other) if s.get("parent") == parent), None)
        if other is not None and other.get("parent") == parent and other.get("kind") in ("clause", "annex"):
            found.append(other["key"])
    return found


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for item in items:
        marker = (item.get("from_key"), item.get("ref"), item.get("target"))
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out
