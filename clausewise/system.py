"""The one place that wires the running system: settings -> stores, embedder, vector index and the two
reasoners, which ``build_query_graph(system)`` and ``build_ingest_graph(system)`` compile into the
graphs. The CLI, the HTTP server's lifespan, ``clausewise eval`` and the Studio entry points all start
here; anything given explicitly (tests, an embedding agent) wins over settings.

Everything is built on first use, so opening a system loads no model and makes no network call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

from clausewise.settings import Settings
from clausewise.stores import Stores, VectorIndex, open_stores, open_vector_index
from clausewise.tools.ingest_tasks import IngestTasks
from clausewise.tools.models import Embedder, build_embedder, build_ingest_tasks, build_query_tasks, cross_encoder
from clausewise.tools.query_tasks import QueryTasks


class System:
    """Stores, embedder, vector index and reasoners of one store, built from settings on first use."""

    def __init__(
        self,
        settings: Settings | None = None,
        stores: Stores | None = None,
        *,
        store_dir: Path | str | None = None,
        embedder: Embedder | None = None,
        vector_index: VectorIndex | None = None,
        ingest_tasks: IngestTasks | None = None,
        query_tasks: QueryTasks | None = None,
        cache_dir: Path | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.stores = stores or open_stores(self.settings, Path(store_dir) if store_dir is not None else None)
        self._given: dict[str, Any] = {
            "embedder": embedder,
            "vector_index": vector_index,
            "ingest_tasks": ingest_tasks,
            "query_tasks": query_tasks,
        }
        self._cache_dir = cache_dir
        self._lock = threading.Lock()

    @staticmethod
    def default_store_missing(settings: Settings | None = None) -> bool:
        """No store argument, no bucket configured, and the default directory does not exist."""
        settings = settings or Settings()
        return not settings.r2_bucket and not Path(settings.store_dir).exists()

    def _built(self, name: str, build: Callable[[], Any]) -> Any:
        with self._lock:
            if self._given[name] is None:
                self._given[name] = build()
            return self._given[name]

    @property
    def embedder(self) -> Embedder:
        return self._built("embedder", lambda: build_embedder(self.settings))  # type: ignore[no-any-return]

    @property
    def vector_index(self) -> VectorIndex:
        return self._built("vector_index", lambda: open_vector_index(self.settings, self.stores))  # type: ignore[no-any-return]

    @property
    def ingest_tasks(self) -> IngestTasks:
        return self._built("ingest_tasks", lambda: build_ingest_tasks(self.settings))  # type: ignore[no-any-return]

    @property
    def query_tasks(self) -> QueryTasks:
        return self._built("query_tasks", lambda: build_query_tasks(self.settings))  # type: ignore[no-any-return]

    def warm_up(self, question: str = "") -> threading.Thread:
        """Load the embedder in the background and read the question through it (its token vectors
        are kept for the soft match), then the cross-encoder, so that loading the models overlaps the
        caller's own start: the CLI imports the query graph meanwhile, which takes about as long. The
        first use of ``embedder`` waits for it; a failure here is left for that use to report."""

        def run() -> None:
            try:
                self.embedder.soft_match(" ".join(question.split()), [])
            except Exception:  # noqa: BLE001 - reported where the embedder is used
                pass
            if self.settings.clausewise_cross_encoder:
                cross_encoder()  # reports its own failure, once

        thread = threading.Thread(target=run, name="clausewise-warm-up", daemon=True)
        thread.start()
        return thread

    @cached_property
    def cache_dir(self) -> Path:
        """Where derived local files go (keyword index, conversation threads, server jobs): the store
        directory itself, or the user cache for a bucket."""
        return self._cache_dir or self.stores.blobs.local_root or self.settings.clausewise_cache_dir

    def local_path(self, store_path: str) -> str:
        """A store path as a file path a user can open (local stores), else the path in the bucket."""
        root = self.stores.blobs.local_root
        return str(root / store_path) if root else store_path

    def delete_document(self, doc_key: str) -> bool:
        """Delete a document: its vectors from the vector index first (Pinecone keeps them apart from
        the stores; a failure there raises ``StoreError`` and deletes nothing, so the delete can be
        retried), then the document itself. False when it was not there."""
        self.vector_index.delete_document(doc_key)
        return self.stores.delete_document(doc_key)

    def ingest_limits(self) -> dict[str, Any]:
        """The ingestion graph's context values that come from the deployment: limits and store."""
        values: dict[str, Any] = {"max_file_mb": self.settings.max_file_mb, "max_pages": self.settings.max_pages}
        root = self.stores.blobs.local_root
        if root is not None:
            values["store_dir"] = str(root)
        return values
