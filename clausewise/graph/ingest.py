"""The ingestion graph: check-document -> ocr-pages (pages without a text layer) -> one Send per page
(extract-page) -> merge-sections ->
references, precedence, terms and describe-objects in parallel -> embed -> commit (manifest last).
Each node is the function of the same name in ``clausewise.nodes.ingest.<name>``; this module only
wires them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Send

from clausewise.graph.state import DepsBinder, IngestContext, IngestInput, IngestOutput, IngestState, PageTask
from clausewise.nodes.ingest import (
    check_document,
    commit,
    describe_objects,
    embed,
    extract_page,
    merge_sections,
    ocr_pages,
    precedence,
    references,
    terms,
)
from clausewise.stores import Stores, VectorIndex
from clausewise.system import System
from clausewise.tools.ingest_tasks import IngestTasks
from clausewise.tools.models import Embedder

IngestGraph = CompiledStateGraph[IngestState, IngestContext, IngestInput, IngestOutput]


def fan_out_pages(state: IngestState, runtime: Runtime[IngestContext]) -> list[Send] | str:
    """One Send per page (reading the OCR'd copy when there is one); nothing to do for a skipped document."""
    if state["status"] == "skipped":
        return END
    if state["status"] != "running":
        raise ValueError(f"unexpected ingest status {state['status']!r}")
    ctx = runtime.context or IngestContext()
    path = state.get("read_path") or state["path"]
    return [
        Send("extract_page", PageTask(path=path, pno=i, crop=ctx.crop_images, processes=ctx.page_processes))
        for i in range(state["doc"]["pages"])
    ]


def after_check(state: IngestState) -> str:
    return END if state["status"] == "skipped" else "ocr_pages"


def _releasing_ocr_copy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """merge-sections, after which nothing reads the OCR'd copy: close and delete it first."""

    def run(state: IngestState, runtime: Runtime[IngestContext]) -> Any:
        ocr_pages.release(dict(state))
        return fn(state, runtime)

    run.__name__ = run.__qualname__ = getattr(fn, "__name__", "node")
    run.__doc__ = fn.__doc__
    return run


ENRICHERS = {
    "references": references.references,
    "precedence": precedence.precedence,
    "terms": terms.terms,
    "describe_objects": describe_objects.describe_objects,
}


def build_ingest_graph(
    system: System | None = None,
    checkpointer: BaseCheckpointSaver | None = None,
    *,
    stores: Stores | None = None,
    embedder: Embedder | None = None,
    tasks: IngestTasks | None = None,
    vector_index: VectorIndex | None = None,
) -> IngestGraph:
    """Compile the ingestion graph over ``system`` (or one made of the parts given). With neither, each
    run opens the store its context names (Studio), on first use."""
    if system is None and stores is not None:
        system = System(stores=stores, embedder=embedder, ingest_tasks=tasks, vector_index=vector_index)
    bind = DepsBinder(system, lambda running: running, IngestContext)  # ingestion nodes use the system itself
    graph = StateGraph(IngestState, context_schema=IngestContext, input_schema=IngestInput, output_schema=IngestOutput)
    graph.add_node("check_document", bind(check_document.check_document))
    graph.add_node("ocr_pages", bind(ocr_pages.ocr_pages))
    graph.add_node("extract_page", extract_page.extract_page, input_schema=PageTask)  # a Send's payload
    graph.add_node("merge_sections", bind(_releasing_ocr_copy(merge_sections.merge_sections)))
    for name, fn in ENRICHERS.items():
        graph.add_node(name, bind(fn))
    graph.add_node("embed", bind(embed.embed))
    graph.add_node("commit", bind(commit.commit))
    graph.add_edge(START, "check_document")
    graph.add_conditional_edges("check_document", after_check, ["ocr_pages", END])
    graph.add_conditional_edges("ocr_pages", fan_out_pages, ["extract_page", END])
    graph.add_edge("extract_page", "merge_sections")
    for name in ENRICHERS:
        graph.add_edge("merge_sections", name)
    graph.add_edge(list(ENRICHERS), "embed")
    graph.add_edge("embed", "commit")
    graph.add_edge("commit", END)
    return graph.compile(checkpointer=checkpointer, name="ingest")


def run_ingest(
    system: System,
    path: Path,
    *,
    publisher: str | None = None,
    code: str | None = None,
    overwrite: bool = False,
    ocr: bool = False,
    on_progress: Callable[..., None] | None = None,
    graph: IngestGraph | None = None,
    context: IngestContext | None = None,
) -> dict[str, Any]:
    """Run the ingestion graph on one file (the CLI and the server both ingest through this).
    ``on_progress`` hears ``pages=N, ocr_pages=M, doc_key=...`` once the file is checked (``doc_key``
    None when OCR has to read it first; then ``doc_key=...`` alone after OCR), ``ocr_page_done=True``
    per page OCR'd, ``page_done=True`` per page and ``step="embed"`` / ``step="commit"``. ``ocr``: also
    OCR the pages whose text layer is garbage."""
    graph = graph or build_ingest_graph(system)
    inputs: IngestInput = {"path": str(path), "publisher": publisher, "code": code, "overwrite": overwrite, "ocr": ocr}
    result: dict[str, Any] = {}
    copy: dict[str, Any] = {}  # the OCR'd copy, if any (not in the output)
    progress = on_progress or (lambda **_: None)
    try:
        parts = graph.stream(
            inputs,
            context=context or IngestContext(**system.ingest_limits()),
            stream_mode=["updates", "values", "custom"],
        )
        for mode, chunk in cast(Iterator[tuple[str, Any]], parts):  # (mode, chunk) with a list of modes
            if mode == "values":
                result = chunk
                continue
            if mode == "custom":
                if isinstance(chunk, dict) and chunk.get("ocr_page_done"):
                    progress(ocr_page_done=True)
                continue
            for node, update in chunk.items():
                if node == "ocr_pages" and update and update.get("read_path"):
                    copy["read_path"] = update["read_path"]
                if on_progress is None:
                    continue
                if node == "check_document" and update and update.get("doc"):
                    plan = update.get("ocr_plan") or {}
                    planned = len(set(plan.get("scanned", [])) | set(plan.get("garbage", [])))
                    on_progress(pages=update["doc"]["pages"], ocr_pages=planned, doc_key=update.get("doc_key"))
                elif node == "ocr_pages" and update and update.get("doc_key"):
                    on_progress(doc_key=update["doc_key"])
                elif node == "extract_page":
                    on_progress(page_done=True)
                elif node in ("embed", "commit"):
                    on_progress(step=node)
    finally:
        ocr_pages.release(copy)  # a run that failed after OCR leaves no copy behind
    return result


def studio_ingest_graph() -> IngestGraph:
    """Entry point for langgraph.json: no checkpointer (the server brings its own), nothing built yet."""
    return build_ingest_graph()
