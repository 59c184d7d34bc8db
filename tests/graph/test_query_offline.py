"""The query graph on the embedded default (offline reasoner) over the ingested sample code."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import CONTRACT
from langgraph.checkpoint.memory import InMemorySaver

from clausewise.graph.query import build_query_graph
from clausewise.graph.state import QueryContext
from clausewise.nodes.query.collect_passages import GAP
from clausewise.nodes.query.triage import QueryInputError
from clausewise.references import doc_display
from clausewise.stores.index import EmbeddingMismatch
from clausewise.tools.query_tasks import OfflineQueryTasks

PASSAGE = {"key", "document", "section", "kind", "page", "pages", "text", "hop", "via", "from_key"}


@pytest.fixture(scope="module")
def graph(sample_store: SimpleNamespace, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return build_query_graph(
        stores=sample_store.stores,
        embedder=embedder,
        checkpointer=InMemorySaver(),
        cache_dir=tmp_path_factory.mktemp("query-cache"),
    )


def ask(graph: Any, question: str, thread: str = "t", **ctx: Any) -> dict[str, Any]:
    return dict(
        graph.invoke(
            {"question": question}, config={"configurable": {"thread_id": thread}}, context=QueryContext(**ctx)
        )
    )


def test_answer_follows_the_contract_and_quotes_verbatim(graph: Any, sample_store: SimpleNamespace) -> None:
    answer = ask(graph, "What exposure coefficient Ce should I use for a sheltered site?", thread="contract")
    assert set(answer) == CONTRACT
    assert answer["passages"], answer["answer_markdown"]
    for p in answer["passages"]:
        assert PASSAGE <= set(p)
        section = sample_store.stores.lookup("sections", p["key"])
        pieces = p["text"].split(GAP)  # one passage per section: its extracts, verbatim, in text order
        assert pieces == [section["text"][a:b].strip() for a, b in p["spans"]]
        assert all(a < b <= c for (a, b), (c, _) in zip(p["spans"], p["spans"][1:], strict=False))
        assert set(p["pages"]) <= set(section["pages"])
        assert p["via"] in {"vector", "keyword", "reference", "neighbour", "named"}
    keys = [p["key"] for p in answer["passages"]]
    assert len(keys) == len(set(keys)), "each section once"
    assert [p["rank"] for p in answer["passages"]] == list(range(1, len(keys) + 1))
    tiers = [p["tier"] for p in answer["passages"]]
    assert tiers[0] == "key" and tiers == sorted(tiers, key=["key", "supporting", "background"].index)
    assert "CEN_EN1991-9-9_table_5.1" in keys  # the table with the values
    assert any("1,2" in p["text"] for p in answer["passages"] if p["key"].endswith("table_5.1"))
    assert answer["trace"]["mode"] == "offline" and answer["trace"]["llm_calls"] == 0


def test_references_are_followed_and_external_documents_reported(graph: Any) -> None:
    answer = ask(graph, "How are the load arrangements for leaf load on roofs determined?", thread="refs")
    hops = {p["hop"] for p in answer["passages"]}
    assert 1 in hops, "references of relevant sections are followed"
    followed = [p for p in answer["passages"] if p["via"] == "reference"]
    assert all(p["from_key"] for p in followed)
    assert "CEN_EN1991-9-9_5.1" in {p["key"] for p in answer["passages"]}  # 5.1 cites EN 1991-1-1 ...
    unresolved = answer["unresolved_references"]
    assert {
        "from_key": "CEN_EN1991-9-9_5.1",
        "ref": "EN 1991-1-1",
        "document": "CEN_EN1991-1-1",
        "reason": "document not ingested (EN 1991-1-1)",
    } in unresolved  # ... which is not in the store
    assert all(r["reason"] == f"document not ingested ({doc_display(r['document'])})" for r in unresolved)


def test_images_come_with_figures_and_tables(graph: Any) -> None:
    answer = ask(graph, "Which shape coefficient applies to flat shed roofs? Show Figure 5.1.", thread="img")
    assert any(img["id"].endswith("figure_5.1") for img in answer["images"])
    img = next(i for i in answer["images"] if i["id"].endswith("figure_5.1"))
    import base64

    assert base64.b64decode(img["base64"])[:8] == b"\x89PNG\r\n\x1a\n"
    # the brief names each figure's image file, linked so that a terminal opens it on a click: a quoted
    # figure's right under its quote, the others under figures and tables
    links = re.findall(r"\[(/[^\]]+)\]\(file://(/[^)]+)\)", answer["answer_markdown"])
    assert any(target.endswith("figure_5.1.png") for _, target in links)
    assert all(shown == target and Path(target).is_file() for shown, target in links)


def test_precedence_notes_reach_the_answer(graph: Any) -> None:
    answer = ask(graph, "What are the recommended psi factors for leaf load?", thread="prec")
    assert answer["precedence"], "NDP and National Annex notes govern the psi-factor clauses"
    assert any(r["type"] in ("ndp", "national-annex", "recommended-value") for r in answer["precedence"])
    # each rule comes with the sentence of its source that states it
    assert all(" ".join(r["rule"].split()) in r["sentence"] for r in answer["precedence"])
    assert any(len(r["sentence"]) > len(" ".join(r["rule"].split())) for r in answer["precedence"])


def test_greeting_gets_a_short_reply_and_no_search(graph: Any) -> None:
    seen = []
    for update in graph.stream(
        {"question": "Hello!"}, config={"configurable": {"thread_id": "greet"}}, stream_mode="updates"
    ):
        seen += list(update)
    assert "vector_widen" not in seen and "keyword" not in seen
    answer = ask(graph, "hi there", thread="greet2")
    assert answer["passages"] == [] and "Ask me" in answer["answer_markdown"]


def test_follow_up_is_read_in_the_thread_context(graph: Any) -> None:
    first = ask(graph, "What is the exposure coefficient Ce?", thread="conv")
    second = ask(graph, "and for a sheltered site?", thread="conv")
    assert first["passages"] and second["passages"]
    assert "follow-up" in second["answer_markdown"]
    repeat = ask(graph, "What is the exposure coefficient Ce?", thread="conv")
    assert repeat["trace"]["route"] == "memory" and repeat["answer_markdown"] == first["answer_markdown"]


@pytest.mark.parametrize("question", ["", "   \n\t "])
def test_empty_question_is_a_clear_error(graph: Any, question: str) -> None:
    with pytest.raises(QueryInputError, match="empty"):
        ask(graph, question, thread="empty")


def test_huge_question_is_cut_and_said_so(graph: Any) -> None:
    answer = ask(graph, "exposure coefficient " * 1200, thread="huge")
    assert "only the first 2000 were searched" in answer["answer_markdown"]


def test_a_slip_of_the_keys_is_searched_as_meant_and_said_so(graph: Any) -> None:
    answer = ask(graph, "What exposure coeficient Ce should I use for a sheltred site?", thread="typo")
    assert "Searched 'coeficient' as 'coefficient', 'sheltred' as 'sheltered'." in answer["answer_markdown"]
    assert answer["question"].startswith("What exposure coeficient")  # the question as asked
    assert "CEN_EN1991-9-9_table_5.1" in [p["key"] for p in answer["passages"][:10]]


def test_other_language_does_not_crash(graph: Any) -> None:
    # the prompt-injection check runs in model mode, where there is a prompt (test_query_flow.py)
    foreign = ask(graph, "Quelle est la charge de neige sur une toiture?", thread="fr")
    assert set(foreign) == CONTRACT


def test_nothing_relevant_says_so_plainly(sample_store: SimpleNamespace, embedder: Any, tmp_path: Path) -> None:
    class NeverRelevant(OfflineQueryTasks):
        def relevance(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return {}

    graph = build_query_graph(stores=sample_store.stores, embedder=embedder, tasks=NeverRelevant(), cache_dir=tmp_path)
    answer = dict(graph.invoke({"question": "quantum chromodynamics of gluons"}))
    assert answer["passages"] == []
    assert "Nothing in the ingested codes" in answer["answer_markdown"] and "Try" in answer["answer_markdown"]


def test_empty_store_is_a_clear_error(embedder: Any, tmp_path: Path) -> None:
    from clausewise.stores.base import Stores
    from clausewise.stores.local import LocalBlobs

    graph = build_query_graph(stores=Stores(LocalBlobs(tmp_path / "empty")), embedder=embedder, cache_dir=tmp_path)
    with pytest.raises(QueryInputError, match="no documents are ingested"):
        graph.invoke({"question": "snow load?"})


def test_store_built_with_another_embedding_model_is_refused(
    sample_store: SimpleNamespace, copy_store: Any, tmp_path: Path
) -> None:
    from clausewise.stores.base import Stores
    from clausewise.stores.local import LocalBlobs

    class OtherModel:
        name, dim = "other/model", 384

        def embed_query(self, text: str) -> Any:
            raise AssertionError("must not be called")

    stores = Stores(LocalBlobs(copy_store(sample_store.dir)))
    before = stores.read_json("index.json", None)
    graph = build_query_graph(stores=stores, embedder=OtherModel(), cache_dir=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(EmbeddingMismatch, match="all-MiniLM-L6-v2"):
        graph.invoke({"question": "snow?"})
    assert stores.read_json("index.json", None) == before
