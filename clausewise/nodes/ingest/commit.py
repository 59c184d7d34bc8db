"""commit: write a document's stores (manifest last, so a killed ingest leaves nothing visible), its
vectors, and its entry in the master list and the kv store."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.keys import OBJECT_KINDS, split_key
from clausewise.kv import replace_document_terms
from clausewise.nodes.ingest.deps import system_of
from clausewise.references import NOT_INGESTED, doc_display, resolve_external
from clausewise.stores import Stores, VectorIndex
from clausewise.tools.query_tasks import section_frequencies


def commit_document(
    stores: Stores, state: dict[str, Any], crop_images: bool, vector_index: VectorIndex
) -> dict[str, Any]:
    """Write every store of one document; the manifest goes last, so a crash leaves nothing visible.
    The vector index gets the document's vectors (an index outside the stores, e.g. Pinecone, has the
    old ones deleted first) before the manifest. All of it holds the document's guard: another ingest of
    the same document commits wholly before or after, so neither removes the generation the other is
    writing (the clean-up at the end removes every generation but the published one)."""
    with stores.document_lock(state["doc"]["key"]):
        return _commit_document(stores, state, crop_images, vector_index)


def _commit_document(
    stores: Stores, state: dict[str, Any], crop_images: bool, vector_index: VectorIndex
) -> dict[str, Any]:
    doc = state["doc"]
    doc_key = doc["key"]
    sections: dict[str, dict[str, Any]] = state["sections"]
    references: dict[str, list[dict[str, Any]]] = state["references"]
    external = resolve_external(references, doc_key, stores)  # a snapshot for the summary; read resolves again
    writer = stores.new_generation(doc_key)
    objects = {}
    page_objects = {(p["page"], o["kind"], o["number"]): o for p in state["page_results"] for o in p["objects"]}
    # numbered expressions are cropped like figures (on a scan the formula is often only a picture)
    page_objects |= {
        (p["page"], "expression", e["number"]): e for p in state["page_results"] for e in p.get("expressions", [])
    }
    for key, s in sections.items():
        if s["kind"] in OBJECT_KINDS:
            raw = page_objects.get((s["pages"][0], s["kind"], s.get("raw_number", s["number"])))
            image = writer.put_image(key, raw["png"]) if crop_images and raw and raw.get("png") else None
            objects[key] = {
                "key": key,
                "kind": s["kind"],
                "number": s["number"],
                "caption": s.get("caption") or s.get("title"),
                "page": s["pages"][0],
                "bbox": s.get("bbox"),
                "image": image,
                "description": state["descriptions"].get(key)
                or (f"{s['title']}: {s.get('formula', '')}".rstrip(": ") if s["kind"] == "expression" else ""),
            }
            s["description"] = objects[key]["description"]
            s["image"] = image
    formulae = {
        k: {
            "key": k,
            "formula": s.get("formula", ""),
            "page": s["pages"][0],
            "section": s.get("parent"),
            "image": s.get("image"),
        }
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
    # the query's IDF, precomputed, and the scan's misread words, as the query reads the sections
    writer.put_json("vocabulary", section_frequencies(list(sections.values()), state.get("readings")))
    writer.put_vectors(state["vectors"])
    writer.put_token_vectors(state.get("token_vectors") or {})
    vector_index.upsert_document(doc_key, state["chunks"], state["vectors"])

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
                ref_entry.setdefault("code", doc_display(target))
                ref_entry.setdefault("publisher", split_key(target)[0])
            ref_entry["referenced_by"] = sorted(set(ref_entry.get("referenced_by", [])) | sources)
        fold_aliases(docs)
        return {k: v for k, v in docs.items() if v.get("status") == "ingested" or v.get("referenced_by")}

    stores.update_documents(update_master)

    kv = stores.update_kv(lambda kv: replace_document_terms(kv, doc_key, state["terms"]))
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


def fold_aliases(docs: dict[str, Any]) -> None:
    """Citations of a document not ingested under the key they name ("CEN_EN1990") but ingested under
    another publisher ("BSI_EN1990", --publisher BSI) are listed on the ingested entry, which is the one
    they resolve to (references.Resolver.document); the referenced-only entry then goes."""
    ingested: dict[str, list[str]] = {}
    for key, entry in docs.items():
        if entry.get("status") == "ingested":
            ingested.setdefault(split_key(key)[1], []).append(key)
    for key, entry in docs.items():
        same = ingested.get(split_key(key)[1], [])
        if entry.get("status") != "ingested" and len(same) == 1 and entry.get("referenced_by"):
            target = docs[same[0]]
            target["referenced_by"] = sorted(set(target.get("referenced_by", [])) | set(entry["referenced_by"]))
            entry["referenced_by"] = []


def summarise(
    state: dict[str, Any], objects: dict[str, Any], precedence: dict[str, Any], kv: dict[str, Any], doc_key: str
) -> dict[str, Any]:
    sections = state["sections"]
    refs = [r for rs in state["references"].values() for r in rs]
    internal = [r for r in refs if r["document"] == doc_key and r["kind"] != "neighbour"]
    kinds = Counter(s["kind"] for s in sections.values())
    return {
        "sections": sum(kinds.get(k, 0) for k in ("clause", "annex", "front", "contents", "cover")),
        "clauses": kinds.get("clause", 0),
        "annexes": kinds.get("annex", 0),
        "tables": kinds.get("table", 0),
        "figures": kinds.get("figure", 0),
        "images": sum(1 for o in objects.values() if o.get("image") and o["kind"] != "expression"),
        "expression_images": sum(1 for o in objects.values() if o.get("image") and o["kind"] == "expression"),
        "expressions": kinds.get("expression", 0),
        "references": len(refs),
        "references_resolved": sum(1 for r in internal if r["resolved"]),
        "references_internal": len(internal),
        "references_unresolved": sum(1 for r in refs if not r["resolved"]),
        # of those, into documents not in the store at commit (they resolve once those are ingested)
        "references_not_ingested": sum(1 for r in refs if not r["resolved"] and r.get("reason") == NOT_INGESTED),
        "precedence_rules": sum(len(v) for v in precedence.values()),
        "kv_entries": sum(1 for t in state["terms"] if t["source"].startswith(doc_key + "_")),
        "chunks": len(state["chunks"]),
        "pages": len(state["page_results"]),
        "pages_without_text": [p["page"] for p in state["page_results"] if not p["has_text"] and p["has_image"]],
    }


def commit(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    ctx, system = runtime.context, system_of(runtime)
    started = time.perf_counter()
    counts = commit_document(system.stores, dict(state), ctx.crop_images, system.vector_index)
    pages = state["page_results"]
    counts["timing"] = {
        "page_workers_s": round(sum(p["seconds"] for p in pages), 2),
        "layout_model_s": round(sum(p["layout_s"] for p in pages), 2),
        "layout_pages": sum(1 for p in pages if p["layout_s"]),
        "embed_s": state.get("embed_s"),
        "commit_s": round(time.perf_counter() - started, 2),
    }
    counts["seconds"] = round(time.perf_counter() - state["started"], 2)
    return {"status": "ingested", "summary": counts}
