"""Vector index on Pinecone (DESIGN.md): one index, a namespace per store, one vector per chunk.

Vector ids are ``<doc_key>#<chunk index>``; metadata carries the chunk's section key, doc key,
document, page, kind, chunk number and text (truncated), so a hit needs no second read. Widening pages
through results: ``search(v, k, offset)`` asks for the top ``offset + k`` and keeps the last ``k``.
Overwriting a document deletes its previous vectors first, so a shorter re-ingest leaves no stale chunks.

Uses the plain ``pinecone`` (v7) client; the SDK is imported only when :meth:`PineconeVectorIndex.connect`
is called, so local installs never need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from clausewise.stores.base import StoreError
from clausewise.stores.index import Hit

UPSERT_BATCH = 100
DELETE_BATCH = 1000  # Pinecone's limit of ids per delete request
MAX_TOP_K = 10_000  # Pinecone's limit of topK per query
TEXT_CHARS = 1000  # metadata is limited to 40 KB per vector: keep the text short
_INT_FIELDS = ("page", "chunk")  # Pinecone returns every number as a float


def _metadata(chunk: dict[str, Any], doc_key: str) -> dict[str, Any]:
    meta = {
        "key": chunk["key"],
        "doc_key": chunk.get("doc_key") or doc_key,
        "document": chunk.get("document"),
        "page": chunk.get("page"),
        "kind": chunk.get("kind"),
        "chunk": chunk.get("chunk"),
        "text": (chunk.get("text") or "")[:TEXT_CHARS],
    }
    return {k: v for k, v in meta.items() if v is not None}  # Pinecone refuses null metadata values


def _chunk_from_metadata(meta: dict[str, Any]) -> dict[str, Any]:
    chunk = dict(meta)
    for field in _INT_FIELDS:
        value = chunk.get(field)
        if isinstance(value, float) and value.is_integer():
            chunk[field] = int(value)
    return chunk


class PineconeVectorIndex:
    """The vector index of one store, in one namespace of a Pinecone index (any v7 ``Index``)."""

    def __init__(self, index: Any, namespace: str):
        self.index = index
        self.namespace = namespace
        self._store: Any = None

    @classmethod
    def connect(cls, api_key: str, index_name: str = "", host: str = "", namespace: str = "") -> PineconeVectorIndex:
        """Open ``index_name`` (its host looked up on the control plane) or the data plane at ``host``
        (e.g. ``https://<index>-<project>.svc.<region>.pinecone.io``, or ``http://127.0.0.1:PORT``)."""
        try:
            from pinecone import Pinecone
        except ImportError as exc:  # pragma: no cover - pinecone is a dependency
            raise StoreError("the pinecone package is not installed; pip install pinecone") from exc
        if not index_name and not host:
            raise StoreError("set the Pinecone index name or its host")
        try:
            index = Pinecone(api_key=api_key).Index(name=index_name, host=host)
        except Exception as exc:
            raise StoreError(f"cannot open Pinecone index {index_name or host}: {exc}") from exc
        return cls(index, namespace)

    # ---- writes ----
    def upsert_document(self, doc_key: str, chunks: Sequence[dict[str, Any]], vectors: np.ndarray) -> None:
        """Replace every vector of ``doc_key`` with one per chunk (``vectors[i]`` embeds ``chunks[i]``)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if len(chunks) != len(vectors):
            raise StoreError(f"{doc_key}: {len(chunks)} chunks but {len(vectors)} vectors")
        self.delete_document(doc_key)
        records = [
            {"id": f"{doc_key}#{i}", "values": vectors[i].tolist(), "metadata": _metadata(chunk, doc_key)}
            for i, chunk in enumerate(chunks)
        ]
        try:
            for start in range(0, len(records), UPSERT_BATCH):
                self.index.upsert(vectors=records[start : start + UPSERT_BATCH], namespace=self.namespace)
        except Exception as exc:
            raise StoreError(f"Pinecone upsert of {doc_key} failed: {exc}") from exc

    def _ids_of(self, doc_key: str) -> list[str]:
        ids: list[str] = []
        for page in self.index.list(prefix=f"{doc_key}#", namespace=self.namespace):
            ids.extend(page)
        return ids

    def delete_document(self, doc_key: str) -> None:
        """Remove every vector of ``doc_key``: listed by id prefix (serverless indexes), or deleted by
        metadata filter where listing is not supported (pod-based indexes)."""
        try:
            try:
                ids = self._ids_of(doc_key)
            except Exception:
                self.index.delete(filter={"doc_key": {"$eq": doc_key}}, namespace=self.namespace)
                return
            for start in range(0, len(ids), DELETE_BATCH):
                self.index.delete(ids=ids[start : start + DELETE_BATCH], namespace=self.namespace)
        except Exception as exc:
            raise StoreError(f"Pinecone delete of {doc_key} failed: {exc}") from exc

    # ---- reads ----
    def __len__(self) -> int:
        try:
            stats = self.index.describe_index_stats()
        except Exception as exc:
            raise StoreError(f"Pinecone describe_index_stats failed: {exc}") from exc
        summary = (stats.namespaces or {}).get(self.namespace)
        return int(summary.vector_count) if summary is not None else 0

    def search(self, vector: np.ndarray, k: int = 10, offset: int = 0) -> list[Hit]:
        """Chunks ranked offset..offset+k by cosine similarity (same contract as LocalVectorIndex)."""
        top_k = min(offset + k, MAX_TOP_K)
        if k <= 0 or top_k <= offset:
            return []
        try:  # langchain-pinecone's vector store runs the query and reads the metadata back
            found = self._langchain_store().similarity_search_by_vector_with_score(
                np.asarray(vector, dtype=np.float32).tolist(), k=top_k, namespace=self.namespace
            )
        except Exception as exc:
            raise StoreError(f"Pinecone query failed: {exc}") from exc
        hits = []
        for doc, score in found[offset:top_k]:
            chunk = _chunk_from_metadata({**doc.metadata, "text": doc.page_content})
            hits.append(Hit(chunk.get("key") or str(doc.id), float(score), chunk))
        return hits

    def similarity(self, vector: np.ndarray, keys: list[str]) -> dict[str, Hit]:
        """Best chunk per key, from one query filtered to those keys (a few chunks per key)."""
        if not keys:
            return {}
        try:
            found = self._langchain_store().similarity_search_by_vector_with_score(
                np.asarray(vector, dtype=np.float32).tolist(),
                k=min(len(keys) * 8, MAX_TOP_K),
                filter={"key": {"$in": list(keys)}},
                namespace=self.namespace,
            )
        except Exception as exc:
            raise StoreError(f"Pinecone query failed: {exc}") from exc
        best: dict[str, Hit] = {}
        for doc, score in found:
            key = doc.metadata.get("key")
            if key and (key not in best or score > best[key].score):
                best[key] = Hit(key, float(score), _chunk_from_metadata({**doc.metadata, "text": doc.page_content}))
        return best

    def _langchain_store(self) -> Any:
        if self._store is None:
            from langchain_core.embeddings import Embeddings
            from langchain_pinecone import PineconeVectorStore

            class VectorsOnly(Embeddings):
                """Queries arrive as vectors (the store's embedder made them); nothing is embedded here."""

                def embed_documents(self, texts: list[str]) -> list[list[float]]:
                    raise NotImplementedError("clausewise passes vectors, not texts")

                def embed_query(self, text: str) -> list[float]:
                    raise NotImplementedError("clausewise passes vectors, not texts")

            self._store = PineconeVectorStore(
                index=self.index, embedding=VectorsOnly(), text_key="text", namespace=self.namespace
            )
        return self._store
