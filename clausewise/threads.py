"""Conversation memory that stays bounded: the server's threads in memory, the CLI's on disk.

The query graph checkpoints its state after every step; a thread needs only the last checkpoint to
answer a follow-up. :class:`BoundedSaver` (the server's checkpointer) keeps at most ``max_threads``
threads, drops a thread idle for ``ttl_s``, and :meth:`BoundedSaver.prune` keeps only the latest
checkpoint of a finished thread. The CLI's threads live in a SQLite file per store under the user
cache (:func:`cli_threads_path`), pruned the same way by :func:`prune_sqlite_threads`; a question asked
without a thread is not checkpointed at all.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.memory import InMemorySaver


class BoundedSaver(InMemorySaver):
    """An in-memory checkpointer over at most ``max_threads`` threads (least recently used dropped
    first), none idle longer than ``ttl_s``. Thread-safe: the server runs graphs in worker threads."""

    def __init__(self, max_threads: int = 100, ttl_s: float = 3600.0, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.max_threads, self.ttl_s, self._clock = max(1, max_threads), ttl_s, clock
        self._used: OrderedDict[str, float] = OrderedDict()
        self._guard = threading.RLock()

    # ---- bookkeeping
    def _touch(self, thread_id: str) -> None:
        self._used[thread_id] = self._clock()
        self._used.move_to_end(thread_id)

    def _evict(self) -> None:
        now = self._clock()
        while self._used:
            oldest, used = next(iter(self._used.items()))
            if len(self._used) <= self.max_threads and now - used <= self.ttl_s:
                break
            self._drop(oldest)

    def _drop(self, thread_id: str) -> None:
        self._used.pop(thread_id, None)
        super().delete_thread(thread_id)

    @property
    def thread_ids(self) -> list[str]:
        with self._guard:
            return list(self._used)

    def expire(self) -> None:
        """Drop the threads idle for longer than ``ttl_s`` (also done on every write)."""
        with self._guard:
            self._evict()

    # ---- the checkpointer API
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        with self._guard:
            self._touch(config["configurable"]["thread_id"])
            saved = super().put(config, checkpoint, metadata, new_versions)
            self._evict()
            return saved

    def put_writes(
        self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        with self._guard:
            self._touch(config["configurable"]["thread_id"])
            super().put_writes(config, writes, task_id, task_path)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        with self._guard:
            thread_id = config["configurable"]["thread_id"]
            if thread_id in self._used and self._clock() - self._used[thread_id] > self.ttl_s:
                self._drop(thread_id)
            found = super().get_tuple(config)
            if thread_id not in self._used:  # the base class's defaultdict made an empty entry
                self.storage.pop(thread_id, None)
            return found

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,  # noqa: A002 - the API's name
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        with self._guard:
            found = list(super().list(config, filter=filter, before=before, limit=limit))
        yield from found

    def delete_thread(self, thread_id: str) -> None:
        with self._guard:
            self._drop(thread_id)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """LangGraph's pruning: ``"delete"`` removes the threads, ``"keep_latest"`` keeps only the latest
        checkpoint of each (the one a follow-up reads) with its pending writes. Prune a thread only while
        no run is using it. The query graph has no ``DeltaChannel``, so its latest checkpoint is whole."""
        if strategy not in ("delete", "keep_latest"):
            raise ValueError(f"unknown prune strategy {strategy!r}")
        with self._guard:
            for thread_id in thread_ids:
                if strategy == "delete":
                    self._drop(thread_id)
                    continue
                latest = [
                    super(BoundedSaver, self).get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}})
                    for ns in list(self.storage.get(thread_id, {}))
                ]
                super().delete_thread(thread_id)
                for saved in latest:
                    if saved is not None:
                        self._restore(saved)

    def _restore(self, saved: CheckpointTuple) -> None:
        conf = saved.config["configurable"]
        config: RunnableConfig = {
            "configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": conf.get("checkpoint_ns", "")}
        }
        checkpoint = saved.checkpoint.copy()
        stored = super().put(config, checkpoint, saved.metadata, dict(checkpoint["channel_versions"]))
        by_task: dict[str, list[tuple[str, Any]]] = {}
        for task_id, channel, value in saved.pending_writes or []:
            by_task.setdefault(task_id, []).append((channel, value))
        for task_id, writes in by_task.items():
            super().put_writes(stored, writes, task_id)

    def checkpoint_count(self) -> int:
        with self._guard:
            return sum(len(c) for namespaces in self.storage.values() for c in namespaces.values())


# ---------------------------------------------------------------- the CLI's threads
def cli_threads_path(cache_dir: Path, store: str) -> Path:
    """The SQLite file of one store's conversation threads: ``<cache>/threads/<name>-<hash>.sqlite``,
    keyed by the store (its resolved directory, or the bucket's description)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(store).name or "store").strip("._")[:40] or "store"
    return cache_dir / "threads" / f"{name}-{hashlib.sha256(store.encode()).hexdigest()[:12]}.sqlite"


def prune_sqlite_threads(conn: sqlite3.Connection, keep_threads: int) -> None:
    """In a SqliteSaver database: the latest checkpoint (and its writes) of each thread and namespace,
    of the ``keep_threads`` most recently used threads; the rest is removed and the file compacted when
    more than half of it is free."""
    with conn:
        conn.execute(
            """DELETE FROM checkpoints WHERE checkpoint_id < (
                 SELECT MAX(c.checkpoint_id) FROM checkpoints c
                 WHERE c.thread_id = checkpoints.thread_id AND c.checkpoint_ns = checkpoints.checkpoint_ns)"""
        )
        conn.execute(
            """DELETE FROM writes WHERE NOT EXISTS (
                 SELECT 1 FROM checkpoints c WHERE c.thread_id = writes.thread_id
                 AND c.checkpoint_ns = writes.checkpoint_ns AND c.checkpoint_id = writes.checkpoint_id)"""
        )
        stale = [
            row[0]
            for row in conn.execute(
                """SELECT thread_id FROM checkpoints GROUP BY thread_id
                   ORDER BY MAX(checkpoint_id) DESC LIMIT -1 OFFSET ?""",
                (max(1, keep_threads),),
            )
        ]
        for thread_id in stale:
            conn.execute("DELETE FROM checkpoints WHERE thread_id = ?", (thread_id,))
            conn.execute("DELETE FROM writes WHERE thread_id = ?", (thread_id,))
    free, pages = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("freelist_count", "page_count"))
    if pages and free * 2 > pages:
        conn.execute("VACUUM")
