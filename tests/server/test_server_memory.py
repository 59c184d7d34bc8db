"""The server's memory stays flat over many questions (a shorter run of scripts/bench_server_memory.py):
questions without a thread keep nothing, threads are bounded and keep only their latest checkpoint.
Before, every question's checkpoints stayed in memory (about 0.4-1 MB a question)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

QUERIES, WARMUP = 150, 30


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "scripts" / "bench_server_memory.py"
    spec = importlib.util.spec_from_file_location("bench_server_memory", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_server_rss_stays_flat_over_many_questions(
    bench: ModuleType, sample_store: SimpleNamespace, copy_store: Callable[[Path], Path], tmp_path: Path
) -> None:
    store = copy_store(sample_store.dir)
    result = bench.run(
        store,
        QUERIES,
        WARMUP,
        env={"CLAUSEWISE_THREADS_MAX": "20", "CLAUSEWISE_CACHE_DIR": str(tmp_path / "cache")},
    )
    print(
        f"\n{QUERIES} questions: RSS {result['rss_at_warmup_mb']} MB after {WARMUP} -> {result['rss_end_mb']} MB "
        f"({result['growth_per_query_kb']} KB a question)"
    )
    assert result["codes"] == {200: QUERIES}
    assert result["growth_mb"] <= 20, result["samples"]
