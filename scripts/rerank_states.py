"""Ranking experiments without running the search again. `capture` runs the query graph once over
question files and saves, for each question, the state collect-passages starts from (candidates,
extracts, sub-questions, named sections); `score` runs collect-passages, the code as it is now, over
the saved states and prints per question file how many essential items are in the first 5, 10 and 20
passages, within the first 10,000 characters and anywhere, counted as `clausewise eval` counts them.
`--set` changes a constant of collect_passages for one run (`--set KEYWORD_WEIGHT=0.2`). Scoring 44
saved questions takes about 40 s on 2 cores where evaluating them takes about 5 minutes, so a change
to the ranking can be tried on many sets at once; the change is then measured with `clausewise eval`.

The saved states hold only what the search found, so a change upstream of collect-passages (search,
extraction, references, the store) needs a new capture. A question the graph fails on is reported and
left out of the capture.

usage: python scripts/rerank_states.py capture QUESTIONS.jsonl [...] --store DIR --out STATES.json
       python scripts/rerank_states.py score STATES.json [--store DIR] [--set NAME=VALUE ...] [--misses] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
from collections import deque
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langgraph.runtime import Runtime  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.progress import track  # noqa: E402
from rich.table import Table  # noqa: E402

from clausewise.evaluation.questions import load_questions  # noqa: E402
from clausewise.evaluation.scoring import passage_hits, score_answer  # noqa: E402
from clausewise.graph.query import build_query_graph  # noqa: E402
from clausewise.graph.state import QueryContext  # noqa: E402
from clausewise.nodes.query import collect_passages  # noqa: E402
from clausewise.nodes.query.deps import QueryDeps  # noqa: E402
from clausewise.system import System  # noqa: E402

PROGRESS = Console(stderr=True)  # the progress bars, apart from what is printed
KEPT = ("question", "search_question", "sub_questions", "candidates", "extracts", "named")
COLUMNS = {  # score_answer's counts, as headed
    "essential_at_5": "first 5",
    "essential_at_10": "first 10",
    "essential_at_20": "first 20",
    "essential_within_10k": "in 10k",
    "essential_hits": "all",
    "passages": "passages",
    "chars": "chars",
}


def capture(files: list[Path], store: str, out: Path) -> None:
    try:
        work = [(f.stem, q) for f in files for q in load_questions(f)]
    except (OSError, ValueError) as exc:
        raise SystemExit(str(exc)) from None
    graph = build_query_graph(_system(store))
    saved, failed = [], 0
    for name, question in track(work, description="capturing", console=PROGRESS):
        try:
            (state,) = deque(graph.stream({"question": question["question"]}, stream_mode="values"), maxlen=1)
        except Exception as exc:  # one question's failure costs only its own state
            PROGRESS.print(f"{name} {question['id']}: not captured ({type(exc).__name__}: {exc})")
            failed += 1
            continue
        saved.append({"set": name, "question": question, "state": {k: state.get(k) for k in KEPT}})
    out.write_text(json.dumps({"store": str(Path(store).resolve()), "questions": saved}))
    print(f"{len(saved)} states saved to {out}" + (f"; {failed} questions failed (above)" if failed else ""))


def score(path: Path, store: str | None, settings: list[str], misses: bool, as_json: bool) -> None:
    for setting in settings:
        name, _, value = setting.partition("=")
        current = getattr(collect_passages, name, None)
        if not isinstance(current, int | float) or isinstance(current, bool) or not name.isupper():
            raise SystemExit(f"collect_passages has no number constant {name}")
        try:
            setattr(collect_passages, name, type(current)(value))
        except ValueError:
            raise SystemExit(f"{name}={value}: not a {type(current).__name__}") from None
    captured_on, saved = _read_states(path)
    store = store or captured_on
    runtime = Runtime(context=QueryContext(store_dir=store, deps=QueryDeps(_system(store))))
    rows: dict[str, list[dict[str, Any]]] = {}
    for entry in track(saved, description="ranking", console=PROGRESS):
        passages = collect_passages.collect_passages(entry["state"], runtime)["passages"]
        rows.setdefault(entry["set"], []).append(score_answer(entry["question"], {"passages": passages}))
        if misses:
            report_misses(entry["question"], passages)
    counts = {
        name: {column: sum(r[column] for r in found) for column in ("essential_total", *COLUMNS)}
        for name, found in [*rows.items(), ("all", [r for v in rows.values() for r in v])]
    }
    if as_json:
        print(json.dumps(counts))
        return
    table = Table(
        "set", "items", *COLUMNS.values(), title="essential items found (in 10k: within the first 10,000 characters)"
    )
    for name, count in counts.items():
        table.add_row(name, *map(str, count.values()))
    Console().print(table)


def report_misses(question: dict[str, Any], passages: list[dict[str, Any]]) -> None:
    """Each essential item not in the first 10 passages or 10,000 characters: its first rank, the
    characters before it."""
    for item in (e for e in question.get("evidence") or [] if e.get("essential", True)):
        first = next((i for i, p in enumerate(passages) if passage_hits(item, p)), None)
        before = sum(len(p["text"]) for p in passages[:first]) if first is not None else None
        if first is None or first >= 10 or (before or 0) >= 10_000:
            rank = "missed" if first is None else f"rank {first + 1}, {before:,} characters before"
            print(f"  {question['id']} {item.get('doc')} {item.get('ref', '')}: {rank}")


def _read_states(path: Path) -> tuple[str, list[dict[str, Any]]]:
    """The store the states were captured on, and the states."""
    try:
        saved = json.loads(path.read_text())
        return str(saved["store"]), list(saved["questions"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{path}: not a states file saved by `capture` ({exc})") from None


def _system(store: str) -> System:
    """The system over an existing store with documents (none would score every question zero)."""
    if not Path(store).is_dir():
        raise SystemExit(f"no store at {store}")
    system = System(store_dir=store)
    if not system.stores.visible_documents():
        raise SystemExit(f"no documents are ingested in {store}")
    return system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("questions", type=Path, nargs="+")
    cap.add_argument("--store", required=True)
    cap.add_argument("--out", type=Path, required=True)
    sc = sub.add_parser("score")
    sc.add_argument("states", type=Path)
    sc.add_argument("--store", help="the store the states were captured on (its path is saved with them)")
    sc.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    sc.add_argument("--misses", action="store_true")
    sc.add_argument("--json", action="store_true", help="the counts as JSON (by question file, then 'all')")
    args = ap.parse_args()
    if args.command == "capture":
        capture(args.questions, args.store, args.out)
    else:
        score(args.states, args.store, args.set, args.misses, args.json)


if __name__ == "__main__":
    main()
