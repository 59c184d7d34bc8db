"""State schemas and runtime context of the graphs.

Input and output schemas are separate from the internal state, so a compiled graph embeds as a
subgraph without leaking its working keys into a parent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, NotRequired, TypedDict


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
    crop_images: bool = field(
        default=True, metadata={"description": "Crop each figure and table to a PNG image."}
    )
    page_processes: int = field(
        default=2, metadata={"description": "Worker processes for page extraction (1: in the graph's threads)."}
    )
    max_file_mb: int = field(default=200, metadata={"description": "Largest PDF accepted, in MB."})
    max_pages: int = field(default=2000, metadata={"description": "Most pages accepted in one PDF."})
    chunk_chars: int = field(
        default=900, metadata={"description": "Characters per embedded chunk (heading included)."}
    )


class IngestInput(TypedDict):
    path: str
    publisher: NotRequired[str | None]
    code: NotRequired[str | None]
    overwrite: NotRequired[bool]


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
