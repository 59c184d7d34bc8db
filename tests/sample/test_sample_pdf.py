"""The fictional sample code (clausewise.sample): its text as data, and both PDF variants."""

from __future__ import annotations

import json
from collections import Counter
from importlib.resources import files
from pathlib import Path

import pymupdf

from clausewise.sample import PAGE_HEIGHT, PAGE_WIDTH, SAMPLE_TITLE, write_sample_pdf
from clausewise.sample.figures import draw_figure_5_1
from clausewise.sample.text import Figure, Heading, Paragraph, Table, load_text


def test_the_text_file_ships_in_the_package_and_loads() -> None:
    raw = json.loads(files("clausewise.sample").joinpath("text.json").read_text(encoding="utf-8"))
    assert set(raw) >= {"cover", "foreword", "body"}

    text = load_text("EN 1234-5", 2031)
    kinds = Counter(type(b).__name__ for b in text.body)
    assert kinds["Table"] == 2 and kinds["Figure"] == 1 and kinds["PageBreak"] == 2 and kinds["Expression"] == 1
    assert kinds["Symbol"] == 10 and kinds["Heading"] > 20 and kinds["Paragraph"] > 40
    assert text.body[0] == Heading("Section 1 General", gap_before=0)
    tables = [b for b in text.body if isinstance(b, Table)]
    assert tables[0].caption == "Table 4.1 \u2014 Recommended values of \u03c8 factors"
    assert tables[1].rows[0] == ["Windswept: open site with no shelter", "0,8"] and tables[1].col_widths == [260, 80]
    (figure,) = (b for b in text.body if isinstance(b, Figure))
    assert figure.draw is draw_figure_5_1 and figure.height == 200
    assert " ".join(text.cover.title_lines) == SAMPLE_TITLE


def test_designation_and_year_are_filled_in() -> None:
    text = load_text("EN 1234-5", 2031)
    assert text.body[-1] == Paragraph(
        "(4) The design value of leaf load on a light structure should be combined with its dead "
        "load according to EN 1990. For the symbols see 1.3 of EN 1234-5."
    )
    assert text.cover.reference == "Ref. No. EN 1234-5:2031 (E)"
    assert text.foreword[1].text.startswith("This document (EN 1234-5:2031) has been prepared")  # type: ignore[union-attr]
    dump = repr(text)
    assert "{designation}" not in dump and "{year}" not in dump
    # one pass: braces inside a designation are left alone
    assert load_text("EN {year}", 2031).cover.reference == "Ref. No. EN {year}:2031 (E)"


def test_the_born_digital_sample_has_real_text(sample_pdf: Path) -> None:
    with pymupdf.open(sample_pdf) as doc:
        assert doc.page_count == 8
        assert doc.metadata["title"] == f"EN 1991-9-9:2025 - {SAMPLE_TITLE}"
        assert doc.metadata["creationDate"] == "D:20250101000000Z"
        first = doc[0].get_text()
        assert "EN 1991-9-9:2025" in first and "CLAUSEWISE SAMPLE DOCUMENT" in first
        assert "Ref. No. EN 1991-9-9:2025 (E)" in first
        for page in doc:
            assert (page.rect.width, page.rect.height) == (PAGE_WIDTH, PAGE_HEIGHT)
            assert page.get_images() == []  # tables and the figure are vector drawings
            assert {span["type"] for span in page.get_texttrace()} == {0}  # visible, filled text
        assert "Table 5.1 \u2014 Exposure coefficient Ce for different sites" in doc[5].get_text()
        assert "1.1 Scope" in doc[2].get_text() and "EN 1991-9-9:2025 (E)" in doc[2].get_text()


def test_the_scanned_sample_is_an_image_per_page_with_an_invisible_text_layer(
    sample_pdf: Path, scanned_pdf: Path
) -> None:
    with pymupdf.open(scanned_pdf) as scan, pymupdf.open(sample_pdf) as born:
        assert scan.page_count == born.page_count == 8
        for scanned_page, born_page in zip(scan, born, strict=True):
            (image,) = scanned_page.get_image_info()
            assert pymupdf.Rect(image["bbox"]).intersect(scanned_page.rect).get_area() > 0.99 * (
                PAGE_WIDTH * PAGE_HEIGHT
            )
            assert scanned_page.get_drawings() == []  # no vector lines: the table rules are pixels
            trace = scanned_page.get_texttrace()
            assert trace and {span["type"] for span in trace} == {3}  # render mode 3: invisible
            assert scanned_page.get_text().split() == born_page.get_text().split()
        assert "EN 1991-9-9:2025" in scan[0].get_text()


def test_output_is_deterministic_and_follows_the_arguments(tmp_path: Path, sample_pdf: Path) -> None:
    again = write_sample_pdf(tmp_path / "again.pdf")
    assert again == tmp_path / "again.pdf"
    assert again.read_bytes() == sample_pdf.read_bytes()
    other = write_sample_pdf(tmp_path / "nested" / "other.pdf", designation="EN 1991-9-7", year=2019)
    with pymupdf.open(other) as doc:
        assert "EN 1991-9-7:2019" in doc[0].get_text() and "EN 1991-9-9" not in doc[0].get_text()
        assert "For the symbols see 1.3 of EN 1991-9-7." in " ".join(doc[-1].get_text().split())
