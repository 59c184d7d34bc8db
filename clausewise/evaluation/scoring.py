"""Scoring answers (the answer contract) against questions (DESIGN.md, "Evaluation").

A passage hits an evidence item when its document matches, the item's page is among its pages, and its
text contains ``must_contain`` or its section code equals ``ref`` -- comparisons after lowercasing,
collapsing white space and treating "," and "." alike. A must-value hits when it occurs in the passages'
text or the answer's markdown. :func:`run_eval` runs the system and, optionally, the naive baseline
question by question in one run, so both see the same machine; answers can be saved as ``<id>.json``
for ``../shared/eval/score.py``.
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

from clausewise.keys import parse_designation

AnswerFn = Callable[[str], dict[str, Any]]


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


READ_PASSAGES = (5, 10, 20)  # essential recall within the first K passages an engineer reads
READ_CHARS = (10_000, 20_000)  # ... and within the first C characters of quoted text
_LEADING_CODE = re.compile(r"^(?:(table|figure|fig\.?|expression|annex)\s*)?([a-z]{0,2}\.?\d+(?:\.\d+)*|[a-z])\b")


def leading_code(value: Any) -> str | None:
    """The clause or object code a reference or section starts with: "5.2(7)" -> "5.2",
    "Table 5.1 NOTE" -> "table 5.1", "B3(3)" -> "b.3"; None when there is none."""
    text = normalise_text(value).replace("_", " ").replace("fig.", "figure")
    m = _LEADING_CODE.match(text)
    if not m:
        return None
    kind = {"fig": "figure", "annex": ""}.get(m.group(1) or "", m.group(1) or "")
    number = re.sub(r"^([a-z]+)\.?(\d)", r"\1.\2", m.group(2))
    return f"{kind} {number}".strip()


def cites_right(item: dict[str, Any], passage: dict[str, Any]) -> bool | None:
    """Whether the passage is cited as the evidence's clause (or one containing it); None when the
    evidence names no clause code."""
    want = leading_code(item.get("ref"))
    if want is None:
        return None
    have = leading_code(passage.get("section")) or ""
    return bool(have) and (want == have or want.startswith(have + ".") or want.startswith(have + " "))


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

    read: dict[str, int] = {f"essential_at_{k}": 0 for k in READ_PASSAGES}
    read |= {f"essential_within_{c // 1000}k": 0 for c in READ_CHARS}
    cited = [0, 0]
    starts, chars = [], 0
    for p in passages:
        starts.append(chars)
        chars += len(str(p.get("text") or ""))
    for item in (e for e in evidence if e.get("essential", True)):
        first = next((i for i, p in enumerate(passages) if passage_hits(item, p)), None)
        if first is None:
            continue
        for k in READ_PASSAGES:
            read[f"essential_at_{k}"] += first < k
        for c in READ_CHARS:
            read[f"essential_within_{c // 1000}k"] += starts[first] < c
        verdicts = [cites_right(item, p) for p in passages if passage_hits(item, p)]
        if verdicts[0] is not None:  # right when any passage that holds it is cited as its clause
            cited[0] += any(verdicts)
            cited[1] += 1

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
        "chars": chars,
        "brief_chars": len(str(answer.get("answer_markdown") or "")),
        **read,
        "cited_right": cited[0],
        "cited_total": cited[1],
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
        **{f"essential_recall_at_{k}": _ratio(rows, f"essential_at_{k}", "essential_total") for k in READ_PASSAGES},
        **{
            f"essential_recall_within_{c // 1000}k": _ratio(rows, f"essential_within_{c // 1000}k", "essential_total")
            for c in READ_CHARS
        },
        "citations_right": _ratio(rows, "cited_right", "cited_total"),
        "passages_per_answer": statistics.median(r.get("passages", 0) for r in rows) if rows else 0,
        "chars_per_answer": statistics.median(r.get("chars", 0) for r in rows) if rows else 0,
        "brief_chars": statistics.median(r.get("brief_chars", 0) for r in rows) if rows else 0,
        "latency_p50": percentile(elapsed, 50),
        "latency_p95": percentile(elapsed, 95),
        "model_calls": statistics.fmean(calls) if calls else None,
        "questions": len(rows),
    }


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
