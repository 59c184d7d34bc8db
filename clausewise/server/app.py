"""The HTTP API: ``create_app()`` builds it; the lifespan opens the stores, loads the embedder and
compiles the graphs (nothing is loaded at import). Run: ``uvicorn --factory clausewise.server.app:create_app``."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse
from pydantic import SecretStr
from starlette.exceptions import HTTPException as StarletteHTTPException

from clausewise.server.deps import ServerState, require_api_key
from clausewise.server.documents import documents, jobs
from clausewise.server.jobs import IngestRunner, JobBook
from clausewise.server.query import query
from clausewise.server.sections import objects, sections
from clausewise.settings import Settings
from clausewise.stores import StoreError, Stores
from clausewise.system import System

log = logging.getLogger(__name__)


def _lifespan(system: System | None, settings: Settings, ingest_workers: int, page_processes: int) -> Any:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from langgraph.checkpoint.memory import InMemorySaver

        from clausewise.graph.ingest import build_ingest_graph, run_ingest
        from clausewise.graph.query import build_query_graph
        from clausewise.graph.state import IngestContext

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
        upload_dir = Path(tempfile.mkdtemp(prefix="clausewise-uploads-"))
        app.state.server = ServerState(
            settings=settings,
            system=running,
            query_graph=build_query_graph(running, checkpointer=InMemorySaver()),
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
    app = FastAPI(
        title="clausewise",
        summary="Search construction design codes.",
        lifespan=_lifespan(system, settings, ingest_workers, page_processes),
        dependencies=[Depends(require_api_key)],
    )
    app.state.settings = settings
    app.state.server = None
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware, allow_origins=settings.cors_origins, allow_methods=["*"], allow_headers=["*"]
        )
    for router in (documents, jobs, sections, objects, query):
        app.include_router(router)
    _install_error_handlers(app)
    return app
