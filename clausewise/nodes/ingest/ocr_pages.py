"""ocr-pages: read the pages check-document planned for OCR (an image and no text layer; with ``--ocr``
also a text layer that is garbage) with Tesseract, two pages at a time in worker processes, into an
OCR'd copy of the file that the page workers read instead; identify the document from that copy when
its identity is printed on pages that had no text. The original file stays the document: its name
and its sha256 are what the stores record.

Each page done is reported on the graph's custom stream (``{"ocr_page_done": page}``), so a progress
bar advances while the pages are read."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import pymupdf
from langgraph.runtime import Runtime

from clausewise import ocr
from clausewise.graph.state import IngestContext, IngestState
from clausewise.nodes.ingest.check_document import IngestError, identified, identify
from clausewise.nodes.ingest.deps import system_of
from clausewise.pdf import MUPDF_LOCK, close_pdf


def ocr_pages(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    plan = state.get("ocr_plan") or {}
    pages = sorted(set(plan.get("scanned", [])) | set(plan.get("garbage", [])))
    if state.get("status") != "running" or not pages:
        return {}
    ctx, system = runtime.context, system_of(runtime)
    path = Path(state["path"])
    settings = system.settings
    try:
        tessdata = ocr.prepared_tessdata(settings.tessdata_prefix, settings.clausewise_cache_dir)
    except ocr.OcrUnavailable as exc:
        raise IngestError(f"{path.name}: {exc}") from exc
    garbage = set(plan.get("garbage", []))

    def done(page: ocr.PageOcr) -> None:
        runtime.stream_writer({"ocr_page_done": page.pno + 1})

    started = time.perf_counter()
    results = ocr.run_ocr(
        str(path), pages, tessdata, replace=garbage, processes=max(1, ctx.page_processes), on_page=done
    )
    read = {pno: (r.data, r.replace) for pno, r in results.items() if r.data is not None}
    scratch = ocr.scratch_dir()
    copy = scratch / "ocr.pdf"
    try:
        ocr.write_copy(str(path), read, copy)
        update = _after_ocr(state, system, path, copy)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    if update.get("status", state["status"]) != "running":  # the same bytes were ingested: nothing reads it
        shutil.rmtree(scratch, ignore_errors=True)
    else:
        update["read_path"] = str(copy)
    failed = sorted(p + 1 for p, r in results.items() if r.data is None)
    notes = [
        f"{len(read)} page(s) read by OCR (Tesseract, {ocr.OCR_MIN_DPI}-{ocr.OCR_DPI} dpi, "
        f"{time.perf_counter() - started:.0f} s): {ocr.page_ranges(p + 1 for p in read)}"
    ]
    if failed:
        first = results[failed[0] - 1].error
        notes.append(f"OCR failed on {len(failed)} page(s): {ocr.page_ranges(failed)} ({first})")
    update["warnings"] = list(state.get("warnings") or []) + list(update.get("warnings") or []) + notes
    return update


def _after_ocr(state: IngestState, system: Any, path: Path, copy: Path) -> dict[str, Any]:
    """Refuse a copy in which OCR found no text; identify the document from the copy when check-document
    left that to OCR."""
    with MUPDF_LOCK:
        doc = pymupdf.open(copy)
    try:
        with MUPDF_LOCK:
            text = any(doc[i].get_text("text").strip() for i in range(doc.page_count))
        if not text:
            raise IngestError(f"{path.name}: no text found even after OCR (blank or unreadable scan)")
        if state["doc"].get("key"):
            return {}
        found = identify(doc, path, state.get("publisher"), state.get("code"))
    finally:
        with MUPDF_LOCK:
            doc.close()
    found["sha256"] = state["doc"]["sha256"]
    update = identified(found, state, system.stores, path, state.get("started") or time.perf_counter())
    update.pop("started", None)
    return update


def release(state: dict[str, Any]) -> None:
    """Close and delete the OCR'd copy (once every page is read, or when the run failed)."""
    read_path = state.get("read_path")
    if not read_path:
        return
    close_pdf(read_path)
    folder = Path(read_path).parent
    if folder.name.startswith(ocr.SCRATCH_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)
