"""The query graph: triage -> decompose -> vector-widen + keyword -> plan-extraction ->
relevance-extract (parallel batches) -> review, looping back to vector-widen (while any of the latest
batch's three least similar sections still had something relevant) and through follow-refs (to the 3rd order)
-> collect-passages -> precedence -> conflict-check -> compose. Each node is the function of the same
name in ``clausewise.nodes.query.<name>``; this module only wires them."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Send

from clausewise.graph.state import DepsBinder, QueryContext, QueryInput, QueryOutput, QueryState
from clausewise.nodes.query import (
    collect_passages,
    compose,
    conflict_check,
    decompose,
    follow_refs,
    keyword,
    plan_extraction,
    precedence,
    relevance_extract,
    reply,
    triage,
    vector_widen,
)
from clausewise.nodes.query.deps import QueryDeps
from clausewise.stores import Stores, VectorIndex
from clausewise.stores.base import pinned_reads
from clausewise.system import System
from clausewise.tools.models import Embedder
from clausewise.tools.query_tasks import QueryTasks

QueryGraph = CompiledStateGraph[QueryState, QueryContext, QueryInput, QueryOutput]


def route_after_triage(state: QueryState) -> Literal["decompose", "reply"]:
    route = state.get("route")
    if route == "search":
        return "decompose"
    if route in ("chat", "memory"):
        return "reply"
    raise ValueError(f"unexpected triage route {route!r}")


def dispatch_extraction(state: QueryState) -> list[Send] | Literal["review"]:
    """One Send per batch of at most 10 unread candidates; straight to review when none."""
    tasks = relevance_extract.extract_tasks(state)
    return [Send("relevance_extract", t) for t in tasks] if tasks else "review"


def route_after_review(
    state: QueryState, ctx: QueryContext
) -> Literal["vector_widen", "follow_refs", "collect_passages"]:
    """Widen while any of the ``widen_tail`` least similar sections of the latest vector batch had
    something relevant (the similarity order is not the relevance order: two sections at the tail
    without a relevant line stopped the search on a question whose clauses lay further on); then
    follow references of relevant sections not yet followed."""
    extracts = state.get("extracts") or {}
    if any(k not in extracts for k in state.get("candidates") or {}):
        raise ValueError("review reached with unread candidates")
    batch = state.get("last_vector_batch") or []
    tail = batch[-ctx.widen_tail :]
    exhausted = len(batch) < ctx.vector_batch
    if tail and any(extracts.get(k) for k in tail) and state.get("widenings", 0) < ctx.max_widenings and not exhausted:
        return "vector_widen"
    followed = state.get("followed") or {}
    if any(v and k not in followed for k, v in extracts.items()):
        return "follow_refs"
    return "collect_passages"


def review(state: QueryState) -> dict[str, Any]:
    """The join after a round of extraction; ``route_after_review`` decides where the loop goes."""
    return {}


NODES = {
    "triage": triage.triage,
    "decompose": decompose.decompose,
    "vector_widen": vector_widen.vector_widen,
    "keyword": keyword.keyword,
    "plan_extraction": plan_extraction.plan_extraction,
    "relevance_extract": relevance_extract.relevance_extract,
    "follow_refs": follow_refs.follow_refs,
    "collect_passages": collect_passages.collect_passages,
    "precedence": precedence.precedence,
    "conflict_check": conflict_check.conflict_check,
    "compose": compose.compose,
    "reply": reply.reply,
}


def build_query_graph(
    system: System | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    stores: Stores | None = None,
    embedder: Embedder | None = None,
    tasks: QueryTasks | None = None,
    vector_index: VectorIndex | None = None,
    cache_dir: Path | None = None,
) -> QueryGraph:
    """Compile the query graph over ``system`` (or one made of the parts given). With neither, each run
    opens the store its context names (Studio), on first use: compiling loads no model."""
    if system is None and stores is not None:
        system = System(
            stores=stores, embedder=embedder, query_tasks=tasks, vector_index=vector_index, cache_dir=cache_dir
        )
    bind = DepsBinder(system, QueryDeps, QueryContext, scope=pinned_reads)  # a node reads one state of the store

    def after_review(state: QueryState, runtime: Any) -> str:
        return route_after_review(state, runtime.context or QueryContext())

    graph = StateGraph(QueryState, context_schema=QueryContext, input_schema=QueryInput, output_schema=QueryOutput)
    for name, fn in NODES.items():
        graph.add_node(name, bind(fn))
    graph.add_node("review", review)
    graph.add_edge(START, "triage")
    graph.add_conditional_edges("triage", route_after_triage, ["decompose", "reply"])
    graph.add_edge("decompose", "vector_widen")
    graph.add_edge("decompose", "keyword")
    graph.add_edge("vector_widen", "plan_extraction")
    graph.add_edge("keyword", "plan_extraction")
    graph.add_edge("follow_refs", "plan_extraction")
    graph.add_conditional_edges("plan_extraction", dispatch_extraction, ["relevance_extract", "review"])
    graph.add_edge("relevance_extract", "review")
    graph.add_conditional_edges("review", after_review, ["vector_widen", "follow_refs", "collect_passages"])
    graph.add_edge("collect_passages", "precedence")
    graph.add_edge("precedence", "conflict_check")
    graph.add_edge("conflict_check", "compose")
    graph.add_edge("compose", END)
    graph.add_edge("reply", END)
    # Each widening or hop is four supersteps; the bounds live in QueryContext, not in this limit.
    return graph.compile(checkpointer=checkpointer, name="query").with_config(recursion_limit=200)


def studio_query_graph() -> QueryGraph:
    """Entry point for langgraph.json: no checkpointer (the server brings its own), nothing loaded."""
    return build_query_graph()
