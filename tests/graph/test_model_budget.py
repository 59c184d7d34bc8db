"""The model-call budget of a question: past it, relevance batches are read by the offline reasoner."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers.gemini_standin import GeminiStandIn, minimal, response_schema

from clausewise.graph.query import build_query_graph
from clausewise.graph.state import QueryContext
from clausewise.settings import Settings
from clausewise.tools.model_tasks import ModelQueryTasks
from clausewise.tools.models import build_chat_model

SECTION = re.compile(r'<section key="([^"]+)"[^>]*>\n(.*?)\n</section>', re.S)


def generous(body: dict[str, Any]) -> Any:
    """Every section is relevant (its first line is quoted): the graph reads as much as it can."""
    schema = response_schema(body)
    text = "\n".join(p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", []))
    answer = minimal(schema)
    if schema.get("title") == "TriageOut":
        asked = re.search(r"<question>\n(.*?)\n</question>", text, re.S)
        answer.update(route="search", question=asked.group(1) if asked else None)
    if schema.get("title") == "RelevanceOut":
        answer = {
            "sections": [{"key": k, "quotes": [t.split("\n")[0]], "references": []} for k, t in SECTION.findall(text)]
        }
    return answer


@pytest.mark.parametrize("limit", [12, 25])
def test_calls_per_question_stay_within_the_budget(
    limit: int, sample_store: SimpleNamespace, embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with GeminiStandIn(responder=generous) as standin:
        monkeypatch.setenv("GEMINI_BASE_URL", standin.url)
        tasks = ModelQueryTasks(build_chat_model(Settings(_env_file=None, gemini_api_key="k")))
        graph = build_query_graph(stores=sample_store.stores, embedder=embedder, tasks=tasks, cache_dir=tmp_path)
        answer = dict(
            graph.invoke(
                {"question": "How is the leaf load on a shed roof determined?"},
                context=QueryContext(max_model_calls=limit, vector_batch=4),
            )
        )
        calls = standin.paths(":generateContent")
    assert answer["trace"]["mode"] == "gemini"
    assert answer["trace"]["llm_calls"] == len(calls) <= limit
    assert answer["passages"], "batches past the budget are still read (offline), nothing is dropped"
