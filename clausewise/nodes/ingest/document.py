"""Ingestion's two ends: check and identify the file before anything is written, and commit a
document's stores (manifest last) once every page and enrichment step is done."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pymupdf

from clausewise.keys import DocId, doc_id, find_designations, parse_designation
from clausewise.nodes.ingest.pages import MUPDF_LOCK
from clausewise.stores.base import Stores
from clausewise.tools.tasks import merge_terms, synonym_terms

_open_docs: dict[str, pymupdf.Document] = {}
_open_lock = threading.Lock()


class IngestError(ValueError):
    """A file that cannot be ingested; the message is one clear line for the user."""


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


def commit_document(
    stores: Stores, state: dict[str, Any], crop_images: bool, remote_index: Any = None
) -> dict[str, Any]:
    """Write every store of one document; the manifest goes last, so a crash leaves nothing visible.
    ``remote_index`` (Pinecone) gets the document's vectors, old ones deleted first, before the manifest."""
    doc = state["doc"]
    doc_key = doc["key"]
    sections: dict[str, dict[str, Any]] = state["sections"]
    references: dict[str, list[dict[str, Any]]] = state["references"]
    ingested = {k for k, v in stores.documents().items() if v.get("status") == "ingested"} | {doc_key}
    external: dict[str, set[str]] = {}
    for src, refs in references.items():
        for ref in refs:
            if ref["document"] != doc_key:
                external.setdefault(ref["document"], set()).add(src)
                target_doc_visible = ref["document"] in ingested
                ref["resolved"] = target_doc_visible and (
                    ref["target"] == ref["document"] or stores.lookup("sections", ref["target"]) is not None
                )
                if not target_doc_visible:
                    ref["reason"] = "document not ingested"
    writer = stores.new_generation(doc_key)
    objects = {}
    page_objects = {(p["page"], o["kind"], o["number"]): o for p in state["page_results"] for o in p["objects"]}
    for key, s in sections.items():
        if s["kind"] in ("table", "figure"):
            raw = page_objects.get((s["pages"][0], s["kind"], s.get("raw_number", s["number"])))
            image = writer.put_image(key, raw["png"]) if crop_images and raw and raw.get("png") else None
            objects[key] = {
                "key": key,
                "kind": s["kind"],
                "number": s["number"],
                "caption": s.get("caption"),
                "page": s["pages"][0],
                "bbox": s.get("bbox"),
                "image": image,
                "description": state["descriptions"].get(key, ""),
            }
            s["description"] = objects[key]["description"]
            s["image"] = image
    formulae = {
        k: {"key": k, "formula": s.get("formula", ""), "page": s["pages"][0], "section": s.get("parent")}
        for k, s in sections.items()
        if s["kind"] == "expression"
    }
    precedence: dict[str, list[dict[str, Any]]] = {}
    for rule in state["precedence"]:
        precedence.setdefault(rule["key"], []).append(rule)
    writer.put_json("sections", sections)
    writer.put_json("references", references)
    writer.put_json("precedence", precedence)
    writer.put_json("formulae", formulae)
    writer.put_json("objects", objects)
    writer.put_json("chunks", {"chunks": state["chunks"]})
    writer.put_vectors(state["vectors"])
    if remote_index is not None:
        remote_index.upsert_document(doc_key, state["chunks"], state["vectors"])

    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def update_master(docs: dict[str, Any]) -> dict[str, Any]:
        entry = docs.get(doc_key, {})
        entry.update(
            key=doc_key,
            title=doc["title"],
            publisher=doc["publisher"],
            code=doc["display"],
            edition=doc["edition"],
            status="ingested",
            pages=doc["pages"],
            sha256=doc["sha256"],
            file=Path(state["path"]).name,
            ingested_at=now,
        )
        entry.setdefault("referenced_by", [])
        docs[doc_key] = entry
        for other in list(docs.values()):  # drop this document's old references to others
            if other["key"] != doc_key:
                other["referenced_by"] = [r for r in other.get("referenced_by", []) if not r.startswith(doc_key + "_")]
        for target, sources in external.items():
            ref_entry = docs.setdefault(target, {"key": target, "status": "referenced-only", "referenced_by": []})
            if ref_entry.get("status") != "ingested":
                ref_entry.setdefault("title", None)
                ref_entry.setdefault("code", _display(target))
                ref_entry.setdefault("publisher", target.split("_", 1)[0])
            ref_entry["referenced_by"] = sorted(set(ref_entry.get("referenced_by", [])) | sources)
        return {k: v for k, v in docs.items() if v.get("status") == "ingested" or v.get("referenced_by")}

    stores.update_documents(update_master)

    def update_kv(kv: dict[str, Any]) -> dict[str, Any]:
        from clausewise.stores.base import remove_kv_sources

        kv = remove_kv_sources(kv, doc_key)
        if not any(v.get("source") == "builtin_thesaurus" for e in kv.values() for v in e.get("equivalents", [])):
            kv = merge_terms(kv, synonym_terms())
        return merge_terms(kv, state["terms"])

    kv = stores.update_kv(update_kv)
    counts = summarise(state, objects, precedence, kv, doc_key)
    entry = {
        "title": doc["title"],
        "edition": doc["edition"],
        "pages": doc["pages"],
        "file": Path(state["path"]).name,
        "ingested_at": now,
    }
    writer.publish({"doc_key": doc_key, "sha256": doc["sha256"], "counts": counts, "committed_at": now, "entry": entry})
    stores.garbage_collect(doc_key)
    return counts


def _display(doc_key: str) -> str:
    return DocId(*doc_key.split("_", 1)).display


def summarise(
    state: dict[str, Any], objects: dict[str, Any], precedence: dict[str, Any], kv: dict[str, Any], doc_key: str
) -> dict[str, Any]:
    sections = state["sections"]
    refs = [r for rs in state["references"].values() for r in rs]
    internal = [r for r in refs if r["document"] == doc_key and r["kind"] != "neighbour"]
    kinds = Counter(s["kind"] for s in sections.values())
    return {
        "sections": kinds.get("clause", 0) + kinds.get("annex", 0) + kinds.get("front", 0) + kinds.get("contents", 0),
        "clauses": kinds.get("clause", 0),
        "annexes": kinds.get("annex", 0),
        "tables": kinds.get("table", 0),
        "figures": kinds.get("figure", 0),
        "images": sum(1 for o in objects.values() if o.get("image")),
        "expressions": kinds.get("expression", 0),
        "references": len(refs),
        "references_resolved": sum(1 for r in internal if r["resolved"]),
        "references_internal": len(internal),
        "references_unresolved": sum(1 for r in refs if not r["resolved"]),
        "precedence_rules": sum(len(v) for v in precedence.values()),
        "kv_entries": sum(1 for t in state["terms"] if t["source"].startswith(doc_key + "_")),
        "chunks": len(state["chunks"]),
        "pages": len(state["page_results"]),
        "pages_without_text": [p["page"] for p in state["page_results"] if not p["has_text"] and p["has_image"]],
    }
