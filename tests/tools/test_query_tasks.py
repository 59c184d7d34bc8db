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


def test_stemming_is_safe_from_parallel_relevance_batches() -> None:
    """Relevance batches run in threads; a shared Snowball stemmer corrupted its state under load."""
    from concurrent.futures import ThreadPoolExecutor

    from clausewise.tools.query_tasks import stem

    words = [f"reinforc{'e' * (i % 7)}ments{i}ing" for i in range(20_000)]
    stem.cache_clear()
    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(stem, words))
    stem.cache_clear()
    assert parallel == [stem(w) for w in words]


def test_offline_decomposition_gives_standalone_parts() -> None:
    tasks = OfflineQueryTasks()
    enumerated = (
        "For a 30 m steel chimney, does the code give (a) thermal actions from hot gases and (b) a vortex check?"
    )
    assert tasks.decompose(enumerated) == [
        "For a 30 m steel chimney, does the code give thermal actions from hot gases",
        "For a 30 m steel chimney, does the code give a vortex check?",
    ]
    assert tasks.decompose(
        "How do I calculate wind pressure on walls, and which inputs come from the National Annex?"
    ) == [
        "How do I calculate wind pressure on walls",
        "which inputs come from the National Annex?",
    ]
    # a part that leans on another carries the nearest self-contained one
    assert tasks.decompose("Do I need snow loading on my shed? What steps should I take to check this?") == [
        "Do I need snow loading on my shed?",
        "What steps should I take to check this (Do I need snow loading on my shed)",
    ]
    assert tasks.decompose("Our river is 4 m deep. What force acts on the pier? What about debris?")[-1] == (
        "What about debris (What force acts on the pier)"
    )
    assert tasks.decompose("What density for reinforced concrete?") == ["What density for reinforced concrete?"]
    assert tasks.decompose("What is sk? What is Ce?") == ["What is sk?", "What is Ce?"]  # a symbol is content
