"""What the query nodes use (the run's dependencies, carried in ``QueryContext.deps``): stores,
indexes, embedder, reasoner, and caches derived from the stores."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from clausewise.keys import document_of
from clausewise.stores import KeywordIndex, Stores, VectorIndex
from clausewise.stores.index import check_embedding_model
from clausewise.system import System
from clausewise.tools.models import CrossEncoder, Embedder, cross_encoder
from clausewise.tools.query_tasks import (
    OfflineQueryTasks,
    QueryTasks,
    Terms,
    Vocabulary,
    question_terms,
    section_frequencies,
)


@dataclass
class QueryDeps:
    system: System
    _vocab: tuple[str, Vocabulary] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _keyword_index: KeywordIndex | None = None
    _query_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    offline_tasks: QueryTasks = field(default_factory=OfflineQueryTasks)

    def __post_init__(self) -> None:
        check_embedding_model(self.stores, self.embedder.name, self.embedder.dim)

    @property
    def stores(self) -> Stores:
        return self.system.stores

    @property
    def embedder(self) -> Embedder:
        return self.system.embedder

    def cross_encoder(self) -> CrossEncoder | None:
        """The cross-encoder collect-passages reads its first passages again with (None: not installed,
        or turned off: ``CLAUSEWISE_CROSS_ENCODER=0``)."""
        return cross_encoder() if self.system.settings.clausewise_cross_encoder else None

    @property
    def tasks(self) -> QueryTasks:
        return self.system.query_tasks

    @property
    def vector_index(self) -> VectorIndex:
        return self.system.vector_index

    @property
    def keyword_index(self) -> KeywordIndex:
        if self._keyword_index is None:
            self._keyword_index = KeywordIndex(self.stores, self.system.cache_dir / "keyword.sqlite")
        return self._keyword_index

    def signature(self) -> str:
        docs = self.stores.visible_documents()
        return ";".join(f"{k}={m['generation']}" for k, m in sorted(docs.items()))

    def vocabulary(self) -> Vocabulary:
        signature = self.signature()
        with self._lock:
            if self._vocab is None or self._vocab[0] != signature:
                self._vocab = (signature, Vocabulary([self._frequencies(doc) for doc in signature_docs(signature)]))
            return self._vocab[1]

    def _frequencies(self, doc_key: str) -> dict[str, Any]:
        """The document's stem frequencies, stored at ingest (computed here for an older store)."""
        stored = self.stores.doc_table(doc_key, "vocabulary")
        if stored:
            return stored
        return section_frequencies(list(self.stores.doc_table(doc_key, "sections").values()))

    def terms(self, question: str) -> Terms:
        return question_terms(question, self.vocabulary(), self.stores.kv())

    def query_vector(self, text: str) -> np.ndarray:
        if text not in self._query_vectors:
            if len(self._query_vectors) > 256:
                self._query_vectors.clear()
            self._query_vectors[text] = self.embedder.embed_query(text)
        return self._query_vectors[text]

    def section(self, key: str) -> dict[str, Any] | None:
        try:
            return self.stores.lookup("sections", key)
        except KeyError:
            return None

    def reader(self) -> Reader:
        return Reader(self.stores)


class Reader:
    """One node call's reads of per-document tables: each document's table is resolved (its manifest
    read) once per call, and each entry looked up once. Following references and climbing parents
    read the same sections many times; resolving the manifest for each read cost a fifth of a warm
    ask. ``None`` for an entry that is absent (or a key that is not one)."""

    def __init__(self, stores: Stores):
        self.stores = stores
        self._entries: dict[tuple[str, str], Any] = {}
        self._tables: dict[tuple[str, str], dict[str, Any]] = {}

    def lookup(self, table: str, key: str) -> Any:
        if (table, key) not in self._entries:
            try:
                doc = document_of(key)
            except KeyError:
                self._entries[table, key] = None
            else:  # the document's table as its manifest names it when first read in this call
                if (doc, table) not in self._tables:
                    self._tables[doc, table] = self.stores.doc_table(doc, table)
                self._entries[table, key] = self._tables[doc, table].get(key)
        return self._entries[table, key]

    def section(self, key: str) -> dict[str, Any] | None:
        return self.lookup("sections", key)  # type: ignore[no-any-return]


def lineage(read: Reader, section: dict[str, Any] | None) -> Iterator[dict[str, Any]]:
    """The section and its parents, nearest first."""
    for _ in range(20):
        if section is None:
            return
        yield section
        section = read.section(section.get("parent") or "")


def signature_docs(signature: str) -> list[str]:
    return [part.split("=", 1)[0] for part in signature.split(";") if part]


HEADING_ONLY_CHARS = 40  # a section with less text under its heading stands for its subclauses


_STATUS = re.compile(r"\(\s?(?:n\s?o\s?r\s?m|i\s?n\s?f\s?o\s?r\s?m)[a-z ]*\)\s*", re.I)  # "(i nformative)" too


def bare(text: str, title: str | None = None) -> bool:
    """A heading with (almost) no text under it. An annex's heading runs over lines: its label, its
    standing ("(informative)") and its title ("Annex A / (Normative) / Isotherms of national minimum
    and maximum shade air / temperatures"); ``title``, the section's, is heading too."""
    body = text.partition("\n")[2].strip()
    body = body[m.end() :] if (m := _STATUS.match(body)) else body
    if title and body.startswith(title.strip()):
        body = body[len(title.strip()) :]
    return len(body.strip()) < HEADING_ONLY_CHARS


def first_subclause(key: str, among: set[str]) -> str | None:
    """The first of ``among`` one level below ``key`` ("5" -> "5.1"): what a bare heading stands for.
    An annex's clauses are numbered by its letter: "Annex B" -> "B.1", "Annex A1" -> "A1.1"."""
    key = re.sub(r"_annex_([A-Z]\d?)$", r"_\1", key)
    children = [k for k in among if k.startswith(key + ".") and k[len(key) + 1 : len(key) + 2].isdigit()]
    return min(children, key=_natural, default=None)


def _natural(key: str) -> list[tuple[int, str]]:
    return [(int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", key)]


def deps_of(runtime: Runtime[Any]) -> QueryDeps:
    """The run's query dependencies (the graph's wiring puts them in the context)."""
    deps = runtime.context.deps if runtime.context is not None else None
    if not isinstance(deps, QueryDeps):
        raise RuntimeError("QueryContext.deps is not set: compile the graph with build_query_graph()")
    return deps
