"""Load over loopback: uvicorn in a thread, 50 concurrent questions through httpx."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers.serving import serve_in_thread

from clausewise.server.app import create_app
from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs

REQUESTS = 50
QUESTIONS = [
    "What exposure coefficient Ce should I use for a sheltered site?",
    "How are the load arrangements for leaf load on roofs determined?",
    "What may the National Annex change?",
]


@pytest.fixture
def server_url(served_store: Path, embedder: Any) -> Iterator[str]:
    app = create_app(stores=Stores(LocalBlobs(served_store)), embedder=embedder, api_key="load-key")
    with serve_in_thread(app) as url:
        yield url


def test_fifty_concurrent_questions(server_url: str) -> None:
    async def run() -> tuple[list[int], list[float], float]:
        async with httpx.AsyncClient(base_url=server_url, timeout=120, headers={"X-API-Key": "load-key"}) as http:
            warm = await http.post("/query", json={"question": QUESTIONS[0]})
            assert warm.status_code == 200, warm.text

            async def one(i: int) -> tuple[int, float]:
                started = time.perf_counter()
                r = await http.post(
                    "/query", json={"question": QUESTIONS[i % len(QUESTIONS)], "thread_id": f"load-{i}"}
                )
                return r.status_code, time.perf_counter() - started

            started = time.perf_counter()
            results = await asyncio.gather(*(one(i) for i in range(REQUESTS)))
            return [s for s, _ in results], [t for _, t in results], time.perf_counter() - started

    codes, latencies, wall = asyncio.run(run())
    assert codes == [200] * REQUESTS
    q = statistics.quantiles(latencies, n=20)
    print(
        f"\nload: {REQUESTS} concurrent POST /query in {wall:.2f} s -> {REQUESTS / wall:.1f} req/s; "
        f"p50 {statistics.median(latencies) * 1000:.0f} ms, p95 {q[18] * 1000:.0f} ms, "
        f"max {max(latencies) * 1000:.0f} ms"
    )
