"""Questions over HTTP: the answer contract, server-sent events, memory, API key, bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from helpers import CONTRACT

QUESTION = "What exposure coefficient Ce should I use for a sheltered site?"


@pytest.fixture
def client(served_store: Path, make_client: Callable[..., TestClient]) -> TestClient:
    return make_client(served_store)


def parse_sse(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((lines["event"], json.loads(lines["data"])))
    return events


def test_query_returns_the_answer_contract(client: TestClient) -> None:
    r = client.post("/query", json={"question": QUESTION})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert set(answer) == CONTRACT
    assert any(p["key"] == "CEN_EN1991-9-9_table_5.1" for p in answer["passages"])
    assert answer["trace"]["mode"] == "offline"


def stream_nodes(client: TestClient, body: dict[str, Any]) -> list[str]:
    with client.stream("POST", "/query/stream", json=body) as r:
        events = parse_sse("".join(r.iter_text()))
    return [d["node"] for e, d in events if e == "node"]


def test_thread_keeps_conversation_memory(client: TestClient) -> None:
    assert "decompose" in stream_nodes(client, {"question": QUESTION, "thread_id": "t-1"})
    repeat = stream_nodes(client, {"question": QUESTION, "thread_id": "t-1"})
    assert "reply" in repeat and "decompose" not in repeat  # answered from the thread's memory
    assert "decompose" in stream_nodes(client, {"question": QUESTION, "thread_id": "t-2"})


def test_stream_yields_node_events_then_the_answer(client: TestClient) -> None:
    with client.stream("POST", "/query/stream", json={"question": QUESTION}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        body = "".join(r.iter_text())
    events = parse_sse(body)
    names = [e for e, _ in events]
    assert names[-1] == "answer" and names.count("answer") == 1
    assert set(names[:-1]) == {"node"}
    nodes = [d["node"] for e, d in events if e == "node"]
    assert nodes[0] == "triage" and "compose" in nodes and "relevance_extract" in nodes
    vector = next(d for e, d in events if e == "node" and d["node"] == "vector_widen")
    assert vector["summary"]["candidates"] > 0
    assert set(events[-1][1]) == CONTRACT


@pytest.mark.parametrize("body", [{"question": ""}, {"question": "   \n "}, {}, {"question": 3}])
def test_bad_questions_are_a_clear_422(client: TestClient, body: dict[str, Any]) -> None:
    for path in ("/query", "/query/stream"):
        r = client.post(path, json=body)
        assert r.status_code == 422, r.text
        assert isinstance(r.json()["detail"], str) and "question" in r.json()["detail"]


def test_malformed_json_is_422(client: TestClient) -> None:
    r = client.post("/query", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and isinstance(r.json()["detail"], str)


def test_api_key_is_enforced(
    served_store: Path, make_client: Callable[..., TestClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = make_client(served_store, api_key="s3cret")
    for headers in ({}, {"X-API-Key": "wrong"}):
        r = client.get("/documents", headers=headers)
        assert r.status_code == 401 and "API key" in r.json()["detail"]
        assert client.post("/query", json={"question": QUESTION}, headers=headers).status_code == 401
    assert client.get("/documents", headers={"X-API-Key": "s3cret"}).status_code == 200
    monkeypatch.setenv("CLAUSEWISE_API_KEY", "from-env")
    env_client = make_client(served_store)
    assert env_client.get("/documents").status_code == 401
    assert env_client.get("/documents", headers={"X-API-Key": "from-env"}).status_code == 200


def test_cors_origins_are_configurable(served_store: Path, make_client: Callable[..., TestClient]) -> None:
    client = make_client(served_store, cors_origins=["https://app.example"])
    r = client.options("/documents", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "GET"})
    assert r.headers.get("access-control-allow-origin") == "https://app.example"
    other = client.get("/documents", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in other.headers
