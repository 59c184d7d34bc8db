"""The naive baseline: plain top-k vector retrieval over the configured index, no reference following,
no model calls; its answers follow the same answer contract as the system's."""

from __future__ import annotations

import time
from typing import Any

from clausewise.evaluation.scoring import AnswerFn
from clausewise.keys import code_label


def naive_answer(question_text: str, *, index: Any, embedder: Any, stores: Any, k: int = 10) -> dict[str, Any]:
    """Plain top-k vector retrieval over the same index, as an answer-contract dict.

    Each retrieved chunk is one passage (its own page only, hop 0, via "vector"); no reference
    following, no model calls.
    """
    started = time.perf_counter()
    hits = index.search(embedder.embed_query(question_text), k)
    passages = []
    for hit in hits:
        chunk = hit.chunk or {}
        try:
            section = stores.lookup("sections", hit.key) or {}
        except (KeyError, ValueError):
            section = {}
        page = chunk.get("page")
        passages.append(
            {
                "key": hit.key,
                "document": chunk.get("document") or section.get("document", ""),
                "section": code_label(section.get("section", "")),
                "kind": chunk.get("kind") or section.get("kind", ""),
                "page": page,
                "pages": [page] if page is not None else [],
                "text": chunk.get("text", ""),
                "hop": 0,
                "via": "vector",
                "from_key": None,
                "score": round(float(hit.score), 4),
            }
        )
    lines = [f"Top {len(passages)} passages by vector similarity:", ""]
    for n, p in enumerate(passages, start=1):
        lines.append(f"{n}. {p['document']} {p['section']} (page {p['page']})".rstrip())
    return {
        "question": question_text,
        "answer_markdown": "\n".join(lines) if passages else "No passages found.",
        "passages": passages,
        "images": [],
        "precedence": [],
        "conflicts": [],
        "unfollowed_references": [],
        "unresolved_references": [],
        "trace": {
            "mode": "naive",
            "llm_calls": 0,
            "tokens": 0,
            "widenings": 0,
            "hops": 0,
            "elapsed_s": round(time.perf_counter() - started, 3),
        },
    }


def naive_answer_fn(stores: Any, embedder: Any, *, index: Any, k: int = 10) -> AnswerFn:
    """A one-argument answer function for :func:`~clausewise.evaluation.scoring.run_eval` over ``index``,
    the vector index the system is configured with (local or Pinecone), so both search the same vectors."""

    def answer(question_text: str) -> dict[str, Any]:
        return naive_answer(question_text, index=index, embedder=embedder, stores=stores, k=k)

    return answer
