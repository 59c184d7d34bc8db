"""Query nodes that find candidate sections: triage, decompose, vector-widen, keyword."""

from __future__ import annotations

import time
from typing import Any

from clausewise.graph.state import RESET, QueryContext, QueryState
from clausewise.nodes.query.deps import QueryDeps


class QueryInputError(ValueError):
    """A question that cannot be searched (empty); the message is for the user."""


def triage(deps: QueryDeps, state: QueryState, ctx: QueryContext) -> dict[str, Any]:
    """Greeting -> short reply; a repeat in this thread -> the earlier answer; else search."""
    raw = state.get("question") or ""
    question = " ".join(raw.split())
    if not question:
        raise QueryInputError("the question is empty: ask about a design code, e.g. 'What density for concrete?'")
    notes = []
    if len(question) > ctx.max_question_chars:
        notes.append(
            f"The question was {len(question)} characters; only the first {ctx.max_question_chars} were searched."
        )
        question = question[: ctx.max_question_chars]
    usage = getattr(deps.tasks, "usage", None)
    before = usage() if usage else {}
    decision = deps.tasks.triage(question, state.get("history") or [])
    fresh: dict[str, Any] = {
        "question": question,
        "route": decision["route"],
        "notes": notes,
        "started": time.perf_counter(),
        "usage_before": before,
        "candidates": {RESET: True},
        "extracts": {RESET: True},
        "followed": {RESET: True},
        "vector_offset": 0,
        "widenings": 0,
        "hops": 0,
        "last_vector_batch": [],
        "unfollowed_references": [],
        "unresolved_references": [],
        "rejected_references": [],
    }
    if decision["route"] == "chat":
        fresh["reply"] = decision["reply"]
    elif decision["route"] == "memory":
        fresh["reply"] = decision["answer"]
    else:
        fresh["search_question"] = decision["question"]
        if decision.get("follow_up_of"):
            notes.append(f"Read as a follow-up to: {decision['follow_up_of']}")
    return fresh


def decompose(deps: QueryDeps, state: QueryState) -> dict[str, Any]:
    if not deps.stores.visible_documents():
        raise QueryInputError(
            f"no documents are ingested in {deps.stores.blobs.describe()}; run `clausewise ingest` first"
        )
    return {"sub_questions": deps.tasks.decompose(state["search_question"])}


def vector_widen(deps: QueryDeps, state: QueryState, ctx: QueryContext) -> dict[str, Any]:
    """The next batch of sections by vector search, for the question and each sub-question."""
    offset = state.get("vector_offset", 0)
    queries = list(dict.fromkeys([state["search_question"], *state.get("sub_questions", [])]))
    known = state.get("candidates") or {}
    batch: dict[str, dict[str, Any]] = {}
    order: list[tuple[float, str]] = []
    for query in queries:
        vector = deps.query_vector(query)
        # Chunks, not sections, are ranked: read on until the batch has enough distinct sections.
        seen: dict[str, float] = {}
        k = ctx.vector_batch * 4
        for hit in deps.vector_index.search(vector, k=k + offset * 4, offset=0):
            seen.setdefault(hit.key, hit.score)
        ranked = list(seen.items())[offset : offset + ctx.vector_batch]
        for key, score in ranked:
            if key not in known and key not in batch:
                batch[key] = {"via": "vector", "hop": 0, "from_key": None, "score": round(score, 4)}
            order.append((score, key))
    latest = [k for _, k in sorted(order, key=lambda x: -x[0]) if k in batch or k in known]
    latest = list(dict.fromkeys(latest))
    widened = state.get("widenings", 0) + (1 if offset else 0)
    return {
        "candidates": batch,
        "vector_offset": offset + ctx.vector_batch,
        "last_vector_batch": latest,
        "widenings": widened,
    }


def keyword(deps: QueryDeps, state: QueryState, ctx: QueryContext) -> dict[str, Any]:
    """A few rare keywords, expanded with the kv store; every section containing any of them."""
    terms = deps.terms(state["search_question"])
    words = deps.tasks.keywords(state["search_question"], terms)
    hits = deps.keyword_index.search(words, limit=ctx.max_keyword_sections) if words else []
    return {
        "candidates": {
            key: {"via": "keyword", "hop": 0, "from_key": None, "score": round(score, 3), "keywords": words}
            for key, score in hits
        }
    }
