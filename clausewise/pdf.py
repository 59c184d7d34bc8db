"""Opening PDFs: PyMuPDF is not thread-safe, so every MuPDF call in a process holds ``MUPDF_LOCK``;
an ingest opens its file once and shares it between the page workers that run in its threads. Work
that needs both cores (reading pages, OCR) runs in a :class:`WorkerPool` of spawned processes."""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pymupdf

MUPDF_LOCK = threading.RLock()

_open_docs: dict[str, pymupdf.Document] = {}
_open_lock = threading.Lock()


def open_pdf(path: str) -> pymupdf.Document:
    """The open document for ``path`` (one per ingest, shared by the page workers)."""
    with _open_lock:
        doc = _open_docs.get(path)
        if doc is None or doc.is_closed:
            with MUPDF_LOCK:
                doc = pymupdf.open(path)
            _open_docs[path] = doc
        return doc


def close_pdf(path: str) -> None:
    with _open_lock:
        doc = _open_docs.pop(path, None)
    if doc is not None:
        with MUPDF_LOCK:
            doc.close()


class WorkerPool:
    """Spawned worker processes for MuPDF work (MuPDF and the models it runs hold the GIL, so threads
    cannot share the cores): started on first use, restarted at another size, shut down at exit.
    Workers run ``setup`` first and end when the process that started them dies. ``broken`` is set by
    a caller whose workers could not start (a script without a ``__main__`` guard, process limits);
    callers then do the work in their own process."""

    def __init__(self, setup: Callable[[], None] | None = None):
        self._setup = setup
        self._pool: ProcessPoolExecutor | None = None
        self._size = 0
        self._lock = threading.Lock()
        self.broken = False

    def get(self, processes: int) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None or self._size != processes:
                self.shutdown()
                self._size = processes
                self._pool = ProcessPoolExecutor(
                    processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                    initargs=(os.getpid(), self._setup),
                )
                atexit.register(self.shutdown)
            return self._pool

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def mark_broken(self) -> None:
        self.broken = True
        self.shutdown()


def _start_worker(parent: int, setup: Callable[[], None] | None) -> None:
    if setup is not None:
        setup()

    def watch() -> None:  # a worker of a killed ingest would be an orphan
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


_worker_docs: dict[tuple[str, int, int], pymupdf.Document] = {}


def worker_document(path: str) -> pymupdf.Document:
    """In a worker process: ``path`` opened, kept open for the next page (a changed file is opened
    anew; the document before it is closed)."""
    stat = Path(path).stat()
    key = (path, stat.st_mtime_ns, stat.st_size)
    doc = _worker_docs.get(key)
    if doc is None:
        for old in _worker_docs.values():
            old.close()
        _worker_docs.clear()
        doc = _worker_docs[key] = pymupdf.open(path)
    return doc
