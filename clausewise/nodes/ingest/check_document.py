"""check-document: validate and identify the file before anything is written; skip it when the same
bytes are already ingested."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pymupdf
from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.keys import DocId, doc_id, find_designations, parse_designation
from clausewise.nodes.ingest.deps import system_of
from clausewise.pdf import MUPDF_LOCK


class IngestError(ValueError):
    """A file that cannot be ingested; the message is one clear line for the user."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def validate_pdf(path: Path, *, max_file_mb: int, max_pages: int) -> pymupdf.Document:
    """Open ``path`` as a PDF or raise :class:`IngestError` with a one-line reason."""
    name = path.name
    if not path.exists():
        raise IngestError(f"{name}: no such file")
    if not path.is_file():
        raise IngestError(f"{name}: not a regular file")
    size = path.stat().st_size
    if size > max_file_mb * 1024 * 1024:
        raise IngestError(f"{name}: {size / 1e6:.0f} MB is larger than the {max_file_mb} MB limit")
    if size == 0:
        raise IngestError(f"{name}: empty file")
    with open(path, "rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise IngestError(f"{name}: not a PDF (no %PDF header)")
    try:
        with MUPDF_LOCK:
            doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # MuPDF raises several types for broken files
        raise IngestError(f"{name}: corrupt PDF ({str(exc).splitlines()[0][:120]})") from exc
    try:
        if doc.needs_pass or doc.is_encrypted:
            raise IngestError(f"{name}: encrypted PDF; remove the password and try again")
        if doc.page_count == 0:
            raise IngestError(f"{name}: the PDF has no pages")
        if doc.page_count > max_pages:
            raise IngestError(f"{name}: {doc.page_count} pages is more than the {max_pages}-page limit")
        with MUPDF_LOCK:
            texts = [doc[i].get_text("text") for i in range(doc.page_count)]
            if doc.is_repaired:
                # MuPDF rebuilt a broken cross-reference table: a truncated file reads as empty pages.
                empty = [
                    i + 1
                    for i in range(doc.page_count)
                    if not texts[i].strip() and not doc[i].get_images() and not doc[i].get_drawings()
                ]
                if empty:
                    raise IngestError(
                        f"{name}: truncated or damaged PDF ({len(empty)} of {doc.page_count} pages unreadable)"
                    )
        if not any(t.strip() for t in texts):
            raise IngestError(f"{name}: no page has a text layer; run OCR on the scan first")
    except IngestError:
        doc.close()
        raise
    except Exception as exc:
        doc.close()
        raise IngestError(f"{name}: corrupt PDF ({str(exc).splitlines()[0][:120]})") from exc
    return doc


def identify(doc: pymupdf.Document, path: Path, publisher: str | None, code: str | None) -> dict[str, Any]:
    """Publisher, code, edition and title, read from the running headers, metadata and title page;
    ``--publisher`` / ``--code`` override what the document says."""
    meta_title = (doc.metadata or {}).get("title") or ""
    with MUPDF_LOCK:
        headers: Counter[DocId] = Counter()
        first_text = ""
        for i in range(min(doc.page_count, 30)):
            page = doc[i]
            clip = pymupdf.Rect(page.rect.x0, page.rect.y0, page.rect.x1, page.rect.y0 + 0.09 * page.rect.height)
            for found, _, _ in find_designations(page.get_text("text", clip=clip)):
                headers[found] += 1
            if i < 3:
                first_text += page.get_text("text") + "\n"
    found: DocId | None = None
    if headers:
        # The most frequent designation in the headers, preferring one that carries its year.
        per_key = Counter({d.key: 0 for d in headers})
        for d, c in headers.items():
            per_key[d.key] += c
        found = max(headers, key=lambda d: (per_key[d.key], d.edition is not None, headers[d]))
    found = found or parse_designation(meta_title) or parse_designation(first_text)
    if code:
        given = doc_id(publisher, code)
        same = found is not None and found.code == given.code
        found = DocId(given.publisher, given.code, given.edition or (found.edition if same and found else None))
    elif publisher and found:
        found = DocId(doc_id(publisher, found.code).publisher, found.code, found.edition)
    if found is None:
        raise IngestError(f"{path.name}: cannot tell which code this is; pass --code (and --publisher)")
    title = meta_title.strip()
    if not title or len(title) < 8:
        lines = [ln.strip() for ln in first_text.split("\n") if len(ln.strip()) > 12]
        title = next((ln for ln in lines if not parse_designation(ln)), lines[0] if lines else found.display)
    return {
        "key": found.key,
        "publisher": found.publisher,
        "code": found.code,
        "display": found.display,
        "edition": found.edition,
        "title": title[:300],
        "pages": doc.page_count,
    }


def doc_id_of(doc: dict[str, Any]) -> DocId:
    """The DocId of an identified document (the ``doc`` state key)."""
    return DocId(doc["publisher"], doc["code"], doc.get("edition"))


def check_document(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    ctx, system = runtime.context, system_of(runtime)
    path = Path(state["path"])
    started = time.perf_counter()
    pdf = validate_pdf(path, max_file_mb=ctx.max_file_mb, max_pages=ctx.max_pages)
    try:
        doc = identify(pdf, path, state.get("publisher"), state.get("code"))
    finally:
        with MUPDF_LOCK:
            pdf.close()
    doc["sha256"] = sha256_of(path)
    stores = system.stores
    visible = stores.manifest(doc["key"])
    if visible and not state.get("overwrite"):
        if visible.get("sha256") == doc["sha256"]:
            return {
                "doc": doc,
                "doc_key": doc["key"],
                "status": "skipped",
                "started": started,
                "summary": {"reason": "same file already ingested (use --overwrite to replace)"},
                "warnings": [],
            }
        recorded = stores.read_json("documents.json", {}).get(doc["key"], {})
        if recorded.get("sha256") != doc["sha256"]:  # else: an interrupted ingest of this very file
            raise IngestError(
                f"{path.name}: {doc['display']} is already ingested from another file "
                f"({(visible.get('entry') or {}).get('file')}); use --overwrite to replace it"
            )
    return {"doc": doc, "doc_key": doc["key"], "status": "running", "started": started, "warnings": []}
