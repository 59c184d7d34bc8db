"""Local stores: the Blobs contract, compare-and-swap under threads and processes, generations
(a document is invisible until its manifest is published), garbage collection and deletion."""

from __future__ import annotations

import json
import multiprocessing
import threading
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from clausewise.stores import StoreError, Stores, open_stores
from clausewise.stores.base import DOC_TABLES, remove_kv_sources
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"


# ---------------------------------------------------------------- Blobs contract
@pytest.fixture(params=["local"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> LocalBlobs:
    """Every backend runs the same contract; the local directory is the one in this version."""
    assert request.param == "local"
    return LocalBlobs(tmp_path / "blobs")


def test_read_absent_is_none(blobs: LocalBlobs) -> None:
    assert blobs.read("nothing/here.json") is None


def test_write_then_read_with_etag(blobs: LocalBlobs) -> None:
    blobs.write("a/b/c.json", b"one")
    got = blobs.read("a/b/c.json")
    assert got is not None
    data, etag = got
    assert data == b"one" and etag
    blobs.write("a/b/c.json", b"two")
    data2, etag2 = blobs.read("a/b/c.json")  # type: ignore[misc]
    assert data2 == b"two" and etag2 != etag
    blobs.write("a/b/c.json", b"two")
    assert blobs.read("a/b/c.json")[1] == etag2  # type: ignore[index]  # same content, same etag


def test_write_if_none_creates_only_when_absent(blobs: LocalBlobs) -> None:
    assert blobs.write_if("x.json", b"first", None) is True
    assert blobs.write_if("x.json", b"second", None) is False
    assert blobs.read("x.json")[0] == b"first"  # type: ignore[index]


def test_write_if_etag_is_compare_and_swap(blobs: LocalBlobs) -> None:
    blobs.write("x.json", b"v1")
    _, etag1 = blobs.read("x.json")  # type: ignore[misc]
    assert blobs.write_if("x.json", b"v2", etag1) is True
    # a writer still holding the old etag loses the race and changes nothing
    assert blobs.write_if("x.json", b"v2-stale", etag1) is False
    assert blobs.read("x.json")[0] == b"v2"  # type: ignore[index]
    # an etag on an absent entry never matches
    assert blobs.write_if("absent.json", b"v", etag1) is False
    assert blobs.read("absent.json") is None


def test_delete(blobs: LocalBlobs) -> None:
    blobs.write("d/x.bin", b"x")
    blobs.delete("d/x.bin")
    assert blobs.read("d/x.bin") is None
    blobs.delete("d/x.bin")  # deleting what is absent is not an error
    assert blobs.list("d/") == []


def test_list_is_recursive_sorted_and_prefix_scoped(blobs: LocalBlobs) -> None:
    for path in ["docs/B/m.json", "docs/A/g1/s.json", "docs/A/g1/objects/k.png", "docs/A/manifest.json", "kv.json"]:
        blobs.write(path, b"x")
    assert blobs.list("docs/A/") == ["docs/A/g1/objects/k.png", "docs/A/g1/s.json", "docs/A/manifest.json"]
    assert blobs.list("docs/") == sorted(blobs.list("docs/"))
    assert len(blobs.list("docs/")) == 4
    assert blobs.list("missing/") == []
    assert blobs.list("kv.json") == ["kv.json"]


def test_list_hides_temporary_and_lock_files(blobs: LocalBlobs) -> None:
    blobs.write("a.json", b"x")
    assert blobs.write_if("b.json", b"y", None)
    (blobs.root / "docs").mkdir()
    (blobs.root / "docs" / ".half-written.tmp").write_bytes(b"partial")
    assert blobs.list("") == ["a.json", "b.json"]


def test_delete_prefix_removes_everything_under_it_and_nothing_else(blobs: LocalBlobs) -> None:
    for path in ["docs/A/g1/s.json", "docs/A/g1/objects/k.png", "docs/A/g10/s.json", "docs/A/manifest.json",
                 "docs/B/g1/s.json"]:
        blobs.write(path, b"x")
    (blobs.root / "docs" / "A" / "g1" / ".s.json.1.2.tmp").write_bytes(b"left by a killed write")
    blobs.delete_prefix("docs/A/g1/")
    assert blobs.list("docs/") == ["docs/A/g10/s.json", "docs/A/manifest.json", "docs/B/g1/s.json"]
    assert not (blobs.root / "docs" / "A" / "g1").exists()
    blobs.delete_prefix("docs/A/missing/")  # nothing there: not an error
    blobs.delete_prefix("docs/A")
    assert blobs.list("docs/") == ["docs/B/g1/s.json"]
    with pytest.raises(StoreError):
        blobs.delete_prefix("../")


def test_list_dirs_names_direct_subfolders_even_empty_ones(blobs: LocalBlobs) -> None:
    blobs.write("docs/A/g1/objects/k.png", b"x")
    blobs.write("docs/A/manifest.json", b"x")
    (blobs.root / "docs" / "A" / "g2-empty").mkdir()
    assert blobs.list_dirs("docs/A/") == ["g1", "g2-empty"]
    assert blobs.list_dirs("docs/") == ["A"]
    assert blobs.list_dirs("docs/none/") == []


@pytest.mark.parametrize("path", ["../escape.json", "/etc/passwd", "docs/../../x", "a/../../b"])
def test_paths_cannot_leave_the_store(blobs: LocalBlobs, path: str) -> None:
    with pytest.raises(StoreError):
        blobs.write(path, b"x")
    with pytest.raises(StoreError):
        blobs.read(path)
    assert not (blobs.root.parent / "escape.json").exists()


def test_write_is_atomic_no_temporary_left(blobs: LocalBlobs) -> None:
    blobs.write("t/x.json", b"payload")
    assert sorted(p.name for p in (blobs.root / "t").iterdir()) == ["x.json"]


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


# ---------------------------------------------------------------- compare-and-swap
def test_update_json_retries_a_lost_race(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    calls = []

    def change(current: dict[str, int]) -> dict[str, int]:
        calls.append(dict(current))
        if len(calls) == 1:  # another writer sneaks in between our read and our write
            stores.blobs.write("counter.json", json.dumps({"n": 10}).encode())
        return {"n": current.get("n", 0) + 1}

    result = stores.update_json("counter.json", {}, change)
    assert result == {"n": 11}
    assert stores.read_json("counter.json", {}) == {"n": 11}
    assert calls == [{}, {"n": 10}]


def test_corrupt_shared_entry_is_a_clear_store_error(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    stores.blobs.write("documents.json", b"{not json")
    with pytest.raises(StoreError, match="documents.json is corrupt"):
        stores.documents()


def test_update_json_with_many_threads_loses_nothing(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    threads, per_thread = 8, 25
    barrier = threading.Barrier(threads)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            barrier.wait()
            for i in range(per_thread):
                stores.update_json("counter.json", {"n": 0}, lambda c: {**c, "n": c["n"] + 1})
                stores.update_documents(lambda d, k=f"T{t}_{i}": {**d, k: {"key": k, "status": "ingested"}})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    pool = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    assert not errors
    assert stores.read_json("counter.json", {})["n"] == threads * per_thread
    assert len(stores.read_json("documents.json", {})) == threads * per_thread


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
    procs = [ctx.Process(target=_process_worker, args=(str(tmp_path), w, increments, barrier))
             for w in range(processes)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    assert [p.exitcode for p in procs] == [0] * processes
    stores = Stores(LocalBlobs(tmp_path))
    assert stores.read_json("counter.json", {})["n"] == processes * increments
    docs = stores.read_json("documents.json", {})
    assert set(docs) == {f"P{w}_{i}" for w in range(processes) for i in range(increments)}


# ---------------------------------------------------------------- generations
def _write_generation(stores: Stores, doc_key: str, marker: str) -> SimpleNamespace:
    writer = stores.new_generation(doc_key)
    key = f"{doc_key}_1.1"
    for table in DOC_TABLES:
        value = {"chunks": [{"key": key, "text": marker}]} if table == "chunks" else {key: {"key": key, "text": marker}}
        writer.put_json(table, value)
    writer.put_vectors(np.ones((1, 4), dtype=np.float64))
    image = writer.put_image(f"{doc_key}_figure_1.1", b"\x89PNG fake " + marker.encode())
    return SimpleNamespace(writer=writer, key=key, image=image, generation=writer.generation)


def test_document_is_invisible_until_published(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    gen = _write_generation(stores, DOC, "v1")
    assert stores.blobs.list(f"docs/{DOC}/{gen.generation}/")  # the data is there ...
    assert stores.manifest(DOC) is None  # ... but nothing points to it
    assert DOC not in stores.visible_documents()
    assert stores.doc_table(DOC, "sections") == {}
    assert stores.doc_vectors(DOC) is None
    assert stores.lookup("sections", gen.key) is None
    assert list(stores.iter_sections()) == []

    gen.writer.publish({"doc_key": DOC, "sha256": "abc"})
    manifest = stores.manifest(DOC)
    assert manifest == {"doc_key": DOC, "sha256": "abc", "generation": gen.generation}
    assert stores.visible_documents() == {DOC: manifest}
    assert stores.lookup("sections", gen.key) == {"key": gen.key, "text": "v1"}
    vectors = stores.doc_vectors(DOC)
    assert vectors is not None and vectors.dtype == np.float32 and vectors.shape == (1, 4)
    assert [k for k, _ in stores.iter_sections()] == [gen.key]


def test_manifest_is_written_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blobs = LocalBlobs(tmp_path)
    order: list[str] = []
    real_write = blobs.write
    monkeypatch.setattr(blobs, "write", lambda path, data: (order.append(path), real_write(path, data))[1])
    stores = Stores(blobs)
    gen = _write_generation(stores, DOC, "v1")
    gen.writer.publish({"doc_key": DOC})
    assert order[-1] == f"docs/{DOC}/manifest.json"
    assert all(p.startswith(f"docs/{DOC}/{gen.generation}/") for p in order[:-1])


def test_overwrite_swaps_generations_and_removes_the_old_one(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    old = _write_generation(stores, DOC, "old")
    old.writer.publish({"doc_key": DOC})
    assert stores.lookup("sections", old.key)["text"] == "old"  # type: ignore[index]  # cached per generation

    new = _write_generation(stores, DOC, "new")
    assert new.generation != old.generation
    assert stores.lookup("sections", old.key)["text"] == "old"  # type: ignore[index]  # not yet published
    new.writer.publish({"doc_key": DOC})
    assert stores.manifest(DOC)["generation"] == new.generation  # type: ignore[index]
    assert stores.lookup("sections", new.key)["text"] == "new"  # type: ignore[index]
    assert stores.blobs.list(f"docs/{DOC}/{old.generation}/") == []
    assert stores.blobs.read(old.image) is None
    assert all(p.startswith((f"docs/{DOC}/{new.generation}/", f"docs/{DOC}/manifest.json"))
               for p in stores.blobs.list(f"docs/{DOC}/"))


def test_overwrite_leaves_no_old_generation_directory(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    old = _write_generation(stores, DOC, "old")
    old.writer.publish({"doc_key": DOC})
    new = _write_generation(stores, DOC, "new")
    new.writer.publish({"doc_key": DOC})
    assert sorted(p.name for p in (tmp_path / "docs" / DOC).iterdir()) == sorted(["manifest.json", new.generation])


class _PausingBlobs(LocalBlobs):
    """A reader's view of the store that stops right after it has read the manifest, until told to go on."""

    def __init__(self, root: Path, doc_key: str):
        super().__init__(root)
        self.manifest_path = f"docs/{doc_key}/manifest.json"
        self.manifest_read, self.go_on = threading.Event(), threading.Event()

    def read(self, path: str) -> tuple[bytes, str] | None:
        got = super().read(path)
        if path == self.manifest_path and not self.manifest_read.is_set():
            self.manifest_read.set()
            assert self.go_on.wait(30)
        return got


def test_reader_racing_an_overwrite_sees_the_old_or_the_new_document(tmp_path: Path) -> None:
    writer_stores = Stores(LocalBlobs(tmp_path))
    old = _write_generation(writer_stores, DOC, "old")
    old.writer.publish({"doc_key": DOC})
    new = _write_generation(writer_stores, DOC, "new")

    reader = Stores(_PausingBlobs(tmp_path, DOC))
    seen: list[dict[str, object] | None] = []
    thread = threading.Thread(target=lambda: seen.append(reader.lookup("sections", old.key)))
    thread.start()
    assert reader.blobs.manifest_read.wait(30)  # type: ignore[attr-defined]
    new.writer.publish({"doc_key": DOC})  # the overwrite lands between the reader's two reads
    reader.blobs.go_on.set()  # type: ignore[attr-defined]
    thread.join(30)
    assert seen and seen[0] is not None and seen[0]["text"] in ("old", "new")


def test_garbage_collect_removes_orphan_generations_only(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    live = _write_generation(stores, DOC, "live")
    live.writer.publish({"doc_key": DOC})
    orphan1 = _write_generation(stores, DOC, "killed ingest 1")
    orphan2 = _write_generation(stores, DOC, "killed ingest 2")
    other = _write_generation(stores, "CEN_EN1990", "another document")  # never published, not ours to collect
    stores.garbage_collect(DOC)
    assert stores.blobs.list(f"docs/{DOC}/{orphan1.generation}/") == []
    assert stores.blobs.list(f"docs/{DOC}/{orphan2.generation}/") == []
    assert len(stores.blobs.list(f"docs/{DOC}/{live.generation}/")) == len(DOC_TABLES) + 2  # + vectors + image
    assert stores.lookup("sections", live.key)["text"] == "live"  # type: ignore[index]
    assert stores.blobs.list(f"docs/CEN_EN1990/{other.generation}/")


def test_garbage_collect_removes_what_a_killed_write_left(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    live = _write_generation(stores, DOC, "live")
    live.writer.publish({"doc_key": DOC})
    orphan = _write_generation(stores, DOC, "killed")
    # what LocalBlobs.write leaves when the process dies between fsync and os.replace
    (tmp_path / "docs" / DOC / orphan.generation / ".vectors.npy.4242.140000000.tmp").write_bytes(b"half")
    stores.garbage_collect(DOC)
    assert not (tmp_path / "docs" / DOC / orphan.generation).exists()


def test_garbage_collect_removes_an_orphan_generation_without_files(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    live = _write_generation(stores, DOC, "live")
    live.writer.publish({"doc_key": DOC})
    (tmp_path / "docs" / DOC / "20990101T000000-deadbeef" / "objects").mkdir(parents=True)  # killed before a write
    stores.garbage_collect(DOC)
    assert sorted(p.name for p in (tmp_path / "docs" / DOC).iterdir()) == sorted(["manifest.json", live.generation])


def test_garbage_collect_without_manifest_removes_every_generation(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    _write_generation(stores, DOC, "killed before publish")
    stores.garbage_collect(DOC)
    assert stores.blobs.list(f"docs/{DOC}/") == []


def test_delete_document(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    gen = _write_generation(stores, DOC, "v1")
    gen.writer.publish({"doc_key": DOC})
    _write_generation(stores, "CEN_EN1990", "other").writer.publish({"doc_key": "CEN_EN1990"})
    stores.update_documents(lambda d: {
        DOC: {"key": DOC, "status": "ingested", "referenced_by": []},
        "CEN_EN1990": {"key": "CEN_EN1990", "status": "ingested", "referenced_by": [f"{DOC}_1.1"]},
    })
    stores.update_kv(lambda kv: {
        "ce": {"term": "Ce", "equivalents": [{"text": "exposure coefficient", "source": f"{DOC}_1.3"},
                                             {"text": "exposure factor", "source": "CEN_EN1990_1.5"}],
               "values": [{"value": "1,0", "source": f"{DOC}_5.2"}, {"value": "0,8", "source": "CEN_EN1990_6"}],
               "conflict": True},
        "sk": {"term": "sk", "equivalents": [{"text": "ground value", "source": f"{DOC}_1.3"}], "values": []},
    })
    assert stores.delete_document(DOC) is True
    assert stores.manifest(DOC) is None
    assert stores.blobs.list(f"docs/{DOC}/") == []
    assert DOC not in stores.documents()
    assert "CEN_EN1990" in stores.documents()
    kv = stores.kv()
    assert "sk" not in kv  # only this document defined it
    assert kv["ce"]["equivalents"] == [{"text": "exposure factor", "source": "CEN_EN1990_1.5"}]
    assert kv["ce"]["values"] == [{"value": "0,8", "source": "CEN_EN1990_6"}]
    assert kv["ce"]["conflict"] is False
    assert stores.delete_document(DOC) is False  # nothing left to delete


def test_delete_document_that_others_reference_stays_listed_as_referenced_only(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    gen = _write_generation(stores, "CEN_EN1990", "v1")
    gen.writer.publish({"doc_key": "CEN_EN1990"})
    stores.update_documents(lambda d: {"CEN_EN1990": {
        "key": "CEN_EN1990", "status": "ingested", "pages": 10, "sha256": "abc", "referenced_by": [f"{DOC}_1.1"]}})
    stores.delete_document("CEN_EN1990")
    entry = stores.documents()["CEN_EN1990"]
    assert entry["status"] == "referenced-only"
    assert entry["referenced_by"] == [f"{DOC}_1.1"]
    assert entry["pages"] is None and entry["sha256"] is None


def test_documents_reports_an_entry_without_manifest_as_incomplete(tmp_path: Path) -> None:
    stores = Stores(LocalBlobs(tmp_path))
    stores.update_documents(lambda d: {DOC: {"key": DOC, "status": "ingested", "referenced_by": []}})
    assert stores.documents()[DOC]["status"] == "incomplete"


def test_remove_kv_sources_recomputes_conflicts() -> None:
    kv = {"ce": {"term": "Ce", "equivalents": [],
                 "values": [{"value": "1,0", "source": "A_X_1"}, {"value": "0,8", "source": "B_Y_2"}],
                 "conflict": True}}
    out = remove_kv_sources(kv, "B_Y")
    assert out["ce"]["values"] == [{"value": "1,0", "source": "A_X_1"}]
    assert out["ce"]["conflict"] is False
    assert remove_kv_sources(kv, "A_X")["ce"]["values"] == [{"value": "0,8", "source": "B_Y_2"}]
    # a document whose key is a prefix of another's ("EN 1991-1-1" / "EN 1991-1-10") keeps the other's values
    kv2 = {"ce": {"term": "Ce", "equivalents": [], "values": [{"value": "1,0", "source": "CEN_EN1991-1-10_5.2"}]}}
    assert remove_kv_sources(kv2, "CEN_EN1991-1-1")["ce"]["values"] == kv2["ce"]["values"]


# ---------------------------------------------------------------- on an ingested store
def test_delete_ingested_sample(sample_store: SimpleNamespace, copy_store: Callable[[Path], Path]) -> None:
    stores = Stores(LocalBlobs(copy_store(sample_store.dir)))
    doc = sample_store.doc_key
    assert stores.delete_document(doc) is True
    assert doc not in stores.visible_documents()
    assert stores.lookup("sections", f"{doc}_5.3.2") is None
    assert stores.blobs.list(f"docs/{doc}/") == []
    assert not any(v["source"].startswith(doc + "_") for e in stores.kv().values()
                   for v in e.get("equivalents", []) + e.get("values", []))
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
