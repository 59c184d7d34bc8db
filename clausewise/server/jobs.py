"""Ingestion jobs: run in a small thread pool, recorded as JSON files so a restart can report them."""

from __future__ import annotations

import logging
import os
import shutil
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from clausewise.server.schemas import Job

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted by a server restart; upload again"
_SAFE_ID = set("0123456789abcdef")


class JobBook:
    """Job records under ``directory`` (one ``<id>.json`` each), written atomically on every change."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.directory.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def _path(self, job_id: str) -> Path:
        return self.directory / f"{job_id}.json"

    def save(self, job: Job) -> None:
        tmp = self.directory / f".{job.job_id}.{threading.get_ident()}.tmp"
        tmp.write_text(job.model_dump_json())
        os.replace(tmp, self._path(job.job_id))

    def get(self, job_id: str) -> Job | None:
        if not job_id or not set(job_id) <= _SAFE_ID or len(job_id) != 32:
            return None
        try:
            return Job.model_validate_json(self._path(job_id).read_text())
        except (OSError, ValueError):
            return None

    def update(self, job_id: str, **changes: Any) -> Job:
        with self._lock:
            job = self.get(job_id)
            if job is None:
                raise KeyError(job_id)
            job = Job.model_validate({**job.model_dump(), **changes})
            self.save(job)
            return job

    def new(self, file: str) -> Job:
        job = Job(job_id=uuid.uuid4().hex, status="queued", file=file)
        with self._lock:
            self.save(job)
        return job

    def fail_interrupted(self) -> int:
        """Jobs a previous server left queued or running can never finish: report them failed."""
        count = 0
        for path in sorted(self.directory.glob("*.json")):
            job = self.get(path.stem)
            if job is not None and job.status in ("queued", "running"):
                self.update(job.job_id, status="failed", error=INTERRUPTED)
                count += 1
        return count


class IngestRunner:
    """Runs ``ingest(path, job_id, on_progress)`` for uploads in at most ``workers`` threads."""

    def __init__(self, book: JobBook, ingest: Callable[..., dict[str, Any]], workers: int = 2):
        self.book = book
        self.ingest = ingest
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ingest")

    def submit(self, job: Job, path: Path, inputs: dict[str, Any]) -> None:
        self.pool.submit(self._run, job.job_id, path, inputs)

    def _run(self, job_id: str, path: Path, inputs: dict[str, Any]) -> None:
        from clausewise.nodes.ingest.check_document import IngestError
        from clausewise.stores import StoreError

        self.book.update(job_id, status="running")
        progress: dict[str, Any] = {"pages_done": 0, "pages": None}

        def on_progress(
            pages: int | None = None,
            page_done: bool = False,
            doc_key: str | None = None,
            step: str | None = None,
            **_: Any,  # OCR's ocr_pages / ocr_page_done: the job's record counts pages only
        ) -> None:
            if step is not None:
                return  # embed and commit: the job's record counts pages only
            if pages is not None:
                progress["pages"] = pages
            if page_done:
                progress["pages_done"] += 1
            changes: dict[str, Any] = {"progress": dict(progress)}
            if doc_key:
                changes["doc_key"] = doc_key
            self.book.update(job_id, **changes)

        try:
            result = self.ingest(path, inputs, on_progress)
        except (IngestError, StoreError, ValueError) as exc:
            self.book.update(job_id, status="failed", error=str(exc))
        except Exception as exc:  # a worker must always leave a final record
            log.exception("ingest job %s failed", job_id)
            self.book.update(job_id, status="failed", error=f"internal error: {type(exc).__name__}")
        else:
            self.book.update(
                job_id,
                status="done",
                doc_key=result.get("doc_key"),
                result={k: result.get(k) for k in ("status", "summary", "warnings")},
            )
        finally:
            shutil.rmtree(path.parent, ignore_errors=True)

    def shutdown(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
