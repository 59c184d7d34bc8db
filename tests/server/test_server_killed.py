"""The server process killed (SIGKILL) in the middle of an ingest: after a restart the job reads as
failed (or done, had it finished) and no half document is ever visible."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pymupdf

from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs

SERVER = """
import sys, uvicorn
from clausewise.server.app import create_app
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs
uvicorn.run(create_app(stores=Stores(LocalBlobs(sys.argv[1])), page_processes=1), host="127.0.0.1",
            port=int(sys.argv[2]), log_level="warning")
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _long_pdf(sample: Path, path: Path, copies: int = 12) -> Path:
    """The sample's pages repeated: long enough to be killed while its pages are being read."""
    with pymupdf.open(sample) as src, pymupdf.open() as out:
        for _ in range(copies):
            out.insert_pdf(src)
        out.save(path)
    return path


def test_sigkill_mid_ingest_leaves_no_half_document(
    tmp_path: Path, sample_pdf: Path, subprocess_env: dict[str, str], make_client: Any
) -> None:
    store, port = tmp_path / "store", _free_port()
    log = open(tmp_path / "server.log", "w")  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(store), str(port)],
        env=subprocess_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/documents", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.5)
        pdf = _long_pdf(sample_pdf, tmp_path / "long.pdf")
        with open(pdf, "rb") as fh:
            job_id = httpx.post(
                f"{base}/documents", files={"file": ("long.pdf", fh, "application/pdf")}, timeout=60
            ).json()["job_id"]
        status: dict[str, Any] = {}
        while time.monotonic() < deadline:
            status = httpx.get(f"{base}/jobs/{job_id}", timeout=5).json()
            if status["status"] == "running" and (status.get("progress") or {}).get("pages_done"):
                break
            if status["status"] in ("done", "failed"):
                break
            time.sleep(0.1)
        os.killpg(server.pid, signal.SIGKILL)  # the server and its page workers, mid-ingest
        server.wait(timeout=30)
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()

    restarted = make_client(store)  # a new server over the same store
    job = restarted.get(f"/jobs/{job_id}").json()
    print("killed at", status.get("status"), status.get("progress"), "-> after restart", job["status"])
    stores = Stores(LocalBlobs(store))
    manifest = stores.manifest("CEN_EN1991-9-9")
    if job["status"] == "failed":
        assert "restart" in job["error"]
        assert manifest is None  # nothing half-written became visible
        assert "CEN_EN1991-9-9" not in {k for k, v in stores.documents().items() if v.get("status") == "ingested"}
    else:  # it had finished before the kill landed: then it is complete
        assert job["status"] == "done" and manifest is not None
        assert stores.doc_table("CEN_EN1991-9-9", "sections")
    jobs = [json.loads(p.read_text()) for p in (store / ".jobs").glob("*.json")]
    assert all(j["status"] in ("done", "failed") for j in jobs)
