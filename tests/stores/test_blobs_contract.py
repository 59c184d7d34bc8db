"""One Blobs contract for every backend: the local directory and R2 (the S3 API), the latter against a
real S3-compatible server (moto's server mode) on loopback started by these tests.

Also, through :class:`Stores` on every backend: compare-and-swap under threads and a lost race, generations
(nothing visible before the manifest, which is written last; a reader racing an overwrite), a crash before
publish, garbage collection, deleting a document; and for R2 the server going away and coming back, bad
credentials, a missing bucket, and the settings -> backend factory. What only the local directory does (its
lock and temporary files, empty folders, several processes) is in test_local.py."""

from __future__ import annotations

import importlib
import inspect
import json
import logging
import pkgutil
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import DOC_TABLES

import clausewise.stores
from clausewise.stores import StoreError, Stores, open_stores
from clausewise.stores.base import Blobs
from clausewise.stores.local import LocalBlobs

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server", reason="moto[server] is a dev dependency")

from clausewise.stores.r2 import R2Blobs  # noqa: E402 - after the skip checks

DOC = "CEN_EN1991-9-9"
ACCESS_KEY, SECRET_KEY = "testing-key", "testing-secret"


class S3Server:
    """moto's S3 server on 127.0.0.1, stoppable and restartable on the same port (state survives)."""

    def __init__(self) -> None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: Any = None

    def start(self) -> None:
        self._server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    @property
    def running(self) -> bool:
        return self._server is not None

    def client(self) -> Any:
        return boto3.session.Session().client(
            "s3",
            endpoint_url=self.url,
            aws_access_key_id=ACCESS_KEY,
            aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )

    def new_bucket(self) -> str:
        name = f"cw-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    from moto.s3.responses import S3Response

    # moto checks If-Match / If-None-Match and then stores the object in two steps; S3 and R2 do both
    # atomically. One lock around PutObject gives the test server the same guarantee, so the
    # compare-and-swap test cannot fail (rarely) on a race inside moto rather than in our code.
    real_put, lock = S3Response.put_object, threading.Lock()

    def atomic_put(self: Any) -> Any:
        with lock:
            return real_put(self)

    S3Response.put_object = atomic_put  # type: ignore[method-assign]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = S3Server()
    server.start()
    yield server
    server.stop()
    S3Response.put_object = real_put  # type: ignore[method-assign]


@pytest.fixture
def s3_up(s3: S3Server) -> S3Server:
    """The server, restarted if an earlier test left it stopped."""
    if not s3.running:
        s3.start()
    return s3


def _r2(s3: S3Server, bucket: str | None = None, **kwargs: Any) -> R2Blobs:
    return R2Blobs(s3.url, ACCESS_KEY, SECRET_KEY, bucket or s3.new_bucket(), **kwargs)


BACKENDS: dict[str, type] = {"local": LocalBlobs, "r2": R2Blobs}


@pytest.fixture(params=sorted(BACKENDS))
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> Blobs:
    if request.param == "local":
        return LocalBlobs(tmp_path / "blobs")
    return _r2(request.getfixturevalue("s3_up"))


def test_every_blobs_backend_runs_this_contract() -> None:
    """Each class in clausewise.stores that implements the Blobs protocol is one of this suite's backends."""
    members = [name for name in vars(Blobs) if not name.startswith("_")]
    found = set()
    for module in pkgutil.iter_modules(clausewise.stores.__path__, "clausewise.stores."):
        for _, cls in inspect.getmembers(importlib.import_module(module.name), inspect.isclass):
            if cls.__module__ == module.name and cls is not Blobs and all(hasattr(cls, m) for m in members):
                found.add(cls)
    assert "write_if" in members and "list_dirs" in members
    assert found == set(BACKENDS.values())


@pytest.fixture
def stores(blobs: Blobs) -> Stores:
    return Stores(blobs)


# ---------------------------------------------------------------- read / write / write_if
def test_read_absent_is_none(blobs: Blobs) -> None:
    assert blobs.read("nothing/here.json") is None


def test_write_read_overwrite_with_etags(blobs: Blobs) -> None:
    blobs.write("a/b/c.json", b"one")
    got = blobs.read("a/b/c.json")
    assert got is not None
    data, etag = got
    assert data == b"one" and etag
    blobs.write("a/b/c.json", b"two")
    got2 = blobs.read("a/b/c.json")
    assert got2 is not None and got2[0] == b"two" and got2[1] != etag
    blobs.write("a/b/c.json", b"two")
    assert blobs.read("a/b/c.json")[1] == got2[1]  # type: ignore[index]  # same content, same etag
    blobs.write("a/b/c.json", b"")
    assert blobs.read("a/b/c.json")[0] == b""  # type: ignore[index]


def test_write_if_none_creates_only_when_absent(blobs: Blobs) -> None:
    assert blobs.write_if("x.json", b"first", None) is True
    assert blobs.write_if("x.json", b"second", None) is False
    assert blobs.read("x.json")[0] == b"first"  # type: ignore[index]


def test_write_if_current_etag_wins_stale_etag_loses(blobs: Blobs) -> None:
    blobs.write("x.json", b"v1")
    _, etag1 = blobs.read("x.json")  # type: ignore[misc]
    assert blobs.write_if("x.json", b"v2", etag1) is True
    _, etag2 = blobs.read("x.json")  # type: ignore[misc]
    assert blobs.write_if("x.json", b"v2-stale", etag1) is False
    assert blobs.read("x.json")[0] == b"v2"  # type: ignore[index]
    assert blobs.write_if("x.json", b"v3", etag2) is True
    assert blobs.read("x.json")[0] == b"v3"  # type: ignore[index]
    assert blobs.write_if("absent.json", b"v", etag1) is False  # an etag never matches an absent entry
    assert blobs.read("absent.json") is None


@pytest.mark.parametrize("path", ["../escape.json", "/etc/passwd", "docs/../../x", "a/../../b"])
def test_paths_cannot_leave_the_store(blobs: Blobs, path: str) -> None:
    with pytest.raises(StoreError):
        blobs.write(path, b"x")
    with pytest.raises(StoreError):
        blobs.read(path)


# ---------------------------------------------------------------- list / delete / list_dirs
LAYOUT = [
    "docs/B/m.json",
    "docs/A/g1/s.json",
    "docs/A/g1/objects/k.png",
    "docs/A/manifest.json",
    "docs/AB/x.json",
    "kv.json",
]


def test_list_is_recursive_sorted_and_prefix_scoped(blobs: Blobs) -> None:
    for path in LAYOUT:
        blobs.write(path, b"x")
    assert blobs.list("") == sorted(LAYOUT)
    assert blobs.list("docs/") == sorted(p for p in LAYOUT if p.startswith("docs/"))
    assert blobs.list("docs/A/") == ["docs/A/g1/objects/k.png", "docs/A/g1/s.json", "docs/A/manifest.json"]
    assert blobs.list("docs/A") == blobs.list("docs/A/")  # a folder, not a string prefix: docs/AB is not in it
    assert blobs.list("kv.json") == ["kv.json"]
    assert blobs.list("missing/") == []


def test_r2_list_pages_and_delete_prefix_batches(s3_up: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    import clausewise.stores.r2 as r2

    monkeypatch.setattr(r2, "LIST_PAGE_SIZE", 3)  # as if 1000 were 3: several pages, several batches
    monkeypatch.setattr(r2, "DELETE_BATCH", 4)
    blobs = _r2(s3_up)
    calls: list[int] = []
    real = blobs._s3.delete_objects  # noqa: SLF001
    monkeypatch.setattr(
        blobs._s3,
        "delete_objects",  # noqa: SLF001
        lambda **kw: (calls.append(len(kw["Delete"]["Objects"])), real(**kw))[1],
    )
    paths = [f"many/{i:02d}" for i in range(10)] + [f"many/d{i}/x" for i in range(5)]
    for path in reversed(paths):
        blobs.write(path, b"")
    blobs.write("other", b"")
    assert blobs.list("many/") == sorted(paths)
    assert blobs.list_dirs("many/") == [f"d{i}" for i in range(5)]
    blobs.delete_prefix("many/")
    assert calls == [4, 4, 4, 3]
    assert blobs.list("") == ["other"]


def test_delete(blobs: Blobs) -> None:
    blobs.write("d/x.bin", b"x")
    blobs.delete("d/x.bin")
    assert blobs.read("d/x.bin") is None
    blobs.delete("d/x.bin")  # deleting what is absent is not an error
    assert blobs.list("d/") == []


def test_delete_prefix_removes_everything_under_it_and_nothing_else(blobs: Blobs) -> None:
    for path in [
        "docs/A/g1/s.json",
        "docs/A/g1/objects/k.png",
        "docs/A/g10/s.json",
        "docs/A/manifest.json",
        "docs/B/g1/s.json",
    ]:
        blobs.write(path, b"x")
    blobs.delete_prefix("docs/A/g1/")
    assert blobs.list("docs/") == ["docs/A/g10/s.json", "docs/A/manifest.json", "docs/B/g1/s.json"]
    blobs.delete_prefix("docs/A/missing/")  # nothing there: not an error
    blobs.delete_prefix("docs/A")
    assert blobs.list("docs/") == ["docs/B/g1/s.json"]
    with pytest.raises(StoreError):
        blobs.delete_prefix("../")


def test_list_dirs_names_direct_subfolders(blobs: Blobs) -> None:
    blobs.write("docs/A/g1/objects/k.png", b"x")
    blobs.write("docs/A/g2/s.json", b"x")
    blobs.write("docs/A/manifest.json", b"x")
    blobs.write("docs/AB/x.json", b"x")
    assert blobs.list_dirs("docs/A/") == ["g1", "g2"]
    assert blobs.list_dirs("docs/A") == ["g1", "g2"]
    assert blobs.list_dirs("docs/") == ["A", "AB"]
    assert blobs.list_dirs("docs/none/") == []


def test_describe_names_the_backend(blobs: Blobs) -> None:
    text = blobs.describe()
    if isinstance(blobs, R2Blobs):
        assert text == f"R2 bucket {blobs.bucket} at {blobs.endpoint_url}"
    else:
        assert text.startswith("local directory")


def test_r2_prefix_scopes_the_store(s3_up: S3Server) -> None:
    bucket = s3_up.new_bucket()
    one, two = _r2(s3_up, bucket, prefix="one"), _r2(s3_up, bucket, prefix="two/")
    one.write("docs/A/x.json", b"1")
    two.write("docs/A/x.json", b"2")
    assert one.list("") == ["docs/A/x.json"] and one.read("docs/A/x.json")[0] == b"1"  # type: ignore[index]
    assert one.list_dirs("docs/") == ["A"]
    one.delete_prefix("docs/")
    assert one.list("") == [] and two.list("") == ["docs/A/x.json"]
    assert "prefix two/" in two.describe()


def test_r2_retries_through_botocore_config(s3_up: S3Server) -> None:
    blobs = _r2(s3_up)
    config = blobs._s3.meta.config  # noqa: SLF001
    # botocore's max_attempts counts retries: 5 retries, 6 attempts in all
    assert config.retries == {"mode": "standard", "total_max_attempts": 6}
    assert (config.connect_timeout, config.read_timeout) == (5, 30)


# ---------------------------------------------------------------- Stores on top: compare-and-swap
def test_updates_from_threads_lose_nothing(stores: Stores) -> None:
    threads, per_thread = 4, 20
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
        th.join(60)
    assert not errors
    assert stores.read_json("counter.json", {})["n"] == threads * per_thread
    assert set(stores.read_json("documents.json", {})) == {
        f"T{t}_{i}" for t in range(threads) for i in range(per_thread)
    }


def test_update_json_retries_a_lost_race(stores: Stores) -> None:
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


def test_corrupt_shared_entry_is_a_clear_store_error(stores: Stores) -> None:
    stores.blobs.write("documents.json", b"{not json")
    with pytest.raises(StoreError, match="documents.json is corrupt"):
        stores.documents()


# ---------------------------------------------------------------- generations
def _write_generation(stores: Stores, doc_key: str, marker: str, tables: tuple[str, ...] = DOC_TABLES) -> Any:
    writer = stores.new_generation(doc_key)
    key = f"{doc_key}_1.1"
    for table in tables:
        value = {"chunks": [{"key": key, "text": marker}]} if table == "chunks" else {key: {"key": key, "text": marker}}
        writer.put_json(table, value)
    writer.put_vectors(np.ones((1, 4)))
    writer.put_image(f"{doc_key}_figure_1.1", b"\x89PNG fake " + marker.encode())
    return writer


def test_unpublished_generation_is_invisible_and_publish_swaps(stores: Stores) -> None:
    old = _write_generation(stores, DOC, "old")
    assert stores.blobs.list(f"docs/{DOC}/{old.generation}/")  # the data is there ...
    assert stores.manifest(DOC) is None and stores.visible_documents() == {}  # ... but nothing points to it
    assert stores.lookup("sections", f"{DOC}_1.1") is None and stores.doc_vectors(DOC) is None
    assert stores.doc_table(DOC, "sections") == {} and list(stores.iter_sections()) == []

    old.publish({"doc_key": DOC, "sha256": "a"})
    assert stores.visible_documents() == {
        DOC: {"doc_key": DOC, "sha256": "a", "generation": old.generation, "files": sorted(old.files)}
    }
    assert stores.missing_files(DOC) == []
    assert stores.lookup("sections", f"{DOC}_1.1")["text"] == "old"  # type: ignore[index]
    vectors = stores.doc_vectors(DOC)
    assert vectors is not None and vectors.dtype == np.float32 and vectors.shape == (1, 4)
    assert [k for k, _ in stores.iter_sections()] == [f"{DOC}_1.1"]

    new = _write_generation(stores, DOC, "new")
    assert stores.manifest(DOC)["generation"] == old.generation  # type: ignore[index]  # still the old one
    new.publish({"doc_key": DOC, "sha256": "b"})
    assert stores.manifest(DOC)["generation"] == new.generation  # type: ignore[index]
    assert stores.lookup("sections", f"{DOC}_1.1")["text"] == "new"  # type: ignore[index]
    assert stores.blobs.list(f"docs/{DOC}/{old.generation}/") == []  # its tables, vectors and image
    assert stores.blobs.list_dirs(f"docs/{DOC}/") == [new.generation]
    assert all(
        p.startswith((f"docs/{DOC}/{new.generation}/", f"docs/{DOC}/manifest.json"))
        for p in stores.blobs.list(f"docs/{DOC}/")
    )


def test_manifest_is_written_last(stores: Stores, monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    real_write = stores.blobs.write
    monkeypatch.setattr(stores.blobs, "write", lambda path, data: (order.append(path), real_write(path, data))[1])
    writer = _write_generation(stores, DOC, "v1")
    writer.publish({"doc_key": DOC})
    assert order[-1] == f"docs/{DOC}/manifest.json"
    assert all(p.startswith(f"docs/{DOC}/{writer.generation}/") for p in order[:-1])


class _PausingBlobs:
    """A reader's view of a backend that stops right after it has read the manifest, until told to go on."""

    def __init__(self, inner: Blobs, doc_key: str):
        self.inner = inner
        self.manifest_path = f"docs/{doc_key}/manifest.json"
        self.manifest_read, self.go_on = threading.Event(), threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def read(self, path: str) -> tuple[bytes, str] | None:
        got = self.inner.read(path)
        if path == self.manifest_path and not self.manifest_read.is_set():
            self.manifest_read.set()
            assert self.go_on.wait(30)
        return got


def test_reader_racing_an_overwrite_sees_the_old_or_the_new_document(stores: Stores) -> None:
    _write_generation(stores, DOC, "old").publish({"doc_key": DOC})
    new = _write_generation(stores, DOC, "new")

    pausing = _PausingBlobs(stores.blobs, DOC)
    reader = Stores(pausing)  # type: ignore[arg-type]
    seen: list[dict[str, Any] | None] = []
    thread = threading.Thread(target=lambda: seen.append(reader.lookup("sections", f"{DOC}_1.1")))
    thread.start()
    assert pausing.manifest_read.wait(30)
    new.publish({"doc_key": DOC})  # the overwrite lands between the reader's two reads
    pausing.go_on.set()
    thread.join(30)
    assert seen and seen[0] is not None and seen[0]["text"] in ("old", "new")


def test_garbage_collect_removes_orphan_generations_only(stores: Stores) -> None:
    live = _write_generation(stores, DOC, "live")
    live.publish({"doc_key": DOC})
    orphan1 = _write_generation(stores, DOC, "killed ingest 1")
    orphan2 = _write_generation(stores, DOC, "killed ingest 2")
    other = _write_generation(stores, "CEN_EN1990", "another document")  # never published, not ours to collect
    stores.garbage_collect(DOC)
    assert stores.blobs.list(f"docs/{DOC}/{orphan1.generation}/") == []
    assert stores.blobs.list(f"docs/{DOC}/{orphan2.generation}/") == []
    assert len(stores.blobs.list(f"docs/{DOC}/{live.generation}/")) == len(DOC_TABLES) + 2  # + vectors + image
    assert stores.lookup("sections", f"{DOC}_1.1")["text"] == "live"  # type: ignore[index]
    assert stores.blobs.list(f"docs/CEN_EN1990/{other.generation}/")


def test_garbage_collect_without_manifest_removes_every_generation(stores: Stores) -> None:
    _write_generation(stores, DOC, "killed before publish")
    stores.garbage_collect(DOC)
    assert stores.blobs.list(f"docs/{DOC}/") == []


# ---------------------------------------------------------------- deleting a document
def test_delete_document(stores: Stores) -> None:
    _write_generation(stores, DOC, "v1").publish({"doc_key": DOC})
    _write_generation(stores, "CEN_EN1990", "other").publish({"doc_key": "CEN_EN1990"})
    stores.update_documents(
        lambda d: {
            DOC: {"key": DOC, "status": "ingested", "referenced_by": []},
            "CEN_EN1990": {"key": "CEN_EN1990", "status": "ingested", "referenced_by": [f"{DOC}_1.1"]},
        }
    )
    stores.update_kv(
        lambda kv: {
            "ce": {
                "term": "Ce",
                "equivalents": [
                    {"text": "exposure coefficient", "source": f"{DOC}_1.3"},
                    {"text": "exposure factor", "source": "CEN_EN1990_1.5"},
                ],
                "values": [{"value": "1,0", "source": f"{DOC}_5.2"}, {"value": "0,8", "source": "CEN_EN1990_6"}],
                "conflict": True,
            },
            "sk": {"term": "sk", "equivalents": [{"text": "ground value", "source": f"{DOC}_1.3"}], "values": []},
        }
    )
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


def test_delete_document_that_others_reference_stays_listed_as_referenced_only(stores: Stores) -> None:
    _write_generation(stores, "CEN_EN1990", "v1").publish({"doc_key": "CEN_EN1990"})
    stores.update_documents(
        lambda d: {
            "CEN_EN1990": {
                "key": "CEN_EN1990",
                "status": "ingested",
                "pages": 10,
                "sha256": "abc",
                "referenced_by": [f"{DOC}_1.1"],
            }
        }
    )
    stores.delete_document("CEN_EN1990")
    entry = stores.documents()["CEN_EN1990"]
    assert entry["status"] == "referenced-only"
    assert entry["referenced_by"] == [f"{DOC}_1.1"]
    assert entry["pages"] is None and entry["sha256"] is None


def test_crash_before_publish_leaves_nothing_visible(stores: Stores) -> None:
    def ingest(marker: str) -> None:
        writer = _write_generation(stores, DOC, marker, tables=DOC_TABLES[:2])
        raise RuntimeError("killed between writes")
        writer.publish({"doc_key": DOC})  # never reached

    stores.update_documents(lambda d: {**d, DOC: {"key": DOC, "status": "ingested"}})
    with pytest.raises(RuntimeError):
        ingest("first")
    assert stores.visible_documents() == {} and stores.manifest(DOC) is None
    assert stores.documents()[DOC]["status"] == "incomplete"
    assert stores.lookup("sections", f"{DOC}_1.1") is None

    good = _write_generation(stores, DOC, "good")
    good.publish({"doc_key": DOC})
    with pytest.raises(RuntimeError):
        ingest("half a re-ingest")
    assert stores.manifest(DOC)["generation"] == good.generation  # type: ignore[index]
    assert stores.lookup("sections", f"{DOC}_1.1")["text"] == "good"  # type: ignore[index]
    stores.garbage_collect(DOC)
    assert stores.blobs.list_dirs(f"docs/{DOC}/") == [good.generation]


# ---------------------------------------------------------------- R2 failures
def test_server_going_away_is_a_store_error_and_nothing_is_corrupted(s3_up: S3Server) -> None:
    blobs = _r2(s3_up, max_attempts=2, connect_timeout=1, read_timeout=2)
    stores = Stores(blobs)
    live = _write_generation(stores, DOC, "live")
    live.publish({"doc_key": DOC})
    stores.update_documents(lambda d: {DOC: {"key": DOC, "status": "ingested"}})
    before = {path: blobs.read(path) for path in blobs.list("")}

    s3_up.stop()
    try:
        with pytest.raises(StoreError, match="unreachable") as info:
            stores.manifest(DOC)
        assert blobs.bucket in str(info.value) and "Traceback" not in str(info.value)
        with pytest.raises(StoreError, match="unreachable"):
            stores.update_documents(lambda d: {**d, "X": {"key": "X"}})
        with pytest.raises(StoreError, match="unreachable"):
            _write_generation(stores, DOC, "during the outage").publish({"doc_key": DOC})
        with pytest.raises(StoreError, match="unreachable"):
            blobs.list("docs/")
        with pytest.raises(StoreError, match="unreachable"):
            _r2(s3_up, blobs.bucket, max_attempts=1)
    finally:
        s3_up.start()

    assert {path: blobs.read(path) for path in blobs.list("")} == before  # the same client works again
    assert stores.manifest(DOC)["generation"] == live.generation  # type: ignore[index]
    assert stores.lookup("sections", f"{DOC}_1.1")["text"] == "live"  # type: ignore[index]
    assert set(stores.documents()) == {DOC}


def test_bad_credentials_are_a_store_error_about_credentials(s3_up: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    import moto.settings

    bucket = s3_up.new_bucket()
    monkeypatch.setattr(moto.settings, "INITIAL_NO_AUTH_ACTION_COUNT", 0)  # the server now checks keys
    with pytest.raises(StoreError, match="credentials") as info:
        R2Blobs(s3_up.url, "not-a-key", "not-a-secret", bucket, max_attempts=1)
    assert bucket in str(info.value) and "not-a-secret" not in str(info.value)


def test_missing_bucket_is_a_store_error_naming_it(s3_up: S3Server) -> None:
    with pytest.raises(StoreError, match="R2 bucket no-such-bucket-here does not exist"):
        R2Blobs(s3_up.url, ACCESS_KEY, SECRET_KEY, "no-such-bucket-here", max_attempts=1)


# ---------------------------------------------------------------- factory
def _settings(**r2: Any) -> Any:
    from clausewise.settings import Settings

    values = {"r2_api_url": None, "r2_access_key_id": None, "r2_secret_access_key": None, "r2_bucket": None}
    return Settings(**{**values, **r2})


def test_open_stores_uses_r2_when_configured(s3_up: S3Server, tmp_path: Path) -> None:
    bucket = s3_up.new_bucket()
    settings = _settings(
        r2_api_url=s3_up.url, r2_access_key_id=ACCESS_KEY, r2_secret_access_key=SECRET_KEY, r2_bucket=bucket
    )
    stores = open_stores(settings)
    assert isinstance(stores.blobs, R2Blobs)
    assert stores.blobs.describe() == f"R2 bucket {bucket} at {s3_up.url}"
    stores.update_documents(lambda d: {DOC: {"key": DOC}})
    assert stores.read_json("documents.json", {}) == {DOC: {"key": DOC}}
    explicit = open_stores(settings, tmp_path / "explicit")  # an explicit directory wins over settings
    assert isinstance(explicit.blobs, LocalBlobs)


def test_open_stores_names_a_missing_r2_setting() -> None:
    with pytest.raises(StoreError, match="R2_SECRET_ACCESS_KEY") as info:
        open_stores(_settings(r2_api_url="http://127.0.0.1:9", r2_access_key_id="k", r2_bucket="b"))
    assert "R2_API_URL" not in str(info.value)


def test_importing_the_stores_does_not_import_boto3() -> None:
    code = "import sys, clausewise.stores; print('botocore' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"


def test_cli_with_r2_settings_reads_and_writes_only_the_bucket(
    s3_up: S3Server, cli: Any, sample_pdf: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`clausewise ingest` and `clausewise ask` with R2_* set: everything lands in the bucket, the
    local store directory is never created (derived caches go to the user cache directory)."""
    bucket = s3_up.new_bucket()
    workdir, home = tmp_path / "work", tmp_path / "home"
    workdir.mkdir()
    monkeypatch.chdir(workdir)
    env = {
        "R2_API_URL": s3_up.url,
        "R2_ACCESS_KEY_ID": ACCESS_KEY,
        "R2_SECRET_ACCESS_KEY": SECRET_KEY,
        "R2_BUCKET": bucket,
        "HOME": str(home),
        "STORE_DIR": str(workdir / "clausewise-data"),
    }
    ingested = cli("ingest", sample_pdf, env=env)
    assert ingested.exit_code == 0, ingested.output
    asked = cli("ask", "Which exposure coefficient applies to a sheltered site?", "--json", env=env)
    assert asked.exit_code == 0, asked.output
    assert '"passages"' in asked.stdout and "table_5.1" in asked.stdout
    keys = [o["Key"] for o in s3_up.client().list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert "documents.json" in keys and any(k.endswith("/manifest.json") for k in keys)
    assert any(k.endswith(".png") for k in keys)  # cropped images live in the bucket too
    assert list(workdir.iterdir()) == []  # nothing written to the local store directory
