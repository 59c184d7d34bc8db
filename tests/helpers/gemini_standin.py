"""A local stand-in of the Gemini REST API (the Developer API's v1beta and v1 paths) on 127.0.0.1.

It answers ``POST /v1beta/models/{model}:generateContent`` (``/v1/...`` too) with scripted replies and
``:embedContent`` / ``:batchEmbedContents`` with deterministic unit-free vectors (derived from a hash
of the text), and records every request, so tests can drive the real ``langchain-google-genai``
client (through ``base_url``) without any network.

Scripted replies for generateContent are consumed in order; when the script is empty the
``responder`` (a function of the request body) answers. A scripted reply is one of:

- ``Reply(json=obj)``: a normal answer whose text is ``json.dumps(obj)``;
- ``Reply(text="...")``: a normal answer with this raw text (malformed JSON, say);
- ``Reply(status=429)``: an error status with a Google-style error body;
- ``Reply(hang=5.0)``: the server waits that long (or until it stops) before answering normally.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

STATUS_NAMES = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


@dataclass
class Reply:
    json: Any = None
    text: str | None = None
    status: int = 200
    hang: float = 0.0


def response_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a generateContent request asks for (empty when none)."""
    config = body.get("generationConfig") or {}
    return config.get("responseJsonSchema") or config.get("responseSchema") or {}


def minimal(schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """A small value valid for ``schema``: required properties only, empty lists, first enum value,
    a short placeholder for strings."""
    root = root or schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return minimal((root.get("$defs") or root.get("definitions") or {})[name], root)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") not in ("null", "NULL")] or schema[key]
            return minimal(options[0], root)
    if "enum" in schema:
        return schema["enum"][0]
    kind = str(schema.get("type", "object")).lower()
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: minimal(props[k], root) for k in schema.get("required", []) if k in props}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "stand-in text"


def vector(text: str, dim: int) -> list[float]:
    """A deterministic vector for ``text`` (not normalised, so the client has to normalise)."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return (np.random.default_rng(seed).standard_normal(dim) * 3.0).round(6).tolist()


class GeminiStandIn:
    """``with GeminiStandIn() as api: ... api.url ...``; see the module docstring."""

    def __init__(self, responder: Callable[[dict[str, Any]], Any] | None = None, dim: int = 3072) -> None:
        self.responder = responder or (lambda body: minimal(response_schema(body)))
        self.default_dim = dim
        self.script: deque[Reply] = deque()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> GeminiStandIn:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def push(self, *replies: Reply) -> None:
        with self._lock:
            self.script.extend(replies)

    def paths(self, suffix: str = "") -> list[str]:
        with self._lock:
            return [p for p, _ in self.requests if p.endswith(suffix)]

    # ---------------------------------------------------------------- answers
    def _generate(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        with self._lock:
            reply = self.script.popleft() if self.script else None
        if reply is None:
            reply = Reply(json=self.responder(body))
        if reply.status != 200:
            status_name = STATUS_NAMES.get(reply.status, "UNKNOWN")
            error = {"code": reply.status, "message": f"stand-in {status_name}", "status": status_name}
            return reply.status, {"error": error}, reply.hang
        text = reply.text if reply.text is not None else json.dumps(reply.json)
        return (
            200,
            {
                "candidates": [
                    {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
                ],
                "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18},
                "modelVersion": "stand-in",
            },
            reply.hang,
        )

    def _embed_one(self, request: dict[str, Any]) -> dict[str, Any]:
        parts = (request.get("content") or {}).get("parts") or []
        text = "".join(p.get("text", "") for p in parts)
        config = request.get("embedContentConfig") or {}
        dim = request.get("outputDimensionality") or config.get("outputDimensionality") or self.default_dim
        return {"values": vector(text, int(dim))}

    def _answer(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        if path.endswith(":generateContent"):
            return self._generate(body)
        if path.endswith(":batchEmbedContents"):
            return 200, {"embeddings": [self._embed_one(r) for r in body.get("requests", [])]}, 0.0
        if path.endswith(":embedContent"):
            return 200, {"embedding": self._embed_one(body)}, 0.0
        return 404, {"error": {"code": 404, "message": f"no such path {path}", "status": "NOT_FOUND"}}, 0.0

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                path = self.path.split("?", 1)[0]
                with api._lock:
                    api.requests.append((path, body))
                status, payload, hang = api._answer(path, body)
                if hang and api._stopping.wait(hang):
                    return
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json; charset=UTF-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (a timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        return Handler
