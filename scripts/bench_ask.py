"""Ask times in one process, offline: imports, the first question (models and stores loaded) and the
warm ones after it, over a question file (``../shared/eval/*.jsonl``: one JSON object with a
"question" per line).

Cold starts are whole processes: time `clausewise ask "Q" --store S --json` against the other version
run in turn with it (several runs each, medians and their ratio), not one after the other.

usage: python scripts/bench_ask.py QUESTIONS.jsonl [QUESTIONS.jsonl ...] --store DIR
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

started = time.perf_counter()
from clausewise.cli import answer_question  # noqa: E402
from clausewise.system import System  # noqa: E402

imported = time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions", type=Path, nargs="+")
    ap.add_argument("--store", type=Path, required=True)
    args = ap.parse_args()
    lines = [line for path in args.questions for line in path.read_text().splitlines() if line.strip()]
    questions = [json.loads(line)["question"] for line in lines]
    if len(questions) < 2:
        raise SystemExit("give at least two questions: the first loads everything, the rest are warm")
    system = System(store_dir=args.store)
    times = []
    for question in questions:
        t = time.perf_counter()
        answer_question(system, question)
        times.append(time.perf_counter() - t)
    warm = times[1:]
    print(
        json.dumps(
            {
                "import_s": round(imported, 2),
                "first_ask_s": round(times[0], 2),
                "warm_ask_median_s": round(statistics.median(warm), 2),
                "warm_ask_max_s": round(max(warm), 2),
                "questions": len(questions),
            }
        )
    )


if __name__ == "__main__":
    main()
