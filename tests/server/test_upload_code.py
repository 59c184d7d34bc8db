"""The ``code`` and ``publisher`` form fields of an upload are validated (keys.given_identity) before the
upload is read: a bad one is a one-line 422 and the store is unchanged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("form", "reason"),
    [
        ({"code": ".."}, "not a document code"),
        ({"code": "../etc/passwd"}, "not a document code"),
        ({"code": "EN 1990", "publisher": ".."}, "not a publisher name"),
        ({"publisher": "A_B"}, "not a publisher name"),
    ],
)
def test_bad_code_or_publisher_is_a_clear_422(
    tmp_path: Path,
    sample_pdf: Path,
    make_client: Callable[..., Any],
    upload_pdf: Callable[..., Any],
    snapshot: Any,
    form: dict[str, str],
    reason: str,
) -> None:
    store = tmp_path / "store"
    client = make_client(store)
    before = snapshot(store)
    r = upload_pdf(client, sample_pdf, **form)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    assert isinstance(detail, str) and "\n" not in detail and reason in detail
    assert snapshot(store) == before
