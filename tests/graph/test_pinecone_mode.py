"""Ingest and query with the vector index on Pinecone: the real pinecone client against the local
stand-in of its data-plane API (tests/helpers/pinecone_standin.py); nothing leaves 127.0.0.1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.pinecone_standin import serve_pinecone

from clausewise.graph.ingest import build_ingest_graph
from clausewise.graph.query import build_query_graph
from clausewise.settings import Settings
from clausewise.stores import open_vector_index
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs


@pytest.fixture
def pinecone_settings(monkeypatch: pytest.MonkeyPatch) -> Any:
    with serve_pinecone() as (host, state):
        monkeypatch.setenv("PINECONE_API_KEY", "test-key")
        monkeypatch.setenv("PINECONE_HOST", host)
        monkeypatch.setenv("PINECONE_NAMESPACE", "store-a")
        yield Settings(_env_file=None), state


def test_ingest_upserts_to_pinecone_and_query_searches_it(
    pinecone_settings: Any, sample_pdf: Path, embedder: Any, tmp_path: Path
) -> None:
    settings, state = pinecone_settings
    stores = Stores(LocalBlobs(tmp_path / "store"))
    index = open_vector_index(settings, stores)
    assert type(index).__name__ == "PineconeVectorIndex"
    out = build_ingest_graph(stores=stores, embedder=embedder, vector_index=index).invoke({"path": str(sample_pdf)})
    assert out["status"] == "ingested"
    chunks = stores.doc_table(out["doc_key"], "chunks")["chunks"]
    assert len(index) == len(chunks) > 0  # every chunk is in the Pinecone namespace

    graph = build_query_graph(stores=stores, embedder=embedder, vector_index=index, cache_dir=tmp_path)
    answer = dict(graph.invoke({"question": "Which exposure coefficient applies to a sheltered site?"}))
    assert any(p["via"] == "vector" for p in answer["passages"])
    assert any(p["key"].endswith("table_5.1") for p in answer["passages"])
    assert any("/query" in path for path in (r[1] if isinstance(r, tuple) else str(r) for r in state.requests))

    # Overwriting the document replaces its vectors: no stale ones stay behind.
    again = build_ingest_graph(stores=stores, embedder=embedder, vector_index=index).invoke(
        {"path": str(sample_pdf), "overwrite": True}
    )
    assert again["status"] == "ingested" and len(index) == len(chunks)


def test_deleting_a_document_over_http_removes_its_vectors_and_a_dead_index_deletes_nothing(
    pinecone_settings: Any, sample_pdf: Path, embedder: Any, tmp_path: Path
) -> None:
    """DELETE /documents/{key} takes the document's vectors out of Pinecone too (they live apart from
    the stores); with Pinecone unreachable the answer is 503 and the document is still there."""
    from fastapi.testclient import TestClient

    from clausewise.server.app import create_app
    from clausewise.stores.pinecone_index import PineconeVectorIndex
    from clausewise.system import System

    settings, state = pinecone_settings
    stores = Stores(LocalBlobs(tmp_path / "store"))
    index = open_vector_index(settings, stores)
    out = build_ingest_graph(stores=stores, embedder=embedder, vector_index=index).invoke({"path": str(sample_pdf)})
    assert out["status"] == "ingested" and len(index) > 0

    dead = PineconeVectorIndex.connect(api_key="test-key", host="http://127.0.0.1:9", namespace="store-a")
    down = System(settings, stores, embedder=embedder, vector_index=dead)
    with TestClient(create_app(down, page_processes=1)) as client:
        r = client.delete(f"/documents/{out['doc_key']}")
        assert r.status_code == 503 and "Pinecone" in r.json()["detail"]
        assert client.get("/documents").json()[out["doc_key"]]["status"] == "ingested"
    assert len(index) > 0

    system = System(settings, stores, embedder=embedder, vector_index=index)
    with TestClient(create_app(system, page_processes=1)) as client:
        r = client.delete(f"/documents/{out['doc_key']}")
        assert r.status_code == 200 and r.json()["deleted"] is True
        assert out["doc_key"] not in client.get("/documents").json()
    assert len(index) == 0
