"""The query graph embedded in a parent agent graph with its own state (examples/embed_as_subgraph.py):
added directly as a node, and called from a wrapper node that passes ``config`` through."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any
from uuid import UUID

import pytest
from helpers import CONTRACT
from langchain_core.callbacks import BaseCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver

from clausewise.graph.query import build_query_graph
from clausewise.graph.state import QueryState
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs

REPO_ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Which exposure coefficient applies to a sheltered site?"
INTERNAL = set(QueryState.__annotations__) - CONTRACT  # candidates, extracts, history, route, ...


def _load_example() -> ModuleType:
    path = REPO_ROOT / "examples" / "embed_as_subgraph.py"
    spec = importlib.util.spec_from_file_location("embed_as_subgraph", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


example = _load_example()


class Recorder(BaseCallbackHandler):
    """Records the tags and metadata of every chain (graph node) start, by run name."""

    def __init__(self) -> None:
        self.starts: dict[str, list[tuple[list[str], dict[str, Any]]]] = {}

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = kwargs.get("name") or (serialized or {}).get("name") or ""
        self.starts.setdefault(name, []).append((list(tags or []), dict(metadata or {})))


@pytest.fixture
def query(sample_store: SimpleNamespace, embedder: Any, copy_store: Callable[[Path], Path], tmp_path: Path) -> Any:
    store_dir = copy_store(sample_store.dir)
    return build_query_graph(stores=Stores(LocalBlobs(store_dir)), embedder=embedder, cache_dir=tmp_path / "cache")


def _check_answer(answer: dict[str, Any]) -> None:
    assert set(answer) == CONTRACT
    assert answer["question"] == QUESTION
    assert answer["passages"], answer["answer_markdown"]
    assert any(p["key"].endswith("table_5.1") for p in answer["passages"])
    assert answer["trace"]["mode"] == "offline"


def _check_config_reached_subgraph(recorder: Recorder, thread: str) -> None:
    # "triage" is a node inside the query graph: the parent's callbacks, tags and thread id reach it.
    starts = recorder.starts.get("triage")
    assert starts, sorted(recorder.starts)
    tags, metadata = starts[0]
    assert "agent-tag" in tags
    assert metadata.get("thread_id") == thread
    assert metadata.get("who") == "parent"
    assert "code_lookup" in str(metadata.get("langgraph_checkpoint_ns", "")), metadata


@pytest.mark.parametrize("mode", ["direct", "wrapped"])
def test_parent_gets_the_answer_contract(query: Any, mode: str) -> None:
    build = example.build_parent_direct if mode == "direct" else example.build_parent_wrapped
    parent = build(query, checkpointer=InMemorySaver())
    recorder = Recorder()
    thread = f"agent-{mode}"
    config = {
        "configurable": {"thread_id": thread},
        "tags": ["agent-tag"],
        "metadata": {"who": "parent"},
        "callbacks": [recorder],
        "recursion_limit": 200,
    }
    state = parent.invoke({"task": QUESTION, "messages": []}, config=config)

    _check_answer(state["code_answer"])
    assert not INTERNAL & set(state), INTERNAL & set(state)
    if mode == "wrapped":
        assert set(state) == {"messages", "task", "code_answer"}  # the parent's own keys only
    else:
        assert set(state) <= set(example.DirectAgentState.__annotations__)
        assert {k: state[k] for k in CONTRACT} == state["code_answer"]
    assert [m["role"] for m in state["messages"]] == ["user", "assistant"]
    assert state["messages"][1]["sources"]

    # The checkpointed parent state holds no working key of the query graph either.
    saved = parent.get_state({"configurable": {"thread_id": thread}}).values
    assert not INTERNAL & set(saved)
    _check_config_reached_subgraph(recorder, thread)


def test_wrapped_mode_passes_runtime_context(query: Any, tmp_path: Path) -> None:
    from clausewise.graph.state import QueryContext

    parent = example.build_parent_wrapped(query, context=QueryContext(max_widenings=0, max_hops=0))
    state = parent.invoke({"task": QUESTION, "messages": []}, config={"recursion_limit": 200})
    _check_answer(state["code_answer"])
    assert all(p["hop"] == 0 for p in state["code_answer"]["passages"])
