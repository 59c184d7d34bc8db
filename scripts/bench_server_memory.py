"""Server memory over many questions: starts `clausewise serve` on loopback over a small ingested sample
store, asks QUERIES questions (every other one in a new conversation thread, the rest without one),
samples the server's RSS, and prints the growth after the warm-up.

    .venv/bin/python scripts/bench_server_memory.py [--queries 600] [--warmup 50] [--store DIR]

Without --store the sample code is generated and ingested into a temporary store first. The growth
should stay flat (<= 50 MB over 600 questions): conversation threads are bounded (CLAUSEWISE_THREADS_MAX,
CLAUSEWISE_THREAD_TTL_S) and a question without a thread keeps nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = [
    "What exposure coefficient Ce should I use for a sheltered site?",
    "How are the load arrangements for leaf load on roofs determined?",
    "What may the National Annex change?",
    "What is the characteristic value sk?",
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R2_", "GEMINI_", "PINECONE_", "CLAUSEWISE_"))}
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=str(ROOT))
    env.update(extra or {})
    return env


def sample_store(directory: Path) -> Path:
    """The sample code generated and ingested into ``directory/store`` (through the CLI)."""
    from clausewise.sample import write_sample_pdf

    pdf = write_sample_pdf(directory / "EN_1991-9-9_2025.pdf")
    store = directory / "store"
    subprocess.run(
        [sys.executable, "-m", "clausewise.cli", "ingest", str(pdf), "--store", str(store), "--json"],
        env=_env(),
        check=True,
        capture_output=True,
    )
    return store


def run(store: Path, queries: int, warmup: int, env: dict[str, str] | None = None, every: int = 10) -> dict[str, Any]:
    """Serve ``store``, ask ``queries`` questions one after another; RSS samples in MB."""
    port = _free_port()
    log = tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False)  # noqa: SIM115 - closed below
    server = subprocess.Popen(
        [sys.executable, "-m", "clausewise.cli", "serve", "--port", str(port), "--store", str(store)],
        env=_env(env),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/documents", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"the server did not start:\n{log.read()[-3000:]}")
            time.sleep(0.3)
        proc = psutil.Process(server.pid)
        samples: list[tuple[int, float]] = []
        codes: dict[int, int] = {}
        started = time.perf_counter()
        with httpx.Client(base_url=url, timeout=120) as http:
            for i in range(queries):
                body: dict[str, Any] = {"question": QUESTIONS[i % len(QUESTIONS)]}
                if i % 2:
                    body["thread_id"] = f"bench-{i}"
                status = http.post("/query", json=body).status_code
                codes[status] = codes.get(status, 0) + 1
                if i + 1 == warmup or (i + 1) % every == 0 or i + 1 == queries:
                    samples.append((i + 1, proc.memory_info().rss / 2**20))
        wall = time.perf_counter() - started
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
        os.unlink(log.name)
    at_warmup = next(rss for n, rss in samples if n >= warmup)
    return {
        "queries": queries,
        "warmup": warmup,
        "codes": codes,
        "seconds": round(wall, 1),
        "rss_at_warmup_mb": round(at_warmup, 1),
        "rss_end_mb": round(samples[-1][1], 1),
        "rss_max_mb": round(max(rss for _, rss in samples), 1),
        "growth_mb": round(samples[-1][1] - at_warmup, 1),
        "growth_per_query_kb": round((samples[-1][1] - at_warmup) * 1024 / max(1, queries - warmup), 1),
        "samples": [(n, round(rss, 1)) for n, rss in samples],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=600)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--store", type=Path, help="an ingested store (default: the sample, ingested now)")
    parser.add_argument("--json", action="store_true", help="print every sample as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="clausewise-bench-") as tmp:
        store = args.store or sample_store(Path(tmp))
        result = run(store, args.queries, args.warmup, env={"CLAUSEWISE_CACHE_DIR": str(Path(tmp) / "cache")})
    if args.json:
        print(json.dumps(result, indent=1))
    print(
        f"{result['queries']} queries in {result['seconds']} s ({result['codes']}); server RSS "
        f"{result['rss_at_warmup_mb']} MB after {result['warmup']} -> {result['rss_end_mb']} MB at the end "
        f"(max {result['rss_max_mb']} MB): growth {result['growth_mb']} MB, "
        f"{result['growth_per_query_kb']} KB per query"
    )


if __name__ == "__main__":
    main()
