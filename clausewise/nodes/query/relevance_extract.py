"""relevance-extract: verbatim parts of each candidate section that bear on the question (batches of
at most 10 sections, one Send each, in parallel)."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import ExtractTask, QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of
from clausewise.page_map import pages_between

BATCH = 10


def pending(state: QueryState) -> list[str]:
    """Candidates not yet read: nearest hop first, then sections the question names, references,
    vector hits by score, keyword hits by BM25, so a model-call budget is spent on the likeliest
    sections."""
    extracts = state.get("extracts") or {}
    cands = state.get("candidates") or {}
    named = state.get("named") or {}
    order = {"reference": 0, "neighbour": 1, "vector": 2, "keyword": 3}
    return sorted(
        (k for k in cands if k not in extracts),
        key=lambda k: (
            cands[k]["hop"],
            -1 if k in named else order.get(cands[k].get("via", ""), 4),
            -cands[k].get("score", 0.0),
            k,
        ),
    )


def extract_tasks(state: QueryState) -> list[ExtractTask]:
    """Batches of at most 10 unread candidates, best first (hop, then how they were found); those past
    the question's model-call budget are marked for the offline reasoner."""
    keys = pending(state)
    cands = state.get("candidates") or {}
    # a section the question names keeps its paragraph (or "*") whichever search found it too
    focus = {k: c["focus"] for k, c in cands.items() if c.get("focus")} | (state.get("named") or {})
    budget = state.get("model_calls_left", 1 << 30)
    return [
        ExtractTask(
            question=state["search_question"],
            keys=keys[i : i + BATCH],
            focus={k: focus[k] for k in keys[i : i + BATCH] if k in focus},
            offline=n >= budget,
        )
        for n, i in enumerate(range(0, len(keys), BATCH))
    ]


def relevance_extract(task: ExtractTask, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """Extracts of each section in the batch ([] when nothing bears on the question)."""
    deps = deps_of(runtime)
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
                    "pages": pages_between(section, start, start + len(ex.text)),
                    "claimed_refs": ex.claimed_refs,
                }
            )
    return {"extracts": out}
