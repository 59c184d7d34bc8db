"""Documents (upload, master list, delete) and the ingestion jobs uploads start."""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, HTTPException, Request, UploadFile, status
from fastapi.concurrency import run_in_threadpool

from clausewise.keys import given_identity, is_safe_key, section_label
from clausewise.server.deps import JobsDep, ServerDep, StoresDep
from clausewise.server.schemas import Deleted, Job, JobAccepted, SectionEntry

documents = APIRouter(prefix="/documents", tags=["documents"])
jobs = APIRouter(prefix="/jobs", tags=["jobs"])

CHUNK = 1 << 20
MULTIPART_OVERHEAD = 64 * 1024


def _safe_name(filename: str | None) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(filename or "upload.pdf").name).strip("._") or "upload"
    return name[:120] if name.lower().endswith(".pdf") else name[:116] + ".pdf"


async def _save_upload(upload: UploadFile, directory: Path, limit: int) -> Path:
    """Copy the upload to ``directory`` in chunks, refusing past ``limit`` bytes or without a PDF header."""
    path = directory / _safe_name(upload.filename)
    size = 0
    with open(path, "wb") as out:
        while chunk := await upload.read(CHUNK):
            if size == 0 and b"%PDF-" not in chunk[:1024]:
                raise HTTPException(
                    status.HTTP_415_UNSUPPORTED_MEDIA_TYPE, f"{upload.filename}: not a PDF (no %PDF header)"
                )
            size += len(chunk)
            if size > limit:
                raise HTTPException(
                    status.HTTP_413_CONTENT_TOO_LARGE,
                    f"{upload.filename}: larger than the {limit // (1024 * 1024)} MB upload limit",
                )
            out.write(chunk)
    if size == 0:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, f"{upload.filename}: empty file")
    return path


def _check_pdf(path: Path, max_file_mb: int, max_pages: int, tessdata_prefix: str | None = None) -> None:
    from clausewise.nodes.ingest.check_document import validate_pdf
    from clausewise.pdf import MUPDF_LOCK

    doc = validate_pdf(path, max_file_mb=max_file_mb, max_pages=max_pages, tessdata_prefix=tessdata_prefix)
    with MUPDF_LOCK:
        doc.close()


@documents.post("", status_code=status.HTTP_202_ACCEPTED, response_model=JobAccepted)
async def upload_document(
    request: Request,
    server: ServerDep,
    file: Annotated[UploadFile, File(description="The code PDF.")],
    publisher: Annotated[str | None, Form(max_length=40)] = None,
    code: Annotated[str | None, Form(max_length=80)] = None,
    overwrite: Annotated[bool, Form()] = False,
    ocr: Annotated[
        bool, Form(description="Also OCR pages whose text layer is garbage (image-only pages always are).")
    ] = False,
) -> JobAccepted:
    """Accept a PDF and ingest it in the background; poll ``GET /jobs/{job_id}``."""
    from clausewise.nodes.ingest.check_document import IngestError

    try:  # refuse a bad designation or publisher before reading the upload
        given_identity(publisher or None, code or None)
    except ValueError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    limit = server.settings.max_file_mb * 1024 * 1024
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + MULTIPART_OVERHEAD:
        raise HTTPException(
            status.HTTP_413_CONTENT_TOO_LARGE, f"the upload is larger than the {server.settings.max_file_mb} MB limit"
        )
    directory = Path(tempfile.mkdtemp(prefix="upload-", dir=server.upload_dir))
    try:
        path = await _save_upload(file, directory, limit)
        await run_in_threadpool(
            _check_pdf, path, server.settings.max_file_mb, server.settings.max_pages, server.settings.tessdata_prefix
        )
    except IngestError as exc:
        shutil.rmtree(directory, ignore_errors=True)
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    job = server.jobs.new(file.filename or path.name)
    inputs = {"publisher": publisher or None, "code": code or None, "overwrite": overwrite, "ocr": ocr}
    server.runner.submit(job, path, inputs)
    return JobAccepted(job_id=job.job_id)


@documents.get("")
def list_documents(stores: StoresDep) -> dict[str, dict[str, Any]]:
    """The master list: documents ingested and documents only referenced."""
    return stores.documents()


@documents.get("/{doc_key}/sections", response_model=list[SectionEntry])
def list_sections(doc_key: str, stores: StoresDep) -> list[SectionEntry]:
    """A document's sections in reading order (the keys for ``GET /sections/{key}``)."""
    if not is_safe_key(doc_key) or doc_key.count("_") != 1:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"not a valid document key: {doc_key!r}")
    if stores.manifest(doc_key) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no document {doc_key!r} is ingested")
    return [
        SectionEntry(
            key=k, section=section_label(k, s["section"]), kind=s["kind"], title=s.get("title"), pages=s["pages"]
        )
        for k, s in stores.doc_table(doc_key, "sections").items()
    ]


@documents.delete("/{doc_key}", response_model=Deleted)
def delete_document(doc_key: str, server: ServerDep) -> Deleted:
    """The document and its vectors (a vector store that is down: 503, nothing deleted)."""
    if not is_safe_key(doc_key) or doc_key.count("_") != 1:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"not a valid document key: {doc_key!r}")
    if server.stores.manifest(doc_key) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no document {doc_key!r} is ingested")
    return Deleted(doc_key=doc_key, deleted=server.system.delete_document(doc_key))


@jobs.get("/{job_id}", response_model=Job)
def get_job(job_id: str, book: JobsDep) -> Job:
    job = book.get(job_id)
    if job is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no job {job_id!r}")
    return job
