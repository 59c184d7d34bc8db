"""Model task implementations (tools/model_tasks.py) with a scripted chat model: verbatim checks, at most
10 sections per call, retries, fallback to the offline reasoner, and call and token counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers import ScriptedChatModel
from pydantic import BaseModel

from clausewise.keys import DocId
from clausewise.tools.ingest_tasks import OfflineTasks
from clausewise.tools.model_tasks import (
    ConflictOut,
    ConflictsOut,
    DecomposeOut,
    DescriptionOut,
    KeywordsOut,
    ModelIngestTasks,
    ModelQueryTasks,
    PrecedenceOut,
    PrecedenceRule,
    ReferencesOut,
    RelevanceOut,
    SectionExtract,
    SummaryOut,
    TermItem,
    TermsOut,
    TriageOut,
    verbatim_span,
)
from clausewise.tools.query_tasks import OfflineQueryTasks, Terms, stem, tokens

DOC = DocId("CEN", "EN1991-9-9")


def k(code: str) -> str:
    return f"{DOC.key}_{code}"


def fixed(answer: Any) -> Callable[[str, str], Any]:
    return lambda schema, human: answer


def query_tasks(script: Callable[[str, str], Any], **model: Any) -> ModelQueryTasks:
    return ModelQueryTasks(ScriptedChatModel(script=script, **model), retry_wait=False)


def ingest_tasks(script: Callable[[str, str], Any], **model: Any) -> ModelIngestTasks:
    return ModelIngestTasks(ScriptedChatModel(script=script, **model), retry_wait=False)


def section(code: str, text: str, kind: str = "clause", **extra: Any) -> dict[str, Any]:
    return {"key": k(code), "text": text, "kind": kind, "title": "", "doc_key": DOC.key, **extra}


CLAUSE = section(
    "5.2",
    "5.2 Load arrangements\n(1)P Both the uniform and the one-sided load arrangement shall be\n"
    "considered.\n(4) The exposure coefficient Ce should be taken as 1,0 unless the site\n"
    "conditions are known, see Table 5.1 and 4.1.",
)
TERMS = Terms(weights={" ".join(tokens("exposure coefficient")): 3.0, stem("arrangement"): 2.0})


# ------------------------------------------------------------------ relevance
def test_relevance_keeps_verbatim_quotes_only() -> None:
    out = RelevanceOut(
        sections=[
            SectionExtract(
                key=k("5.2"),
                quotes=[
                    "(4) The exposure coefficient Ce should be taken as 1,0 unless the site conditions are known",
                    "the exposure factor is 1,0",  # paraphrase: not in the text
                    "Ce should be taken as 1,0",  # inside the first quote: merged with it
                    "(1)P Both the uniform and the one-sided load arrangement shall be considered.",
                ],
                references=["Table 5.1"],
            ),
            SectionExtract(key=k("9.9"), quotes=["5.2 Load arrangements"]),
        ]
    )
    tasks = query_tasks(fixed(out))

    found = tasks.relevance("exposure coefficient?", TERMS, [CLAUSE], {})

    assert list(found) == [k("5.2")]
    text = CLAUSE["text"]
    assert [e.text for e in found[k("5.2")]] == [
        "(1)P Both the uniform and the one-sided load arrangement shall be\nconsidered.",
        "(4) The exposure coefficient Ce should be taken as 1,0 unless the site\nconditions are known",
    ]
    for e in found[k("5.2")]:
        assert text[e.start : e.end] == e.text and e.score == 1.0 and e.claimed_refs == ["Table 5.1"]
    assert tasks.degraded == [] and tasks.calls == 1


def test_relevance_never_more_than_ten_sections_per_call() -> None:
    sections = [section(f"{i}.1", f"{i}.1 Clause {i}\n(1) Text of clause {i}.") for i in range(1, 26)]

    def script(schema: str, human: str) -> Any:
        keys = [s["key"] for s in sections if f'key="{s["key"]}"' in human]
        return RelevanceOut(
            sections=[SectionExtract(key=key, quotes=[key.rsplit("_", 1)[1] + " Clause"]) for key in keys[:2]]
        )

    tasks = query_tasks(script)
    found = tasks.relevance("q", TERMS, sections, {})

    assert tasks.calls == 3
    assert [h.count("<section ") for _, h in tasks.chat_model.seen] == [10, 10, 5]
    assert sorted(found) == sorted(k(c) for c in ("1.1", "2.1", "11.1", "12.1", "21.1", "22.1"))


def test_relevance_tells_the_model_the_focus_paragraph() -> None:
    tasks = query_tasks(fixed(RelevanceOut()))
    assert tasks.relevance("q", TERMS, [CLAUSE], {k("5.2"): "(4)"}) == {}
    assert f'<section key="{k("5.2")}" kind="clause" focus="(4)">' in tasks.chat_model.seen[0][1]


def test_offline_relevance_quotes_a_section_named_whole_whatever_its_words() -> None:
    """A focus of "*" (the question named the section) keeps all of it; without one, a section sharing
    none of the question's terms has nothing to quote."""
    offline = OfflineQueryTasks()
    assert offline.relevance("q", Terms(), [CLAUSE], {}) == {}
    (whole,) = offline.relevance("q", Terms(), [CLAUSE], {k("5.2"): "*"})[k("5.2")]
    assert whole.text == CLAUSE["text"]


@pytest.mark.parametrize(
    "answer",
    [
        RuntimeError("quota exceeded"),
        {"sections": "not a list"},  # malformed
        {"sections": [{"quotes": ["x"]}]},  # a section without its key
        "plain text instead of a schema",
        None,
    ],
    ids=["exception", "malformed", "missing-key", "text", "none"],
)
def test_relevance_falls_back_to_offline(answer: Any) -> None:
    tasks = query_tasks(fixed(answer))

    found = tasks.relevance("exposure coefficient", TERMS, [CLAUSE], {})

    assert found == OfflineQueryTasks().relevance("exposure coefficient", TERMS, [CLAUSE], {})
    assert found  # the offline reasoner found the paragraph
    assert len(tasks.degraded) == 1 and tasks.degraded[0].startswith("relevance: ")
    assert tasks.calls == 3  # retried before giving up


def test_unparsable_output_falls_back_and_tokens_are_counted() -> None:
    tasks = query_tasks(fixed("Invalid JSON: expected value"), envelope=True, tokens_per_call=40)

    assert tasks.decompose("What is sk? What is Ce?") == ["What is sk?", "What is Ce?"]  # offline split
    assert tasks.degraded and "InvalidOutput" in tasks.degraded[0]
    assert (tasks.calls, tasks.tokens) == (3, 120)
    assert tasks.usage() == {"mode": "gemini", "llm_calls": 3, "tokens": 120, "degraded": tasks.degraded}


def test_retry_recovers_without_degrading() -> None:
    answers: list[Any] = [TimeoutError("slow"), DecomposeOut(sub_questions=["What is sk?", "What is Ce?"])]
    tasks = query_tasks(lambda schema, human: answers.pop(0), envelope=True, tokens_per_call=7)

    assert tasks.decompose("What are sk and Ce?") == ["What is sk?", "What is Ce?"]
    assert tasks.degraded == []
    assert (tasks.calls, tasks.tokens) == (2, 7)


def test_lists_over_ten_items_are_invalid() -> None:
    tasks = query_tasks(fixed({"keywords": [f"term {i}" for i in range(11)]}))
    terms = Terms(weights={"exposur coefficient": 3.0, "sheltered": 2.5})

    assert tasks.keywords("exposure coefficient sheltered", terms) == OfflineQueryTasks().keywords("", terms)
    assert "ValidationError" in tasks.degraded[0]


# ------------------------------------------------------------------ the other query tasks
def test_triage_routes() -> None:
    history = [{"question": "What is sk?", "answer": "## What is sk?\nsk is 0,5."}]
    chat = query_tasks(fixed(TriageOut(route="chat", reply="Hello.")))
    assert chat.triage("hi", []) == {"route": "chat", "reply": "Hello."}
    memory = query_tasks(fixed(TriageOut(route="memory", turn=0)))
    assert memory.triage("What is sk?", history) == {"route": "memory", "answer": history[0]["answer"]}
    follow = query_tasks(fixed(TriageOut(route="search", question="What is sk for roofs?", turn=0)))
    assert follow.triage("and for roofs?", history) == {
        "route": "search",
        "question": "What is sk for roofs?",
        "follow_up_of": "What is sk?",
    }
    plain = query_tasks(fixed(TriageOut(route="search")))
    assert plain.triage("What is Ce?", []) == {"route": "search", "question": "What is Ce?"}
    assert "[turn 0] Q: What is sk?" in memory.chat_model.seen[0][1]
    assert not (chat.degraded or memory.degraded or follow.degraded or plain.degraded)


@pytest.mark.parametrize(
    "answer",
    [TriageOut(route="chat"), TriageOut(route="memory", turn=5), TriageOut(route="memory"), {"route": "party"}],
    ids=["chat-without-reply", "memory-bad-turn", "memory-no-turn", "unknown-route"],
)
def test_invalid_triage_falls_back(answer: Any) -> None:
    tasks = query_tasks(fixed(answer))
    history = [{"question": "What is sk?", "answer": "sk is 0,5."}]

    assert tasks.triage("What is Ce exactly?", history) == OfflineQueryTasks().triage("What is Ce exactly?", history)
    assert len(tasks.degraded) == 1 and tasks.degraded[0].startswith("triage: ")


def test_decompose_and_keywords() -> None:
    tasks = query_tasks(
        lambda schema, human: {
            "DecomposeOut": DecomposeOut(sub_questions=[" What is sk? ", "What is sk?", ""]),
            "KeywordsOut": KeywordsOut(keywords=["leaf load", "sk", "leaf  load", " "]),
        }[schema]
    )
    assert tasks.decompose("What is sk?") == ["What is sk?"]
    assert tasks.keywords("What is the leaf load sk?", TERMS) == ["leaf load", "sk"]
    assert "exposur coeffici, arrang" in tasks.chat_model.seen[-1][1]
    empty = query_tasks(fixed(DecomposeOut(sub_questions=[])))
    assert empty.decompose("What is sk?") == ["What is sk?"]


def _passages(n: int) -> list[dict[str, Any]]:
    return [
        {
            "key": k(f"{i}.1"),
            "document": "EN 1991-9-9",
            "section": f"{i}.1",
            "page": i,
            "hop": 0,
            "text": f"Clause {i} text",
        }
        for i in range(1, n + 1)
    ]


def test_conflicts_batches_and_checked_keys() -> None:
    passages = _passages(14) + [
        {
            "key": k("7.7"),
            "document": "EN 1991-9-9",
            "section": "7.7",
            "page": 9,
            "hop": 0,
            "text": "Ce = 1,2 for sheltered sites",
        },
        {
            "key": k("8.8"),
            "document": "EN 1991-9-9",
            "section": "8.8",
            "page": 9,
            "hop": 0,
            "text": "Ce = 1,0 for sheltered sites",
        },
    ]

    def script(schema: str, human: str) -> Any:
        if f'key="{k("1.1")}"' in human:
            return ConflictsOut(
                conflicts=[
                    ConflictOut(topic="sk", passages=[k("1.1"), k("2.1"), k("99.9")], note="0,5 vs 0,6"),
                    ConflictOut(topic="ghost", passages=[k("99.9")], note=""),
                ]
            )
        return ConflictsOut()

    tasks = query_tasks(script)
    found = tasks.find_conflicts(passages, [], {})

    # the two batches run side by side: the stand-in sees them in either order
    assert tasks.calls == 2 and sorted(h.count("<passage ") for _, h in tasks.chat_model.seen) == [6, 10]
    assert found[0] == {"topic": "sk", "passages": [k("1.1"), k("2.1")], "note": "0,5 vs 0,6"}
    assert all(c["topic"] != "ghost" for c in found)
    # the rule-based conflicts over all passages are kept (Ce given two values across two batches)
    assert any(c["topic"] == "Ce is given different values" for c in found)


def test_failing_conflicts_keep_the_rule_based_ones() -> None:
    passages = _passages(2) + [
        {"key": k("7.7"), "document": "EN", "section": "7.7", "page": 9, "hop": 0, "text": "Ce = 1,2"},
        {"key": k("8.8"), "document": "EN", "section": "8.8", "page": 9, "hop": 0, "text": "Ce = 1,0"},
    ]
    tasks = query_tasks(fixed(ValueError("boom")))
    assert tasks.find_conflicts(passages, [], {}) == OfflineQueryTasks().find_conflicts(passages, [], {})
    assert tasks.degraded and tasks.degraded[0].startswith("conflicts: ")


def test_summary() -> None:
    tasks = query_tasks(fixed(SummaryOut(summary=" Use sk = 0,5 kN/m2 (EN 1991-9-9 4.1). ")))
    assert tasks.summarise("q", []) == "" and tasks.calls == 0
    passages = _passages(12)
    assert tasks.summarise("q", passages) == "Use sk = 0,5 kN/m2 (EN 1991-9-9 4.1)."
    assert tasks.chat_model.seen[0][1].count("<passage ") == 10
    blank = query_tasks(fixed(SummaryOut(summary="  ")))
    assert blank.summarise("q", passages) == OfflineQueryTasks().summarise("q", passages)
    assert blank.degraded


# ------------------------------------------------------------------ ingestion tasks
KNOWN = {k("4.1"), k("5.1"), k("table_4.1"), k("table_5.1"), k("5.2")}
REFERRING = section(
    "4.2",
    "4.2 Other values\n(1) The values of Table 4.1 apply, see 5.1 and\nTable 5.1, and "
    "EN 1990. The value 4.1 kN/m2 is not a reference.",
    previous=k("4.1"),
)


def test_spot_references_keeps_only_verbatim_references() -> None:
    tasks = ingest_tasks(
        fixed(ReferencesOut(references=["Table 4.1", "4.1", "see 5.1", "Table 5.1", "EN 1990", "Table 9.9", "see 7.7"]))
    )

    refs = tasks.spot_references(DOC, REFERRING, KNOWN)

    text = REFERRING["text"]
    assert [(r["raw"].strip(), r["target"]) for r in refs] == [
        ("Table 4.1", k("table_4.1")),
        ("5.1", k("5.1")),
        ("Table 5.1", k("table_5.1")),
        ("EN 1990", "CEN_EN1990"),
    ]
    for r in refs:
        assert text[r["span"][0] : r["span"][1]] == r["raw"]
    assert [r["resolved"] for r in refs] == [True, True, True, False]
    assert tasks.degraded == []


def test_spot_references_across_a_line_break_and_neighbours() -> None:
    tasks = ingest_tasks(fixed(ReferencesOut(references=["see 5.1 and Table 5.1", "see above"])))
    clause = section("4.3", "4.3 More\n(1) As given above, see 5.1 and\nTable 5.1.", previous=k("4.2"))

    refs = tasks.spot_references(DOC, clause, KNOWN)

    assert {r["target"] for r in refs} == {k("5.1"), k("table_5.1")}  # "see above" is not in the text
    assert all(clause["text"][r["span"][0] : r["span"][1]] == r["raw"] for r in refs)


def test_spot_references_falls_back() -> None:
    tasks = ingest_tasks(fixed(RuntimeError("down")))
    assert tasks.spot_references(DOC, REFERRING, KNOWN) == OfflineTasks().spot_references(DOC, REFERRING, KNOWN)
    assert tasks.degraded[0].startswith("references: RuntimeError")


def test_precedence_needs_its_evidence_in_the_text() -> None:
    note = section(
        "4.1",
        "4.1 Values\n(1) sk is 0,5.\nNOTE: The National Annex may give a different value. "
        "The recommended value is 0,5.",
    )
    tasks = ingest_tasks(
        fixed(
            PrecedenceOut(
                rules=[
                    PrecedenceRule(
                        rule="The National Annex may change sk.",
                        type="national-annex",
                        evidence="The National Annex may give a different value.",
                    ),
                    PrecedenceRule(rule="Invented.", type="supersedes", evidence="This part supersedes EN 1991-1-1."),
                ]
            )
        )
    )

    rules = tasks.find_precedence(DOC, note, KNOWN)

    assert rules == [
        {
            "key": k("4.1"),
            "rule": "The National Annex may change sk.",
            "type": "national-annex",
            "source_key": k("4.1"),
            "evidence": "The National Annex may give a different value.",
        }
    ]


def test_precedence_applies_to_the_clause_it_names() -> None:
    note = section(
        "5.2",
        "5.2 Values\n(4) Ce is 1,0.\nNOTE: The National Annex may choose other values of Ce\nthan those in Table 5.1.",
    )
    tasks = ingest_tasks(
        fixed(
            PrecedenceOut(
                rules=[
                    PrecedenceRule(
                        rule="The National Annex may set Ce.",
                        type="national-annex",
                        applies_to="Table 5.1",
                        evidence="The National Annex may choose other values of Ce than those in Table 5.1.",
                    )
                ]
            )
        )
    )

    [rule] = tasks.find_precedence(DOC, note, KNOWN)

    assert (rule["key"], rule["source_key"]) == (k("table_5.1"), k("5.2"))
    assert rule["evidence"] == "The National Annex may choose other values of Ce\nthan those in Table 5.1."


def test_precedence_keeps_structural_rules() -> None:
    annex = section(
        "annex_A", "Annex A\n(informative)\nLight structures", kind="annex", status="informative", section="annex_A"
    )
    tasks = ingest_tasks(fixed(PrecedenceOut()))
    assert [r["type"] for r in tasks.find_precedence(DOC, annex, KNOWN)] == ["informative"]


def test_extract_terms_checks_terms_and_values() -> None:
    symbols = section(
        "1.3",
        "1.3 Symbols\nsk characteristic value of leaf load on the ground\nCe exposure coefficient\nsk = 0,5 kN/m2",
    )
    tasks = ingest_tasks(
        fixed(
            TermsOut(
                terms=[
                    TermItem(term="Ce", kind="symbol", meaning="exposure coefficient"),
                    TermItem(term="sk", kind="value", value="0,5 kN/m2"),
                    TermItem(term="sk", kind="value", value="0,7 kN/m2"),  # not in the text
                    TermItem(term="Ct", kind="symbol", meaning="thermal coefficient"),  # not in the text
                    TermItem(term="leaf load", kind="synonym", meaning="leaf loading"),
                ]
            )
        )
    )

    assert tasks.extract_terms(symbols) == [
        {"term": "Ce", "equivalent": "exposure coefficient", "source": k("1.3"), "type": "equivalent"},
        {"term": "sk", "value": "0,5 kN/m2", "source": k("1.3")},
        {"term": "leaf load", "equivalent": "leaf loading", "source": k("1.3"), "type": "synonym"},
    ]


def test_describe_object() -> None:
    table = section("table_5.1", "Table 5.1 — Ce\n| Site | Ce |", kind="table", caption="Table 5.1 — Ce")
    tasks = ingest_tasks(fixed(DescriptionOut(description="Exposure coefficients for three kinds of site.")))
    assert (
        tasks.describe_object(table, ["Ce is given in Table 5.1."])
        == "Table 5.1 — Ce\nExposure coefficients for three kinds of site."
    )
    assert "Ce is given in Table 5.1." in tasks.chat_model.seen[0][1]
    empty = ingest_tasks(fixed(DescriptionOut(description="")))
    assert empty.describe_object(table, []) == OfflineTasks().describe_object(table, [])
    assert empty.degraded


def test_verbatim_span() -> None:
    text = "(1) See 4.1.2 and\n4.1 for sk."
    assert verbatim_span(text, "See 4.1.2 and 4.1") == (4, 21)
    assert verbatim_span(text, "4.1 for sk.") == (18, 29)
    assert verbatim_span(text, "See 4.1.3") is None
    assert verbatim_span(text, "sk") is None  # too short to be a quote


class _Other(BaseModel):
    value: int


def test_wrong_schema_instance_is_validated() -> None:
    tasks = query_tasks(fixed(_Other(value=1)))
    assert tasks.decompose("What is sk?") == ["What is sk?"]
    assert "ValidationError" in tasks.degraded[0]


@pytest.mark.parametrize("code", ["5.1", "1.5", "4.2", "A.2"])
def test_spot_references_on_the_sample_agrees_with_offline(sample_store: Any, code: str) -> None:
    """Listing the strings the offline rules found gives the same references, at the same places."""
    sections = sample_store.sections
    source = sections[k(code)]
    known = set(sections)
    offline = OfflineTasks().spot_references(DOC, source, known)
    tasks = ingest_tasks(fixed(ReferencesOut(references=[r["raw"] for r in offline] + ["Table 9.9"])))

    refs = tasks.spot_references(DOC, source, known)

    def summary(found: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
        return {(tuple(r["span"]), r["target"], r["kind"], r["resolved"]) for r in found}

    assert summary(refs) == summary(offline)
    assert tasks.degraded == []
