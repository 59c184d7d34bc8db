"""Search indexes over the stores: the local vector index and the SQLite FTS5 keyword index.

Both are derived from what ingestion committed (per-document vectors and sections), so they can be
rebuilt at any time; both follow the visible documents (manifests) and nothing else.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from clausewise.stores.base import StoreError, Stores
from clausewise.tools.query_tasks import Readings, read_as


class EmbeddingMismatch(StoreError):
    """The index was built with another embedding model than the one configured."""


@dataclass(frozen=True)
class Hit:
    key: str
    score: float
    chunk: dict[str, Any]


def check_embedding_model(stores: Stores, name: str, dim: int) -> None:
    """Record the index's model on first use; refuse another model afterwards."""
    recorded = stores.read_json("index.json", None)
    if recorded is None:
        stores.update_json("index.json", {}, lambda cur: cur or {"embedding_model": name, "dim": dim})
        recorded = stores.read_json("index.json", {})
    if recorded.get("embedding_model") != name or recorded.get("dim") != dim:
        raise EmbeddingMismatch(
            f"this store's vector index was built with {recorded.get('embedding_model')} "
            f"(dim {recorded.get('dim')}), not {name} (dim {dim}); use the same embedding model "
            "or ingest into a new store"
        )


class VectorIndex(Protocol):
    """Chunk vectors searched by cosine similarity; ``upsert_document`` runs before the document's
    manifest is written, so an index outside the stores never misses a visible document."""

    def search(self, vector: np.ndarray, k: int = 10, offset: int = 0) -> list[Hit]:
        """The best chunks from rank ``offset`` on, best first."""

    def similarity(self, vector: np.ndarray, keys: list[str]) -> dict[str, Hit]:
        """For each section key, its chunk most similar to ``vector`` (absent: no chunk found)."""

    def upsert_document(self, doc_key: str, chunks: list[dict[str, Any]], vectors: np.ndarray) -> None:
        """Replace the document's vectors (old ones removed first)."""

    def delete_document(self, doc_key: str) -> None: ...


class LocalVectorIndex:
    """Exact cosine search over every visible document's chunk vectors (normalised, float32). The
    vectors live in each document's generation, so writing and deleting them is the stores' work."""

    def __init__(self, stores: Stores):
        self.stores = stores
        self._signature: tuple[tuple[str, str], ...] = ()
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._chunks: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _refresh(self) -> None:
        """Load the vectors and chunks of exactly the generations the manifests name; one replaced or
        deleted meanwhile (its files gone) means the documents changed under this reader: start over."""
        for _ in range(5):
            docs = self.stores.visible_documents()
            signature = tuple(sorted((k, m["generation"]) for k, m in docs.items()))
            if signature == self._signature:
                return
            matrices, chunks, changed = [], [], False
            for doc_key, generation in signature:
                vectors = self.stores.doc_vectors(doc_key, generation)
                table = self.stores.generation_json(doc_key, generation, "chunks")
                if vectors is None or table is None:
                    if self.stores.manifest(doc_key) != docs[doc_key]:
                        changed = True
                        break
                    raise StoreError(f"vector index of {doc_key} is missing")
                doc_chunks = table.get("chunks", [])
                if len(vectors) != len(doc_chunks):
                    raise StoreError(f"vector index of {doc_key} does not match its chunks")
                matrices.append(vectors)
                chunks.extend(doc_chunks)
            if changed:
                continue
            self._matrix = np.vstack(matrices) if matrices else np.zeros((0, 0), dtype=np.float32)
            self._chunks = chunks
            self._signature = signature
            return
        raise StoreError("the documents keep changing under this reader; try again")

    def __len__(self) -> int:
        with self._lock:
            self._refresh()
            return len(self._chunks)

    def upsert_document(self, doc_key: str, chunks: list[dict[str, Any]], vectors: np.ndarray) -> None:
        """Nothing to do: the commit writes the vectors into the document's generation."""

    def delete_document(self, doc_key: str) -> None:
        """Nothing to do: deleting the document's generations deletes its vectors."""

    def similarity(self, vector: np.ndarray, keys: list[str]) -> dict[str, Hit]:
        wanted = set(keys)
        with self._lock:
            self._refresh()
            if not self._chunks or not wanted:
                return {}
            rows = [i for i, c in enumerate(self._chunks) if c["key"] in wanted]
            scores = self._matrix[rows] @ vector.astype(np.float32)
            chunks = [self._chunks[i] for i in rows]
        best: dict[str, Hit] = {}
        for chunk, score in zip(chunks, scores, strict=True):
            key = chunk["key"]
            if key not in best or score > best[key].score:
                best[key] = Hit(key, float(score), chunk)
        return best

    def search(self, vector: np.ndarray, k: int = 10, offset: int = 0) -> list[Hit]:
        """Chunks ranked offset..offset+k by cosine similarity (vectors are normalised)."""
        with self._lock:
            self._refresh()
            if not self._chunks:
                return []
            scores = self._matrix @ vector.astype(np.float32)
            order = np.argsort(-scores, kind="stable")[offset : offset + k]
            return [Hit(self._chunks[i]["key"], float(scores[i]), self._chunks[i]) for i in order]


_FTS_TOKEN = re.compile(r"([\w.]+)(\*?)", re.UNICODE)  # a word, and its star (a prefix, where stars are read)


class KeywordIndex:
    """SQLite FTS5 (BM25) over the sections store, rebuilt when the visible documents change."""

    def __init__(self, stores: Stores, path: Path):
        self.stores, self.path = stores, path
        self._lock = threading.Lock()

    def _signature(self) -> str:
        docs = self.stores.visible_documents()
        return ";".join(f"{k}={m['generation']}" for k, m in sorted(docs.items()))

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(self.path, check_same_thread=False)
        con.execute("CREATE TABLE IF NOT EXISTS meta (signature TEXT)")
        con.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS sections USING fts5("
            "key UNINDEXED, doc UNINDEXED, kind UNINDEXED, title, text, tokenize='unicode61')"
        )
        con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5vocab(sections, 'row')")
        return con

    def ensure(self) -> sqlite3.Connection:
        with self._lock:
            con = self._connect()
            signature = self._signature()
            row = con.execute("SELECT signature FROM meta").fetchone()
            if row is None or row[0] != signature:
                # the words a scan misread are indexed as the words they stand for ("tinlber" as "timber")
                readings = Readings()
                for doc_key in self.stores.visible_documents():
                    readings.update(self.stores.doc_table(doc_key, "vocabulary").get("readings") or {})
                with con:
                    con.execute("DELETE FROM sections")
                    con.executemany(
                        "INSERT INTO sections (key, doc, kind, title, text) VALUES (?, ?, ?, ?, ?)",
                        (
                            (
                                key,
                                s["document"],
                                s["kind"],
                                read_as(s.get("title") or "", readings),
                                read_as(s["text"], readings),
                            )
                            for key, s in self.stores.iter_sections()
                        ),
                    )
                    con.execute("DELETE FROM meta")
                    con.execute("INSERT INTO meta VALUES (?)", (signature,))
            return con

    def search(self, terms: list[str], limit: int = 1000, prefixes: bool = False) -> list[tuple[str, float]]:
        """Every section containing any of ``terms`` (phrases allowed), best BM25 first. With
        ``prefixes``, a word followed by ``*`` is a prefix ("confer* hall*" finds "conference halls");
        otherwise ``*`` is no operator."""
        phrases = []
        for term in terms:
            tokens = _FTS_TOKEN.findall(term.lower())
            if tokens:
                phrases.append(" + ".join(f'"{t}"' + (" *" if star and prefixes else "") for t, star in tokens))
        if not phrases:
            return []
        con = self.ensure()
        rows = con.execute(
            "SELECT key, bm25(sections) FROM sections WHERE sections MATCH ? ORDER BY bm25(sections) LIMIT ?",
            (" OR ".join(phrases), limit),
        ).fetchall()
        return [(key, -score) for key, score in rows]

    def printed(self, words: Iterable[str]) -> set[str]:
        """Those of ``words`` (lower case) that some section prints, as a scan's misread words are read."""
        asked = sorted(set(words))
        if not asked:
            return set()
        con = self.ensure()
        rows = con.execute(
            "SELECT term FROM words WHERE term IN (SELECT value FROM json_each(?))", (json.dumps(asked),)
        )
        return {term for (term,) in rows}

    def scores(self, tokens: list[str], keys: list[str]) -> dict[str, float]:
        """FTS5 ``bm25()`` (higher is better) of each of ``keys`` that holds any of ``tokens`` (words of
        letters and digits; a trailing ``*`` makes one a prefix: "load*" finds "loads", "loading")."""
        terms = []
        for token in tokens:
            word = token.rstrip("*").lower()
            if re.fullmatch(r"[a-z0-9]+", word):
                terms.append(f'"{word}"' + ("*" if token.endswith("*") else ""))
        if not terms or not keys:
            return {}
        con = self.ensure()
        rows = con.execute(
            "SELECT key, bm25(sections) FROM sections"
            " WHERE sections MATCH ? AND key IN (SELECT value FROM json_each(?))",
            (" OR ".join(dict.fromkeys(terms)), json.dumps(keys)),
        ).fetchall()
        return {key: -score for key, score in rows}
