"""The server process killed (SIGKILL) in the middle of an ingest: after a restart the job reads as
failed (or done, had it finished) and no half document is ever visible."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pymupdf
from helpers.serving import server_process

from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs


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
    store = tmp_path / "store"
    with server_process(store, tmp_path / "server.log", subprocess_env) as server:
        base = server.url
        deadline = time.monotonic() + 90
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
        os.killpg(server.proc.pid, signal.SIGKILL)  # the server and its page workers, mid-ingest
        server.proc.wait(timeout=30)

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
