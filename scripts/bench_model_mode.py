"""Model mode against a scripted stand-in of the Gemini REST API: model calls per question, items per
call, prompt size per call, and wall time outside the model, over evaluation questions.

The stand-in (tests/gemini_standin.py) answers through the real langchain-google-genai client. Its
relevance answers quote the first two lines of every section it is shown (so every batch looks
relevant and the graph widens and follows references as far as it can: the worst case for the call
count); every other task gets a minimal valid answer. Prompt tokens are estimated as characters / 4
(no Gemini tokenizer is available offline).

usage: python scripts/bench_model_mode.py QUESTIONS.jsonl --store DIR
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "helpers"))

from gemini_standin import GeminiStandIn, minimal, response_schema  # noqa: E402

from clausewise.graph.query import build_query_graph  # noqa: E402
from clausewise.settings import Settings  # noqa: E402
from clausewise.system import System  # noqa: E402
from clausewise.tools.model_tasks import ModelQueryTasks  # noqa: E402
from clausewise.tools.models import MiniLMEmbedder, build_chat_model  # noqa: E402

SECTION = re.compile(r'<section key="([^"]+)"[^>]*>\n(.*?)\n</section>', re.S)
CALLS: list[dict[str, Any]] = []


def prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for content in body.get("contents", []) + [body.get("systemInstruction") or {}]:
        parts += [p.get("text", "") for p in content.get("parts", [])]
    return "\n".join(parts)


def responder(body: dict[str, Any]) -> Any:
    schema = response_schema(body)
    text = prompt_text(body)
    sections = SECTION.findall(text)
    CALLS.append({"schema": schema.get("title"), "chars": len(text), "items": len(sections), "at": time.perf_counter()})
    if schema.get("title") == "RelevanceOut":
        quotes = []
        for key, body_text in sections:
            lines = [ln for ln in body_text.split("\n") if ln.strip()][:2]
            quotes.append({"key": key, "quotes": ["\n".join(lines)] if lines else [], "references": []})
        return {"sections": quotes}
    answer = minimal(schema)
    if schema.get("title") == "TriageOut":  # a question to search (the enum's first value is "chat")
        asked = re.search(r"<question>\n(.*?)\n</question>", text, re.S)
        answer.update(route="search", question=asked.group(1) if asked else None)
    return answer


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("questions", type=Path)
    ap.add_argument("--store", type=Path, required=True)
    args = ap.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    with GeminiStandIn(responder=responder) as standin:
        os.environ["GEMINI_BASE_URL"] = standin.url
        settings = Settings(_env_file=None, gemini_api_key="stand-in-key")
        tasks = ModelQueryTasks(build_chat_model(settings))
        system = System(settings, store_dir=args.store, embedder=MiniLMEmbedder(), query_tasks=tasks)
        graph = build_query_graph(system)
        graph.invoke({"question": "warm-up: density of concrete"})
        rows = []
        for q in questions:
            CALLS.clear()
            start = time.perf_counter()
            answer = graph.invoke({"question": q["question"]})
            wall = time.perf_counter() - start
            trace = answer["trace"]
            rows.append(
                {
                    "id": q["id"],
                    "llm_calls": trace["llm_calls"],
                    "requests": len(CALLS),
                    "max_items": max((c["items"] for c in CALLS), default=0),
                    "max_prompt_tokens_est": max((c["chars"] for c in CALLS), default=0) // 4,
                    "passages": len(answer["passages"]),
                    "degraded": len(trace["degraded"]),
                    "wall_s": round(wall, 2),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    print(
        json.dumps(
            {
                "questions": len(rows),
                "llm_calls_max": max(r["llm_calls"] for r in rows),
                "llm_calls_mean": round(statistics.mean(r["llm_calls"] for r in rows), 1),
                "items_per_call_max": max(r["max_items"] for r in rows),
                "prompt_tokens_est_max": max(r["max_prompt_tokens_est"] for r in rows),
                "wall_s_p50": statistics.median(r["wall_s"] for r in rows),
                "note": "the stand-in answers at once, so wall time is time outside the model",
            }
        )
    )


if __name__ == "__main__":
    main()
