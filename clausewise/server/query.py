"""Questions: one answer, or the graph's progress as server-sent events followed by the answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

from fastapi import APIRouter, HTTPException, status
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse

from clausewise.graph.state import QueryOutput
from clausewise.server.deps import ServerDep
from clausewise.server.schemas import QueryRequest

query = APIRouter(prefix="/query", tags=["query"])

CONTRACT = tuple(QueryOutput.__annotations__)  # the graph's output schema is the HTTP contract


def _config(thread_id: str | None) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}} if thread_id else {}


def _contract(values: dict[str, Any]) -> dict[str, Any]:
    return {k: values.get(k) for k in CONTRACT}


def node_summary(update: Any) -> dict[str, Any]:
    """Short counts of what a node wrote (candidates, extracts, passages ...), never the texts."""
    if not isinstance(update, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in update.items():
        if isinstance(value, (list, dict)):
            out[key] = len(value)
        elif isinstance(value, (int, float, bool)) or (isinstance(value, str) and len(value) <= 40):
            out[key] = value
    return out


def sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, default=str)}\n\n"


def _answer(server: Any, body: QueryRequest) -> dict[str, Any]:
    from clausewise.nodes.query.triage import QueryInputError

    graph = server.graph_for(body.thread_id)
    try:
        return _contract(dict(graph.invoke({"question": body.question}, config=_config(body.thread_id))))
    except QueryInputError as exc:
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, str(exc)) from exc
    finally:
        server.thread_done(body.thread_id)


@query.post("", response_model=QueryOutput)
async def ask(body: QueryRequest, server: ServerDep) -> dict[str, Any]:
    """Every relevant passage, verbatim, with references followed (the answer contract)."""
    return await run_in_threadpool(_answer, server, body)


def _stream_events(server: Any, body: QueryRequest) -> Iterator[str]:
    from clausewise.nodes.query.triage import QueryInputError

    values: dict[str, Any] = {}
    try:
        for mode, chunk in server.graph_for(body.thread_id).stream(
            {"question": body.question}, config=_config(body.thread_id), stream_mode=["updates", "values"]
        ):
            if mode == "values":
                values = chunk
                continue
            for node, update in chunk.items():
                yield sse("node", {"node": node, "summary": node_summary(update)})
    except QueryInputError as exc:
        yield sse("error", {"detail": str(exc)})
        return
    except Exception as exc:  # the status line is sent: report in the stream
        yield sse("error", {"detail": f"internal error: {type(exc).__name__}"})
        return
    finally:
        server.thread_done(body.thread_id)
    yield sse("answer", _contract(values))


async def _in_thread(events: Iterator[str]) -> AsyncIterator[str]:
    """Run the whole (blocking) graph stream in one worker thread, handing events to the event loop."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        try:
            for event in events:
                loop.call_soon_threadsafe(queue.put_nowait, event)
        finally:
            loop.call_soon_threadsafe(queue.put_nowait, None)

    worker = loop.run_in_executor(None, pump)
    while (event := await queue.get()) is not None:
        yield event
    await worker


@query.post(
    "/stream",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "node events, then the answer"}},
)
async def ask_stream(body: QueryRequest, server: ServerDep) -> StreamingResponse:
    """Server-sent events: ``node`` for each graph step as it finishes, then ``answer`` (or ``error``)."""
    return StreamingResponse(
        _in_thread(_stream_events(server, body)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
