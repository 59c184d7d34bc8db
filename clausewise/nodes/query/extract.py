"""Query nodes that read candidates: relevance-extract (batches of at most 10 sections, in parallel)
and follow-refs (2nd and 3rd order, neighbours for "see above / following table")."""

from __future__ import annotations

import re
from typing import Any

from clausewise.graph.state import ExtractTask, QueryState
from clausewise.nodes.query.deps import QueryDeps

BATCH = 10


def pending(state: QueryState) -> list[str]:
    """Candidates not yet read: nearest hop first, then vector hits by score, references, keyword
    hits by BM25, so a model-call budget is spent on the likeliest sections."""
    extracts = state.get("extracts") or {}
    cands = state.get("candidates") or {}
    order = {"reference": 0, "neighbour": 1, "vector": 2, "keyword": 3}
    return sorted(
        (k for k in cands if k not in extracts),
        key=lambda k: (cands[k]["hop"], order.get(cands[k].get("via", ""), 4), -cands[k].get("score", 0.0), k),
    )


def extract_tasks(state: QueryState) -> list[ExtractTask]:
    """Batches of at most 10 unread candidates, best first (hop, then how they were found); those past
    the question's model-call budget are marked for the offline reasoner."""
    keys = pending(state)
    cands = state.get("candidates") or {}
    budget = state.get("model_calls_left", 1 << 30)
    return [
        ExtractTask(
            question=state["search_question"],
            keys=keys[i : i + BATCH],
            focus={k: cands[k]["focus"] for k in keys[i : i + BATCH] if cands[k].get("focus")},
            offline=n >= budget,
        )
        for n, i in enumerate(range(0, len(keys), BATCH))
    ]


def calls_left(deps: QueryDeps, state: QueryState, limit: int, reserve: int = 8) -> int:
    """Model calls this question may still spend on relevance (``reserve`` kept for conflicts,
    summary and figure descriptions); unlimited for a reasoner that makes none."""
    usage = getattr(deps.tasks, "usage", None)
    if usage is None:
        return 1 << 30
    used = usage()["llm_calls"] - (state.get("usage_before") or {}).get("llm_calls", 0)
    return max(0, limit - reserve - used)


def relevance_extract(deps: QueryDeps, task: ExtractTask) -> dict[str, Any]:
    """Verbatim parts of each section that bear on the question ([] when nothing does)."""
    sections = [s for s in (deps.section(k) for k in task["keys"]) if s is not None]
    reasoner = deps.offline_tasks if task.get("offline") else deps.tasks
    found = reasoner.relevance(task["question"], deps.terms(task["question"]), sections, task["focus"])
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in task["keys"]}
    for section in sections:
        text = section["text"]
        for ex in found.get(section["key"], []):
            if ex.text not in text:  # extracted text must occur in the section, verbatim
                continue
            start = ex.start if text[ex.start : ex.start + len(ex.text)] == ex.text else text.index(ex.text)
            out[section["key"]].append(
                {
                    "text": ex.text,
                    "start": start,
                    "score": round(ex.score, 3),
                    "pages": pages_of(section, start, start + len(ex.text)),
                    "claimed_refs": ex.claimed_refs,
                }
            )
    return {"extracts": out}


def pages_of(section: dict[str, Any], start: int, end: int) -> list[int]:
    pages = []
    page_map = section.get("page_map") or [[0, section["pages"][0]]]
    for i, (pos, page) in enumerate(page_map):
        nxt = page_map[i + 1][0] if i + 1 < len(page_map) else 1 << 30
        if pos < end and nxt > start:
            pages.append(page)
    return pages or [section["pages"][0]]


def follow_refs(deps: QueryDeps, state: QueryState, max_hops: int) -> dict[str, Any]:
    """References of every relevant section not yet followed become candidates one hop further."""
    extracts = state.get("extracts") or {}
    cands = state.get("candidates") or {}
    followed = state.get("followed") or {}
    visible = set(deps.stores.visible_documents())
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
        section = deps.section(key) or {}
        refs = deps.stores.lookup("references", key) or []
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
        if section.get("kind") in ("table", "figure", "expression") and section.get("parent"):
            targets.append(
                {
                    "raw": "parent clause",
                    "target": section["parent"],
                    "kind": "neighbour",
                    "document": section["doc_key"],
                    "resolved": True,
                }
            )
        for ref in targets:
            target, raw = ref.get("target"), ref["raw"].strip()
            if ref["document"] not in visible:
                unresolved.append(
                    {
                        "from_key": key,
                        "ref": raw,
                        "document": ref["document"],
                        "reason": f"document not ingested ({_doc_name(ref['document'])})",
                    }
                )
                continue
            if not target or deps.section(target) is None:
                if ref["kind"] != "neighbour":
                    unresolved.append({"from_key": key, "ref": raw, "reason": "target not found in the document"})
                continue
            if hop + 1 > max_hops:
                unfollowed.append({"from_key": key, "ref": raw, "target": target})
                continue
            para = re.search(r"\(\s?(\d{1,2})\s?\)", raw)
            entry = {
                "via": "neighbour" if ref["kind"] == "neighbour" else "reference",
                "hop": hop + 1,
                "from_key": key,
                "ref": raw,
            }
            if para:
                entry["focus"] = f"({para.group(1)})"
            elif re.search(r"_(table|figure|expression)_", target):
                entry["focus"] = "*"  # a cited table, figure or expression is shown whole
            if target not in cands and target not in new:
                new[target] = entry
            elif target in extracts and not extracts[target] and entry.get("focus") and target not in new:
                new[target] = entry  # read again, now for the paragraph the reference names
    reread = {k: [] for k in new if k in extracts}
    update: dict[str, Any] = {
        "candidates": new,
        "followed": done,
        "hops": max(state.get("hops", 0), 1 if new else 0),
        "unfollowed_references": _unique(unfollowed),
        "unresolved_references": _unique(unresolved),
        "rejected_references": _unique(rejected),
    }
    if reread:
        update["extracts"] = {k: v for k, v in extracts.items() if k not in reread} | {"__reset__": True}
    if new:
        update["hops"] = max(state.get("hops", 0), max(e["hop"] for e in new.values()))
    return update


def claimed_references(
    section: dict[str, Any], claimed: list[str], known: set[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """References a model says a section makes: kept only when the words are in the section's text,
    then resolved with the same rules as ingestion."""
    from clausewise.keys import DocId
    from clausewise.tools.tasks import spot_references

    text = " ".join(section["text"].split())
    publisher, _, code = section["doc_key"].partition("_")
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


def _doc_name(doc_key: str) -> str:
    from clausewise.keys import DocId

    publisher, _, code = doc_key.partition("_")
    return DocId(publisher, code).display


def _unique(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen, out = set(), []
    for item in items:
        marker = (item.get("from_key"), item.get("ref"), item.get("target"))
        if marker not in seen:
            seen.add(marker)
            out.append(item)
    return out
