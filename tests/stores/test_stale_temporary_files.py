"""A process killed in the middle of a local write leaves ``.<name>.<pid>.<n>.tmp`` beside the target;
the next LocalBlobs over the store removes it, and never a temporary file a live writer still owns."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs

KILLED_IN_KV_WRITE = """
import os, signal, sys
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs
stores = Stores(LocalBlobs(sys.argv[1]))
def die(src, dst):  # the temporary file is written and synced; the rename never happens
    os.kill(os.getpid(), signal.SIGKILL)
os.replace = die
stores.update_kv(lambda kv: {**kv, "ce": {"term": "Ce", "equivalents": [], "values": []}})
"""


def _tmp_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(".*.tmp"))


def test_a_kill_during_the_kv_write_leaves_a_temporary_file_the_next_open_removes(tmp_path: Path) -> None:
    store = tmp_path / "store"
    Stores(LocalBlobs(store)).update_kv(lambda kv: {"old": {"term": "old", "equivalents": [], "values": []}})
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", KILLED_IN_KV_WRITE, str(store)], env=env, timeout=120)
    assert proc.returncode == -9
    [left] = _tmp_files(store)
    assert left.startswith(".kv.json.") and left.endswith(".tmp")

    stores = Stores(LocalBlobs(store))  # the next start
    assert _tmp_files(store) == []
    assert set(stores.kv()) == {"old"}  # the interrupted write changed nothing


def test_only_stale_temporary_files_are_removed(tmp_path: Path) -> None:
    store = tmp_path / "store"
    LocalBlobs(store)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        dead_pid = int(dead.stdout)
        gen = store / "docs" / "CEN_EN1991-9-9" / "20250101T000000-abcdef12"
        gen.mkdir(parents=True)
        files = {
            "dead writer": store / f".kv.json.{dead_pid}.3.tmp",
            "dead writer in a generation": gen / f".vectors.npy.{dead_pid}.0.tmp",
            "live writer": store / f".documents.json.{live.pid}.1.tmp",
            "live pid, an hour old": gen / f".sections.json.{live.pid}.2.tmp",
            "not a temporary file": store / ".lock",
            "a store file": store / "kv.json",
        }
        for path in files.values():
            path.write_bytes(b"x")
        old = time.time() - 2 * 3600
        os.utime(files["live pid, an hour old"], (old, old))

        removed = LocalBlobs(store, clean_temporary=False).remove_stale_temporary_files()
        assert sorted(removed) == sorted(
            [files["dead writer"], files["dead writer in a generation"], files["live pid, an hour old"]]
        )
        assert (
            files["live writer"].exists() and files["not a temporary file"].exists() and files["a store file"].exists()
        )
    finally:
        live.kill()
        live.wait()
