"""Huge pages: crops are bounded in pixels, the layout model is not run on them, and a page MuPDF
cannot read ends the ingest with one clear line."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pymupdf
import pytest

from clausewise.nodes.ingest.extract_page import MAX_CROP_PX, crop_dpi, read_page


def _huge_code(path: Path, side: float) -> Path:
    doc = pymupdf.open()
    page = doc.new_page(width=side, height=side)
    lines = [
        "EN 1991-9-9:2025",
        "1 Scope",
        "1.1 General",
        "(1) This page is very large.",
        "Table 1.1 - Values on a huge page",
        "| a | b |",
        "Figure 1.1 - A figure on a huge page",
    ]
    top = side / 3  # clear of the running header and footer bands
    for i, text in enumerate(lines):
        page.insert_text((72, top + 40 * i), text, fontsize=24)
    page.draw_rect(pymupdf.Rect(72, top + 320, side * 0.9, side * 0.6), color=(0, 0, 0), width=4)
    doc.set_metadata({"title": "EN 1991-9-9:2025 huge page test"})
    doc.save(path)
    return path


def test_crop_dpi_is_bounded() -> None:
    assert crop_dpi(pymupdf.Rect(0, 0, 400, 300)) == 110
    huge = pymupdf.Rect(0, 0, 14_000, 7_000)
    assert 14_000 / 72 * crop_dpi(huge) <= MAX_CROP_PX + 1


def test_a_14400_pt_page_gives_bounded_crops(tmp_path: Path) -> None:
    path = _huge_code(tmp_path / "huge.pdf", 14_400)
    with pymupdf.open(path) as doc:
        page = read_page(doc, 0, crop=True)
    assert page["has_text"]
    crops = [pymupdf.Pixmap(obj["png"]) for obj in page["objects"] if obj.get("png")]
    assert crops, "the table and figure are cropped"
    assert all(max(pix.width, pix.height) <= MAX_CROP_PX + 1 for pix in crops)


def test_an_unreadable_page_is_one_clear_line(cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What MuPDF raises in a page worker (FzErrorLimit on a 30,000-pt page, or an exception that cannot
    be pickled back) reaches the user as one line naming the file and page."""
    from clausewise.nodes.ingest import extract_page

    path = _huge_code(tmp_path / "huge.pdf", 1_000)

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("code=4: FzErrorLimit: pixmap too large\n  deep frames ...")

    pool = ThreadPoolExecutor(max_workers=2)  # stands in for the process pool, so the patch reaches it
    monkeypatch.setattr(extract_page, "_POOL", SimpleNamespace(broken=False, get=lambda processes: pool))
    monkeypatch.setattr(extract_page, "_extract_in_worker", broken)
    with pytest.raises(extract_page.PageError, match=r"huge.pdf: page 1 cannot be read \(RuntimeError: code=4"):
        extract_page.read_page_pooled(str(path), 0, crop=True, processes=2)
    result = cli("ingest", path, "--store", tmp_path / "s", "--json")
    pool.shutdown()
    assert result.exit_code == 1
    assert json.loads(result.stdout) == []
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "page 1 cannot be read" in lines[0] and "deep frames" not in result.stderr
