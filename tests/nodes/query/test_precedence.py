"""precedence (nodes/query/precedence.py): a rule's sentence is the whole sentence of its source that
states it, from its start (a NOTE, a numbered paragraph, a full stop) to its full stop, not one in a
number ("Figure 7.14")."""

from __future__ import annotations

from clausewise.nodes.query.precedence import sentence_of


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
