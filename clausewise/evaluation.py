"""Evaluation harness: score answers (the answer contract) against question files (DESIGN.md, "Evaluation").

A passage hits an evidence item when its document matches, the item's page is among its pages, and its
text contains ``must_contain`` or its section code equals ``ref`` -- comparisons after lowercasing,
collapsing white space and treating "," and "." alike. A must-value hits when it occurs in the passages'
text or the answer's markdown. :func:`run_eval` runs the system and, optionally, the naive baseline
(plain top-10 vector retrieval over the same index) question by question in one run, so both see the
same machine; answers can be saved as ``<id>.json`` for ``../shared/eval/score.py``.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rich.console import Console, Group
from rich.table import Table

from clausewise.keys import parse_designation

AnswerFn = Callable[[str], dict[str, Any]]

_SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


# ---------------------------------------------------------------------------
# Questions
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Hit rules
# ---------------------------------------------------------------------------


def normalise_text(value: Any) -> str:
    """Lowercase, "," read as "." (decimal commas), white space collapsed and trimmed."""
    text = "" if value is None else str(value)
    return " ".join(text.lower().replace(",", ".").split())


def section_code(value: Any) -> str:
    """A section code for comparison: normalised text without spaces or underscores."""
    return re.sub(r"[\s_]+", "", normalise_text(value))


def document_code(value: Any) -> str:
    """A document designation normalised through :func:`parse_designation` ("BS EN 1991-1-3:2003",
    "EN 1991-1-3" and the key form "EN1991-1-3" all give "EN1991-1-3"; "NA-EN1991-1-3" stays a
    national annex). Text with no designation falls back to its compact lowercase form."""
    text = "" if value is None else str(value).strip()
    text = re.sub(r"(?i)(?<![a-z])EN-ISO(?=\s*\d)", "EN ISO ", text)  # key form of "EN ISO 1234"
    national_annex = re.match(r"(?i)NA(?:-|\s+to\s+|\s+)(?=\S)", text)
    rest = text[national_annex.end() :] if national_annex else text
    parsed = parse_designation(rest)
    if parsed is None:
        return re.sub(r"[\s_]+", "", text.lower())
    code = parsed.code.upper()
    if national_annex and not code.startswith("NA-"):
        code = "NA-" + code
    return code


def _key_parts(passage: dict[str, Any]) -> list[str]:
    key = passage.get("key")
    return key.split("_", 2) if isinstance(key, str) else []


def passage_documents(passage: dict[str, Any]) -> set[str]:
    """The passage's document codes: from its "document" and from its key's second element."""
    docs = {document_code(passage.get("document"))}
    parts = _key_parts(passage)
    if len(parts) >= 2:
        docs.add(document_code(parts[1]))
    return docs - {""}


def _as_page(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def passage_pages(passage: dict[str, Any]) -> set[int]:
    """The passage's pages: its ``pages`` list plus its ``page``."""
    raw = passage.get("pages")
    values = list(raw) if isinstance(raw, list | tuple | set) else []
    values.append(passage.get("page"))
    return {p for p in map(_as_page, values) if p is not None}


def passage_sections(passage: dict[str, Any]) -> set[str]:
    """The passage's section codes: its "section" and its key's third element."""
    codes = {section_code(passage.get("section"))}
    parts = _key_parts(passage)
    if len(parts) == 3:
        codes.add(section_code(parts[2]))
    return codes - {""}


def passage_hits(item: dict[str, Any], passage: dict[str, Any]) -> bool:
    """Whether ``passage`` hits the evidence ``item`` (document, page, then text or section code)."""
    if not isinstance(passage, dict):
        return False
    if document_code(item.get("doc")) not in passage_documents(passage):
        return False
    if _as_page(item.get("page")) not in passage_pages(passage):
        return False
    if normalise_text(item.get("must_contain")) in normalise_text(passage.get("text")):
        return True
    ref = section_code(item.get("ref"))
    return bool(ref) and ref in passage_sections(passage)


# ---------------------------------------------------------------------------
# Scoring
# ---------------------------------------------------------------------------


def _evidence_label(item: dict[str, Any]) -> str:
    return f"{item.get('doc')} p{item.get('page')} {item.get('ref', '')}"


def score_answer(question: dict[str, Any], answer: dict[str, Any] | None) -> dict[str, Any]:
    """One question's row: evidence and value hits, passage count, misses, and the answer's trace.

    A missing or malformed answer scores zero hits (never raises).
    """
    answer = answer if isinstance(answer, dict) else {}
    raw_passages = answer.get("passages")
    passages = [p for p in raw_passages if isinstance(p, dict)] if isinstance(raw_passages, list) else []
    evidence = [e for e in question.get("evidence") or [] if isinstance(e, dict)]
    hit = [any(passage_hits(e, p) for p in passages) for e in evidence]
    essential = [h for e, h in zip(evidence, hit, strict=True) if e.get("essential", True)]

    pieces = [normalise_text(p.get("text")) for p in passages] + [normalise_text(answer.get("answer_markdown"))]
    blob = " ".join(piece for piece in pieces if piece)
    values = [v for v in question.get("must_values") or [] if isinstance(v, str)]
    value_hit = [normalise_text(v) in blob for v in values]

    trace: dict[str, Any] = answer["trace"] if isinstance(answer.get("trace"), dict) else {}
    elapsed = trace.get("elapsed_s")
    llm_calls = trace.get("llm_calls")
    return {
        "id": question.get("id"),
        "answered": bool(answer),
        "essential_hits": sum(essential),
        "essential_total": len(essential),
        "all_hits": sum(hit),
        "all_total": len(evidence),
        "value_hits": sum(value_hit),
        "value_total": len(values),
        "passages": len(passages),
        "missed": [_evidence_label(e) for e, h in zip(evidence, hit, strict=True) if not h],
        "missed_values": [v for v, h in zip(values, value_hit, strict=True) if not h],
        "elapsed_s": float(elapsed) if isinstance(elapsed, int | float) and not isinstance(elapsed, bool) else None,
        "llm_calls": llm_calls if isinstance(llm_calls, int | float) and not isinstance(llm_calls, bool) else None,
    }


def _ratio(rows: list[dict[str, Any]], hits: str, total: str) -> float:
    n = sum(r.get(total, 0) for r in rows)
    return sum(r.get(hits, 0) for r in rows) / n if n else 1.0


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0-100) with linear interpolation between ranks; None for no values."""
    data = sorted(float(v) for v in values)
    if not data:
        return None
    pos = (len(data) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals over rows from :func:`score_answer` (recalls are ratios of summed counts; 1.0 when there
    is nothing to find). Latency comes from each row's ``elapsed_s``; model calls are a mean."""
    elapsed = [r["elapsed_s"] for r in rows if isinstance(r.get("elapsed_s"), int | float)]
    calls = [r["llm_calls"] for r in rows if isinstance(r.get("llm_calls"), int | float)]
    return {
        "essential_recall": _ratio(rows, "essential_hits", "essential_total"),
        "all_recall": _ratio(rows, "all_hits", "all_total"),
        "value_hit_rate": _ratio(rows, "value_hits", "value_total"),
        "passages_per_answer": statistics.median(r.get("passages", 0) for r in rows) if rows else 0,
        "latency_p50": percentile(elapsed, 50),
        "latency_p95": percentile(elapsed, 95),
        "model_calls": statistics.fmean(calls) if calls else None,
        "questions": len(rows),
    }


# ---------------------------------------------------------------------------
# Naive baseline
# ---------------------------------------------------------------------------


def naive_answer(question_text: str, *, index: Any, embedder: Any, stores: Any, k: int = 10) -> dict[str, Any]:
    """Plain top-k vector retrieval over the same index, as an answer-contract dict.

    Each retrieved chunk is one passage (its own page only, hop 0, via "vector"); no reference
    following, no model calls.
    """
    started = time.perf_counter()
    hits = index.search(embedder.embed_query(question_text), k)
    passages = []
    for hit in hits:
        chunk = hit.chunk or {}
        try:
            section = stores.lookup("sections", hit.key) or {}
        except (KeyError, ValueError):
            section = {}
        page = chunk.get("page")
        passages.append(
            {
                "key": hit.key,
                "document": chunk.get("document") or section.get("document", ""),
                "section": section.get("section", ""),
                "kind": chunk.get("kind") or section.get("kind", ""),
                "page": page,
                "pages": [page] if page is not None else [],
                "text": chunk.get("text", ""),
                "hop": 0,
                "via": "vector",
                "from_key": None,
                "score": round(float(hit.score), 4),
            }
        )
    lines = [f"Top {len(passages)} passages by vector similarity:", ""]
    for n, p in enumerate(passages, start=1):
        lines.append(f"{n}. {p['document']} {p['section']} (page {p['page']})".rstrip())
    return {
        "question": question_text,
        "answer_markdown": "\n".join(lines) if passages else "No passages found.",
        "passages": passages,
        "images": [],
        "precedence": [],
        "conflicts": [],
        "unfollowed_references": [],
        "unresolved_references": [],
        "trace": {
            "mode": "naive",
            "llm_calls": 0,
            "tokens": 0,
            "widenings": 0,
            "hops": 0,
            "elapsed_s": round(time.perf_counter() - started, 3),
        },
    }


def naive_answer_fn(stores: Any, embedder: Any, *, index: Any = None, k: int = 10) -> AnswerFn:
    """A one-argument answer function for :func:`run_eval` (one index, built once)."""
    if index is None:
        from clausewise.stores.index import LocalVectorIndex

        index = LocalVectorIndex(stores)

    def answer(question_text: str) -> dict[str, Any]:
        return naive_answer(question_text, index=index, embedder=embedder, stores=stores, k=k)

    return answer


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


def _run_one(question: dict[str, Any], fn: AnswerFn, save_dir: Path | None) -> dict[str, Any]:
    error = None
    started = time.perf_counter()
    try:
        answer = fn(question["question"])
    except Exception as exc:  # one failing question is a miss, not the end of the run
        answer, error = {}, f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - started
    if not isinstance(answer, dict):
        answer, error = {}, error or f"answer is a {type(answer).__name__}, not an object"
    if save_dir is not None and error is None:
        (save_dir / f"{question['id']}.json").write_text(
            json.dumps(answer, ensure_ascii=False, indent=2, default=str), encoding="utf-8"
        )
    row = score_answer(question, answer)
    row["trace_elapsed_s"] = row["elapsed_s"]
    row["elapsed_s"] = round(wall, 4)
    row["error"] = error
    return row


def run_eval(
    questions: list[dict[str, Any]],
    answer_fn: AnswerFn,
    *,
    baseline_fn: AnswerFn | None = None,
    out_dir: str | Path | None = None,
    progress: Callable[[str, str], None] | None = None,
) -> dict[str, Any]:
    """Answer and score every question with ``answer_fn`` and, when given, ``baseline_fn``.

    Both run in the same pass, question by question (system first, then baseline), so timing noise
    affects them alike. Latency is the wall time measured here around each call. With ``out_dir``
    each answer is saved as ``out_dir/system/<id>.json`` and ``out_dir/naive/<id>.json`` (the layout
    ``score.py`` reads). ``progress(label, id)`` is called before each answer.

    Returns ``{"system": summary, "naive": summary or None, "rows": {"system": [...], "naive": [...] or None}}``.
    """
    runs: dict[str, AnswerFn] = {"system": answer_fn}
    if baseline_fn is not None:
        runs["naive"] = baseline_fn
    dirs: dict[str, Path | None] = dict.fromkeys(runs)
    if out_dir is not None:
        for label in runs:
            d = Path(out_dir) / label
            d.mkdir(parents=True, exist_ok=True)
            dirs[label] = d
    rows: dict[str, list[dict[str, Any]]] = {label: [] for label in runs}
    for question in questions:
        for label, fn in runs.items():
            if progress is not None:
                progress(label, str(question.get("id")))
            rows[label].append(_run_one(question, fn, dirs[label]))
    return {
        "system": summarise(rows["system"]),
        "naive": summarise(rows["naive"]) if "naive" in rows else None,
        "rows": {"system": rows["system"], "naive": rows.get("naive")},
    }


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

_METRICS = [
    ("essential_recall", "essential-evidence recall", "{:.3f}"),
    ("all_recall", "all-evidence recall", "{:.3f}"),
    ("value_hit_rate", "must-value hit rate", "{:.3f}"),
    ("passages_per_answer", "passages per answer (median)", "{:g}"),
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
