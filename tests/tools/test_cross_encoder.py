"""The cross-encoder collect-passages reads its first passages again with: the shipped weights load
and read a passage that answers the question above ones that do not; weights that are missing,
damaged or of another model leave the ranking without it, with a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clausewise.tools import models
from clausewise.tools.models import CROSS_WEIGHTS, cross_encoder

QUESTION = "What unit weight should I take for reinforced concrete when working out self-weight?"
ANSWERS = (
    "Annex A > Table A.1 Construction materials: concrete\n"
    "Reinforced concrete, normal weight: 25 kN/m3; add 1 kN/m3 for wet concrete."
)
OTHERS = [
    "Section 5 > 5.2 Load arrangements\nRoof snow load: the characteristic value times the shape coefficient.",
    "Section 4 > 4.2 Basic values\nThe fundamental value of the basic wind velocity is given in the National Annex.",
    "Foreword\nThis document shall be given the status of a national standard by publication of an identical text.",
]


@pytest.fixture(scope="module")
def shipped() -> models.CrossEncoder:
    model = cross_encoder()
    assert model is not None, f"the shipped weights {CROSS_WEIGHTS} did not load"
    return model


def test_the_shipped_cross_encoder_reads_the_passage_that_answers_first(shipped: models.CrossEncoder) -> None:
    scores = shipped.scores(QUESTION, [*OTHERS, ANSWERS])
    assert scores.index(max(scores)) == len(OTHERS)


def test_a_passage_scores_the_same_alone_and_in_a_batch_of_other_lengths(shipped: models.CrossEncoder) -> None:
    together = shipped.scores(QUESTION, [ANSWERS, *OTHERS, "x " * 400])
    alone = [shipped.scores(QUESTION, [text])[0] for text in [ANSWERS, *OTHERS]]
    assert together[:4] == pytest.approx(alone, abs=1e-4)
    assert shipped.scores(QUESTION, []) == []


def test_it_reads_as_many_tokens_as_its_weights_learned(shipped: models.CrossEncoder, tmp_path: Path) -> None:
    import numpy as np
    from safetensors.numpy import save_file

    assert shipped.max_tokens == models.learned_tokens(CROSS_WEIGHTS) >= 128
    pair = shipped._tokenizer.encode(QUESTION, "a long passage " * 300)
    assert len(pair.ids) == shipped.max_tokens
    tensors = {"head.bias": np.zeros(1, dtype=np.float16)}
    save_file(tensors, str(tmp_path / "said.safetensors"), metadata={"max_tokens": "64"})
    save_file(tensors, str(tmp_path / "silent.safetensors"))
    assert models.learned_tokens(tmp_path / "said.safetensors") == 64
    assert models.learned_tokens(tmp_path / "silent.safetensors") == models.CrossEncoder.max_tokens == 128


@pytest.mark.parametrize("broken", ["missing", "not weights", "another model's"])
def test_weights_that_cannot_be_read_leave_the_ranking_without_it(
    broken: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "cross.safetensors"
    if broken == "not weights":
        path.write_bytes(b"\x00\x01 this is not a safetensors file")
    elif broken == "another model's":
        import torch
        from safetensors.torch import save_file

        tensors = {"decoder.block.0.weight": torch.zeros(2, 2), "head.weight": torch.zeros(1, 2)}
        save_file({**tensors, "head.bias": torch.zeros(1)}, str(path))
    with caplog.at_level("WARNING", logger=models.__name__):
        assert cross_encoder(path) is None
    assert (str(path) in caplog.text) == (broken != "missing")


@pytest.mark.parametrize("setting", ["0", "1"])
def test_clausewise_cross_encoder_0_turns_it_off(
    setting: str, embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clausewise.nodes.query.deps import QueryDeps
    from clausewise.system import System

    monkeypatch.setenv("CLAUSEWISE_CROSS_ENCODER", setting)
    deps = QueryDeps(System(store_dir=tmp_path / "store", embedder=embedder))
    assert (deps.cross_encoder() is not None) == (setting == "1")
