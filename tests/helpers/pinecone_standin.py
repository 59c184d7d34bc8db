"""A local stand-in of Pinecone's data-plane REST API (the endpoints the v7 client calls), for tests.

Serves, on 127.0.0.1 and in memory, one index with namespaces:

    POST /vectors/upsert          {"vectors": [{"id", "values", "metadata"}], "namespace"} -> {"upsertedCount"}
    POST /query                   {"vector", "topK", "namespace", "filter", "includeMetadata", "includeValues"}
                                  -> {"matches": [{"id", "score", "values", "metadata"}], "namespace"}
    GET  /vectors/fetch?ids=..&ids=..&namespace=..   -> {"vectors": {id: {"id", "values", "metadata"}}}
    POST /vectors/fetch           {"ids", "namespace"} (same answer; for hand-written clients)
    GET  /vectors/list?prefix=..&limit=..&paginationToken=..&namespace=..
                                  -> {"vectors": [{"id"}], "pagination": {"next"}?, "namespace"}
    POST /vectors/delete          {"ids" | "deleteAll" | "filter", "namespace"} -> {}
    POST|GET /describe_index_stats -> {"namespaces": {ns: {"vectorCount"}}, "dimension", "totalVectorCount", ...}

Scores are cosine similarities (the metric of the indexes DESIGN.md uses). Metadata filters support
``{"field": value}``, ``$eq``, ``$ne``, ``$in``, ``$nin``, ``$gt``/``$gte``/``$lt``/``$lte``,
``$exists``, and top-level ``$and`` / ``$or``. Every request must carry an ``Api-Key`` header.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


def _matches_condition(value: Any, cond: Any) -> bool:
    if not isinstance(cond, dict):
        return value == cond
    for op, arg in cond.items():
        if op == "$eq" and value != arg:
            return False
        if op == "$ne" and value == arg:
            return False
        if op == "$in" and value not in arg:
            return False
        if op == "$nin" and value in arg:
            return False
        if op == "$exists" and (value is not None) != bool(arg):
            return False
        if op in ("$gt", "$gte", "$lt", "$lte"):
            if not isinstance(value, (int, float)):
                return False
            if op == "$gt" and not value > arg:
                return False
            if op == "$gte" and not value >= arg:
                return False
            if op == "$lt" and not value < arg:
                return False
            if op == "$lte" and not value <= arg:
                return False
    return True


def matches_filter(metadata: dict[str, Any], flt: dict[str, Any] | None) -> bool:
    """Whether ``metadata`` satisfies a Pinecone metadata filter."""
    if not flt:
        return True
    for field, cond in flt.items():
        if field == "$and":
            if not all(matches_filter(metadata, sub) for sub in cond):
                return False
        elif field == "$or":
            if not any(matches_filter(metadata, sub) for sub in cond):
                return False
        elif not _matches_condition(metadata.get(field), cond):
            return False
    return True


def _cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


class PineconeStandIn:
    """In-memory state of one index: namespace -> id -> {"id", "values", "metadata"} (insertion order)."""

    def __init__(self, dimension: int | None = None):
        self.dimension = dimension
        self.namespaces: dict[str, dict[str, dict[str, Any]]] = {}
        self.lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []  # (method, path), for tests that check batching

    # ---- operations (body in, body out) ----
    def upsert(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        vectors = body.get("vectors") or []
        if len(vectors) > 1000:
            return 400, {"code": 3, "message": "upsert batch is larger than 1000 vectors"}
        for v in vectors:
            if self.dimension is None:
                self.dimension = len(v["values"])
            if len(v["values"]) != self.dimension:
                return 400, {
                    "code": 3,
                    "message": f"Vector dimension {len(v['values'])} does not match the dimension of the index "
                    f"{self.dimension}",
                }
        ns = self.namespaces.setdefault(body.get("namespace") or "", {})
        for v in vectors:
            ns.pop(v["id"], None)  # an overwrite moves to the end, like a fresh insert
            ns[v["id"]] = {"id": v["id"], "values": list(v["values"]), "metadata": dict(v.get("metadata") or {})}
        return 200, {"upsertedCount": len(vectors)}

    def query(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        ns_name = body.get("namespace") or ""
        ns = self.namespaces.get(ns_name, {})
        top_k = int(body.get("topK") or 0)
        if top_k < 1 or top_k > 10000:
            return 400, {"code": 3, "message": "topK must be between 1 and 10000"}
        if "vector" in body:
            query = body["vector"]
        elif "id" in body and body["id"] in ns:
            query = ns[body["id"]]["values"]
        else:
            return 400, {"code": 3, "message": "No query provided"}
        if self.dimension is not None and len(query) != self.dimension:
            return 400, {"code": 3, "message": "query vector dimension does not match the index"}
        scored = [
            (_cosine(query, v["values"]), v) for v in ns.values() if matches_filter(v["metadata"], body.get("filter"))
        ]
        scored.sort(key=lambda sv: -sv[0])  # stable: ties keep insertion order
        matches = []
        for score, v in scored[:top_k]:
            match: dict[str, Any] = {"id": v["id"], "score": score, "values": []}
            if body.get("includeValues"):
                match["values"] = v["values"]
            if body.get("includeMetadata"):
                match["metadata"] = v["metadata"]
            matches.append(match)
        return 200, {"matches": matches, "namespace": ns_name, "usage": {"readUnits": 1}}

    def fetch(self, ids: list[str], namespace: str) -> tuple[int, dict[str, Any]]:
        ns = self.namespaces.get(namespace, {})
        found = {i: ns[i] for i in ids if i in ns}
        return 200, {"vectors": found, "namespace": namespace, "usage": {"readUnits": 1}}

    def list_ids(self, query: dict[str, list[str]]) -> tuple[int, dict[str, Any]]:
        namespace = (query.get("namespace") or [""])[0]
        prefix = (query.get("prefix") or [""])[0]
        limit = int((query.get("limit") or ["100"])[0])
        start = int((query.get("paginationToken") or ["0"])[0])
        ids = sorted(i for i in self.namespaces.get(namespace, {}) if i.startswith(prefix))
        page = ids[start : start + limit]
        out: dict[str, Any] = {"vectors": [{"id": i} for i in page], "namespace": namespace, "usage": {"readUnits": 1}}
        if start + limit < len(ids):
            out["pagination"] = {"next": str(start + limit)}
        return 200, out

    def delete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        namespace = body.get("namespace") or ""
        ns = self.namespaces.get(namespace, {})
        if body.get("deleteAll"):
            self.namespaces.pop(namespace, None)
        elif body.get("ids"):
            for i in body["ids"]:
                ns.pop(i, None)
        elif body.get("filter"):
            for i in [i for i, v in ns.items() if matches_filter(v["metadata"], body["filter"])]:
                del ns[i]
        else:
            return 400, {"code": 3, "message": "Delete request must specify ids, deleteAll or filter"}
        if namespace in self.namespaces and not self.namespaces[namespace]:
            del self.namespaces[namespace]
        return 200, {}

    def describe_index_stats(self) -> tuple[int, dict[str, Any]]:
        namespaces = {name: {"vectorCount": len(ns)} for name, ns in self.namespaces.items() if ns}
        return 200, {
            "namespaces": namespaces,
            "dimension": self.dimension or 0,
            "indexFullness": 0.0,
            "totalVectorCount": sum(n["vectorCount"] for n in namespaces.values()),
            "metric": "cosine",
            "vectorType": "dense",
        }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}

    def _handle(self, method: str) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        state = self.server.state
        body = self._body() if method == "POST" else {}
        if not self.headers.get("Api-Key"):
            self._reply(401, {"code": 16, "message": "Invalid API Key"})
            return
        with state.lock:
            state.requests.append((method, url.path))
            route = (method, url.path)
            if route == ("POST", "/vectors/upsert"):
                status, out = state.upsert(body)
            elif route == ("POST", "/query"):
                status, out = state.query(body)
            elif route == ("GET", "/vectors/fetch"):
                status, out = state.fetch(query.get("ids", []), (query.get("namespace") or [""])[0])
            elif route == ("POST", "/vectors/fetch"):
                status, out = state.fetch(body.get("ids") or [], body.get("namespace") or "")
            elif route == ("GET", "/vectors/list"):
                status, out = state.list_ids(query)
            elif route == ("POST", "/vectors/delete"):
                status, out = state.delete(body)
            elif url.path == "/describe_index_stats":
                status, out = state.describe_index_stats()
            else:
                status, out = 404, {"code": 5, "message": f"no route {method} {url.path}"}
        self._reply(status, out)

    def do_GET(self) -> None:  # noqa: N802 - BaseHTTPRequestHandler's naming
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    state: PineconeStandIn


@contextmanager
def serve_pinecone(dimension: int | None = None) -> Iterator[tuple[str, PineconeStandIn]]:
    """Run the stand-in on a free port of 127.0.0.1; yields (host URL, state)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = PineconeStandIn(dimension)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
