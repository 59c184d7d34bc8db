"""The HTTP API: ``create_app()`` builds it; the lifespan opens the stores, loads the embedder and
compiles the graphs (nothing is loaded at import). Run: ``uvicorn --factory clausewise.server.app:create_app``."""

from __future__ import annotations

import logging
import os
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
from starlette.exceptions import HTTPException as StarletteHTTPException

from clausewise.server.deps import ServerConfig, ServerState, require_api_key
from clausewise.server.documents import documents, jobs
from clausewise.server.jobs import IngestRunner, JobBook
from clausewise.server.query import query
from clausewise.server.sections import objects, sections
from clausewise.settings import Settings
from clausewise.stores import StoreError, Stores

log = logging.getLogger(__name__)


def jobs_dir(stores: Stores) -> Path:
    """``<root>/.jobs`` for a local store, else the user's cache directory."""
    root = getattr(stores.blobs, "root", None)
    return Path(root) / ".jobs" if root else Path.home() / ".cache" / "clausewise" / "jobs"


def _ingest_function(stores: Stores, embedder: Any, config: ServerConfig, settings: Settings) -> Callable[..., Any]:
    from clausewise.graph.ingest import build_ingest_graph
    from clausewise.graph.state import IngestContext
    from clausewise.stores import open_vector_index

    index = open_vector_index(settings, stores)
    graph = build_ingest_graph(
        stores=stores, embedder=embedder, remote_index=index if hasattr(index, "upsert_document") else None
    )
    root = getattr(stores.blobs, "root", None)
    context = IngestContext(
        store_dir=str(root or settings.store_dir),
        max_file_mb=config.max_upload_mb,
        max_pages=config.max_pages,
        page_processes=config.page_processes,
    )

    def ingest(path: Path, inputs: dict[str, Any], on_progress: Callable[..., None]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for mode, chunk in graph.stream(
            {"path": str(path), **inputs}, context=context, stream_mode=["updates", "values"]
        ):
            if mode == "values":
                result = chunk
                continue
            for node, update in chunk.items():
                if node == "check_document" and update and update.get("doc"):
                    on_progress(pages=update["doc"]["pages"], doc_key=update.get("doc_key"))
                elif node == "extract_page":
                    on_progress(page_done=True)
        return result

    return ingest


def _lifespan(stores: Stores | None, embedder: Any, settings: Settings, config: ServerConfig) -> Any:
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        from langgraph.checkpoint.memory import InMemorySaver

        from clausewise.graph.query import build_query_graph
        from clausewise.stores import open_stores
        from clausewise.tools.models import build_embedder

        s = stores or open_stores(settings)
        model = embedder or build_embedder(settings)
        book = JobBook(jobs_dir(s))
        interrupted = book.fail_interrupted()
        if interrupted:
            log.warning("%d ingest job(s) were interrupted by a restart", interrupted)
        runner = IngestRunner(book, _ingest_function(s, model, config, settings), workers=config.ingest_workers)
        upload_dir = Path(tempfile.mkdtemp(prefix="clausewise-uploads-"))
        app.state.server = ServerState(
            config=config,
            stores=s,
            embedder=model,
            query_graph=build_query_graph(stores=s, embedder=model, checkpointer=InMemorySaver()),
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
    stores: Stores | None = None,
    embedder: Any = None,
    settings: Settings | None = None,
    *,
    api_key: str | None = None,
    max_upload_mb: int | None = None,
    max_pages: int | None = None,
    cors_origins: list[str] | None = None,
    ingest_workers: int = 2,
    page_processes: int = 2,
) -> FastAPI:
    """The API over ``stores`` (default: the configured stores). An argument wins over the settings;
    the API key is ``api_key`` or else ``CLAUSEWISE_API_KEY``; none means the API is open."""
    settings = settings or Settings()
    origins = (
        cors_origins
        if cors_origins is not None
        else [o.strip() for o in os.environ.get("CLAUSEWISE_CORS_ORIGINS", "").split(",") if o.strip()]
    )
    config = ServerConfig(
        api_key=api_key if api_key is not None else (os.environ.get("CLAUSEWISE_API_KEY") or None),
        max_upload_mb=max_upload_mb or settings.max_file_mb,
        max_pages=max_pages or settings.max_pages,
        cors_origins=origins,
        ingest_workers=ingest_workers,
        page_processes=page_processes,
    )
    app = FastAPI(
        title="clausewise",
        summary="Search construction design codes.",
        lifespan=_lifespan(stores, embedder, settings, config),
        dependencies=[Depends(require_api_key)],
    )
    app.state.config = config
    app.state.server = None
    if config.cors_origins:
        app.add_middleware(CORSMiddleware, allow_origins=config.cors_origins, allow_methods=["*"], allow_headers=["*"])
    for router in (documents, jobs, sections, objects, query):
        app.include_router(router)
    _install_error_handlers(app)
    return app
