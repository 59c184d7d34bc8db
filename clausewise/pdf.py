"""Opening PDFs: PyMuPDF is not thread-safe, so every MuPDF call in a process holds ``MUPDF_LOCK``;
an ingest opens its file once and shares it between the page workers that run in its threads."""

from __future__ import annotations

import threading

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
