"""Servers for the HTTP tests: a free port, the API run by uvicorn in a thread of the test process, or
in a process of its own (to be killed, or measured) from ``SERVER_SCRIPT``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import uvicorn

# argv: store directory, port, and optionally an API key and an upload limit in MB
SERVER_SCRIPT = """
import sys, uvicorn
from clausewise.server.app import create_app
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs
options = {"api_key": sys.argv[3]} if len(sys.argv) > 3 else {}
if len(sys.argv) > 4:
    options["max_upload_mb"] = int(sys.argv[4])
uvicorn.run(create_app(stores=Stores(LocalBlobs(sys.argv[1])), page_processes=1, **options), host="127.0.0.1",
            port=int(sys.argv[2]), log_level="warning")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_in_thread(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn (with its lifespan) in a daemon thread; yields the base URL."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def wait_until_up(url: str, log: Path, headers: dict[str, str] | None = None, seconds: float = 90) -> None:
    """Poll ``GET /documents`` until the server answers 200; fail with its log when it never does."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/documents", headers=headers, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.3)
    raise AssertionError(f"the server did not come up:\n{log.read_text()}")


@contextmanager
def server_process(
    store: Path, log: Path, env: dict[str, str], *args: str, headers: dict[str, str] | None = None
) -> Iterator[SimpleNamespace]:
    """``SERVER_SCRIPT`` over ``store`` in a process group of its own (the server and its page workers,
    so a test can SIGKILL them all: ``os.killpg(server.proc.pid, ...)``), its output in ``log``; yields
    ``proc``, ``port`` and ``url`` once it answers. Whatever is still running at the end is stopped."""
    port = free_port()
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER_SCRIPT, str(store), str(port), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_up(url, log, headers=headers)
            yield SimpleNamespace(proc=proc, port=port, url=url)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
