"""State schemas and runtime context of the graphs.

Input and output schemas are separate from the internal state, so a compiled graph embeds as a
subgraph without leaking its working keys into a parent.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import (
    Annotated,
    Any,
    NotRequired,  # pydantic (the HTTP API) reads these on 3.11
)

from langgraph.runtime import Runtime
from typing_extensions import TypedDict


def merge_pages(left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Page results arrive from Send workers in any order: merge, keep one per page, sort by page."""
    by_page = {p["page"]: p for p in (left or [])}
    by_page.update({p["page"]: p for p in (right or [])})
    return [by_page[k] for k in sorted(by_page)]


@dataclass
class IngestContext:
    """Runtime settings of the ingestion graph (Studio shows these as its configuration panel)."""

    store_dir: str = field(
        default="./clausewise-data", metadata={"description": "Local store directory to ingest into."}
    )
    crop_images: bool = field(default=True, metadata={"description": "Crop each figure and table to a PNG image."})
    page_processes: int = field(
        default=2, metadata={"description": "Worker processes for page extraction (1: in the graph's threads)."}
    )
    max_file_mb: int = field(default=200, metadata={"description": "Largest PDF accepted, in MB."})
    max_pages: int = field(default=2000, metadata={"description": "Most pages accepted in one PDF."})
    chunk_chars: int = field(default=500, metadata={"description": "Characters per embedded chunk (heading included)."})
    deps: Any = field(
        default=None,
        repr=False,
        metadata={"description": "Run dependencies (stores, embedder, reasoner); set by the graph's wiring."},
    )


class IngestInput(TypedDict):
    path: str
    publisher: NotRequired[str | None]
    code: NotRequired[str | None]
    overwrite: NotRequired[bool]
    ocr: NotRequired[bool]  # also OCR pages whose text layer is garbage (image-only pages always are)


class IngestOutput(TypedDict):
    doc_key: str
    status: str
    summary: dict[str, Any]
    warnings: list[str]


class IngestState(TypedDict):
    path: str
    publisher: NotRequired[str | None]
    code: NotRequired[str | None]
    overwrite: NotRequired[bool]
    ocr: NotRequired[bool]
    ocr_plan: NotRequired[dict[str, list[int]]]  # 0-based pages to OCR: "scanned" (no text), "garbage"
    read_path: NotRequired[str]  # the OCR'd copy the page workers read (the document is still ``path``)
    doc: NotRequired[dict[str, Any]]
    doc_key: NotRequired[str]
    status: NotRequired[str]
    page_results: Annotated[list[dict[str, Any]], merge_pages]
    sections: NotRequired[dict[str, dict[str, Any]]]
    references: NotRequired[dict[str, list[dict[str, Any]]]]
    precedence: NotRequired[list[dict[str, Any]]]
    terms: NotRequired[list[dict[str, Any]]]
    descriptions: NotRequired[dict[str, str]]
    chunks: NotRequired[list[dict[str, Any]]]
    vectors: NotRequired[Any]
    token_vectors: NotRequired[dict[str, Any]]  # section key -> (digest, float16 token vectors)
    readings: NotRequired[dict[str, str]]  # a scan's misread words -> the words they stand for
    embed_s: NotRequired[float]
    summary: NotRequired[dict[str, Any]]
    warnings: NotRequired[list[str]]
    started: NotRequired[float]


class PageTask(TypedDict):
    """What one Send worker gets: the file and one 0-based page index."""

    path: str
    pno: int
    crop: bool
    processes: int


# ------------------------------------------------------------------ query graph
RESET = "__reset__"  # a key in a merge_keyed update that starts the mapping afresh


def merge_keyed(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Union of keyed results from parallel branches (later values win per key); a mapping holding
    ``RESET`` starts the turn afresh (the checkpointer keeps state between turns)."""
    if right is None:
        return dict(left or {})
    if RESET in right:
        return {k: v for k, v in right.items() if k != RESET}
    merged = dict(left or {})
    merged.update(right)
    return merged


def add_turns(left: list[dict[str, Any]] | None, right: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Conversation memory: turns appended in order, the last 20 kept."""
    return ((left or []) + (right or []))[-20:]


@dataclass
class QueryContext:
    """Runtime settings of the query graph (Studio's configuration panel)."""

    store_dir: str = field(default="./clausewise-data", metadata={"description": "Store directory to search."})
    vector_batch: int = field(default=10, metadata={"description": "Sections per vector batch."})
    max_widenings: int = field(default=6, metadata={"description": "Most extra vector batches per question."})
    widen_tail: int = field(
        default=3,
        metadata={"description": "Widen while any of this many least similar sections of a batch bears on it."},
    )
    max_hops: int = field(default=3, metadata={"description": "Reference order followed (3: refs of refs of refs)."})
    max_keyword_sections: int = field(
        default=150, metadata={"description": "Most sections the keyword step takes (best BM25 first)."}
    )
    max_question_chars: int = field(default=2000, metadata={"description": "Longer questions are cut here."})
    max_images: int = field(default=12, metadata={"description": "Most figure/table images in one answer."})
    max_model_calls: int = field(
        default=25,
        metadata={"description": "Most model calls per question; relevance batches past it are read offline."},
    )
    deps: Any = field(
        default=None,
        repr=False,
        metadata={"description": "Run dependencies (stores, indexes, reasoner); set by the graph's wiring."},
    )


class QueryInput(TypedDict):
    question: str


class QueryOutput(TypedDict):
    question: str
    answer_markdown: str
    passages: list[dict[str, Any]]
    images: list[dict[str, Any]]
    precedence: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]
    unfollowed_references: list[dict[str, Any]]
    unresolved_references: list[dict[str, Any]]
    trace: dict[str, Any]


class QueryState(TypedDict):
    question: str
    history: Annotated[list[dict[str, Any]], add_turns]
    route: NotRequired[str]
    reply: NotRequired[str]
    search_question: NotRequired[str]
    sub_questions: NotRequired[list[str]]
    named: NotRequired[dict[str, str]]  # sections the question names by number -> paragraph named or "*"
    notes: NotRequired[list[str]]
    candidates: Annotated[dict[str, dict[str, Any]], merge_keyed]
    extracts: Annotated[dict[str, list[dict[str, Any]]], merge_keyed]
    vector_offset: NotRequired[int]
    widenings: NotRequired[int]
    last_vector_batch: NotRequired[list[str]]
    followed: Annotated[dict[str, int], merge_keyed]
    hops: NotRequired[int]
    unfollowed_references: NotRequired[list[dict[str, Any]]]
    unresolved_references: NotRequired[list[dict[str, Any]]]
    rejected_references: NotRequired[list[dict[str, Any]]]
    passages: NotRequired[list[dict[str, Any]]]
    images: NotRequired[list[dict[str, Any]]]
    precedence: NotRequired[list[dict[str, Any]]]
    conflicts: NotRequired[list[dict[str, Any]]]
    answer_markdown: NotRequired[str]
    trace: NotRequired[dict[str, Any]]
    started: NotRequired[float]
    usage_before: NotRequired[dict[str, Any]]
    model_calls_left: NotRequired[int]


class DepsBinder:
    """Gives nodes ``fn(state, runtime)`` the run's dependencies in ``runtime.context.deps``: made by
    ``make(system)`` from the system a graph was built over, or (Studio: no system) from a system
    opened on the store directory the run's context names, once per directory. A caller's context
    is kept; none means the context's defaults. Each node runs inside ``scope()`` (the query graph's:
    one state of the store per node, ``pinned_reads``)."""

    def __init__(
        self,
        system: Any,
        make: Callable[[Any], Any],
        context_type: Callable[[], Any],
        scope: Callable[[], AbstractContextManager[Any]] = nullcontext,
    ) -> None:
        self.system, self.make, self.context_type, self.scope = system, make, context_type, scope
        self._made: dict[str, Any] = {}
        self._lock = threading.Lock()

    def deps_for(self, ctx: Any) -> Any:
        key = "system" if self.system is not None else ctx.store_dir
        with self._lock:
            if key not in self._made:
                from clausewise.system import System  # the system is wiring, not state: import on use

                self._made[key] = self.make(self.system or System(store_dir=ctx.store_dir))
            return self._made[key]

    def __call__(self, fn: Callable[..., Any]) -> Any:
        def run(state: Any, runtime: Runtime[Any]) -> Any:
            ctx = runtime.context if runtime.context is not None else self.context_type()
            if ctx.deps is None:
                ctx = replace(ctx, deps=self.deps_for(ctx))
            with self.scope():
                return fn(state, runtime.override(context=ctx))

        run.__name__ = run.__qualname__ = getattr(fn, "__name__", "node")
        run.__doc__ = fn.__doc__
        return run


class ExtractTask(TypedDict):
    """One relevance-extraction call: at most 10 sections."""

    question: str
    keys: list[str]
    focus: dict[str, str]
    offline: bool  # past the question's model-call budget: the offline reasoner reads this batch
