"""embed: each section cut into chunks (heading included, at line boundaries) and embedded for the
vector index; and each section's token vectors, as the query's soft match reads them, kept so that a
question does not run the model over its passages again. Both read the words a scan misread as the
words they stand for ("tinlber" as "timber"): the embedder would take a misreading for another word.
The store's embedding model is checked first."""

from __future__ import annotations

import time
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.nodes.ingest.deps import system_of
from clausewise.page_map import page_at
from clausewise.stores.index import check_embedding_model
from clausewise.tools.models import soft_text
from clausewise.tools.query_tasks import read_as, scan_readings


def embed(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    ctx, system = runtime.context, system_of(runtime)
    embedder = system.embedder
    check_embedding_model(system.stores, embedder.name, embedder.dim)
    chunks = make_chunks(state["sections"], state["descriptions"], ctx.chunk_chars)
    sections = state["sections"].values()
    readings = scan_readings(text for s in sections for text in (s.get("title") or "", s["text"]))
    started = time.perf_counter()
    vectors = embedder.embed_documents([read_as(c["text"], readings) for c in chunks])
    # What a passage quoted from the start of its section is soft-matched by (most of an answer's
    # head): its vectors now spare the question a run of the model (about 0.7 s of a cold ask).
    read = {k: s for k, s in state["sections"].items() if s["kind"] != "contents"}
    tokens = embedder.token_vectors([read_as(soft_text(s.get("title"), s["text"]), readings) for s in read.values()])
    return {
        "readings": dict(readings),  # the state holds plain data
        "chunks": chunks,
        "vectors": vectors,
        "token_vectors": dict(zip(read, tokens, strict=True)) if tokens is not None else {},
        "embed_s": round(time.perf_counter() - started, 2),
    }


def make_chunks(
    sections: dict[str, dict[str, Any]], descriptions: dict[str, str], chunk_chars: int
) -> list[dict[str, Any]]:
    """Chunks of each section, heading included, split at line boundaries; page of each chunk start."""
    chunks = []
    for key, s in sections.items():
        if s["kind"] == "contents":
            continue
        heading = f"{s['document']} {s['section']} {s.get('title') or ''}".strip()
        body = s["text"]
        if s["kind"] == "figure":  # a drawing's OCR is mostly noise: its caption and description say more
            body = "\n".join(filter(None, [descriptions.get(key), body[:300]]))
        elif s["kind"] == "table" and descriptions.get(key):
            body = descriptions[key] + "\n" + body
        lines = body.split("\n")
        start, offset, n = 0, 0, 0
        while start < len(lines):
            size, end = len(heading), start
            while end < len(lines) and (end == start or size + len(lines[end]) + 1 <= chunk_chars):
                size += len(lines[end]) + 1
                end += 1
            text = "\n".join(lines[start:end])
            page = page_at(s.get("page_map", []), offset, default=s["pages"][0])
            chunks.append(
                {
                    "key": key,
                    "chunk": n,
                    "text": f"{heading}\n{text}",
                    "page": page,
                    "kind": s["kind"],
                    "document": s["document"],
                    "doc_key": s["doc_key"],
                }
            )
            offset += len(text) + 1
            n += 1
            start = end
    return chunks
