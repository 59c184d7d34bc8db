"""What the routers depend on: the server's state, held by the app and filled in by the lifespan."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import APIKeyHeader

from clausewise.server.jobs import IngestRunner, JobBook
from clausewise.settings import Settings
from clausewise.stores import Stores
from clausewise.system import System


@dataclass
class ServerState:
    settings: Settings  # the deployment settings with create_app's arguments applied (limits, key, CORS)
    system: System
    query_graph: Any  # checkpointed in ``threads``: questions with a thread id
    jobs: JobBook
    runner: IngestRunner
    upload_dir: Path
    oneshot_graph: Any = None  # the same graph without a checkpointer: questions without a thread id
    threads: Any = None  # the BoundedSaver behind query_graph

    def graph_for(self, thread_id: str | None) -> Any:
        return self.query_graph if thread_id or self.oneshot_graph is None else self.oneshot_graph

    def thread_done(self, thread_id: str | None) -> None:
        """After a run on a thread: keep only its latest checkpoint (what a follow-up reads)."""
        if thread_id and self.threads is not None:
            self.threads.prune([thread_id], strategy="keep_latest")

    @property
    def stores(self) -> Stores:
        return self.system.stores


def get_server(request: Request) -> ServerState:
    state: ServerState | None = getattr(request.app.state, "server", None)
    if state is None:
        raise HTTPException(503, "the server is starting")
    return state


ServerDep = Annotated[ServerState, Depends(get_server)]


def get_stores(server: ServerDep) -> Stores:
    return server.stores


def get_jobs(server: ServerDep) -> JobBook:
    return server.jobs


StoresDep = Annotated[Stores, Depends(get_stores)]
JobsDep = Annotated[JobBook, Depends(get_jobs)]

_api_key_header = APIKeyHeader(name="X-API-Key", auto_error=False)


def require_api_key(request: Request, key: Annotated[str | None, Depends(_api_key_header)]) -> None:
    """With an API key configured, every request must carry it in ``X-API-Key``."""
    secret = request.app.state.settings.clausewise_api_key
    expected = secret.get_secret_value() if secret else None
    if expected and not (key and secrets.compare_digest(key.encode(), expected.encode())):
        raise HTTPException(401, "missing or wrong API key (send it in the X-API-Key header)")
