"""Scoring (clausewise.evaluation.scoring): hit rules, per-question rows, summaries, the interleaved run
of system and baseline, and agreement with the reference scorer ../shared/eval/score.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from clausewise.evaluation import (
    document_code,
    load_questions,
    normalise_text,
    passage_documents,
    passage_hits,
    passage_pages,
    passage_sections,
    percentile,
    run_eval,
    score_answer,
    scoring,
    section_code,
    summarise,
)

SHARED_EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval"


def item(**kw: Any) -> dict[str, Any]:
    base = {"doc": "EN 1991-1-3", "page": 22, "ref": "Table 5.1", "must_contain": "windswept", "essential": True}
    return base | kw


def passage(**kw: Any) -> dict[str, Any]:
    base = {
        "key": "CEN_EN1991-1-3_5.2",
        "document": "EN 1991-1-3",
        "section": "5.2",
        "kind": "clause",
        "page": 22,
        "pages": [22],
        "text": "Ce for windswept topography",
        "hop": 0,
        "via": "vector",
    }
    return base | kw


# ---------------------------------------------------------------------------
# Hit rules
# ---------------------------------------------------------------------------


def test_normalised_forms() -> None:
    assert normalise_text("  Ce IS\n0,8\t ") == "ce is 0.8"
    assert normalise_text(None) == ""
    assert section_code("Table 5.1") == "table5.1" == section_code("table_5.1")
    assert section_code("5.2 (1)P") == "5.2(1)p"
    assert document_code("BS EN 1991-1-3:2003") == "EN1991-1-3"
    assert document_code("not a designation") == "notadesignation"


def test_passage_documents_pages_and_sections_come_from_fields_and_key() -> None:
    p = passage(document="BS EN 1991-1-3:2003", key="CEN_EN1991-1-4_table_5.1", section="5.2", page=21, pages=[22])
    assert passage_documents(p) == {"EN1991-1-3", "EN1991-1-4"}
    assert passage_pages(p) == {21, 22}
    assert passage_sections(p) == {"5.2", "table5.1"}
    assert passage_pages(passage(page="23", pages=[24.0, 24.5, True, None])) == {23, 24}
    assert passage_sections(passage(section="", key="no-underscores")) == set()


@pytest.mark.parametrize(
    "spelling", ["EN 1991-1-3", "EN1991-1-3", "BS EN 1991-1-3:2003", "prEN 1991-1-3", "EN 199 1-1-3"]
)
def test_document_spellings_match_the_key(spelling: str) -> None:
    assert document_code(spelling) == document_code("EN1991-1-3")
    assert passage_hits(item(doc=spelling), passage())
    # the key alone identifies the document when "document" is missing or odd
    assert passage_hits(item(doc=spelling), passage(document=""))
    assert passage_hits(item(), passage(document=spelling, key="no key here"))


def test_other_documents_do_not_match() -> None:
    assert not passage_hits(item(doc="EN 1991-1-4"), passage())
    assert not passage_hits(item(doc="EN 1991-1-3"), passage(key="CEN_EN1991-1-30_5.2", document="EN 1991-1-30"))
    assert document_code("NA to BS EN 1991-1-3") == document_code("NA-EN1991-1-3") != document_code("EN 1991-1-3")
    assert document_code("EN ISO 1234") == document_code("EN-ISO1234")


def test_page_must_be_among_the_passage_pages() -> None:
    assert not passage_hits(item(page=23), passage())
    assert passage_hits(item(page=23), passage(page=22, pages=[22, 23]))
    assert passage_hits(item(page=23), passage(page=23, pages=[]))
    assert passage_hits(item(page=23), passage(page=None, pages=[23]))
    assert not passage_hits(item(page=23), passage(page=None, pages=None))


def test_must_contain_comparison_normalises_case_space_and_decimal_commas() -> None:
    assert passage_hits(item(must_contain="Ce is 0,8"), passage(text="... ce   IS\n0.8 for ..."))
    assert passage_hits(item(must_contain="ce is 0.8"), passage(text="Ce is 0,8"))
    assert passage_hits(
        item(must_contain="  shape  coefficients for\nroof "), passage(text="The Shape coefficients\tfor roof loads")
    )
    assert not passage_hits(item(must_contain="ce is 0,9", ref=""), passage(text="Ce is 0,8"))


def test_ref_equality_via_section_code_or_key() -> None:
    no_text = {"text": "something else entirely"}
    assert passage_hits(item(ref="Table 5.1"), passage(section="Table 5.1", key="x", **no_text))
    assert passage_hits(item(ref="Table 5.1"), passage(section="", key="CEN_EN1991-1-3_table_5.1", **no_text))
    assert passage_hits(item(ref="5.2(1)P"), passage(section="5.2 (1)p", **no_text))
    assert not passage_hits(item(ref="5.2(1)P"), passage(section="5.2", **no_text))  # equality, not prefix
    assert not passage_hits(item(ref=""), passage(section="", key="x", **no_text))
    # the section code matches only on the right page and document
    assert not passage_hits(item(ref="Table 5.1"), passage(section="Table 5.1", page=3, pages=[3], **no_text))


def test_a_non_dict_passage_never_hits() -> None:
    assert not passage_hits(item(), None)  # type: ignore[arg-type]
    assert not passage_hits(item(), "Ce for windswept topography")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# One question
# ---------------------------------------------------------------------------

WINDSWEPT = item(page=22, ref="Table 5.1", must_contain="windswept")
THERMAL = item(page=22, ref="5.2(8)", must_contain="thermal coefficient ct")
ARRANGEMENTS = item(page=20, ref="5.2(1)P", must_contain="two primary load arrangements", essential=False)
BRIDGES = item(page=10, ref="1.1(8)", must_contain="snow loads on bridges", essential=False)
QUESTION = {
    "id": "q",
    "question": "Which coefficients apply to a windswept roof?",
    "evidence": [WINDSWEPT, THERMAL, ARRANGEMENTS, BRIDGES],
    "must_values": ["0,8", "1,2", "1,6"],
}


def test_all_evidence_retrieved_scores_full_marks() -> None:
    answer = {
        "passages": [
            passage(page=22, text="Table 5.1: windswept topography Ce = 0,8"),
            passage(page=22, section="5.2(8)", text="The thermal coefficient Ct should be used ..."),
            passage(page=19, pages=[19, 20], section="5.2(1)P", text="(not the quoted words)"),  # by ref
            passage(key="CEN_EN1991-1-3_1.1", page=10, section="1.1", text="It does not give snow loads on bridges"),
        ],
        "answer_markdown": "Ce = 1.2 sheltered, 1,6 for ...",
    }
    row = score_answer(QUESTION, answer)
    assert (row["essential_hits"], row["essential_total"]) == (2, 2)
    assert (row["all_hits"], row["all_total"]) == (4, 4)
    assert (row["value_hits"], row["value_total"]) == (3, 3)
    assert row["missed"] == [] and row["missed_values"] == []
    assert row["passages"] == 4 and row["answered"] is True


def test_an_answer_missing_one_essential_item_scores_that_fraction() -> None:
    answer = {
        "passages": [
            passage(page=22, text="Table 5.1: windswept topography Ce = 0,8"),
            # the thermal clause, but from the wrong page: no hit
            passage(page=23, pages=[23], section="5.2(8)", text="the thermal coefficient Ct"),
            passage(page=20, section="5.2(1)P", text="there are two primary load arrangements"),
            passage(key="CEN_EN1991-1-3_1.1", page=10, section="1.1", text="It does not give snow loads on bridges"),
        ],
        "answer_markdown": "",
        "trace": {"llm_calls": 2, "elapsed_s": 1.5},
    }
    row = score_answer(QUESTION, answer)
    assert (row["essential_hits"], row["essential_total"]) == (1, 2)
    assert (row["all_hits"], row["all_total"]) == (3, 4)
    assert row["missed"] == ["EN 1991-1-3 p22 5.2(8)"]
    # "0,8" is in a passage's text; neither 1,2 nor 1,6 is anywhere
    assert (row["value_hits"], row["missed_values"]) == (1, ["1,2", "1,6"])
    assert row["llm_calls"] == 2 and row["elapsed_s"] == 1.5
    totals = summarise([row])
    assert totals["essential_recall"] == 0.5 and totals["all_recall"] == 0.75
    assert totals["value_hit_rate"] == pytest.approx(1 / 3)


def test_a_passage_from_another_document_hits_nothing() -> None:
    answer = {"passages": [passage(key="CEN_EN1991-1-4_5.2", document="EN 1991-1-4", text="windswept, 0,8")]}
    row = score_answer(QUESTION, answer)
    assert (row["essential_hits"], row["all_hits"]) == (0, 0)
    assert row["value_hits"] == 1  # values are looked for in any passage's text
    assert row["missed"] == [
        "EN 1991-1-3 p22 Table 5.1",
        "EN 1991-1-3 p22 5.2(8)",
        "EN 1991-1-3 p20 5.2(1)P",
        "EN 1991-1-3 p10 1.1(8)",
    ]


def test_non_essential_misses_count_only_in_all_evidence() -> None:
    answer = {
        "passages": [
            passage(page=22, text="windswept"),
            passage(page=22, section="5.2(8)", text="thermal coefficient Ct"),
        ]
    }
    row = score_answer(QUESTION, answer)
    assert (row["essential_hits"], row["essential_total"]) == (2, 2)
    assert (row["all_hits"], row["all_total"]) == (2, 4)


@pytest.mark.parametrize(
    "answer",
    [
        None,
        {},
        {"passages": None},
        {"passages": "oops", "answer_markdown": None},
        {"passages": [None, 3, {}], "trace": "x"},
        [],
        "text",
    ],
)
def test_empty_or_malformed_answers_are_misses(answer: Any) -> None:
    question = {"id": "q", "question": "?", "evidence": [item()], "must_values": ["0,8"]}
    row = score_answer(question, answer)
    assert (row["essential_hits"], row["all_hits"], row["value_hits"]) == (0, 0, 0)
    assert (row["essential_total"], row["all_total"], row["value_total"]) == (1, 1, 1)
    assert row["missed"] == ["EN 1991-1-3 p22 Table 5.1"] and row["missed_values"] == ["0,8"]
    assert row["elapsed_s"] is None and row["llm_calls"] is None


def test_trace_numbers_must_be_numbers() -> None:
    row = score_answer(QUESTION, {"passages": [], "trace": {"elapsed_s": True, "llm_calls": "3"}})
    assert row["elapsed_s"] is None and row["llm_calls"] is None
    row = score_answer(QUESTION, {"passages": [], "trace": {"elapsed_s": 2, "llm_calls": 0}})
    assert row["elapsed_s"] == 2.0 and row["llm_calls"] == 0


# ---------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------


def row(
    ess: tuple[int, int],
    all_: tuple[int, int],
    vals: tuple[int, int],
    passages: int,
    elapsed: float | None,
    calls: int | None,
) -> dict[str, Any]:
    return {
        "essential_hits": ess[0],
        "essential_total": ess[1],
        "all_hits": all_[0],
        "all_total": all_[1],
        "value_hits": vals[0],
        "value_total": vals[1],
        "passages": passages,
        "elapsed_s": elapsed,
        "llm_calls": calls,
    }


def test_summarise_ratios_medians_and_percentiles() -> None:
    rows = [
        row((1, 2), (2, 4), (0, 1), 10, 1.0, 0),
        row((3, 3), (3, 5), (1, 1), 4, 2.0, 2),
        row((0, 0), (0, 0), (0, 0), 7, 3.0, 4),
        row((0, 1), (1, 1), (0, 0), 0, 4.0, 6),
        row((0, 0), (0, 0), (0, 0), 20, 5.0, 8),
    ]
    s = summarise(rows)
    assert s["essential_recall"] == pytest.approx(4 / 6)  # summed counts, not a mean of ratios (0.5)
    assert s["all_recall"] == pytest.approx(6 / 10)
    assert s["value_hit_rate"] == pytest.approx(1 / 2)
    assert s["passages_per_answer"] == 7
    assert s["latency_p50"] == pytest.approx(3.0)
    assert s["latency_p95"] == pytest.approx(4.8)  # linear interpolation between ranks
    assert s["model_calls"] == pytest.approx(4.0)
    assert s["questions"] == 5


def test_summarise_edge_cases() -> None:
    empty = summarise([])
    assert (empty["essential_recall"], empty["all_recall"], empty["value_hit_rate"]) == (1.0, 1.0, 1.0)
    assert empty["latency_p50"] is None and empty["model_calls"] is None and empty["questions"] == 0
    s = summarise([row((0, 0), (0, 0), (0, 0), 3, None, None), row((0, 0), (0, 0), (0, 0), 4, 2.5, None)])
    assert s["essential_recall"] == 1.0 and s["passages_per_answer"] == 3.5
    assert s["latency_p50"] == s["latency_p95"] == 2.5 and s["model_calls"] is None
    assert percentile([7.0], 95) == 7.0 and percentile([], 50) is None
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([4, 1, 3, 2], 0) == 1.0 and percentile([4, 1, 3, 2], 100) == 4.0


# ---------------------------------------------------------------------------
# run_eval
# ---------------------------------------------------------------------------

QUESTIONS = [
    {
        "id": "q1",
        "question": "snow?",
        "evidence": [item(), item(page=20, must_contain="two primary", ref="x")],
        "must_values": ["0,8"],
    },
    {
        "id": "q2",
        "question": "wind?",
        "evidence": [item(doc="EN 1991-1-4", page=5, must_contain="wind", ref="1")],
        "must_values": [],
    },
    {"id": "q3", "question": "boom", "evidence": [item()], "must_values": ["1,0"]},
]


class FakeClock:
    """Stands in for time.perf_counter; answer functions advance it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_run_eval_interleaves_system_and_baseline_and_saves_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = FakeClock()
    monkeypatch.setattr(scoring, "time", SimpleNamespace(perf_counter=clock))
    calls: list[tuple[str, str]] = []
    progress: list[tuple[str, str]] = []

    def system(text: str) -> dict[str, Any]:
        calls.append(("system", text))
        clock.now += 2.5
        if text == "boom":
            raise RuntimeError("model unavailable")
        return {
            "passages": [passage(), passage(page=20, pages=[20], text="two primary load arrangements")],
            "answer_markdown": "Ce = 0,8",
            "trace": {"llm_calls": 3, "elapsed_s": 99.0},
        }

    def naive(text: str) -> dict[str, Any]:
        calls.append(("naive", text))
        clock.now += 0.5
        return {"passages": [passage()], "answer_markdown": "", "trace": {"llm_calls": 0, "elapsed_s": 0.0}}

    result = run_eval(
        QUESTIONS,
        system,
        baseline_fn=naive,
        out_dir=tmp_path / "answers",
        progress=lambda label, qid: progress.append((label, qid)),
    )
    order = [("system", "q1"), ("naive", "q1"), ("system", "q2"), ("naive", "q2"), ("system", "q3"), ("naive", "q3")]
    assert progress == order
    assert calls == [
        ("system", "snow?"),
        ("naive", "snow?"),
        ("system", "wind?"),
        ("naive", "wind?"),
        ("system", "boom"),
        ("naive", "boom"),
    ]

    sys_rows, naive_rows = result["rows"]["system"], result["rows"]["naive"]
    assert [r["id"] for r in sys_rows] == [r["id"] for r in naive_rows] == ["q1", "q2", "q3"]
    assert [r["essential_hits"] for r in sys_rows] == [2, 0, 0]
    assert [r["essential_hits"] for r in naive_rows] == [1, 0, 1]
    assert sys_rows[2]["error"] == "RuntimeError: model unavailable" and sys_rows[2]["answered"] is False
    assert naive_rows[2]["error"] is None
    # latency is the wall time measured around the call, not the answer's own trace
    assert [r["elapsed_s"] for r in sys_rows] == [2.5, 2.5, 2.5]
    assert [r["elapsed_s"] for r in naive_rows] == [0.5, 0.5, 0.5]
    assert sys_rows[0]["trace_elapsed_s"] == 99.0 and sys_rows[2]["trace_elapsed_s"] is None

    assert result["system"]["essential_recall"] == pytest.approx(2 / 4)  # q1 2/2, q2 0/1, q3 0/1
    assert result["naive"]["essential_recall"] == pytest.approx(2 / 4)  # q1 1/2, q2 0/1, q3 1/1
    assert result["system"]["all_recall"] == pytest.approx(2 / 4)
    assert result["system"]["value_hit_rate"] == pytest.approx(1 / 2)
    assert result["system"]["model_calls"] == pytest.approx(3.0)  # the failed call has no trace
    assert result["system"]["latency_p50"] == 2.5 and result["naive"]["latency_p95"] == 0.5
    assert result["naive"]["model_calls"] == 0 and result["system"]["questions"] == 3

    answers = tmp_path / "answers"
    saved = sorted(p.relative_to(answers).as_posix() for p in answers.rglob("*.json"))
    assert saved == ["naive/q1.json", "naive/q2.json", "naive/q3.json", "system/q1.json", "system/q2.json"]
    assert json.loads((answers / "system" / "q1.json").read_text())["answer_markdown"] == "Ce = 0,8"


@pytest.mark.parametrize("returned", [None, ["not", "a", "dict"], "text"])
def test_run_eval_counts_a_non_object_answer_as_an_error(returned: Any, tmp_path: Path) -> None:
    result = run_eval(QUESTIONS, lambda text: returned, out_dir=tmp_path)
    assert result["naive"] is None and result["rows"]["naive"] is None
    assert not (tmp_path / "naive").exists()
    assert result["system"]["essential_recall"] == 0.0 and result["system"]["questions"] == 3
    assert [r["error"] for r in result["rows"]["system"]] == [
        f"answer is a {type(returned).__name__}, not an object"
    ] * 3
    assert list((tmp_path / "system").iterdir()) == []  # nothing saved for an error


# ---------------------------------------------------------------------------
# Agreement with the reference scorer
# ---------------------------------------------------------------------------


def _shout(text: str) -> str:
    return text.upper() if text.upper().lower() == text.lower() else text


def _fake_answer(q: dict[str, Any], n: int) -> dict[str, Any]:
    """Passages built from the evidence: hits by text (odd spellings), hits by section code, and
    misses by page and by document, rotating so every question gets a mix."""
    passages = []
    for j, e in enumerate(q["evidence"]):
        doc, page, mc = e["doc"], e["page"], e["must_contain"]
        code = doc.replace(" ", "")
        variant = (j + n) % 5
        if variant == 0:  # text hit, decimal separator swapped, spaces stretched, other spelling
            text = mc.replace(",", "#").replace(".", ",").replace("#", ".").replace(" ", "  \n")
            passages.append(
                {
                    "key": f"CEN_{code}_p{page}",
                    "document": f"BS {doc}:2003",
                    "page": page,
                    "pages": [page],
                    "text": f"before {_shout(text)} after",
                }
            )
        elif variant == 1:  # section-code hit, text unrelated, page only in pages
            passages.append(
                {
                    "key": f"CEN_{code}_{e['ref'].replace(' ', '_').lower()}",
                    "document": doc,
                    "section": e["ref"],
                    "page": page - 1,
                    "pages": [page - 1, page],
                    "text": "unrelated",
                }
            )
        elif variant == 2:  # wrong page
            passages.append({"key": f"CEN_{code}_x", "document": doc, "page": page + 7, "pages": [], "text": mc})
        elif variant == 3:  # wrong document
            passages.append({"key": "CEN_EN1990_1.1", "document": "EN 1990", "page": page, "text": mc})
        # variant 4: not retrieved at all
    values = q.get("must_values") or []
    return {
        "question": q["question"],
        "passages": passages,
        "answer_markdown": "Values: " + " ; ".join(values[: (len(values) + n) // 2]),
        "trace": {"mode": "offline", "llm_calls": 0, "elapsed_s": 0.1},
    }


def test_agrees_with_the_reference_scorer(tmp_path: Path) -> None:
    questions_file = SHARED_EVAL / "dev.jsonl"
    scorer = SHARED_EVAL / "score.py"
    if not questions_file.is_file() or not scorer.is_file():
        pytest.skip(f"reference evaluation files not found under {SHARED_EVAL}")
    questions = load_questions(questions_file)
    assert questions

    rows = []
    for n, q in enumerate(questions):
        if n == len(questions) - 1 and n > 0:  # one question left unanswered: no file at all
            rows.append(score_answer(q, None))
            continue
        answer = _fake_answer(q, n)
        (tmp_path / f"{q['id']}.json").write_text(json.dumps(answer))
        rows.append(score_answer(q, json.loads((tmp_path / f"{q['id']}.json").read_text())))

    done = subprocess.run(
        [sys.executable, str(scorer), str(questions_file), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    reference = json.loads(done.stdout.strip().splitlines()[-1])
    mine = summarise(rows)
    assert 0 < mine["essential_recall"] < 1 and 0 < mine["all_recall"] < 1  # a real mix of hits and misses
    assert round(mine["essential_recall"], 3) == reference["essential_recall"]
    assert round(mine["all_recall"], 3) == reference["all_recall"]
    assert round(mine["value_hit_rate"], 3) == reference["value_hits"]
    assert mine["passages_per_answer"] == reference["median_passages"]
    assert mine["questions"] == reference["questions"]

    # and per question, against the reference's own lines
    for r, line in zip(rows, done.stdout.strip().splitlines()[:-1], strict=True):
        assert line.startswith(
            f"{r['id']}: essential {r['essential_hits']}/{r['essential_total']} "
            f"all {r['all_hits']}/{r['all_total']} values {r['value_hits']}/{r['value_total']} "
            f"passages {r['passages']} missed {r['missed']}"
        ), line
