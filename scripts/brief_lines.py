"""How long the brief is on screen: the lines each answer's markdown brief takes in a terminal of a given
width, rendered as `clausewise ask` renders it, with the median and the longest per folder of answers
(the JSON answers `clausewise eval --out DIR` writes to DIR/system). Folders side by side compare two
versions' briefs of the same questions. With ``--questions``, also how many of the questions' essential
evidence phrases the brief itself shows (quoted or in its summary), compared as letters and digits only
(the brief runs printed lines on and sets tables in markdown).

usage: python scripts/brief_lines.py DIR [DIR ...] [--width 80] [--questions QUESTIONS.jsonl]
"""

from __future__ import annotations

import argparse
import io
import json
import re
import statistics
from pathlib import Path

from rich.console import Console

from clausewise.cli import _brief
from clausewise.evaluation import load_questions


def screen_lines(markdown: str, width: int) -> int:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(_brief(markdown))
    return console.file.getvalue().count("\n")  # type: ignore[attr-defined]


def _letters(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def shown(answers: dict[str, str], questions: list[dict]) -> tuple[int, int]:
    """Essential evidence phrases found in the briefs of their questions, and how many there are."""
    found = total = 0
    for q in questions:
        if q["id"] not in answers:
            continue
        brief = _letters(answers[q["id"]])
        for item in (e for e in q.get("evidence") or [] if e.get("essential", True)):
            total += 1
            found += _letters(item["must_contain"]) in brief
    return found, total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", type=Path, nargs="+")
    ap.add_argument("--width", type=int, default=80)
    ap.add_argument("--questions", type=Path, help="the question file: count its essential phrases the brief shows")
    args = ap.parse_args()
    questions = load_questions(args.questions) if args.questions else []
    for folder in args.folders:
        files = sorted(folder.glob("*.json"))
        answers = [json.loads(p.read_text()) for p in files]
        if not answers:
            raise SystemExit(f"{folder}: no JSON answers here")
        lines = [screen_lines(str(a.get("answer_markdown") or ""), args.width) for a in answers]
        chars = [len(str(a.get("answer_markdown") or "")) for a in answers]
        found = ""
        if questions:
            by_id = {p.stem: str(a.get("answer_markdown") or "") for p, a in zip(files, answers, strict=True)}
            found = "; essential evidence shown: {} of {}".format(*shown(by_id, questions))
        print(
            f"{folder}: {len(answers)} briefs at {args.width} columns: median {statistics.median(lines):g} lines"
            f" (longest {max(lines)}), median {statistics.median(chars):g} characters{found}"
        )


if __name__ == "__main__":
    main()
