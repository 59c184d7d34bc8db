"""Pinned reads (stores/base.py ``pinned_reads``): inside the block each document's manifest and the kv
table are read from the store once, a reader whose remembered generation was replaced meanwhile finds
the new one, writers never act on a remembered manifest, and every query node runs inside such a block
(a query looks sections up about a thousand times; each lookup read the manifest again)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
from helpers import DOC_TABLES

from clausewise.graph.query import build_query_graph
from clausewise.graph.state import DepsBinder, QueryContext
from clausewise.stores import Stores
from clausewise.stores.base import _PINNED, pinned_reads
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"
KEY = f"{DOC}_1.1"


class CountingBlobs(LocalBlobs):
    """A local store that counts the reads of each path."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: Counter[str] = Counter()

    def read(self, path: str) -> tuple[bytes, str] | None:
        self.reads[path] += 1
        return super().read(path)


def _ingest(stores: Stores, marker: str) -> None:
    writer = stores.new_generation(DOC)
    for table in DOC_TABLES:
        value = {"chunks": [{"key": KEY, "text": marker}]} if table == "chunks" else {KEY: {"key": KEY, "text": marker}}
        writer.put_json(table, value)
    writer.put_vectors(np.full((1, 4), 1.0 if marker == "old" else 2.0))
    writer.publish({"doc_key": DOC})


def test_outside_a_pin_each_lookup_reads_the_manifest_inside_once(tmp_path: Path) -> None:
    blobs = CountingBlobs(tmp_path / "store")
    stores = Stores(blobs)
    _ingest(stores, "old")
    manifest = f"docs/{DOC}/manifest.json"
    blobs.reads.clear()
    for _ in range(5):
        assert stores.lookup("sections", KEY)["text"] == "old"
    assert blobs.reads[manifest] == 5
    blobs.reads.clear()
    with pinned_reads():
        for _ in range(5):
            assert stores.lookup("sections", KEY)["text"] == "old"
        stores.visible_documents()
    assert blobs.reads[manifest] == 1


def test_a_pinned_reader_finds_the_generation_that_replaced_the_one_it_remembers(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path / "store"))
    _ingest(stores, "old")
    with pinned_reads():
        assert stores.lookup("sections", KEY)["text"] == "old"  # remembers the first generation
        _ingest(Stores(LocalBlobs(tmp_path / "store")), "new")  # another writer replaces and removes it
        assert stores.lookup("references", KEY)["text"] == "new"  # a table not read before: the new one
        assert stores.doc_vectors(DOC)[0, 0] == 2.0
    assert stores.lookup("sections", KEY)["text"] == "new"  # after the block: the store as it is


def test_writers_never_act_on_a_remembered_manifest(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path / "store"))
    _ingest(stores, "old")
    with pinned_reads():
        stores.manifest(DOC)  # remembered: the first generation
        _ingest(Stores(LocalBlobs(tmp_path / "store")), "new")
        stores.garbage_collect(DOC)  # must keep the generation the manifest names now
        live = stores.manifest(DOC, fresh=True)["generation"]
        assert stores.generation_json(DOC, live, "sections")[KEY]["text"] == "new"
        assert stores.delete_document(DOC)
    assert stores.manifest(DOC) is None


def test_the_kv_table_is_read_once_in_a_pin_and_follows_its_file_outside(tmp_path: Path) -> None:
    blobs = CountingBlobs(tmp_path / "store")
    stores = Stores(blobs)
    stores.update_kv(lambda kv: {**kv, "dead load": {"equivalents": [{"term": "self-weight", "source": KEY}]}})
    with pinned_reads():
        first = stores.kv()
        stores.update_kv(lambda kv: {**kv, "imposed load": {"equivalents": [{"term": "live load", "source": KEY}]}})
        assert stores.kv() is first and "imposed load" not in first  # one state of the store in the block
    assert set(stores.kv()) == {"dead load", "imposed load"}  # the file changed: read again
    reads = blobs.reads["kv.json"]
    assert stores.kv() is stores.kv()  # unchanged file: parsed once, the same terms
    assert blobs.reads["kv.json"] == reads + 2


def test_query_nodes_run_pinned_and_others_do_not() -> None:
    seen: list[Any] = []

    def node(state: Any, runtime: Any) -> dict[str, Any]:
        seen.append(_PINNED.get())
        return {}

    runtime = SimpleNamespace(context=QueryContext(deps=object()), override=lambda context: runtime)
    DepsBinder(None, lambda s: s, QueryContext, scope=pinned_reads)(node)({}, runtime)
    DepsBinder(None, lambda s: s, QueryContext)(node)({}, runtime)
    assert seen[0] == {} and seen[1] is None


def test_a_question_reads_each_manifest_about_once_a_node(
    sample_store: SimpleNamespace, embedder: Any, tmp_path: Path, copy_store: Any
) -> None:
    blobs = CountingBlobs(copy_store(sample_store.dir))
    stores = Stores(blobs)
    graph = build_query_graph(stores=stores, embedder=embedder, cache_dir=tmp_path)
    graph.invoke({"question": "What exposure coefficient Ce should I use for a sheltered site?"})
    manifests = sum(n for path, n in blobs.reads.items() if path.endswith("manifest.json"))
    assert 0 < manifests <= 30, manifests  # about one a node run; one a lookup without the pin (79 here)
