"""The report (clausewise.evaluation.report): metrics side by side, the recall ratio, per-question rows."""

from __future__ import annotations

from typing import Any

import pytest
from rich.console import Console

from clausewise.evaluation import format_report, metrics_table, print_report, questions_table, recall_ratio


def summary(essential: float, **kw: Any) -> dict[str, Any]:
    base = {
        "essential_recall": essential,
        "all_recall": 0.5,
        "value_hit_rate": 0.25,
        "passages_per_answer": 7.5,
        "latency_p50": 1.234,
        "latency_p95": 9.876,
        "model_calls": 3.25,
        "questions": 4,
    }
    return base | kw


SYSTEM_ROWS = [
    {
        "id": "q1",
        "essential_hits": 2,
        "essential_total": 3,
        "all_hits": 3,
        "all_total": 5,
        "value_hits": 1,
        "value_total": 2,
        "passages": 12,
        "elapsed_s": 1.5,
        "missed": ["EN 1991-1-3 p22 5.2(8)", "EN 1991-1-3 p10 1.1(8)"],
        "error": None,
    },
    {
        "id": "q2",
        "essential_hits": 0,
        "essential_total": 1,
        "all_hits": 0,
        "all_total": 1,
        "value_hits": 0,
        "value_total": 0,
        "passages": 0,
        "elapsed_s": None,
        "missed": ["EN 1990 p5 1"],
        "error": "RuntimeError: model unavailable",
    },
]


def render(renderable: Any, width: int = 250) -> str:
    console = Console(record=True, width=width)
    console.print(renderable)
    return console.export_text()


def lines_with(text: str, start: str) -> list[str]:
    return [" ".join(line.replace("│", " ").split()) for line in text.splitlines() if start in line]


def test_recall_ratio() -> None:
    assert recall_ratio({"system": summary(0.9), "naive": summary(0.6)}) == pytest.approx(1.5)
    assert recall_ratio({"system": summary(0.9), "naive": None}) is None
    assert recall_ratio({"system": summary(0.9)}) is None
    assert recall_ratio({"system": summary(0.9), "naive": summary(0.0)}) is None  # no division by zero


def test_metrics_table_puts_system_and_naive_side_by_side() -> None:
    result = {"system": summary(0.9), "naive": summary(0.6, latency_p50=None, model_calls=0.0)}
    text = render(metrics_table(result))
    assert lines_with(text, "essential-evidence recall") == ["essential-evidence recall 0.900 0.600"]
    assert lines_with(text, "passages per answer") == ["passages per answer (median) 7.5 7.5"]
    assert lines_with(text, "latency p50") == ["latency p50 (s) 1.23 -"]
    assert lines_with(text, "latency p95") == ["latency p95 (s) 9.88 9.88"]
    assert lines_with(text, "model calls") == ["model calls (mean) 3.2 0.0"]
    assert lines_with(text, "essential recall system/naive") == ["essential recall system/naive 1.50x"]


def test_metrics_table_without_a_baseline_has_one_value_column() -> None:
    text = render(metrics_table({"system": summary(0.9), "naive": None}))
    assert lines_with(text, "essential-evidence recall") == ["essential-evidence recall 0.900"]
    assert "naive" not in text and "system/naive" not in text


def test_a_zero_baseline_recall_shows_no_ratio() -> None:
    text = render(metrics_table({"system": summary(0.9), "naive": summary(0.0)}))
    assert lines_with(text, "essential recall system/naive") == ["essential recall system/naive -"]


def test_questions_table_shows_hits_seconds_misses_and_errors() -> None:
    text = render(questions_table(SYSTEM_ROWS, "system"))
    assert "Per question (system)" in text
    assert lines_with(text, "q1") == ["q1 2/3 3/5 1/2 12 1.50 EN 1991-1-3 p22 5.2(8); EN 1991-1-3 p10 1.1(8)"]
    # the error comes first in the missed column (its "[error]" prefix is read as rich markup and not shown)
    (q2,) = lines_with(text, "q2")
    assert q2.startswith("q2 0/1 0/1 0/0 0 - ") and q2.endswith("RuntimeError: model unavailable; EN 1990 p5 1")


def test_format_report_has_the_metrics_then_a_table_per_run() -> None:
    naive_rows = [SYSTEM_ROWS[0] | {"essential_hits": 1, "error": None}]
    result = {
        "system": summary(0.9),
        "naive": summary(0.6),
        "rows": {"system": SYSTEM_ROWS, "naive": naive_rows},
    }
    text = render(format_report(result))
    assert text.index("Evaluation") < text.index("Per question (system)") < text.index("Per question (naive)")
    assert lines_with(text, "q1 ") == [
        "q1 2/3 3/5 1/2 12 1.50 EN 1991-1-3 p22 5.2(8); EN 1991-1-3 p10 1.1(8)",
        "q1 1/3 3/5 1/2 12 1.50 EN 1991-1-3 p22 5.2(8); EN 1991-1-3 p10 1.1(8)",
    ]
    text = render(format_report({"system": summary(0.9), "naive": None, "rows": {"system": [], "naive": None}}))
    assert "Per question (system)" in text and "Per question (naive)" not in text


def test_print_report_prints_to_the_given_console() -> None:
    console = Console(record=True, width=200)
    print_report({"system": summary(1.0), "naive": None, "rows": {"system": SYSTEM_ROWS, "naive": None}}, console)
    text = console.export_text()
    assert lines_with(text, "essential-evidence recall") == ["essential-evidence recall 1.000"]
    assert "RuntimeError: model unavailable" in text
