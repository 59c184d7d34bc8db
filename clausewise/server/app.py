"""The HTTP API: ``create_app()`` builds it; the lifespan opens the stores, loads the embedder and
compiles the graphs (nothing is loaded at import). Run: ``uvicorn --factory clausewise.server.app:create_app``.

:class:`RequestGuard`, the outermost layer but CORS, answers before any body is read: 401 without the
API key (the OpenAPI docs included, unless ``CLAUSEWISE_DOCS_PUBLIC``), 413 for a declared length past
the route's limit, and 413 as soon as a streamed (chunked) body passes it. The docs pages use the
Swagger UI and ReDoc files shipped by ``fastapi-offline``, served from ``/static-offline-docs``."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

from fastapi import Depends, FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from fastapi_offline import FastAPIOffline
from pydantic import SecretStr
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clausewise.server.deps import ServerState, require_api_key
from clausewise.server.documents import MULTIPART_OVERHEAD, documents, jobs
from clausewise.server.jobs import IngestRunner, JobBook
from clausewise.server.query import query
from clausewise.server.sections import objects, sections
from clausewise.settings import Settings
from clausewise.stores import StoreError, Stores
from clausewise.system import System

log = logging.getLogger(__name__)

DOCS_PATHS = ("/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json")
STATIC_DOCS = "/static-offline-docs"  # Swagger UI / ReDoc files: the same for everyone, never behind the key
UPLOADS_PREFIX = "clausewise-uploads-"
OWNER_FILE = ".owner"  # flocked by the server using the upload folder, for as long as it runs
UNOWNED_STALE_S = 3600.0  # an upload folder of an older server (no owner file) this old is left over


class RequestGuard:
    """Pure ASGI: the API key and the body size are checked before the application reads anything."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app, self.settings = app, settings
        secret = settings.clausewise_api_key
        self.key = secret.get_secret_value().encode() if secret else None
        self.upload_limit = settings.max_file_mb * 1024 * 1024 + MULTIPART_OVERHEAD
        self.body_limit = settings.clausewise_max_query_kb * 1024

    def _open(self, path: str) -> bool:
        return path.startswith(STATIC_DOCS + "/") or (self.settings.clausewise_docs_public and path in DOCS_PATHS)

    def limit(self, scope: Scope) -> int:
        path = scope["path"].rstrip("/")
        return self.upload_limit if scope["method"] == "POST" and path == "/documents" else self.body_limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if self.key and not self._open(scope["path"]):
            given = headers.get(b"x-api-key", b"")
            if not secrets.compare_digest(given, self.key):
                await _reply(send, 401, "missing or wrong API key (send it in the X-API-Key header)")
                return
        limit = self.limit(scope)
        declared = headers.get(b"content-length", b"")
        if declared.isdigit() and int(declared) > limit:
            await _reply(send, 413, f"the request body is larger than the {_size(limit)} limit of {scope['path']}")
            return
        received, answered = 0, False

        async def counted_receive() -> Message:
            nonlocal received, answered
            if answered:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    answered = True
                    await _reply(send, 413, f"the request body is larger than the {_size(limit)} limit")
                    return {"type": "http.disconnect"}  # the application stops reading
            return message

        async def guarded_send(message: Message) -> None:
            if not answered:  # once this layer has answered, the application's reply is dropped
                await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except ClientDisconnect:
            if not answered:
                raise


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit // 1024} KB"


async def _reply(send: Send, status_code: int, detail: str) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status_code,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _upload_dir() -> tuple[Path, IO[str]]:
    """A fresh upload folder, and its owner file flocked for as long as this server runs; first, the
    folders of servers that died (their owner file is not locked) are removed with the uploads they held."""
    root = Path(tempfile.gettempdir())
    for old in root.glob(UPLOADS_PREFIX + "*"):
        try:
            owner = old / OWNER_FILE
            if not owner.exists():
                if time.time() - old.stat().st_mtime > UNOWNED_STALE_S:
                    shutil.rmtree(old, ignore_errors=True)
                continue
            with open(owner, "a") as fh:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # a live server's
            shutil.rmtree(old, ignore_errors=True)
            log.warning("removed %s, left by a server that stopped without cleaning up", old)
        except OSError:
            continue
    directory = Path(tempfile.mkdtemp(prefix=f"{UPLOADS_PREFIX}{os.getpid()}-"))
    owner_fh = open(directory / OWNER_FILE, "a")  # noqa: SIM115 - held until shutdown
    fcntl.flock(owner_fh, fcntl.LOCK_EX)
    return directory, owner_fh


def _lifespan(system: System | None, settings: Settings, ingest_workers: int, page_processes: int) -> Any:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from clausewise.graph.ingest import build_ingest_graph, run_ingest
        from clausewise.graph.query import build_query_graph
        from clausewise.graph.state import IngestContext
        from clausewise.threads import BoundedSaver

        running = system or System(settings)
        book = JobBook(running.cache_dir / ".jobs" if running.stores.blobs.local_root else running.cache_dir / "jobs")
        interrupted = book.fail_interrupted()
        if interrupted:
            log.warning("%d ingest job(s) were interrupted by a restart", interrupted)
        ingest_graph = build_ingest_graph(running)
        context = IngestContext(
            **running.ingest_limits()
            | {"max_file_mb": settings.max_file_mb, "max_pages": settings.max_pages, "page_processes": page_processes}
        )

        def ingest(path: Path, inputs: dict[str, Any], on_progress: Callable[..., None]) -> dict[str, Any]:
            return run_ingest(running, path, **inputs, on_progress=on_progress, graph=ingest_graph, context=context)

        runner = IngestRunner(book, ingest, workers=ingest_workers)
        upload_dir, owner = _upload_dir()
        threads = BoundedSaver(settings.clausewise_threads_max, settings.clausewise_thread_ttl_s)
        query_graph = build_query_graph(running, checkpointer=threads)
        app.state.server = ServerState(
            settings=settings,
            system=running,
            query_graph=query_graph,
            oneshot_graph=query_graph.copy({"checkpointer": None}),  # a question without a thread: no memory
            threads=threads,
            jobs=book,
            runner=runner,
            upload_dir=upload_dir,
        )
        try:
            yield
        finally:
            runner.shutdown()
            app.state.server = None
            shutil.rmtree(upload_dir, ignore_errors=True)
            owner.close()

    return lifespan


def _detail(exc: RequestValidationError) -> str:
    parts = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path", "header", "form"))
        message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts) or "invalid request"


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": _detail(exc)}, status_code=status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=status.HTTP_503_SERVICE_UNAVAILABLE)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": f"internal error: {type(exc).__name__}"}, status_code=500)


def create_app(
    system: System | None = None,
    *,
    stores: Stores | None = None,
    embedder: Any = None,
    settings: Settings | None = None,
    api_key: str | None = None,
    max_upload_mb: int | None = None,
    max_pages: int | None = None,
    cors_origins: list[str] | None = None,
    ingest_workers: int = 2,
    page_processes: int = 2,
) -> FastAPI:
    """The API over ``system`` (default: the configured one; or one over ``stores``/``embedder``). An
    argument wins over the settings (``CLAUSEWISE_API_KEY``, ``CLAUSEWISE_CORS_ORIGINS``,
    ``MAX_FILE_MB``, ``MAX_PAGES``); no API key means the API is open."""
    settings = settings or (system.settings if system else Settings())
    overrides: dict[str, Any] = {}
    if api_key is not None:
        overrides["clausewise_api_key"] = SecretStr(api_key) if api_key else None
    if max_upload_mb:
        overrides["max_file_mb"] = max_upload_mb
    if max_pages:
        overrides["max_pages"] = max_pages
    if cors_origins is not None:
        overrides["clausewise_cors_origins"] = ",".join(cors_origins)
    settings = settings.model_copy(update=overrides)
    if system is None and stores is not None:
        system = System(settings, stores, embedder=embedder)
    app = FastAPIOffline(
        title="clausewise",
        summary="Search construction design codes.",
        lifespan=_lifespan(system, settings, ingest_workers, page_processes),
        static_url=STATIC_DOCS,
    )
    app.state.settings = settings
    app.state.server = None
    app.add_middleware(RequestGuard, settings=settings)
    if settings.cors_origins:  # outside the guard: preflights answered, 401/413 carry CORS headers
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["*"], allow_headers=["*"]
        )
    for router in (documents, jobs, sections, objects, query):
        # the guard enforces the key; the dependency also declares it in the OpenAPI document
        app.include_router(router, dependencies=[Depends(require_api_key)])
    _install_error_handlers(app)
    return app
