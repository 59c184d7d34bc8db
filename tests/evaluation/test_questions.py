"""Question files (clausewise.evaluation.questions): JSONL read in order, every bad line named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clausewise.evaluation import load_questions

GOOD = {
    "id": "a1",
    "question": "Which exposure coefficient applies to a windswept site?",
    "evidence": [{"doc": "EN 1991-1-3", "page": 22, "ref": "Table 5.1", "must_contain": "windswept"}],
    "must_values": ["0,8"],
}


def test_reads_questions_in_file_order_skipping_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    second = {"id": "a2.b_c-3", "question": "Snow?"}  # evidence and must_values are optional
    path.write_text(json.dumps(GOOD) + "\n\n   \n" + json.dumps(second) + "\n", encoding="utf-8")
    assert load_questions(path) == [GOOD, second]


def test_an_empty_file_has_no_questions(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    assert load_questions(path) == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps([1, 2]), "expected a JSON object, got list"),
        (json.dumps(GOOD), "duplicate id 'a1'"),
        (json.dumps({"question": "x"}), "'id' must be"),
        (json.dumps({"id": "../b", "question": "x"}), "'id' must be"),
        (json.dumps({"id": "b", "question": ""}), "'question' must be a non-empty string"),
        (json.dumps({"id": "b", "question": "   "}), "'question' must be a non-empty string"),
        (json.dumps({"id": "b", "question": "x", "evidence": {}}), "'evidence' must be a list"),
        (json.dumps({"id": "b", "question": "x", "evidence": ["EN 1990"]}), "evidence item 1 is not an object"),
        (
            json.dumps({"id": "b", "question": "x", "evidence": [{"doc": "EN 1990"}]}),
            "evidence item 1 lacks page, must_contain",
        ),
        (
            json.dumps({"id": "b", "question": "x", "evidence": [GOOD["evidence"][0] | {"page": "22"}]}),
            "evidence item 1 page must be an integer",
        ),
        (
            json.dumps({"id": "b", "question": "x", "evidence": [GOOD["evidence"][0] | {"page": True}]}),
            "evidence item 1 page must be an integer",
        ),
        (json.dumps({"id": "b", "question": "x", "must_values": [0.8]}), "'must_values' must be a list of strings"),
    ],
)
def test_a_bad_line_is_named_with_its_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_questions(path)
    assert str(info.value).startswith(f"{path}, line 3: ")
    assert message in str(info.value)


def test_held_by_keeps_the_questions_whose_documents_a_store_holds() -> None:
    """A set over two stores runs on each with the questions it holds: a question's documents (or, without
    them, its evidence's) compared with the store's keys as designations ("EN 1991-1-1" is
    CEN_EN1991-1-1; "HSG150" is HSE_HSG150); a question on two documents needs both."""
    from clausewise.evaluation import held_by

    def q(qid: str, *docs: str, listed: bool = True) -> dict:
        evidence = [{"doc": d, "page": 1, "must_contain": "x"} for d in docs]
        return {"id": qid, "question": "?", "evidence": evidence} | ({"documents": list(docs)} if listed else {})

    questions = [
        q("en", "EN 1991-1-1"),
        q("pub", "HSG150"),
        q("both", "EN 1991-1-1", "HSG150"),
        q("bare", "EN 1991-1-3", listed=False),
    ]
    kept, left = held_by(questions, ["CEN_EN1991-1-1", "CEN_EN1991-1-3"])
    assert [x["id"] for x in kept] == ["en", "bare"] and [x["id"] for x in left] == ["pub", "both"]
    kept, left = held_by(questions, ["HSE_HSG150"])
    assert [x["id"] for x in kept] == ["pub"]
