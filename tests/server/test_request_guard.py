"""Clients without the key cannot make the server read (and hold) their bodies.

The server runs as a subprocess on 127.0.0.1 with an API key and a 5 MB upload limit; requests are
written on raw sockets so that the test controls what is sent: headers first, the body only while the
server has not answered. Measured: the time to the 401/413, the server's RSS (psutil) and what the
server spooled to its temporary folder."""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import psutil
import pytest
from helpers.serving import server_process

KEY = "guard-key"
MB = 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, subprocess_env: dict[str, str]) -> Iterator[SimpleNamespace]:
    root = tmp_path_factory.mktemp("guard")
    tmp = root / "tmp"
    tmp.mkdir()
    env = {**subprocess_env, "TMPDIR": str(tmp)}
    with server_process(root / "store", root / "server.log", env, KEY, "5", headers={"X-API-Key": KEY}) as server:
        yield SimpleNamespace(
            port=server.port, url=server.url, proc=psutil.Process(server.proc.pid), tmp=tmp, log=root / "server.log"
        )


def _rss_mb(server: SimpleNamespace) -> float:
    return float(server.proc.memory_info().rss) / MB


def _spooled_bytes(server: SimpleNamespace) -> int:
    total = 0
    for dirpath, _, files in os.walk(server.tmp):
        for name in files:
            try:
                total += (Path(dirpath) / name).stat().st_size
            except OSError:
                pass
    return total


def send(
    server: SimpleNamespace,
    head: str,
    body_bytes: int,
    chunked: bool = False,
    piece: int = 256 * 1024,
    watch: list[int] | None = None,
) -> tuple[int, float, int]:
    """Send ``head`` then up to ``body_bytes`` of body, stopping as soon as the server answers.
    Returns (status, seconds to the answer, body bytes sent); ``watch`` collects the server's spooled
    bytes as the body goes."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    try:
        started = time.monotonic()
        sock.sendall(head.encode())
        sent, answer = 0, b""
        block = b"x" * piece
        while sent < body_bytes:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
            n = min(piece, body_bytes - sent)
            data = block[:n]
            try:
                sock.sendall(f"{n:x}\r\n".encode() + data + b"\r\n" if chunked else data)
            except (BrokenPipeError, ConnectionResetError):
                break
            sent += n
            if watch is not None and sent % (4 * MB) < piece:
                watch.append(_spooled_bytes(server))
        else:
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        sock.settimeout(60)
        while b"\r\n" not in answer:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
        elapsed = time.monotonic() - started
        return int(answer.split(b" ", 2)[1]), elapsed, sent
    finally:
        sock.close()


def _head(path: str, length: int | None, key: str | None = None, content_type: str = "application/json") -> str:
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Type: {content_type}"]
    lines.append(f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked")
    if key:
        lines.append(f"X-API-Key: {key}")
    return "\r\n".join(lines) + "\r\n\r\n"


def test_declared_oversized_bodies_without_the_key_are_refused_before_any_byte_is_read(
    server: SimpleNamespace,
) -> None:
    rss_before = _rss_mb(server)
    for _ in range(3):  # three 200 MB JSON bodies to /query, no key: the server answers on the headers
        status, seconds, sent = send(server, _head("/query", 200 * MB), 200 * MB)
        assert status == 401
        assert sent < 20 * MB, f"{sent / MB:.0f} MB were sent before the 401"
    status, seconds, sent = send(
        server, _head("/documents", 50 * MB, content_type="multipart/form-data; boundary=b"), 50 * MB
    )
    assert status == 401 and sent < 20 * MB
    growth = _rss_mb(server) - rss_before
    print(
        f"\nno key: 3 x 200 MB /query + 50 MB upload -> 401 each on the headers "
        f"({seconds:.2f} s for the last); RSS growth {growth:.1f} MB"
    )
    assert growth < 30
    assert _spooled_bytes(server) < MB


def test_oversized_bodies_with_the_key_get_413_before_they_are_read(server: SimpleNamespace) -> None:
    status, seconds, sent = send(server, _head("/query", 200 * MB, KEY), 200 * MB)
    assert status == 413 and sent < 20 * MB
    status, _, _ = send(server, _head("/query", 70 * 1024, KEY), 70 * 1024)  # the question's 64 KB cap
    assert status == 413
    status, _, _ = send(server, _head("/documents", 50 * MB, KEY, "multipart/form-data; boundary=b"), 50 * MB)
    assert status == 413


def test_streamed_bodies_are_cut_off_at_the_limit(server: SimpleNamespace) -> None:
    rss_before = _rss_mb(server)
    # no Content-Length: the body is counted as it arrives
    status, seconds, sent = send(server, _head("/query", None), 200 * MB, chunked=True)
    assert status == 401 and sent < 20 * MB
    status, seconds, sent = send(server, _head("/query", None, KEY), 200 * MB, chunked=True)
    assert status == 413 and sent < 20 * MB, f"{sent / MB:.0f} MB sent before the 413"
    watch: list[int] = []
    boundary = "b"
    upload_head = _head("/documents", None, KEY, f"multipart/form-data; boundary={boundary}")
    preamble = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.pdf"\r\n'
        "Content-Type: application/pdf\r\n\r\n%PDF-1.7\n"
    )
    sock_head = upload_head + f"{len(preamble):x}\r\n{preamble}\r\n"
    status, seconds, sent = send(server, sock_head, 50 * MB, chunked=True, watch=watch)
    assert status == 413, status
    assert sent < 20 * MB, f"{sent / MB:.0f} MB of a 50 MB upload were taken against a 5 MB limit"
    assert max(watch, default=0) <= 6 * MB, f"spooled {max(watch) / MB:.1f} MB"
    growth = _rss_mb(server) - rss_before
    print(
        f"\nchunked: 200 MB /query -> 401/413, 50 MB upload -> 413 after {sent / MB:.1f} MB; RSS growth {growth:.1f} MB"
    )
    assert growth < 30


def test_small_requests_still_work(server: SimpleNamespace) -> None:
    r = httpx.post(f"{server.url}/query", json={"question": "x" * 100}, headers={"X-API-Key": KEY}, timeout=60)
    assert r.status_code in (200, 422), r.text  # an empty store says so with a 422
    assert httpx.post(f"{server.url}/query", json={"question": "hi"}, timeout=10).status_code == 401
    assert server.proc.is_running()
