"""A server killed mid-ingest leaves its upload folder (``clausewise-uploads-*`` in the temporary
folder) with the PDF in it; the next server removes it on start, and never the folder of a server that
is still running."""

from __future__ import annotations

import fcntl
import os
import signal
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.serving import server_process


def _uploads(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("clausewise-uploads-*"))


def test_upload_left_by_a_killed_server_is_removed_on_the_next_start(
    tmp_path: Path,
    sample_pdf: Path,
    subprocess_env: dict[str, str],
    make_client: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tmp, store = tmp_path / "tmp", tmp_path / "store"
    tmp.mkdir()
    with server_process(store, tmp_path / "server.log", {**subprocess_env, "TMPDIR": str(tmp)}) as server:
        with open(sample_pdf, "rb") as fh:
            r = httpx.post(f"{server.url}/documents", files={"file": ("code.pdf", fh, "application/pdf")}, timeout=60)
        assert r.status_code == 202, r.text
        os.killpg(server.proc.pid, signal.SIGKILL)  # the server and its page workers, while the job runs
        server.proc.wait(timeout=30)
    [left] = _uploads(tmp)
    assert list(left.rglob("*.pdf")), "the killed server's upload should still be there"

    # another server, still running, whose folder must survive
    alive = tmp / "clausewise-uploads-999999-alive"
    alive.mkdir()
    holder = open(alive / ".owner", "a")  # noqa: SIM115 - closed below
    fcntl.flock(holder, fcntl.LOCK_EX)
    # a folder of an older version (no owner file), long unused
    older = tmp / "clausewise-uploads-old"
    older.mkdir()
    (older / "x.pdf").write_bytes(b"%PDF-1.7")
    os.utime(older, (time.time() - 7200, time.time() - 7200))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(tmp))
        client = make_client(store)  # the restart
        assert not left.exists() and not older.exists()
        assert alive.exists()
        [own] = [p for p in _uploads(tmp) if p != alive]
        assert client.app.state.server.upload_dir == own
    finally:
        holder.close()
