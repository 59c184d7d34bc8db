"""Question files: JSONL, one question a line, validated with the file and line named in every error."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from clausewise.evaluation.scoring import document_code
from clausewise.keys import split_key

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def load_questions(path: str | Path) -> list[dict[str, Any]]:
    """Questions from a JSONL file, one object a line (blank lines skipped).

    Raises ValueError naming the file and line for invalid JSON, a missing id or question, a
    duplicate id, or a malformed evidence item.
    """
    path = Path(path)
    questions: list[dict[str, Any]] = []
    seen: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}, line {lineno}"
            try:
                q = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not valid JSON ({exc.msg})") from None
            if not isinstance(q, dict):
                raise ValueError(f"{where}: expected a JSON object, got {type(q).__name__}")
            qid = q.get("id")
            if not isinstance(qid, str) or not _SAFE_ID.fullmatch(qid):
                raise ValueError(f"{where}: 'id' must be a non-empty string of letters, digits, '.', '_' or '-'")
            if qid in seen:
                raise ValueError(f"{where}: duplicate id {qid!r}")
            if not isinstance(q.get("question"), str) or not q["question"].strip():
                raise ValueError(f"{where}: 'question' must be a non-empty string")
            evidence = q.get("evidence", [])
            if not isinstance(evidence, list):
                raise ValueError(f"{where}: 'evidence' must be a list")
            for n, item in enumerate(evidence, start=1):
                if not isinstance(item, dict):
                    raise ValueError(f"{where}: evidence item {n} is not an object")
                missing = [f for f in ("doc", "page", "must_contain") if f not in item]
                if missing:
                    raise ValueError(f"{where}: evidence item {n} lacks {', '.join(missing)}")
                if not isinstance(item["page"], int) or isinstance(item["page"], bool):
                    raise ValueError(f"{where}: evidence item {n} page must be an integer")
            values = q.get("must_values", [])
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ValueError(f"{where}: 'must_values' must be a list of strings")
            seen.add(qid)
            questions.append(q)
    return questions


def held_by(
    questions: list[dict[str, Any]], documents: Iterable[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The questions each of whose documents (its ``documents``, else its evidence's) is among ``documents``
    (store keys such as "CEN_EN1991-1-1"), compared as :func:`document_code` reads them; and the others.
    A set over two stores is run on each store with the questions it holds."""
    held = {document_code(split_key(key)[1]) for key in documents}
    kept: list[dict[str, Any]] = []
    left: list[dict[str, Any]] = []
    for q in questions:
        wanted = q.get("documents") or sorted({e["doc"] for e in q.get("evidence", [])})
        (kept if wanted and all(document_code(d) in held for d in wanted) else left).append(q)
    return kept, left
