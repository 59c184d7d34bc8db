"""Server fixtures: apps over private copies of the session stores, and a job poller."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from clausewise.server.app import create_app
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs


@pytest.fixture
def make_client(embedder: Any) -> Iterator[Callable[..., TestClient]]:
    """``make_client(store_dir, **create_app_kwargs)``: a started TestClient (closed after the test)."""
    clients: list[TestClient] = []

    def make(store_dir: Path, **kwargs: Any) -> TestClient:
        kwargs.setdefault("page_processes", 1)
        app = create_app(stores=Stores(LocalBlobs(store_dir)), embedder=embedder, **kwargs)
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.__exit__(None, None, None)


@pytest.fixture(scope="module")
def served_store(sample_store: SimpleNamespace, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private copy of the ingested sample that query tests may write caches into."""
    dst = tmp_path_factory.mktemp("served") / "store"
    shutil.copytree(sample_store.dir, dst)
    return dst


def wait_for_job(client: TestClient, job_id: str, timeout: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job  # type: ignore[no-any-return]
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")


def upload(client: TestClient, path: Path, **form: Any) -> Any:
    with open(path, "rb") as fh:
        return client.post("/documents", files={"file": (path.name, fh, "application/pdf")}, data=form)


@pytest.fixture(scope="session")
def wait_job() -> Callable[..., dict[str, Any]]:
    return wait_for_job


@pytest.fixture(scope="session")
def upload_pdf() -> Callable[..., Any]:
    return upload
