"""The query graph: triage -> decompose -> vector-widen + keyword -> relevance-extract (parallel
batches) -> review, looping back to vector-widen (while the latest batch's two least relevant
sections still had something relevant) and through follow-refs (to the 3rd order) -> precedence ->
conflict-check -> compose."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from clausewise.graph.state import ExtractTask, QueryContext, QueryInput, QueryOutput, QueryState
from clausewise.nodes.query import answer, extract, search
from clausewise.nodes.query.deps import QueryDeps
from clausewise.settings import Settings
from clausewise.stores import Stores, open_stores, open_vector_index
from clausewise.tools.models import Embedder, build_embedder, build_query_tasks
from clausewise.tools.query_tasks import QueryTasks


def route_after_triage(state: QueryState) -> Literal["decompose", "reply"]:
    route = state.get("route")
    if route == "search":
        return "decompose"
    if route in ("chat", "memory"):
        return "reply"
    raise ValueError(f"unexpected triage route {route!r}")


def dispatch_extraction(state: QueryState) -> list[Send] | Literal["review"]:
    """One Send per batch of at most 10 unread candidates; straight to review when none."""
    tasks = extract.extract_tasks(state)
    return [Send("relevance_extract", t) for t in tasks] if tasks else "review"


def route_after_review(state: QueryState, ctx: QueryContext) -> Literal["vector_widen", "follow_refs", "precedence"]:
    """Widen while either of the two least relevant sections of the latest vector batch had
    something relevant; then follow references of relevant sections not yet followed."""
    extracts = state.get("extracts") or {}
    if any(k not in extracts for k in state.get("candidates") or {}):
        raise ValueError("review reached with unread candidates")
    batch = state.get("last_vector_batch") or []
    tail = batch[-2:]
    exhausted = len(batch) < ctx.vector_batch
    if tail and any(extracts.get(k) for k in tail) and state.get("widenings", 0) < ctx.max_widenings and not exhausted:
        return "vector_widen"
    followed = state.get("followed") or {}
    if any(v and k not in followed for k, v in extracts.items()):
        return "follow_refs"
    return "precedence"


def build_query_graph(
    stores: Stores | None = None,
    embedder: Embedder | None = None,
    tasks: QueryTasks | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    cache_dir: Path | None = None,
    vector_index: Any = None,
) -> CompiledStateGraph:
    """Compile the query graph; stores, embedder and reasoner are built from settings when not given
    (on first use, so compiling makes no network call and loads no model)."""
    holder: dict[str, QueryDeps] = {}

    def deps(runtime: Runtime[QueryContext] | None = None) -> QueryDeps:
        ctx = (runtime.context if runtime else None) or QueryContext()
        key = "given" if stores is not None else ctx.store_dir
        if key not in holder:
            s = stores or open_stores(Settings(), Path(ctx.store_dir))
            root = getattr(s.blobs, "root", None)
            settings = Settings()
            holder[key] = QueryDeps(
                stores=s,
                embedder=embedder or build_embedder(settings),
                tasks=tasks or build_query_tasks(settings),
                cache_dir=cache_dir or (Path(root) if root else Path.home() / ".cache" / "clausewise"),
                _vector_index=vector_index if vector_index is not None else open_vector_index(settings, s),
            )
        return holder[key]

    def ctx_of(runtime: Runtime[QueryContext]) -> QueryContext:
        return runtime.context or QueryContext()

    def triage(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return search.triage(deps(runtime), state, ctx_of(runtime))

    def decompose(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return search.decompose(deps(runtime), state)

    def vector_widen(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return search.vector_widen(deps(runtime), state, ctx_of(runtime))

    def keyword(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return search.keyword(deps(runtime), state, ctx_of(runtime))

    def plan_extraction(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return {"model_calls_left": extract.calls_left(deps(runtime), state, ctx_of(runtime).max_model_calls)}

    def relevance_extract(task: ExtractTask, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return extract.relevance_extract(deps(runtime), task)

    def review(state: QueryState) -> dict[str, Any]:
        return {}

    def follow_refs(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return extract.follow_refs(deps(runtime), state, ctx_of(runtime).max_hops)

    def precedence(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return answer.precedence(deps(runtime), state)

    def conflict_check(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return answer.conflict_check(deps(runtime), state)

    def compose(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return answer.compose(deps(runtime), state, ctx_of(runtime))

    def reply(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
        return answer.reply(deps(runtime), state)

    def after_review(state: QueryState, runtime: Runtime[QueryContext]) -> str:
        return route_after_review(state, ctx_of(runtime))

    graph = StateGraph(QueryState, context_schema=QueryContext, input_schema=QueryInput, output_schema=QueryOutput)
    for name, fn in [
        ("triage", triage),
        ("decompose", decompose),
        ("vector_widen", vector_widen),
        ("keyword", keyword),
        ("plan_extraction", plan_extraction),
        ("relevance_extract", relevance_extract),
        ("review", review),
        ("follow_refs", follow_refs),
        ("precedence", precedence),
        ("conflict_check", conflict_check),
        ("compose", compose),
        ("reply", reply),
    ]:
        graph.add_node(name, fn)
    graph.add_edge(START, "triage")
    graph.add_conditional_edges("triage", route_after_triage, ["decompose", "reply"])
    graph.add_edge("decompose", "vector_widen")
    graph.add_edge("decompose", "keyword")
    graph.add_edge("vector_widen", "plan_extraction")
    graph.add_edge("keyword", "plan_extraction")
    graph.add_edge("follow_refs", "plan_extraction")
    graph.add_conditional_edges("plan_extraction", dispatch_extraction, ["relevance_extract", "review"])
    graph.add_edge("relevance_extract", "review")
    graph.add_conditional_edges("review", after_review, ["vector_widen", "follow_refs", "precedence"])
    graph.add_edge("precedence", "conflict_check")
    graph.add_edge("conflict_check", "compose")
    graph.add_edge("compose", END)
    graph.add_edge("reply", END)
    # Each widening or hop is four supersteps; the bounds live in QueryContext, not in this limit.
    return graph.compile(checkpointer=checkpointer, name="query").with_config(recursion_limit=200)


def studio_query_graph() -> CompiledStateGraph:
    """Entry point for langgraph.json: no checkpointer (the server brings its own), nothing loaded."""
    return build_query_graph()
