"""`clausewise ask` conversation threads: in the user cache (one file per store), never in the document
store; a one-shot question keeps nothing; a thread keeps only its latest checkpoint, and only the most
recent CLAUSEWISE_THREADS_MAX threads are kept."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from types import SimpleNamespace
from typing import Any

QUESTION = "What is the characteristic value sk?"


def _rows(db: Path) -> tuple[int, set[str]]:
    with sqlite3.connect(db) as conn:
        count = conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0]
        threads = {r[0] for r in conn.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    return int(count), threads


def test_threads_go_to_the_user_cache_and_stay_small(
    cli: Any, sample_store: SimpleNamespace, copy_store: Any, tmp_path: Path
) -> None:
    store = copy_store(sample_store.dir)
    cache = tmp_path / "cache"
    env = {"CLAUSEWISE_CACHE_DIR": str(cache), "CLAUSEWISE_THREADS_MAX": "2"}
    before = {p.relative_to(store).as_posix() for p in store.rglob("*")}

    one_shot = cli("ask", QUESTION, "--store", store, "--json", env=env)
    assert one_shot.exit_code == 0, one_shot.output
    assert not (cache / "threads").exists() or not any((cache / "threads").iterdir())  # nothing kept

    first = json.loads(cli("ask", QUESTION, "--store", store, "--json", "--thread", "t1", env=env).stdout)
    assert first["passages"]
    [db] = (cache / "threads").glob("*.sqlite")
    assert db.name.startswith(store.name)
    assert _rows(db) == (1, {"t1"})  # the latest checkpoint only, not one per graph step
    size_after_one = db.stat().st_size

    repeat = cli("ask", QUESTION, "--store", store, "--json", "--thread", "t1", env=env)
    assert json.loads(repeat.stdout)["trace"].get("route") == "memory"  # the thread remembered
    for thread in ("t2", "t3", "t4"):
        assert cli("ask", QUESTION, "--store", store, "--json", "--thread", thread, env=env).exit_code == 0
    count, threads = _rows(db)
    assert threads == {"t3", "t4"} and count == 2  # the two most recent threads
    assert db.stat().st_size <= 3 * size_after_one  # not 1.8 MB more per question

    created = {p.relative_to(store).as_posix() for p in store.rglob("*")} - before
    assert not any("thread" in p for p in created), created  # nothing of the conversation in the store

    other = copy_store(sample_store.dir)  # another store: another file
    assert cli("ask", QUESTION, "--store", other, "--json", "--thread", "t1", env=env).exit_code == 0
    assert len(list((cache / "threads").glob("*.sqlite"))) == 2
