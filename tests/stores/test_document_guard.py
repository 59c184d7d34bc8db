"""The per-document guard on both backends: an flock on a local store, a lease object with conditional
writes in a bucket (moto's S3 server on loopback). One holder at a time, a waiter gives up with a clear
error, a dead holder does not block for ever (at once locally, after the lease's expiry in a bucket),
a live holder keeps its lease by renewing it, and a release never removes another holder's lease."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clausewise.stores import StoreError, Stores
from clausewise.stores.base import Blobs, Lease
from clausewise.stores.local import LocalBlobs

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server", reason="moto[server] is a dev dependency")

from clausewise.stores.r2 import R2Blobs  # noqa: E402

DOC = "CEN_EN1991-9-9"
LOCK = f"docs/{DOC}/lock.json"


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    yield f"http://127.0.0.1:{port}"
    server.stop()


def _bucket(url: str, **kwargs: Any) -> R2Blobs:
    name = f"cw-{uuid.uuid4().hex[:16]}"
    boto3.session.Session().client(
        "s3", endpoint_url=url, aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1"
    ).create_bucket(Bucket=name)
    return R2Blobs(url, "k", "s", name, **kwargs)


@pytest.fixture(params=["local", "r2"])
def blobs(request: pytest.FixtureRequest, tmp_path: Path) -> Blobs:
    if request.param == "local":
        return LocalBlobs(tmp_path / "store")
    return _bucket(request.getfixturevalue("s3_url"))


def test_one_holder_at_a_time_and_a_waiter_gives_up_clearly(blobs: Blobs) -> None:
    stores = Stores(blobs)
    with stores.document_lock(DOC):
        started = time.monotonic()
        with pytest.raises(StoreError, match="held by another writer"):
            with stores.document_lock(DOC, timeout_s=0.5):
                pass
        assert 0.4 < time.monotonic() - started < 5
    with stores.document_lock(DOC, timeout_s=1):  # released: free again
        pass


def test_a_waiter_gets_the_guard_when_the_holder_releases_it(blobs: Blobs) -> None:
    stores = Stores(blobs)
    order: list[str] = []
    inside = threading.Event()

    def holder() -> None:
        with stores.document_lock(DOC):
            inside.set()
            order.append("holder in")
            time.sleep(0.6)
            order.append("holder out")

    thread = threading.Thread(target=holder)
    thread.start()
    assert inside.wait(10)
    with stores.document_lock(DOC, timeout_s=30):
        order.append("waiter in")
    thread.join()
    assert order == ["holder in", "holder out", "waiter in"]


def test_delete_waits_for_a_commit_holding_the_guard(blobs: Blobs) -> None:
    stores = Stores(blobs)
    writer = stores.new_generation(DOC)
    writer.put_json("sections", {})
    writer.publish({"doc_key": DOC})
    inside, deleted = threading.Event(), threading.Event()

    def delete() -> None:
        stores.delete_document(DOC)
        deleted.set()

    with stores.document_lock(DOC):
        thread = threading.Thread(target=delete)
        thread.start()
        time.sleep(0.5)
        assert not deleted.is_set() and stores.manifest(DOC) is not None  # waiting for the guard
        inside.set()
    thread.join(30)
    assert deleted.is_set() and stores.manifest(DOC) is None
    assert stores.blobs.list(f"docs/{DOC}/") == []  # the lease object is gone with the guard


def test_the_guard_leaves_nothing_in_the_listing(blobs: Blobs) -> None:
    stores = Stores(blobs)
    with stores.document_lock(DOC):
        pass
    assert blobs.list("") == [] and blobs.list_dirs("docs/") in ([], [DOC])


# ---------------------------------------------------------------- a dead holder
HOLD_AND_WAIT = """
import sys, time
from clausewise.stores.local import LocalBlobs
from clausewise.stores.base import Stores
with Stores(LocalBlobs(sys.argv[1])).document_lock(sys.argv[2]):
    print("held", flush=True)
    time.sleep(600)
"""


def test_local_guard_of_a_killed_holder_is_free_at_once(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", HOLD_AND_WAIT, str(tmp_path), DOC], stdout=subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
        with pytest.raises(StoreError):
            with Stores(LocalBlobs(tmp_path)).document_lock(DOC, timeout_s=0.3):
                pass
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        started = time.monotonic()
        with Stores(LocalBlobs(tmp_path)).document_lock(DOC, timeout_s=10):
            assert time.monotonic() - started < 5  # at once, not after waiting out the timeout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_lease_of_a_dead_holder_is_taken_over_after_it_expires(s3_url: str) -> None:
    blobs = _bucket(s3_url, lease_ttl_s=1.0)
    # what a holder that died leaves: a lease nobody renews
    blobs.write(LOCK, json.dumps({"owner": "dead-host:1:x", "expires_at": time.time() + 1.0}).encode())
    lease = Lease(blobs, LOCK, ttl_s=1.0)
    assert lease.try_acquire() is False  # not expired yet
    started = time.monotonic()
    with Stores(blobs).document_lock(DOC, timeout_s=10):
        waited = time.monotonic() - started
        assert json.loads(blobs.read(LOCK)[0])["owner"] != "dead-host:1:x"  # type: ignore[index]
    assert 0.3 < waited < 5
    assert blobs.read(LOCK) is None  # released


def test_a_torn_lease_object_is_taken_over(s3_url: str) -> None:
    blobs = _bucket(s3_url)
    blobs.write(LOCK, b"{not json")
    with Stores(blobs).document_lock(DOC, timeout_s=5):
        pass


def test_a_live_holder_renews_its_lease_past_the_ttl(s3_url: str) -> None:
    # a ttl of 3 s, renewed every 1 s: a loaded 2-core CI machine once stalled the renewer past a 1 s ttl
    blobs = _bucket(s3_url, lease_ttl_s=3.0)
    other = Lease(blobs, LOCK, ttl_s=3.0)
    with blobs.lock(LOCK, timeout_s=5):
        deadline = time.monotonic() + 7.5  # 2.5 ttl: without renewal it would have expired twice
        while time.monotonic() < deadline:
            assert other.try_acquire() is False
            time.sleep(0.1)


def test_release_never_removes_a_lease_another_holder_took_over(s3_url: str) -> None:
    blobs = _bucket(s3_url)
    mine = Lease(blobs, LOCK, ttl_s=60)
    mine.acquire(5)
    mine._stop.set()  # a holder that stalled: it stops renewing ...
    # ... its lease expires and another holder takes it over
    got = blobs.read(LOCK)
    assert got is not None
    blobs.write_if(LOCK, json.dumps({"owner": "other:2:y", "expires_at": time.time() + 60}).encode(), got[1])
    assert mine.renew() is False and mine.lost
    mine.release()
    assert json.loads(blobs.read(LOCK)[0])["owner"] == "other:2:y"  # type: ignore[index]


def test_release_keeps_a_lease_taken_over_between_its_check_and_its_delete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A holder that stalled past its lease's expiry reads the lease as its own while releasing, and
    another writer takes it over right then: the release must not delete the other writer's lease."""
    blobs = LocalBlobs(tmp_path)
    mine = Lease(blobs, LOCK, ttl_s=60)
    mine.acquire(5)
    read = blobs.read

    def read_then_taken_over(path: str) -> tuple[bytes, str] | None:
        got = read(path)
        blobs.write(LOCK, json.dumps({"owner": "other:2:y", "expires_at": time.time() + 60}).encode())
        return got

    monkeypatch.setattr(blobs, "read", read_then_taken_over)
    mine.release()
    monkeypatch.setattr(blobs, "read", read)
    got = blobs.read(LOCK)
    assert got is not None and json.loads(got[0])["owner"] == "other:2:y"


def test_the_lease_works_over_any_blobs_backend(tmp_path: Path) -> None:
    blobs = LocalBlobs(tmp_path)
    first, second = Lease(blobs, LOCK, ttl_s=30), Lease(blobs, LOCK, ttl_s=30)
    assert first.try_acquire() is True
    assert second.try_acquire() is False
    first.release()
    assert second.try_acquire() is True
    second.release()
    assert blobs.read(LOCK) is None
