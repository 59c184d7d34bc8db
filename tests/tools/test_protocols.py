"""The reasoner protocols declare every member the nodes use, and the offline and model reasoners
both implement all of it with the declared signatures."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
from helpers import ScriptedChatModel

from clausewise.tools.ingest_tasks import IngestTasks, OfflineTasks
from clausewise.tools.model_tasks import ModelIngestTasks, ModelQueryTasks
from clausewise.tools.query_tasks import OfflineQueryTasks, QueryTasks


def _members(protocol: type) -> dict[str, Any]:
    names = {n for n in vars(protocol) if not n.startswith("_")} | set(protocol.__annotations__)
    return {n: getattr(protocol, n, None) for n in names}


def _params(fn: Any) -> list[tuple[str, Any, Any]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values() if p.name != "self"]


@pytest.mark.parametrize(
    ("protocol", "reasoner"),
    [
        (IngestTasks, OfflineTasks()),
        (IngestTasks, ModelIngestTasks(ScriptedChatModel())),
        (QueryTasks, OfflineQueryTasks()),
        (QueryTasks, ModelQueryTasks(ScriptedChatModel())),
    ],
    ids=["ingest-offline", "ingest-model", "query-offline", "query-model"],
)
def test_reasoner_implements_every_member(protocol: type, reasoner: Any) -> None:
    for name, declared in _members(protocol).items():
        assert hasattr(reasoner, name), f"{type(reasoner).__name__} lacks {name}"
        if callable(declared):
            assert _params(getattr(type(reasoner), name)) == _params(declared), f"{name} signature differs"
    usage = reasoner.usage()
    assert set(usage) == {"mode", "llm_calls", "tokens", "degraded"}
    assert isinstance(reasoner.concurrency, int) and reasoner.concurrency >= 1


def test_protocols_declare_what_nodes_used_to_probe_for() -> None:
    """Nodes once probed these with getattr or inspect; they are part of the interfaces now."""
    assert {"usage", "concurrency", "max_figures", "describe_figure"} <= set(_members(QueryTasks))
    assert {"usage", "concurrency", "describe_object"} <= set(_members(IngestTasks))
    assert {"image", "page_text"} <= set(inspect.signature(IngestTasks.describe_object).parameters)


def test_offline_query_reasoner_looks_at_no_figure() -> None:
    assert OfflineQueryTasks().max_figures == 0
    assert OfflineQueryTasks().describe_figure("q", "Figure 1", b"png") == ""
    assert ModelQueryTasks(ScriptedChatModel()).max_figures > 0
