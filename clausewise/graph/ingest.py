"""The ingestion graph: check -> one Send per page -> merge sections -> parallel enrichment
(references, precedence, kv terms, descriptions) -> embed -> commit (manifest last)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from clausewise.graph.state import IngestContext, IngestInput, IngestOutput, IngestState, PageTask
from clausewise.keys import DocId
from clausewise.nodes.ingest import enrich
from clausewise.nodes.ingest.document import (
    IngestError,
    close_pdf,
    commit_document,
    identify,
    sha256_of,
    validate_pdf,
)
from clausewise.nodes.ingest.pages import MUPDF_LOCK, extract_page_pooled
from clausewise.nodes.ingest.sections import build_sections
from clausewise.settings import Settings
from clausewise.stores import Stores, open_stores
from clausewise.stores.index import check_embedding_model
from clausewise.tools.models import Embedder, build_embedder, build_ingest_tasks
from clausewise.tools.tasks import IngestTasks


@dataclass
class IngestDeps:
    """What the nodes use; built lazily from settings and the run's context when not given."""

    stores: Stores | None = None
    embedder: Embedder | None = None
    tasks: IngestTasks | None = None
    remote_index: Any = None  # a vector index outside the stores (Pinecone); None: vectors live in the stores
    _by_dir: dict[str, Stores] = field(default_factory=dict)

    def stores_for(self, context: IngestContext) -> Stores:
        if self.stores is not None:
            return self.stores
        if context.store_dir not in self._by_dir:
            self._by_dir[context.store_dir] = open_stores(Settings(), Path(context.store_dir))
        return self._by_dir[context.store_dir]

    def get_embedder(self) -> Embedder:
        if self.embedder is None:
            self.embedder = build_embedder(Settings())
        return self.embedder

    def get_tasks(self) -> IngestTasks:
        if self.tasks is None:
            self.tasks = build_ingest_tasks(Settings())
        return self.tasks


class IngestNodes:
    def __init__(self, deps: IngestDeps):
        self.deps = deps

    def check_document(self, state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
        """Validate and identify the file; skip it if the same bytes are already ingested."""
        ctx = runtime.context or IngestContext()
        path = Path(state["path"])
        started = time.perf_counter()
        pdf = validate_pdf(path, max_file_mb=ctx.max_file_mb, max_pages=ctx.max_pages)
        try:
            doc = identify(pdf, path, state.get("publisher"), state.get("code"))
        finally:
            with MUPDF_LOCK:
                pdf.close()
        doc["sha256"] = sha256_of(path)
        stores = self.deps.stores_for(ctx)
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

    @staticmethod
    def fan_out_pages(state: IngestState, runtime: Runtime[IngestContext]) -> list[Send] | Literal["__end__"]:
        """One Send per page; nothing to do for a skipped document."""
        if state["status"] == "skipped":
            return END
        if state["status"] != "running":
            raise ValueError(f"unexpected ingest status {state['status']!r}")
        ctx = runtime.context or IngestContext()
        return [
            Send(
                "extract_page", PageTask(path=state["path"], pno=i, crop=ctx.crop_images, processes=ctx.page_processes)
            )
            for i in range(state["doc"]["pages"])
        ]

    @staticmethod
    def extract_page(task: PageTask) -> dict[str, Any]:
        page = extract_page_pooled(task["path"], task["pno"], crop=task["crop"], processes=task["processes"])
        return {"page_results": [page]}

    @staticmethod
    def merge_sections(state: IngestState) -> dict[str, Any]:
        close_pdf(state["path"])
        doc = state["doc"]
        pages = state["page_results"]
        if not any(p["has_text"] for p in pages):
            raise IngestError(f"{Path(state['path']).name}: no page has a text layer; run OCR on the scan first")
        sections = build_sections(DocId(doc["publisher"], doc["code"], doc["edition"]), doc["title"], pages)
        warnings = list(state.get("warnings", []))
        blank = [p["page"] for p in pages if not p["has_text"] and p["has_image"]]
        if blank:
            warnings.append(
                f"{len(blank)} page(s) have an image but no text layer (not searchable): "
                f"{', '.join(map(str, blank[:20]))}{' ...' if len(blank) > 20 else ''}"
            )
        if not any(s["kind"] == "clause" for s in sections.values()):
            warnings.append("no numbered clauses found; the document is indexed as front matter only")
        return {"sections": enrich.with_neighbours(sections), "warnings": warnings}

    def find_references(self, state: IngestState) -> dict[str, Any]:
        return {"references": enrich.find_references(self.deps.get_tasks(), dict(state))}

    def find_precedence(self, state: IngestState) -> dict[str, Any]:
        return {"precedence": enrich.find_precedence(self.deps.get_tasks(), dict(state))}

    def extract_terms(self, state: IngestState) -> dict[str, Any]:
        return {"terms": enrich.extract_terms(self.deps.get_tasks(), dict(state))}

    def describe_objects(self, state: IngestState) -> dict[str, Any]:
        return {"descriptions": enrich.describe_objects(self.deps.get_tasks(), dict(state))}

    def embed(self, state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
        ctx = runtime.context or IngestContext()
        embedder = self.deps.get_embedder()
        check_embedding_model(self.deps.stores_for(ctx), embedder.name, embedder.dim)
        chunks = enrich.make_chunks(state["sections"], state["descriptions"], ctx.chunk_chars)
        started = time.perf_counter()
        vectors = embedder.embed_documents([c["text"] for c in chunks])
        return {"chunks": chunks, "vectors": vectors, "embed_s": round(time.perf_counter() - started, 2)}

    def commit(self, state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
        ctx = runtime.context or IngestContext()
        started = time.perf_counter()
        counts = commit_document(self.deps.stores_for(ctx), dict(state), ctx.crop_images, self.deps.remote_index)
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


def build_ingest_graph(
    stores: Stores | None = None,
    embedder: Embedder | None = None,
    tasks: IngestTasks | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    remote_index: Any = None,
) -> CompiledStateGraph:
    """Compile the ingestion graph; anything not given is built from settings on first use.
    ``remote_index`` (e.g. a PineconeVectorIndex) also receives each document's vectors."""
    nodes = IngestNodes(IngestDeps(stores, embedder, tasks, remote_index))
    graph = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput, output_schema=IngestOutput)
    graph.add_node("check_document", nodes.check_document)
    graph.add_node("extract_page", nodes.extract_page)
    graph.add_node("merge_sections", nodes.merge_sections)
    enrichers = {
        "find_references": nodes.find_references,
        "find_precedence": nodes.find_precedence,
        "extract_terms": nodes.extract_terms,
        "describe_objects": nodes.describe_objects,
    }
    for name, fn in enrichers.items():
        graph.add_node(name, fn)
    graph.add_node("embed", nodes.embed)
    graph.add_node("commit", nodes.commit)
    graph.add_edge(START, "check_document")
    graph.add_conditional_edges("check_document", nodes.fan_out_pages, ["extract_page", END])
    graph.add_edge("extract_page", "merge_sections")
    for name in enrichers:
        graph.add_edge("merge_sections", name)
    graph.add_edge(list(enrichers), "embed")
    graph.add_edge("embed", "commit")
    graph.add_edge("commit", END)
    return graph.compile(checkpointer=checkpointer, name="ingest")


def studio_ingest_graph() -> CompiledStateGraph:
    """Entry point for langgraph.json: no checkpointer (the server brings its own), nothing built yet."""
    return build_ingest_graph()
