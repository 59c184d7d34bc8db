"""One contract for every vector index: the local one (stores/index.py) and Pinecone (stores/pinecone_index.py),
the latter through the real ``pinecone`` v7 client against a local stand-in of its data-plane API
(tests/helpers/pinecone_standin.py). Small random normalised vectors (dim 8), so the nearest chunk is unambiguous."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers.pinecone_standin import PineconeStandIn, serve_pinecone

from clausewise.stores import Hit, LocalVectorIndex, StoreError, Stores
from clausewise.stores.local import LocalBlobs
from clausewise.stores.pinecone_index import TEXT_CHARS, PineconeVectorIndex

DIM = 8
DOC_A, DOC_B = "TST_DOCA", "TST_DOCB"


@dataclass
class Backend:
    """A vector index and how a document's chunks and vectors reach it (ingest writes them)."""

    name: str
    index: Any
    stores: Stores | None = None
    standin: PineconeStandIn | None = None

    def put(self, doc_key: str, chunks: list[dict[str, Any]], vectors: np.ndarray) -> None:
        if self.stores is not None:
            writer = self.stores.new_generation(doc_key)
            writer.put_json("chunks", {"chunks": chunks})
            writer.put_vectors(vectors)
            writer.publish({"doc_key": doc_key})
        else:
            self.index.upsert_document(doc_key, chunks, vectors)

    def delete(self, doc_key: str) -> None:
        if self.stores is not None:
            self.stores.delete_document(doc_key)
        else:
            self.index.delete_document(doc_key)


@pytest.fixture(params=["local", "pinecone"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "local":
        stores = Stores(LocalBlobs(tmp_path / "store"))
        yield Backend("local", LocalVectorIndex(stores), stores=stores)
        return
    with serve_pinecone() as (host, standin):
        index = PineconeVectorIndex.connect(api_key="test-key", host=host, namespace="store-1")
        yield Backend("pinecone", index, standin=standin)


def make_doc(doc_key: str, n_sections: int, rng: np.random.Generator, tag: str = "") -> tuple[list, np.ndarray]:
    """Chunks shaped like enrich.make_chunks' (two chunks for every third section) and their vectors."""
    chunks = []
    for s in range(n_sections):
        for c in range(2 if s % 3 == 0 else 1):
            chunks.append(
                {
                    "key": f"{doc_key}_{tag}{s + 1}.1",
                    "chunk": c,
                    "text": f"{doc_key} {s + 1}.1 Heading\nbody {tag} {s} {c}",
                    "page": 3 + s,
                    "kind": "table" if s % 4 == 1 else "clause",
                    "document": doc_key.replace("_", " "),
                    "doc_key": doc_key,
                }
            )
    vectors = rng.normal(size=(len(chunks), DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return chunks, vectors


def ident(hit: Hit) -> tuple[str, int]:
    return hit.key, hit.chunk["chunk"]


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)


def test_empty_index(backend: Backend, rng: np.random.Generator) -> None:
    assert len(backend.index) == 0
    assert backend.index.search(rng.normal(size=DIM).astype(np.float32), k=5) == []


def test_nearest_chunk_first_with_metadata(backend: Backend, rng: np.random.Generator) -> None:
    chunks_a, vectors_a = make_doc(DOC_A, 6, rng)
    chunks_b, vectors_b = make_doc(DOC_B, 4, rng)
    backend.put(DOC_A, chunks_a, vectors_a)
    backend.put(DOC_B, chunks_b, vectors_b)
    assert len(backend.index) == len(chunks_a) + len(chunks_b)
    for chunks, vectors in ((chunks_a, vectors_a), (chunks_b, vectors_b)):
        for i in (0, len(chunks) - 1):
            hits = backend.index.search(vectors[i], k=4)
            assert len(hits) == 4
            assert ident(hits[0]) == (chunks[i]["key"], chunks[i]["chunk"])
            assert hits[0].score == pytest.approx(1.0, abs=1e-4)
            scores = [h.score for h in hits]
            assert scores == sorted(scores, reverse=True)
            got = hits[0].chunk
            for field in ("key", "document", "page", "kind", "doc_key", "chunk", "text"):
                assert got[field] == chunks[i][field], field
            assert isinstance(got["page"], int) and isinstance(got["chunk"], int)


def test_similarity_gives_each_sections_nearest_chunk(backend: Backend, rng: np.random.Generator) -> None:
    """For the keys asked about, and only those: the section's chunk nearest the vector, with its text
    (collect-passages quotes those lines) and its cosine similarity."""
    chunks, vectors = make_doc(DOC_A, 6, rng)
    backend.put(DOC_A, chunks, vectors)
    two = [c["key"] for c in chunks if c["chunk"] == 1][0]  # a section with two chunks
    second = next(i for i, c in enumerate(chunks) if c["key"] == two and c["chunk"] == 1)
    other = chunks[-1]["key"]
    got = backend.index.similarity(vectors[second], [two, other])
    assert set(got) == {two, other}
    assert got[two].chunk["chunk"] == 1 and got[two].chunk["text"] == chunks[second]["text"]
    assert got[two].score == pytest.approx(1.0, abs=1e-4)
    assert got[other].score == pytest.approx(float(vectors[-1] @ vectors[second]), abs=1e-4)
    assert backend.index.similarity(vectors[second], []) == {}


def test_offset_pages_through_results(backend: Backend, rng: np.random.Generator) -> None:
    chunks, vectors = make_doc(DOC_A, 10, rng)
    backend.put(DOC_A, chunks, vectors)
    query = rng.normal(size=DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    total = len(backend.index)
    assert total == len(chunks)
    everything = [ident(h) for h in backend.index.search(query, k=total)]
    assert sorted(everything) == sorted((c["key"], c["chunk"]) for c in chunks)
    pages, offset = [], 0  # widening: the next 3, until the index is exhausted
    while True:
        batch = backend.index.search(query, k=3, offset=offset)
        if not batch:
            break
        assert len(batch) == min(3, total - offset)
        pages.extend(ident(h) for h in batch)
        offset += 3
    assert pages == everything  # in order, no overlap, nothing missed
    assert backend.index.search(query, k=5, offset=total) == []
    assert backend.index.search(query, k=0) == []


def test_overwrite_replaces_vectors(backend: Backend, rng: np.random.Generator) -> None:
    old_chunks, old_vectors = make_doc(DOC_A, 9, rng, tag="old")
    other_chunks, other_vectors = make_doc(DOC_B, 3, rng)
    backend.put(DOC_A, old_chunks, old_vectors)
    backend.put(DOC_B, other_chunks, other_vectors)
    new_chunks, new_vectors = make_doc(DOC_A, 2, rng, tag="new")  # shorter: old ids past the end must go too
    backend.put(DOC_A, new_chunks, new_vectors)
    assert len(backend.index) == len(new_chunks) + len(other_chunks)
    for vector in old_vectors:
        hits = backend.index.search(vector, k=len(backend.index) + 5)
        assert len(hits) == len(new_chunks) + len(other_chunks)
        assert not any("old" in h.key for h in hits)
    hits = backend.index.search(new_vectors[1], k=1)
    assert ident(hits[0]) == (new_chunks[1]["key"], new_chunks[1]["chunk"])
    assert hits[0].chunk["text"] == new_chunks[1]["text"]


def test_delete_removes_document(backend: Backend, rng: np.random.Generator) -> None:
    chunks_a, vectors_a = make_doc(DOC_A, 5, rng)
    chunks_b, vectors_b = make_doc(DOC_B, 4, rng)
    backend.put(DOC_A, chunks_a, vectors_a)
    backend.put(DOC_B, chunks_b, vectors_b)
    backend.delete(DOC_A)
    assert len(backend.index) == len(chunks_b)
    hits = backend.index.search(vectors_a[0], k=50)
    assert {h.chunk["doc_key"] for h in hits} == {DOC_B}
    assert len(hits) == len(chunks_b)
    backend.delete(DOC_B)
    assert len(backend.index) == 0
    assert backend.index.search(vectors_b[0], k=5) == []
    backend.delete(DOC_B)  # deleting an absent document is not an error


# ---------------------------------------------------------------- Pinecone specifics
@pytest.fixture
def pinecone_backend() -> Iterator[tuple[str, PineconeStandIn]]:
    with serve_pinecone() as served:
        yield served


def test_pinecone_batches_truncates_and_namespaces(
    pinecone_backend: tuple[str, PineconeStandIn], rng: np.random.Generator
) -> None:
    host, standin = pinecone_backend
    one = PineconeVectorIndex.connect(api_key="k", host=host, namespace="store-1")
    two = PineconeVectorIndex.connect(api_key="k", host=host, namespace="store-2")
    chunks, vectors = make_doc(DOC_A, 170, rng)  # 227 chunks: 3 upserts of at most 100
    chunks[0]["text"] = "x" * 5000
    one.upsert_document(DOC_A, chunks, vectors)
    assert standin.requests.count(("POST", "/vectors/upsert")) == 3
    assert len(one) == len(chunks) and len(two) == 0
    assert two.search(vectors[0], k=3) == []
    assert len(one.search(vectors[0], k=3)[0].chunk["text"]) == TEXT_CHARS
    stored = standin.namespaces["store-1"][f"{DOC_A}#0"]["metadata"]
    assert {"key", "doc_key", "document", "page", "kind", "chunk", "text"} <= set(stored)
    two.upsert_document(DOC_A, chunks[:3], vectors[:3])
    one.delete_document(DOC_A)  # one store's delete leaves the other store's vectors alone
    assert len(one) == 0 and len(two) == 3


def test_pinecone_delete_by_filter_where_listing_is_unsupported(
    pinecone_backend: tuple[str, PineconeStandIn], rng: np.random.Generator
) -> None:
    host, standin = pinecone_backend
    index = PineconeVectorIndex.connect(api_key="k", host=host, namespace="pods")

    class NoList:  # a pod-based index: list() is refused
        def __init__(self, inner: Any):
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def list(self, **kwargs: Any) -> Any:
            raise RuntimeError("list is not supported by pod-based indexes")

    index.index = NoList(index.index)
    chunks, vectors = make_doc(DOC_A, 4, rng)
    index.upsert_document(DOC_A, chunks, vectors)
    index.upsert_document(DOC_A, chunks[:2], vectors[:2])
    assert len(index) == 2
    index.delete_document(DOC_A)
    assert len(index) == 0


def test_pinecone_errors_are_store_errors(
    pinecone_backend: tuple[str, PineconeStandIn], rng: np.random.Generator
) -> None:
    host, _ = pinecone_backend
    index = PineconeVectorIndex.connect(api_key="k", host=host, namespace="n")
    chunks, vectors = make_doc(DOC_A, 2, rng)
    index.upsert_document(DOC_A, chunks, vectors)
    with pytest.raises(StoreError, match="query"):  # another embedding model's dimension: refused by the index
        index.search(rng.normal(size=DIM + 4).astype(np.float32), k=3)
    with pytest.raises(StoreError, match="upsert"):
        index.upsert_document(DOC_B, chunks, rng.normal(size=(len(chunks), DIM + 4)))
    with pytest.raises(StoreError, match="chunks but"):
        index.upsert_document(DOC_A, chunks, vectors[:1])
    with pytest.raises(StoreError, match="index name or its host"):
        PineconeVectorIndex.connect(api_key="k", namespace="n")
