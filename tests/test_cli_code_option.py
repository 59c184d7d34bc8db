"""``--code`` / ``--publisher`` are validated by keys.given_identity before anything is opened or written:
a garbage designation is one clear line and exit 1, never a ``LOCAL_..`` document."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


@pytest.mark.parametrize(
    ("option", "value", "reason"),
    [
        ("--code", "..", "not a document code"),
        ("--code", "../etc/passwd", "not a document code"),
        ("--code", " ", "not a document code"),
        ("--code", "EN 1990 EN 1991", "more than one document"),
        ("--publisher", "..", "not a publisher name"),
        ("--publisher", "A_B", "not a publisher name"),
    ],
)
def test_bad_code_or_publisher_is_one_clear_line(
    cli: Callable[..., Any], sample_pdf: Path, tmp_path: Path, option: str, value: str, reason: str
) -> None:
    store = tmp_path / "store"
    result = cli("ingest", sample_pdf, "--store", store, option, value, "--json")
    assert result.exit_code == 1
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and reason in lines[0], result.stderr
    assert not store.exists()
