"""triage: greeting -> short reply; a repeat in this thread -> the earlier answer; else search, with the
question's slips of the keys put right (:func:`~clausewise.tools.query_tasks.spelled`)."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import RESET, QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of
from clausewise.tools.query_tasks import spelled


class QueryInputError(ValueError):
    """A question that cannot be searched (empty, or no documents); the message is for the user."""


def triage(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    ctx, deps = runtime.context, deps_of(runtime)
    question = " ".join((state.get("question") or "").split())
    if not question:
        raise QueryInputError("the question is empty: ask about a design code, e.g. 'What density for concrete?'")
    notes = []
    if len(question) > ctx.max_question_chars:
        notes.append(
            f"The question was {len(question)} characters; only the first {ctx.max_question_chars} were searched."
        )
        question = question[: ctx.max_question_chars]
    before = deps.tasks.usage()
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
        searched, fixed = spelled(decision["question"], deps.vocabulary(), deps.keyword_index.printed)
        fresh["search_question"] = searched
        if fixed:
            notes.append("Searched " + ", ".join(f"'{typed}' as '{meant}'" for typed, meant in fixed.items()) + ".")
        if decision.get("follow_up_of"):
            notes.append(f"Read as a follow-up to: {decision['follow_up_of']}")
    return fresh
