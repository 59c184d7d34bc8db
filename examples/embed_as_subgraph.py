"""Embed the clausewise query graph in a parent agent graph with its own state.

Two ways, both shown here:

* ``build_parent_direct(query)`` adds the compiled query graph itself as a node. The subgraph reads
  its input schema (``{"question"}``) from the parent state and writes its output schema (the answer
  contract) back, so the parent state shares ``question`` and declares the contract keys. The query
  graph's working keys (``candidates``, ``extracts``, ...) are not in its output schema and never
  reach the parent.
* ``build_parent_wrapped(query)`` calls the compiled query graph from a node function: the parent
  keeps a state of its own (``messages``, ``task``, ``code_answer``), maps ``task`` to
  ``{"question": ...}``, passes ``config`` through (callbacks, tags, thread id, checkpoint
  namespace) and stores the answer contract under ``code_answer``.

Run::

    python examples/embed_as_subgraph.py --store DIR "Which exposure coefficient applies to a sheltered site?"
"""

from __future__ import annotations

import argparse
import json
import operator
from pathlib import Path
from typing import Annotated, Any, NotRequired, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

CONTRACT_KEYS = (
    "question",
    "answer_markdown",
    "passages",
    "images",
    "precedence",
    "conflicts",
    "unfollowed_references",
    "unresolved_references",
    "trace",
)


class AgentState(TypedDict):
    """The parent agent's own state (wrapper mode)."""

    messages: Annotated[list[dict[str, Any]], operator.add]
    task: str
    code_answer: NotRequired[dict[str, Any]]


class DirectAgentState(AgentState):
    """Parent state for the direct mode: shares ``question`` with the query graph's input and
    declares the keys of its output schema (the answer contract), which the subgraph writes."""

    question: NotRequired[str]
    answer_markdown: NotRequired[str]
    passages: NotRequired[list[dict[str, Any]]]
    images: NotRequired[list[dict[str, Any]]]
    precedence: NotRequired[list[dict[str, Any]]]
    conflicts: NotRequired[list[dict[str, Any]]]
    unfollowed_references: NotRequired[list[dict[str, Any]]]
    unresolved_references: NotRequired[list[dict[str, Any]]]
    trace: NotRequired[dict[str, Any]]


def _reply(answer: dict[str, Any]) -> dict[str, Any]:
    sources = sorted({p["key"] for p in answer.get("passages") or []})
    return {"role": "assistant", "content": answer.get("answer_markdown", ""), "sources": sources}


def build_parent_direct(query: CompiledStateGraph, checkpointer: Any = None) -> CompiledStateGraph:
    """(a) The compiled query graph added directly as a node."""

    def frame(state: DirectAgentState) -> dict[str, Any]:
        return {"question": state["task"], "messages": [{"role": "user", "content": state["task"]}]}

    def collect(state: DirectAgentState) -> dict[str, Any]:
        answer = {k: state[k] for k in CONTRACT_KEYS if k in state}  # type: ignore[literal-required]
        return {"code_answer": answer, "messages": [_reply(answer)]}

    graph = StateGraph(DirectAgentState)
    graph.add_node("frame", frame)
    graph.add_node("code_lookup", query)
    graph.add_node("collect", collect)
    graph.add_edge(START, "frame")
    graph.add_edge("frame", "code_lookup")
    graph.add_edge("code_lookup", "collect")
    graph.add_edge("collect", END)
    return graph.compile(checkpointer=checkpointer, name="agent_direct")


def build_parent_wrapped(
    query: CompiledStateGraph, checkpointer: Any = None, context: Any = None
) -> CompiledStateGraph:
    """(b) A node function that maps the parent's keys to the query graph's input and back."""

    def code_lookup(state: AgentState, config: RunnableConfig) -> dict[str, Any]:
        kwargs = {"context": context} if context is not None else {}
        answer = query.invoke({"question": state["task"]}, config, **kwargs)
        return {"code_answer": dict(answer), "messages": [_reply(answer)]}

    def frame(state: AgentState) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": state["task"]}]}

    graph = StateGraph(AgentState)
    graph.add_node("frame", frame)
    graph.add_node("code_lookup", code_lookup)
    graph.add_edge(START, "frame")
    graph.add_edge("frame", "code_lookup")
    graph.add_edge("code_lookup", END)
    return graph.compile(checkpointer=checkpointer, name="agent_wrapped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--store", required=True, type=Path, help="an ingested local store directory")
    parser.add_argument("--mode", choices=["direct", "wrapped"], default="wrapped")
    args = parser.parse_args()

    from langgraph.checkpoint.memory import InMemorySaver

    from clausewise.graph.query import build_query_graph
    from clausewise.stores import Stores
    from clausewise.stores.local import LocalBlobs

    query = build_query_graph(stores=Stores(LocalBlobs(args.store)))
    build = build_parent_direct if args.mode == "direct" else build_parent_wrapped
    parent = build(query, checkpointer=InMemorySaver())
    state = parent.invoke(
        {"task": args.question, "messages": []},
        config={"configurable": {"thread_id": "example"}, "recursion_limit": 200},
    )
    answer = state["code_answer"]
    print(answer["answer_markdown"])
    print(
        json.dumps({"passages": [p["key"] for p in answer["passages"]], "mode": answer["trace"].get("mode")}, indent=2)
    )


if __name__ == "__main__":
    main()
