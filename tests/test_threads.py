"""Bounded conversation memory (clausewise.threads): the server's checkpointer keeps at most N threads,
drops idle ones, and pruning keeps a thread's latest checkpoint (what a follow-up reads); the CLI's
SQLite threads are pruned the same way."""

from __future__ import annotations

import operator
import sqlite3
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from clausewise.threads import BoundedSaver, cli_threads_path, prune_sqlite_threads


class State(TypedDict):
    turns: Annotated[list[str], operator.add]


def _graph(checkpointer: Any) -> Any:
    graph = StateGraph(State)
    graph.add_node("a", lambda s: {"turns": ["a"]})
    graph.add_node("b", lambda s: {"turns": ["b"]})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    return graph.compile(checkpointer=checkpointer)


def _ask(graph: Any, thread: str) -> list[str]:
    return list(graph.invoke({"turns": ["q"]}, config={"configurable": {"thread_id": thread}})["turns"])


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def test_at_most_max_threads_least_recently_used_dropped_first() -> None:
    saver = BoundedSaver(max_threads=3, ttl_s=1e9)
    graph = _graph(saver)
    for thread in ("t1", "t2", "t3"):
        _ask(graph, thread)
    _ask(graph, "t1")  # t1 used again: t2 is now the least recent
    _ask(graph, "t4")
    assert sorted(saver.thread_ids) == ["t1", "t3", "t4"]
    assert set(saver.storage) == {"t1", "t3", "t4"}
    assert _ask(graph, "t2") == ["q", "a", "b"]  # t2 starts over: its memory was dropped


def test_idle_threads_expire() -> None:
    clock = Clock()
    saver = BoundedSaver(max_threads=100, ttl_s=60, clock=clock)
    graph = _graph(saver)
    _ask(graph, "old")
    clock.now = 30
    _ask(graph, "recent")
    clock.now = 70
    saver.expire()
    assert saver.thread_ids == ["recent"]
    clock.now = 95  # "recent" idle for 65 s: a follow-up finds no memory
    assert _ask(graph, "recent") == ["q", "a", "b"]


def test_keep_latest_keeps_what_a_follow_up_reads() -> None:
    saver = BoundedSaver()
    graph = _graph(saver)
    _ask(graph, "t")
    _ask(graph, "t")
    assert saver.checkpoint_count() > 2  # one per step
    before = graph.get_state({"configurable": {"thread_id": "t"}}).values
    saver.prune(["t"], strategy="keep_latest")
    assert saver.checkpoint_count() == 1
    assert graph.get_state({"configurable": {"thread_id": "t"}}).values == before
    assert _ask(graph, "t") == before["turns"] + ["q", "a", "b"]  # the conversation goes on
    saver.prune(["t"], strategy="delete")
    assert saver.checkpoint_count() == 0 and saver.thread_ids == []
    with pytest.raises(ValueError):
        saver.prune(["t"], strategy="everything")


def test_unknown_threads_leave_nothing_behind() -> None:
    saver = BoundedSaver()
    assert saver.get_tuple({"configurable": {"thread_id": "nobody", "checkpoint_ns": ""}}) is None
    assert dict(saver.storage) == {}


def test_sqlite_threads_pruned_to_the_latest_checkpoint_of_the_most_recent_threads(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "threads.sqlite", check_same_thread=False)
    graph = _graph(SqliteSaver(conn))
    for thread in ("t1", "t2", "t3", "t1"):
        _ask(graph, thread)
    prune_sqlite_threads(conn, keep_threads=2)
    rows = conn.execute("SELECT thread_id, COUNT(*) FROM checkpoints GROUP BY thread_id ORDER BY 1").fetchall()
    assert rows == [("t1", 1), ("t3", 1)]
    orphans = conn.execute(
        "SELECT COUNT(*) FROM writes w WHERE NOT EXISTS (SELECT 1 FROM checkpoints c WHERE "
        "c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)"
    ).fetchone()[0]
    assert orphans == 0
    assert _ask(graph, "t1") == ["q", "a", "b", "q", "a", "b", "q", "a", "b"]  # t1's memory survived
    conn.close()


def test_cli_threads_path_is_per_store(tmp_path: Path) -> None:
    a = cli_threads_path(tmp_path, "/data/stores/codes")
    b = cli_threads_path(tmp_path, "/other/codes")
    assert a != b and a.parent == b.parent == tmp_path / "threads"
    assert a.name.startswith("codes-") and a.suffix == ".sqlite"
    assert cli_threads_path(tmp_path, "R2 bucket b at https://x (prefix p/)").parent == tmp_path / "threads"
