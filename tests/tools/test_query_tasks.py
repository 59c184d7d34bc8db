"""Offline query rules (tools/query_tasks.py): stemming, paragraph units, triage and decomposition."""

from __future__ import annotations

from clausewise.tools.query_tasks import OfflineQueryTasks, stem, units


def test_offline_reasoner_parts() -> None:
    assert stem("reinforced") == stem("reinforcing")
    text = "5.2 Load arrangements\n(1) First paragraph.\nNOTE: a note.\n(2) Second paragraph."
    spans = units(text)
    assert [text[a:b].split("\n")[0] for a, b in spans][:3] == [
        "5.2 Load arrangements",
        "(1) First paragraph.",
        "NOTE: a note.",
    ]
    tasks = OfflineQueryTasks()
    assert tasks.triage("Good morning!", [])["route"] == "chat"
    assert tasks.decompose("What is sk? And which Ce applies to a sheltered site?") == [
        "What is sk?",
        "And which Ce applies to a sheltered site?",
    ]
