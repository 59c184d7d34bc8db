"""Property-based requests generated from the API's own OpenAPI document (schemathesis): whatever
they send, the server answers without a 5xx."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402


def test_no_server_errors_for_generated_requests(make_client: Any, served_store: Path) -> None:
    client = make_client(served_store)  # started: the lifespan opened the stores and compiled the graphs
    schema = schemathesis.openapi.from_dict(client.app.openapi())
    failures: list[str] = []
    tried = 0
    for operation in schema.get_all_operations():
        op = operation.ok()
        if op.method.upper() == "POST" and op.path == "/documents":
            continue  # uploads start background ingests; their bad inputs are tested one by one elsewhere

        @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        @given(case=op.as_strategy())
        def run(case: Any) -> None:
            nonlocal tried
            kwargs = case.as_transport_kwargs(base_url="http://testserver")
            allowed = ("method", "url", "headers", "params", "json", "content", "data", "cookies")
            try:
                response = client.request(**{k: v for k, v in kwargs.items() if k in allowed})
            except UnicodeEncodeError:
                return  # a header no HTTP client can send (non-ASCII): not a request the server can get
            tried += 1
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code} {response.text[:200]}")

        run()
    assert tried > 20
    assert failures == []
