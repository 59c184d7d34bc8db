"""Evaluation harness: score answers (the answer contract) against question files (DESIGN.md, "Evaluation").

- :mod:`~clausewise.evaluation.questions`: loading and validating JSONL question files;
- :mod:`~clausewise.evaluation.scoring`: hit rules, per-question scores, summaries and the interleaved
  run of the system and the baseline (:func:`run_eval`);
- :mod:`~clausewise.evaluation.baseline`: the naive baseline, plain top-k vector retrieval over the
  configured index;
- :mod:`~clausewise.evaluation.report`: the rich report.

Importing this package loads neither the graph nor a model.
"""

from __future__ import annotations

from clausewise.evaluation.baseline import naive_answer, naive_answer_fn
from clausewise.evaluation.questions import held_by, load_questions
from clausewise.evaluation.report import format_report, metrics_table, print_report, questions_table, recall_ratio
from clausewise.evaluation.scoring import (
    AnswerFn,
    document_code,
    normalise_text,
    passage_documents,
    passage_hits,
    passage_pages,
    passage_sections,
    percentile,
    run_eval,
    score_answer,
    section_code,
    summarise,
)

__all__ = [
    "AnswerFn",
    "document_code",
    "format_report",
    "held_by",
    "load_questions",
    "metrics_table",
    "naive_answer",
    "naive_answer_fn",
    "normalise_text",
    "passage_documents",
    "passage_hits",
    "passage_pages",
    "passage_sections",
    "percentile",
    "print_report",
    "questions_table",
    "recall_ratio",
    "run_eval",
    "score_answer",
    "section_code",
    "summarise",
]
