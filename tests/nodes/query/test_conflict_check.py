"""conflict-check (nodes/query/conflict_check.py): at most MAX_CONFLICTS are kept, those about the
passages an engineer reads first."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from helpers import query_runtime

from clausewise.nodes.query.conflict_check import MAX_CONFLICTS, conflict_check
from clausewise.system import System
from clausewise.tools.query_tasks import OfflineQueryTasks


class ManyConflicts(OfflineQueryTasks):
    """A flag for every passage, in key order (as the offline rules list them)."""

    def find_conflicts(self, passages: list[dict[str, Any]], rules: Any, kv: Any) -> list[dict[str, Any]]:
        return [{"topic": "t", "passages": [p["key"]], "note": ""} for p in sorted(passages, key=lambda p: p["key"])]


def test_the_conflicts_kept_are_those_of_the_passages_read_first(
    sample_store: SimpleNamespace, embedder: Any, tmp_path: Path
) -> None:
    system = System(stores=sample_store.stores, embedder=embedder, query_tasks=ManyConflicts(), cache_dir=tmp_path)
    ranked = [{"key": f"CEN_EN1991-9-9_{n}", "text": ""} for n in range(40, 0, -1)]  # ranked against key order
    kept = conflict_check({"passages": ranked}, query_runtime(system))["conflicts"]  # type: ignore[arg-type]
    assert [c["passages"][0] for c in kept] == [p["key"] for p in ranked[:MAX_CONFLICTS]]
