"""scripts/bench_spelling.py, run as a user runs it on a copy of the ingested sample: each question gets
its slips, each slip is counted once (put right, read as another word or left as typed), and the
slipped questions are written for `clausewise eval`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_spelling.py"


def test_every_slip_is_counted_once_and_the_slipped_questions_are_written(
    sample_store: SimpleNamespace, copy_store: Any, tmp_path: Path
) -> None:
    questions = tmp_path / "sample.jsonl"
    asked = [
        {"id": "s1", "question": "Which exposure coefficient applies to a sheltered site?"},
        {"id": "s2", "question": "What characteristic snow load applies on the ground?"},
    ]
    questions.write_text("".join(json.dumps(q) + "\n" for q in asked))
    slipped = tmp_path / "slipped.jsonl"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), questions, "--store", copy_store(sample_store.dir), "--out", slipped],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["questions"] == 2 and report["slips"] == 4  # two words of six letters or more each
    assert report["put_right"] + len(report["read_as_another_word"]) + report["left_as_typed"] == 4
    assert report["put_right"] >= 1 and report["other_words_changed"] == []
    written = [json.loads(line) for line in slipped.read_text().splitlines()]
    assert [q["id"] for q in written] == ["s1", "s2"]
    assert all(q["question"] != a["question"] for q, a in zip(written, asked, strict=True))


def test_an_empty_store_is_refused_with_a_message(tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"id": "s1", "question": "Which exposure coefficient applies?"}) + "\n")
    done = subprocess.run(
        [sys.executable, str(SCRIPT), questions, "--store", tmp_path / "empty"],
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        timeout=600,
    )
    assert done.returncode != 0 and "no documents are ingested" in done.stderr
