"""How long the brief is on screen: the lines each answer's markdown brief takes in a terminal of a given
width, rendered as `clausewise ask` renders it, with the median and the longest per folder of answers
(the JSON answers `clausewise eval --out DIR` writes to DIR/system). Folders side by side compare two
versions' briefs of the same questions.

usage: python scripts/brief_lines.py DIR [DIR ...] [--width 80]
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
from pathlib import Path

from rich.console import Console

from clausewise.cli import _brief


def screen_lines(markdown: str, width: int) -> int:
    console = Console(file=io.StringIO(), width=width, color_system=None)
    console.print(_brief(markdown))
    return console.file.getvalue().count("\n")  # type: ignore[attr-defined]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", type=Path, nargs="+")
    ap.add_argument("--width", type=int, default=80)
    args = ap.parse_args()
    for folder in args.folders:
        answers = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
        if not answers:
            raise SystemExit(f"{folder}: no JSON answers here")
        lines = [screen_lines(str(a.get("answer_markdown") or ""), args.width) for a in answers]
        chars = [len(str(a.get("answer_markdown") or "")) for a in answers]
        print(
            f"{folder}: {len(answers)} briefs at {args.width} columns: median {statistics.median(lines):g} lines"
            f" (longest {max(lines)}), median {statistics.median(chars):g} characters"
        )


if __name__ == "__main__":
    main()
