"""Uploads, ingestion jobs, the master list, sections and objects over HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clausewise.ocr import find_tessdata
from clausewise.sample import write_sample_pdf
from clausewise.server.jobs import INTERRUPTED
from clausewise.settings import Settings

OCR_READY = find_tessdata(Settings().tessdata_prefix) is not None


def test_upload_ingests_and_serves_the_document(
    tmp_path: Path,
    sample_pdf: Path,
    make_client: Callable[..., Any],
    wait_job: Callable[..., Any],
    upload_pdf: Callable[..., Any],
) -> None:
    client = make_client(tmp_path / "store")
    r = upload_pdf(client, sample_pdf)
    assert r.status_code == 202, r.text
    job = wait_job(client, r.json()["job_id"])
    assert job["status"] == "done", job
    assert job["doc_key"] == "CEN_EN1991-9-9"
    assert job["progress"]["pages"] and job["progress"]["pages_done"] == job["progress"]["pages"]
    assert set(job) >= {"job_id", "status", "progress", "error", "doc_key"}
    assert (tmp_path / "store" / ".jobs" / f"{job['job_id']}.json").exists()

    docs = client.get("/documents").json()
    assert docs["CEN_EN1991-9-9"]["status"] == "ingested"
    assert any(d.get("status") == "referenced-only" for d in docs.values())

    section = client.get("/sections/CEN_EN1991-9-9_table_5.1")
    assert section.status_code == 200 and "1,2" in section.json()["text"]
    image = client.get("/objects/CEN_EN1991-9-9_table_5.1")
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    assert image.content.startswith(b"\x89PNG")

    again = wait_job(client, upload_pdf(client, sample_pdf).json()["job_id"])
    assert again["status"] == "done" and again["result"]["status"] == "skipped"

    assert client.delete("/documents/CEN_EN1991-9-9").status_code == 200
    assert client.get("/sections/CEN_EN1991-9-9_table_5.1").status_code == 404
    assert client.delete("/documents/CEN_EN1991-9-9").status_code == 404


@pytest.mark.parametrize(
    "name, codes",
    [
        ("not_pdf", {415}),
        ("corrupt", {422}),
        ("encrypted", {422}),
        ("truncated", {422}),
        ("zero_pages", {422}),
        *([] if OCR_READY else [("no_text", {422})]),  # with Tesseract's data an image-only page is OCR'd
    ],
)
def test_bad_uploads_are_refused_and_the_store_is_unchanged(
    name: str,
    codes: set[int],
    bad_pdfs: dict[str, Path],
    sample_store: SimpleNamespace,
    copy_store: Any,
    snapshot: Any,
    make_client: Callable[..., Any],
    upload_pdf: Callable[..., Any],
) -> None:
    store = copy_store(sample_store.dir)
    client = make_client(store)
    before = snapshot(store)
    r = upload_pdf(client, bad_pdfs[name])
    assert r.status_code in codes, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and bad_pdfs[name].name in detail
    assert snapshot(store) == before


def test_oversized_upload_is_413(
    tmp_path: Path, sample_pdf: Path, make_client: Callable[..., Any], snapshot: Any, upload_pdf: Callable[..., Any]
) -> None:
    big = tmp_path / "big.pdf"
    big.write_bytes(sample_pdf.read_bytes() + b"%" * (1024 * 1024 + 10))
    store = tmp_path / "store"
    client = make_client(store, max_upload_mb=1)
    before = snapshot(store)
    r = upload_pdf(client, big)
    assert r.status_code == 413 and "1 MB" in r.json()["detail"]
    assert snapshot(store) == before


def test_missing_file_field_is_a_clear_422(tmp_path: Path, make_client: Callable[..., Any]) -> None:
    r = make_client(tmp_path / "store").post("/documents", data={"publisher": "CEN"})
    assert r.status_code == 422 and "file" in r.json()["detail"]


def test_path_characters_and_unknown_keys(
    sample_store: SimpleNamespace,
    copy_store: Any,
    bad_pdfs: dict[str, Path],
    make_client: Callable[..., Any],
    wait_job: Callable[..., Any],
    upload_pdf: Callable[..., Any],
    snapshot: Any,
) -> None:
    store = copy_store(sample_store.dir)
    client = make_client(store)
    before = snapshot(store)
    for path in ("/sections/..%5Cetc", "/sections/a;rm", "/sections/CEN", "/objects/x$(id)_1", "/documents/..evil"):
        method = client.delete if path.startswith("/documents") else client.get
        r = method(path)
        assert r.status_code == 400, (path, r.text)
        assert "not a valid" in r.json()["detail"]
    for path in (
        "/sections/CEN_EN9999-1_1.1",
        "/objects/CEN_EN1991-9-9_figure_99",
        "/jobs/nope",
        "/jobs/" + "0" * 32,
        "/sections/../../etc/passwd",
    ):
        assert client.get(path).status_code == 404, path
    assert client.delete("/documents/CEN_EN9999-1").status_code == 404
    assert snapshot(store) == before
    job = wait_job(client, upload_pdf(client, bad_pdfs["path_chars"]).json()["job_id"])
    assert job["status"] == "done" and job["result"]["status"] == "skipped"  # same bytes as the sample


def test_three_uploads_at_once_all_complete(
    tmp_path: Path, make_client: Callable[..., Any], wait_job: Callable[..., Any], upload_pdf: Callable[..., Any]
) -> None:
    pdfs = [write_sample_pdf(tmp_path / f"EN_1991-{d}.pdf", designation=f"EN 1991-{d}") for d in ("9-7", "9-8", "9-9")]
    client = make_client(tmp_path / "store")
    ids = [upload_pdf(client, p).json()["job_id"] for p in pdfs]
    jobs = [wait_job(client, i) for i in ids]
    assert [j["status"] for j in jobs] == ["done"] * 3, jobs
    docs = client.get("/documents").json()
    assert {"CEN_EN1991-9-7", "CEN_EN1991-9-8", "CEN_EN1991-9-9"} <= {
        k for k, d in docs.items() if d["status"] == "ingested"
    }


def test_a_running_job_is_failed_after_a_restart(tmp_path: Path, make_client: Callable[..., Any]) -> None:
    store = tmp_path / "store"
    jobs = store / ".jobs"
    jobs.mkdir(parents=True)
    job_id = "a" * 32
    (jobs / f"{job_id}.json").write_text(
        json.dumps(
            {
                "job_id": job_id,
                "status": "running",
                "progress": {"pages_done": 2, "pages": 9},
                "error": None,
                "doc_key": "CEN_EN1991-9-9",
            }
        )
    )
    done_id = "b" * 32
    (jobs / f"{done_id}.json").write_text(json.dumps({"job_id": done_id, "status": "done", "doc_key": "X_Y"}))
    client = make_client(store)
    job = client.get(f"/jobs/{job_id}").json()
    assert job["status"] == "failed" and job["error"] == INTERRUPTED
    assert client.get(f"/jobs/{done_id}").json()["status"] == "done"
