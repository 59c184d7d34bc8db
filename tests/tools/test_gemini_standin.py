"""Model mode through the real langchain-google-genai client, against a local stand-in of the Gemini REST
API (``tests/helpers/gemini_standin.py``) reached through ``GEMINI_BASE_URL``: no network, no key."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import CONTRACT
from helpers.gemini_standin import GeminiStandIn, Reply, minimal, response_schema
from langgraph.checkpoint.memory import InMemorySaver

from clausewise.settings import Settings
from clausewise.tools.model_tasks import ModelIngestTasks, ModelQueryTasks
from clausewise.tools.models import GeminiEmbedder, build_chat_model, build_embedder


def answer_every_schema(body: dict[str, Any]) -> Any:
    """Something valid for each task's schema: triage searches, lists are empty, texts are short."""
    schema = response_schema(body)
    if schema.get("title") == "TriageOut":
        return {"route": "search"}
    return minimal(schema)


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[GeminiStandIn]:
    with GeminiStandIn(responder=answer_every_schema) as stand_in:
        monkeypatch.setenv("GEMINI_BASE_URL", stand_in.url)
        monkeypatch.delenv("GEMINI_EMBEDDING_DIM", raising=False)
        yield stand_in


def settings() -> Settings:
    return Settings(gemini_api_key="stand-in-key", _env_file=None)  # type: ignore[call-arg]


def query_tasks(**chat_options: Any) -> ModelQueryTasks:
    chat = build_chat_model(settings(), **{"timeout": 5.0, "max_retries": 1, **chat_options})
    return ModelQueryTasks(chat, attempts=2, retry_wait=False)


def test_chat_model_goes_to_the_configured_endpoint(api: GeminiStandIn) -> None:
    chat = build_chat_model(settings())
    assert chat.base_url == api.url
    assert build_chat_model(Settings(_env_file=None)) is None  # type: ignore[call-arg]


def test_structured_triage_and_decompose(api: GeminiStandIn) -> None:
    tasks = query_tasks()
    api.push(
        Reply(json={"route": "chat", "reply": "Hello, ask me about a code."}),
        Reply(json={"sub_questions": ["What is Ce?", " What is  Ct? ", "What is Ce?"]}),
    )
    assert tasks.triage("Hello!", []) == {"route": "chat", "reply": "Hello, ask me about a code."}
    assert tasks.decompose("What are Ce and Ct?") == ["What is Ce?", "What is Ct?"]
    usage = tasks.usage()
    assert usage == {"mode": "gemini", "llm_calls": 2, "tokens": 36, "degraded": []}
    paths = api.paths(":generateContent")  # google-genai 2 calls the v1beta API, google-genai 3 the v1 API
    assert len(paths) == 2
    assert all(re.fullmatch(r"/v1(?:beta)?/models/gemini-2\.5-flash-lite:generateContent", p) for p in paths), paths
    body = api.requests[0][1]
    assert body["generationConfig"]["responseMimeType"] == "application/json"
    assert response_schema(body)["title"] == "TriageOut"
    assert "Hello!" in body["contents"][0]["parts"][0]["text"]


def test_malformed_json_falls_back_to_offline(api: GeminiStandIn) -> None:
    tasks = query_tasks()
    api.push(Reply(text="Sure! Here are the sub-questions."), Reply(text='{"sub_questions": "What is Ce?"}'))
    question = "What exposure coefficient Ce should I use?"
    assert tasks.decompose(question) == tasks.fallback.decompose(question)
    assert len(api.paths(":generateContent")) == 2  # tried twice (attempts=2), then offline
    degraded = tasks.usage()["degraded"]
    assert len(degraded) == 1 and degraded[0].startswith("decompose: InvalidOutput")


def test_truncated_json_is_completed_by_the_parser(api: GeminiStandIn) -> None:
    """langchain's JSON parser completes a cut-off answer (as when the output token limit is hit)."""
    tasks = query_tasks()
    api.push(Reply(text='{"sub_questions": ["What is Ce?", "What is Ct'))
    assert tasks.decompose("Ce?") == ["What is Ce?", "What is Ct"]


def test_malformed_once_is_retried(api: GeminiStandIn) -> None:
    tasks = query_tasks()
    api.push(Reply(text="not json"), Reply(json={"sub_questions": ["What is Ce?"]}))
    assert tasks.decompose("Ce?") == ["What is Ce?"]
    assert tasks.usage()["degraded"] == [] and tasks.usage()["llm_calls"] == 2


def test_rate_limit_then_success(api: GeminiStandIn) -> None:
    tasks = query_tasks(max_retries=2)  # the SDK retries 429 itself, after about a second
    api.push(Reply(status=429), Reply(json={"sub_questions": ["What is Ce?"]}))
    assert tasks.decompose("Ce?") == ["What is Ce?"]
    assert len(api.paths(":generateContent")) == 2
    assert tasks.usage()["degraded"] == [] and tasks.usage()["llm_calls"] == 1


def test_rate_limit_without_sdk_retries_is_retried_by_the_task(api: GeminiStandIn) -> None:
    tasks = query_tasks()
    api.push(Reply(status=429), Reply(json={"sub_questions": ["What is Ce?"]}))
    assert tasks.decompose("Ce?") == ["What is Ce?"]
    assert tasks.usage()["degraded"] == [] and tasks.usage()["llm_calls"] == 2


def test_hang_times_out_and_falls_back(api: GeminiStandIn) -> None:
    tasks = query_tasks(timeout=0.5)
    api.push(Reply(hang=10), Reply(hang=10))
    started = time.monotonic()
    decision = tasks.triage("What is the exposure coefficient?", [])
    assert time.monotonic() - started < 5
    assert decision == tasks.fallback.triage("What is the exposure coefficient?", [])
    degraded = tasks.usage()["degraded"]
    assert len(degraded) == 1 and degraded[0].startswith("triage:")
    assert "timeout" in degraded[0].lower() or "timed out" in degraded[0].lower()


def test_gemini_embedder_batches_and_normalises(api: GeminiStandIn) -> None:
    embedder = GeminiEmbedder("gemini-embedding-001", "stand-in-key", dim=256, base_url=api.url, batch_size=4)
    assert embedder.name == "gemini/gemini-embedding-001" and embedder.dim == 256
    texts = [f"clause {i} on snow loads" for i in range(10)]
    vectors = embedder.embed_documents(texts)
    assert vectors.shape == (10, 256) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    batches = [body for path, body in api.requests if path.endswith(":batchEmbedContents")]
    assert [len(b["requests"]) for b in batches] == [4, 4, 2]
    assert all(r["outputDimensionality"] == 256 for b in batches for r in b["requests"])
    query = embedder.embed_query("clause 3 on snow loads")
    assert query.shape == (256,) and abs(float(np.linalg.norm(query)) - 1) < 1e-5
    again = embedder.embed_documents(["clause 3 on snow loads"])[0]
    np.testing.assert_allclose(query, again, rtol=1e-5)  # deterministic stand-in vectors
    assert embedder.embed_documents([]).shape == (0, 256)
    n = len(api.requests)
    assert embedder.soft_match("snow loads", texts) is None and len(api.requests) == n  # no token vectors, no call


def test_embedder_dimension_from_the_first_response(api: GeminiStandIn) -> None:
    embedder = GeminiEmbedder("gemini-embedding-001", "stand-in-key", dim=None, base_url=api.url)
    assert embedder.embed_documents(["a", "b"]).shape == (2, 3072)
    assert embedder.dim == 3072


def test_build_embedder_in_model_mode(api: GeminiStandIn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_EMBEDDING_DIM", "128")
    embedder = build_embedder(settings())
    assert isinstance(embedder, GeminiEmbedder) and embedder.dim == 128
    assert embedder.embed_query("x").shape == (128,)


def test_full_ingest_and_query_in_model_mode(api: GeminiStandIn, sample_pdf: Path, tmp_path: Path) -> None:
    from clausewise.graph.ingest import build_ingest_graph
    from clausewise.graph.query import build_query_graph
    from clausewise.graph.state import IngestContext, QueryContext
    from clausewise.stores.base import Stores
    from clausewise.stores.local import LocalBlobs

    embedder = GeminiEmbedder("gemini-embedding-001", "stand-in-key", dim=64, base_url=api.url)
    chat = build_chat_model(settings(), timeout=5.0, max_retries=1)
    stores = Stores(LocalBlobs(tmp_path / "store"))
    ingest_tasks = ModelIngestTasks(chat, attempts=1, retry_wait=False)
    ingest = build_ingest_graph(stores=stores, embedder=embedder, tasks=ingest_tasks)
    output = ingest.invoke({"path": str(sample_pdf)}, context=IngestContext(store_dir=str(tmp_path / "store")))
    assert output["status"] == "ingested", output
    assert ingest_tasks.usage()["llm_calls"] > 0 and ingest_tasks.usage()["degraded"] == []
    assert api.paths(":batchEmbedContents")

    tasks = ModelQueryTasks(chat, attempts=1, retry_wait=False)
    graph = build_query_graph(
        stores=stores, embedder=embedder, tasks=tasks, checkpointer=InMemorySaver(), cache_dir=tmp_path / "cache"
    )
    answer = dict(
        graph.invoke(
            {"question": "What exposure coefficient Ce should I use for a sheltered site?"},
            config={"configurable": {"thread_id": "gemini"}},
            context=QueryContext(),
        )
    )
    assert set(answer) == CONTRACT
    assert answer["trace"]["mode"] == "gemini" and answer["trace"]["llm_calls"] > 0
    assert answer["answer_markdown"].strip()
    assert answer["trace"]["degraded"] == []
    for p in answer["passages"]:
        assert p["text"] in stores.lookup("sections", p["key"])["text"]
