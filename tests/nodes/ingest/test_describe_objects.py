"""describe-objects (nodes/ingest/describe_objects.py): each table and figure described from its
caption, rows and the sentences citing it; the offline reasoner runs inline on the caller's thread."""

from __future__ import annotations

import tempfile
import threading
from types import SimpleNamespace
from typing import Any

import pymupdf
from helpers import ingest_runtime

from clausewise.nodes.ingest.describe_objects import describe_objects
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs
from clausewise.system import System
from clausewise.tools.ingest_tasks import OfflineTasks

DOC = "CEN_EN1991-9-9"
TABLE: dict[str, Any] = {
    "key": f"{DOC}_table_5.1",
    "kind": "table",
    "number": "5.1",
    "caption": "Table 5.1 - Exposure coefficient Ce for different sites",
    "text": "Table 5.1 - Exposure coefficient Ce for different sites\n| Site | Ce |\n| sheltered | 0,8 |",
    "rows": [["Site", "Ce"], ["sheltered", "0,8"]],
    "pages": [6],
}


def test_descriptions_use_caption_rows_and_citing_text(sample_store: SimpleNamespace) -> None:
    runtime = ingest_runtime(System(stores=Stores(LocalBlobs(sample_store.dir)), ingest_tasks=OfflineTasks()))
    descriptions = describe_objects({"sections": sample_store.sections}, runtime)["descriptions"]  # type: ignore[typeddict-item]
    t51 = descriptions[f"{DOC}_table_5.1"]
    assert t51.startswith("Table 5.1 \u2014 Exposure coefficient Ce for different sites")
    assert "columns: Topography, Ce" in t51
    assert "Cited:" in t51
    assert set(descriptions) == {f"{DOC}_table_4.1", f"{DOC}_table_5.1", f"{DOC}_figure_5.1"}


def test_offline_tasks_are_called_inline_and_ignore_the_image() -> None:
    """OfflineTasks (concurrency 1) runs on the caller's thread; its description is the same with or
    without an image and page text."""
    threads: set[int] = set()

    class Recording(OfflineTasks):
        def describe_object(self, obj: dict[str, Any], referring: list[str], **kwargs: Any) -> str:
            threads.add(threading.get_ident())
            return super().describe_object(obj, referring, **kwargs)

    state = {"sections": {TABLE["key"]: dict(TABLE, raw_number="5.1")}, "page_results": []}
    runtime = ingest_runtime(System(stores=Stores(LocalBlobs(tempfile.mkdtemp())), ingest_tasks=Recording()))
    assert describe_objects(state, runtime)["descriptions"] == {  # type: ignore[arg-type]
        TABLE["key"]: OfflineTasks().describe_object(TABLE, [TABLE["caption"]])  # its own text cites it
    }
    assert threads == {threading.get_ident()}
    pix = pymupdf.Pixmap(pymupdf.csGRAY, pymupdf.IRect(0, 0, 8, 6), False)
    pix.clear_with(128)
    png = pix.tobytes("png")
    assert OfflineTasks().describe_object(TABLE, [], image=png, page_text="p") == OfflineTasks().describe_object(
        TABLE, []
    )
