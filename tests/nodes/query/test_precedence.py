"""precedence (nodes/query/precedence.py): a rule's sentence is the whole sentence of its source that
states it, from its start (a NOTE, a numbered paragraph, a full stop) to its full stop, not one in a
number ("Figure 7.14")."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from clausewise.nodes.query import precedence as precedence_module
from clausewise.nodes.query.precedence import precedence, sentence_of


def test_a_rules_sentence_runs_from_the_start_of_its_note_to_its_full_stop() -> None:
    text = (
        "(3) The wind force is found from 5.3.\nNOTE 1 The values of Cpe,10 may be given in the\nNational Annex.\n"
        "NOTE 2 The National Annex may give rules for layers that are air tight (Figure 7.14(a)) or not.\n(4) More."
    )
    assert sentence_of(text, "may be given in the National Annex.") == (
        "NOTE 1 The values of Cpe,10 may be given in the National Annex."
    )
    assert sentence_of(text, "National Annex may give rules for layers that are air tight (Figure 7.") == (
        "NOTE 2 The National Annex may give rules for layers that are air tight (Figure 7.14(a)) or not."
    )
    assert sentence_of(text, "Annex A is informative") == "Annex A is informative"  # not in the text: as it is


def test_an_annexs_status_is_given_once_for_a_section_however_many_records_word_it(monkeypatch: Any) -> None:
    """A clause of an informative annex has the status recorded on itself and on the annex, in two
    wordings: it is one rule; a National Annex note on the clause is another."""
    annex, clause = "CEN_EN1991-9-9_annex_B", "CEN_EN1991-9-9_B.3"
    sections = {
        annex: {"text": "Annex B (informative) Guidance", "parent": None},
        clause: {
            "text": "B.3 Steps\n(1) Do this.\nNOTE The values may be given in the National Annex.",
            "parent": annex,
        },
    }
    status = {"source_key": annex, "type": "informative"}
    table = {
        clause: [
            {**status, "rule": "in informative Annex B: guidance, not a requirement"},
            {"rule": "may be given in the National Annex.", "source_key": clause, "type": "national-annex"},
        ],
        annex: [{**status, "rule": "Annex B is informative (guidance only, not a requirement)"}],
    }
    reader = SimpleNamespace(
        section=sections.get, lookup=lambda name, key: table.get(key) if name == "precedence" else None
    )
    monkeypatch.setattr(precedence_module, "deps_of", lambda runtime: SimpleNamespace(reader=lambda: reader))
    rules = precedence({"extracts": {clause: [{"text": "x"}]}}, SimpleNamespace())["precedence"]  # type: ignore[arg-type]
    assert [(r["type"], r["rule"]) for r in rules] == [
        ("informative", "in informative Annex B: guidance, not a requirement"),
        ("national-annex", "may be given in the National Annex."),
    ]
