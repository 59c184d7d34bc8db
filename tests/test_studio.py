"""The graphs of langgraph.json served by `langgraph dev` (the Studio server), queried with the SDK.

Needs ``langgraph-cli[inmem]``; skipped without it. The server runs in a temporary directory (it
writes ``.langgraph_api/`` into its working directory) with a copy of ``langgraph.json`` whose
paths are made absolute, so the repository is left untouched. The store goes in the run's context
(``QueryContext.store_dir``), as Studio's configuration panel sends it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from helpers import CONTRACT

REPO_ROOT = Path(__file__).resolve().parent.parent
QUESTION = "Which exposure coefficient applies to a sheltered site?"
STARTUP_S = 60


def _langgraph_exe() -> str | None:
    if importlib.util.find_spec("langgraph_cli") is None or importlib.util.find_spec("langgraph_api") is None:
        return None
    if importlib.util.find_spec("langgraph_runtime_inmem") is None:
        return None
    beside = Path(sys.executable).parent / "langgraph"
    return str(beside) if beside.exists() else shutil.which("langgraph")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config_with_absolute_paths(dst: Path) -> Path:
    """langgraph.json with graph and dependency paths anchored at the repository root."""
    config = json.loads((REPO_ROOT / "langgraph.json").read_text())
    config["dependencies"] = [str((REPO_ROOT / d).resolve()) for d in config.get("dependencies", [])]
    graphs = {}
    for name, spec in config["graphs"].items():
        path, _, attr = spec.rpartition(":")
        graphs[name] = f"{(REPO_ROOT / path).resolve()}:{attr}"
    config["graphs"] = graphs
    config.pop("env", None)  # offline: no keys from a developer's .env
    out = dst / "langgraph.json"
    out.write_text(json.dumps(config, indent=2))
    return out


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server and its children (its own process group), then reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture
def server(tmp_path: Path, subprocess_env: dict[str, str]) -> Iterator[str]:
    exe = _langgraph_exe()
    if exe is None:
        pytest.skip("langgraph-cli[inmem] is not installed (pip install 'langgraph-cli[inmem]')")
    workdir = tmp_path / "server"
    workdir.mkdir()
    config = _config_with_absolute_paths(workdir)
    port = _free_port()
    log = (tmp_path / "server.log").open("wb")
    proc = subprocess.Popen(
        [
            exe,
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--config",
            str(config),
        ],
        cwd=workdir,
        env=subprocess_env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            if proc.poll() is not None:
                tail = (tmp_path / "server.log").read_text()[-4000:]
                pytest.fail(f"langgraph dev exited ({proc.returncode}):\n{tail}")
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(
                    f"langgraph dev not healthy in {STARTUP_S} s:\n{(tmp_path / 'server.log').read_text()[-4000:]}"
                )
            time.sleep(0.5)
        yield url
    finally:
        _stop(proc)
        log.close()


def test_studio_server_answers_a_question(
    server: str, sample_store: SimpleNamespace, copy_store: Callable[[Path], Path]
) -> None:
    from langgraph_sdk import get_sync_client

    store_dir = copy_store(sample_store.dir)
    client = get_sync_client(url=server, api_key=None, timeout=60.0)
    assistants = {a["graph_id"] for a in client.assistants.search(limit=10)}
    assert {"query", "ingest"} <= assistants
    thread = client.threads.create()
    answer = client.runs.wait(
        thread["thread_id"], "query", input={"question": QUESTION}, context={"store_dir": str(store_dir)}
    )
    assert isinstance(answer, dict), answer
    assert set(answer) == CONTRACT, answer
    assert answer["passages"], answer["answer_markdown"]
    assert any(p["key"].endswith("table_5.1") for p in answer["passages"])
    assert answer["trace"]["mode"] == "offline"
    # The thread's state on the server holds the run (the server brings its own checkpointer).
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert isinstance(values, dict) and values.get("question") == QUESTION
