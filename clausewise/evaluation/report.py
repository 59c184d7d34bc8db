"""The evaluation report as rich tables: metrics side by side (system, naive, recall ratio) and one
table of per-question hits and misses for each run."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table

_METRICS = [
    ("essential_recall", "essential-evidence recall", "{:.3f}"),
    ("all_recall", "all-evidence recall", "{:.3f}"),
    ("value_hit_rate", "must-value hit rate", "{:.3f}"),
    ("essential_recall_at_5", "essential recall, first 5 passages", "{:.3f}"),
    ("essential_recall_at_10", "essential recall, first 10 passages", "{:.3f}"),
    ("essential_recall_at_20", "essential recall, first 20 passages", "{:.3f}"),
    ("essential_recall_within_10k", "essential recall, first 10k chars", "{:.3f}"),
    ("essential_recall_within_20k", "essential recall, first 20k chars", "{:.3f}"),
    ("citations_right", "cited section right", "{:.3f}"),
    ("passages_per_answer", "passages per answer (median)", "{:g}"),
    ("chars_per_answer", "quoted characters per answer (median)", "{:g}"),
    ("brief_chars", "brief characters (median)", "{:g}"),
    ("latency_p50", "latency p50 (s)", "{:.2f}"),
    ("latency_p95", "latency p95 (s)", "{:.2f}"),
    ("model_calls", "model calls (mean)", "{:.1f}"),
    ("questions", "questions", "{:d}"),
]


def _fmt(value: Any, pattern: str) -> str:
    return "-" if value is None else pattern.format(value)


def recall_ratio(result: dict[str, Any]) -> float | None:
    """Essential recall of the system over the baseline's; None without a baseline or when it is 0."""
    naive = result.get("naive")
    if not naive or not naive.get("essential_recall"):
        return None
    return float(result["system"]["essential_recall"]) / float(naive["essential_recall"])


def metrics_table(result: dict[str, Any]) -> Table:
    """Metrics as rows; system and naive side by side, plus the essential-recall ratio."""
    naive = result.get("naive")
    table = Table(title="Evaluation")
    table.add_column("metric")
    table.add_column("system", justify="right")
    if naive is not None:
        table.add_column("naive", justify="right")
    for key, label, pattern in _METRICS:
        cells = [label, _fmt(result["system"].get(key), pattern)]
        if naive is not None:
            cells.append(_fmt(naive.get(key), pattern))
        table.add_row(*cells)
    if naive is not None:
        ratio = recall_ratio(result)
        table.add_row("essential recall system/naive", "-" if ratio is None else f"{ratio:.2f}x", "")
    return table


def questions_table(rows: list[dict[str, Any]], label: str) -> Table:
    """One line per question: hits x/y, passages, seconds, misses (and an error, if any)."""
    table = Table(title=f"Per question ({label})")
    for name in ("id", "essential", "all", "values", "passages", "seconds"):
        table.add_column(name, justify="left" if name == "id" else "right", no_wrap=True)
    table.add_column("missed")
    for r in rows:
        missed = "; ".join(r.get("missed") or [])
        if r.get("error"):
            missed = f"[error] {r['error']}" + (f"; {missed}" if missed else "")
        table.add_row(
            str(r.get("id")),
            f"{r.get('essential_hits', 0)}/{r.get('essential_total', 0)}",
            f"{r.get('all_hits', 0)}/{r.get('all_total', 0)}",
            f"{r.get('value_hits', 0)}/{r.get('value_total', 0)}",
            str(r.get("passages", 0)),
            _fmt(r.get("elapsed_s"), "{:.2f}"),
            missed,
        )
    return table


def format_report(result: dict[str, Any]) -> Group:
    """The whole report as one rich renderable: the metrics table, then per-question tables."""
    parts: list[Table] = [metrics_table(result)]
    for label, rows in (result.get("rows") or {}).items():
        if rows is not None:
            parts.append(questions_table(rows, label))
    return Group(*parts)


def print_report(result: dict[str, Any], console: Console | None = None) -> None:
    (console or Console()).print(format_report(result))
