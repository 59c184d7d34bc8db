"""scripts/rerank_states.py (ranking experiments on saved graph states), run as a user runs it: the
states captured on a copy of the ingested sample, then scored as `clausewise eval` scores the answer to
the same question, again with a constant changed for one run, and bad input refused with a message."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from clausewise.evaluation.scoring import score_answer

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "rerank_states.py"
QUESTION = {
    "id": "s1",
    "question": "Which exposure coefficient applies to a sheltered site?",
    "evidence": [{"doc": "EN 1991-9-9", "page": 6, "ref": "Table 5.1", "must_contain": "sheltered", "essential": True}],
}


def run(*args: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, env=env, timeout=600
    )


def test_saved_states_score_as_the_answer_does_and_a_constant_changes_for_one_run(
    sample_store: SimpleNamespace, copy_store: Any, tmp_path: Path
) -> None:
    store = copy_store(sample_store.dir)
    questions = tmp_path / "sample.jsonl"
    questions.write_text(json.dumps(QUESTION) + "\n")
    states = tmp_path / "states.json"
    captured = run("capture", questions, "--store", store, "--out", states)
    assert captured.returncode == 0, captured.stderr

    scored = run("score", states, "--json")
    assert scored.returncode == 0, scored.stderr
    counts = json.loads(scored.stdout)
    assert set(counts) == {"sample", "all"}

    from clausewise.graph.query import build_query_graph
    from clausewise.system import System

    answer = build_query_graph(System(store_dir=store)).invoke({"question": QUESTION["question"]})
    row = score_answer(QUESTION, answer)
    assert row["essential_hits"] == 1
    assert counts["sample"] == {k: row[k] for k in counts["sample"]}

    # no section quoted whole for being short: the same passages, less text quoted, for this run only
    changed = run("score", states, "--json", "--set", "WHOLE_SECTION_CHARS=0")
    assert changed.returncode == 0, changed.stderr
    cut = json.loads(changed.stdout)["all"]
    assert cut["passages"] == row["passages"] and cut["chars"] < row["chars"]
    assert json.loads(run("score", states, "--json").stdout)["all"]["chars"] == row["chars"]


def test_bad_input_is_refused_with_a_message(sample_store: SimpleNamespace, tmp_path: Path) -> None:
    states = tmp_path / "states.json"
    states.write_text(json.dumps({"store": str(sample_store.dir), "questions": []}))
    missing = run("score", tmp_path / "none.json")
    assert missing.returncode == 1 and "not a states file" in missing.stderr
    assert "no store at" in run("score", states, "--store", tmp_path / "nowhere").stderr
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "empty").mkdir()
    assert "no documents are ingested" in run("score", states, "--store", tmp_path / "empty").stderr
    assert "no number constant" in run("score", states, "--set", "FOLLOWER_KINDS=table").stderr
    assert "not a float" in run("score", states, "--set", "KEYWORD_WEIGHT=high").stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    refused = run("capture", bad, "--store", sample_store.dir, "--out", tmp_path / "out.json")
    assert refused.returncode == 1 and "line 1" in refused.stderr


def test_a_question_the_graph_fails_on_is_reported_and_the_others_kept(
    sample_store: SimpleNamespace, tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    spec = importlib.util.spec_from_file_location("rerank_states", SCRIPT)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)

    class Graph:
        def stream(self, state: dict[str, Any], stream_mode: str) -> Any:
            if "fails" in state["question"]:
                raise RuntimeError("store went away")
            yield {"question": state["question"], "candidates": {}}

    monkeypatch.setattr(script, "build_query_graph", lambda system: Graph())
    questions = tmp_path / "q.jsonl"
    failing = {**QUESTION, "id": "s2", "question": "This one fails"}
    questions.write_text(json.dumps(QUESTION) + "\n" + json.dumps(failing) + "\n")
    out = tmp_path / "states.json"
    script.capture([questions], str(sample_store.dir), out)
    printed = capsys.readouterr()
    assert "s2: not captured (RuntimeError: store went away)" in printed.err
    assert "1 states saved" in printed.out and "1 questions failed" in printed.out
    saved = json.loads(out.read_text())
    assert [q["question"]["id"] for q in saved["questions"]] == ["s1"]
    assert saved["store"] == str(Path(sample_store.dir).resolve())
