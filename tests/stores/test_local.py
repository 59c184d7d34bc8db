"""What only the local directory backend does (stores/local.py): entries are files under the root, its lock
and temporary files stay hidden and leave nothing behind, empty folders are listed, compare-and-swap holds
across processes, and a killed write's leftovers are garbage collected. The Blobs contract it shares with R2
is test_blobs_contract.py; deleting an ingested document is checked here on the ingested sample."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import DOC_TABLES

from clausewise.stores import StoreError, Stores, open_stores
from clausewise.stores.base import GenerationWriter
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"


@pytest.fixture
def blobs(tmp_path: Path) -> LocalBlobs:
    return LocalBlobs(tmp_path / "blobs")


def _write_generation(stores: Stores, doc_key: str, marker: str) -> GenerationWriter:
    writer = stores.new_generation(doc_key)
    key = f"{doc_key}_1.1"
    for table in DOC_TABLES:
        value = {"chunks": [{"key": key, "text": marker}]} if table == "chunks" else {key: {"key": key, "text": marker}}
        writer.put_json(table, value)
    writer.put_vectors(np.ones((1, 4)))
    return writer


# ---------------------------------------------------------------- the directory
def test_entries_are_files_under_the_root(blobs: LocalBlobs, tmp_path: Path) -> None:
    blobs.write("docs/A/g1/s.json", b"payload")
    assert (tmp_path / "blobs" / "docs" / "A" / "g1" / "s.json").read_bytes() == b"payload"
    assert blobs.local_root == blobs.root == tmp_path / "blobs"
    assert blobs.describe() == f"local directory {tmp_path / 'blobs'}"


def test_list_hides_temporary_and_lock_files(blobs: LocalBlobs) -> None:
    blobs.write("a.json", b"x")
    assert blobs.write_if("b.json", b"y", None)
    assert (blobs.root / ".lock").is_file()  # compare-and-swap took the directory's lock
    (blobs.root / "docs").mkdir()
    (blobs.root / "docs" / ".half-written.tmp").write_bytes(b"partial")
    assert blobs.list("") == ["a.json", "b.json"]


def test_write_is_atomic_no_temporary_left(blobs: LocalBlobs) -> None:
    blobs.write("t/x.json", b"payload")
    assert sorted(p.name for p in (blobs.root / "t").iterdir()) == ["x.json"]


def test_delete_prefix_removes_a_killed_writes_temporary_and_the_folder(blobs: LocalBlobs) -> None:
    blobs.write("docs/A/g1/s.json", b"x")
    blobs.write("docs/A/g10/s.json", b"x")
    (blobs.root / "docs" / "A" / "g1" / ".s.json.1.2.tmp").write_bytes(b"left by a killed write")
    blobs.delete_prefix("docs/A/g1/")
    assert not (blobs.root / "docs" / "A" / "g1").exists()
    assert blobs.list("docs/") == ["docs/A/g10/s.json"]


def test_list_dirs_names_empty_folders_too(blobs: LocalBlobs) -> None:
    blobs.write("docs/A/g1/objects/k.png", b"x")
    (blobs.root / "docs" / "A" / "g2-empty").mkdir()
    assert blobs.list_dirs("docs/A/") == ["g1", "g2-empty"]


def test_a_refused_path_writes_nothing_outside_the_root(blobs: LocalBlobs) -> None:
    with pytest.raises(StoreError):
        blobs.write("../escape.json", b"x")
    assert not (blobs.root.parent / "escape.json").exists()


def test_unwritable_store_is_a_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(StoreError, match="cannot create store directory"):
        LocalBlobs(blocker / "store")


def test_open_stores_uses_the_explicit_directory(tmp_path: Path) -> None:
    from clausewise.settings import Settings

    stores = open_stores(Settings(), tmp_path / "explicit")
    assert isinstance(stores.blobs, LocalBlobs)
    assert stores.blobs.root == tmp_path / "explicit"
    assert (tmp_path / "explicit").is_dir()


# ---------------------------------------------------------------- compare-and-swap across processes
def _process_worker(root: str, worker: int, increments: int, barrier: threading.Barrier) -> None:
    """Runs in a separate process: a counter and unique master-list keys, by compare-and-swap."""
    stores = Stores(LocalBlobs(root))
    barrier.wait()
    for i in range(increments):
        stores.update_json("counter.json", {"n": 0}, lambda c: {**c, "n": c["n"] + 1})
        key = f"P{worker}_{i}"
        stores.update_documents(lambda d, k=key: {**d, k: {"key": k, "status": "ingested", "referenced_by": []}})


def test_update_json_with_many_processes_loses_nothing(tmp_path: Path) -> None:
    processes, increments = 4, 25
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes)
    procs = [
        ctx.Process(target=_process_worker, args=(str(tmp_path), w, increments, barrier)) for w in range(processes)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * processes
    stores = Stores(LocalBlobs(tmp_path))
    assert stores.read_json("counter.json", {})["n"] == processes * increments
    docs = stores.read_json("documents.json", {})
    assert set(docs) == {f"P{w}_{i}" for w in range(processes) for i in range(increments)}


# ---------------------------------------------------------------- what a killed ingest leaves
def test_garbage_collect_removes_what_a_killed_write_left(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    _write_generation(stores, DOC, "live").publish({"doc_key": DOC})
    orphan = _write_generation(stores, DOC, "killed")
    # what LocalBlobs.write leaves when the process dies between fsync and os.replace
    (tmp_path / "docs" / DOC / orphan.generation / ".vectors.npy.4242.140000000.tmp").write_bytes(b"half")
    stores.garbage_collect(DOC)
    assert not (tmp_path / "docs" / DOC / orphan.generation).exists()


def test_garbage_collect_removes_an_orphan_generation_without_files(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    live = _write_generation(stores, DOC, "live")
    live.publish({"doc_key": DOC})
    (tmp_path / "docs" / DOC / "20990101T000000-deadbeef" / "objects").mkdir(parents=True)  # killed before a write
    stores.garbage_collect(DOC)
    assert sorted(p.name for p in (tmp_path / "docs" / DOC).iterdir()) == sorted(["manifest.json", live.generation])


# ---------------------------------------------------------------- on an ingested store
def test_delete_ingested_sample(sample_store: SimpleNamespace, copy_store: Callable[[Path], Path]) -> None:
    stores = Stores(LocalBlobs(copy_store(sample_store.dir)))
    doc = sample_store.doc_key
    assert stores.delete_document(doc) is True
    assert doc not in stores.visible_documents()
    assert stores.lookup("sections", f"{doc}_5.3.2") is None
    assert stores.blobs.list(f"docs/{doc}/") == []
    assert not any(
        v["source"].startswith(doc + "_")
        for e in stores.kv().values()
        for v in e.get("equivalents", []) + e.get("values", [])
    )
    # the built-in thesaurus is not this document's to remove
    assert any(e["source"] == "builtin_thesaurus" for e in stores.kv()["dead load"]["equivalents"])


def test_delete_ingested_sample_drops_its_references_from_the_master_list(
    sample_store: SimpleNamespace, copy_store: Callable[[Path], Path]
) -> None:
    stores = Stores(LocalBlobs(copy_store(sample_store.dir)))
    doc = sample_store.doc_key
    assert "CEN_EN1990" in stores.documents()
    stores.delete_document(doc)
    docs = stores.documents()
    stale = {k: [r for r in v.get("referenced_by", []) if r.startswith(doc + "_")] for k, v in docs.items()}
    assert not any(stale.values()), stale
    assert "CEN_EN1990" not in docs  # only the deleted document referred to it
