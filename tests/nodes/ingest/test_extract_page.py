"""Per-page extraction on the born-digital and the scanned-style sample (nodes/ingest/extract_page.py):
captions, cropped images, rebuilt table rows, running header and footer removed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from clausewise.nodes.ingest.extract_page import (
    _page_lines,
    _read_into,
    _rows,
    caption_run_on,
    cell_rows,
    parse_caption,
    rows_to_markdown,
    table_footnotes,
    table_rows,
)
from clausewise.nodes.ingest.extract_page import read_page as extract_page

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
OBJECT_PAGES = {5: ("table", "4.1"), 6: ("table", "5.1"), 7: ("figure", "5.1")}  # 1-based PDF pages


@pytest.fixture(scope="module")
def pages(sample_pdf: Path, scanned_pdf: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """(variant, 1-based page) -> extract_page result, for the body pages of both variants."""
    out = {}
    for variant, path in (("born-digital", sample_pdf), ("scanned", scanned_pdf)):
        with pymupdf.open(path) as doc:
            for page in (3, 5, 6, 7, 8):
                out[(variant, page)] = extract_page(doc, page - 1, crop=True)
    return out


VARIANTS = ["born-digital", "scanned"]


def _only_object(result: dict[str, Any]) -> dict[str, Any]:
    assert len(result["objects"]) == 1, [o["caption"] for o in result["objects"]]
    return result["objects"][0]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(
    ("page", "kind", "number", "title"),
    [
        (5, "table", "4.1", "Recommended values of \u03c8 factors"),
        (6, "table", "5.1", "Exposure coefficient Ce for different sites"),
        (7, "figure", "5.1", "Shape coefficient for flat shed roofs"),
    ],
)
def test_captions_found_with_number_and_title(
    pages: dict[tuple[str, int], dict[str, Any]], variant: str, page: int, kind: str, number: str, title: str
) -> None:
    result = pages[(variant, page)]
    assert result["page"] == page
    obj = _only_object(result)
    assert (obj["kind"], obj["number"], obj["title"]) == (kind, number, title)
    assert obj["caption"].startswith(f"{kind.title()} {number}")
    # the caption stays in the running text as an anchor for the section it belongs to
    assert any(ln["text"] == obj["caption"] for ln in result["lines"])


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("page", sorted(OBJECT_PAGES))
def test_each_object_is_cropped_to_a_png(pages: dict[tuple[str, int], dict[str, Any]], variant: str, page: int) -> None:
    obj = _only_object(pages[(variant, page)])
    png = obj["png"]
    assert png.startswith(PNG_MAGIC)
    assert 2_000 < len(png) < 2_000_000
    pix = pymupdf.Pixmap(png)
    x0, y0, x1, y1 = obj["bbox"]
    assert x1 - x0 > 100 and y1 - y0 > 40  # a real region, not a sliver
    # 110 dpi crop of the object's box (plus its caption): at least the box, at most the whole page
    assert pix.width >= (x1 - x0) * 110 / 72 - 2
    assert pix.width <= 595 * 110 / 72 + 2 and pix.height <= 842 * 110 / 72 + 2
    assert pix.n == 1  # grayscale


def test_no_crop_when_disabled(sample_pdf: Path) -> None:
    with pymupdf.open(sample_pdf) as doc:
        result = extract_page(doc, 5, crop=False)
    obj = _only_object(result)
    assert "png" not in obj
    assert obj["rows"][0] == ["Topography", "Ce"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_table_4_1_rows_rebuilt(pages: dict[tuple[str, int], dict[str, Any]], variant: str) -> None:
    obj = _only_object(pages[(variant, 5)])
    assert obj["rows"][:4] == [
        ["Location of the structure", "\u03c80", "\u03c82"],
        ["Open garden", "0,5", "0,0"],
        ["Garden with trees a)", "0,7", "0,2"],
        ["Woodland plot", "0,8", "0,4"],
    ]
    # The table's footnote belongs to it (footnotes carry values: "increase by 1 kN/m3").
    assert [row[0] for row in obj["rows"][4:]] in (
        [],
        ["a) Trees taller than 5 m within a distance of 10 m from the structure."],
    )
    assert "| Woodland plot | 0,8 | 0,4 |" in obj["body"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_table_5_1_rows_rebuilt(pages: dict[tuple[str, int], dict[str, Any]], variant: str) -> None:
    obj = _only_object(pages[(variant, 6)])
    assert obj["rows"] == [
        ["Topography", "Ce"],
        ["Windswept: open site with no shelter", "0,8"],
        ["Normal: some shelter from hedges or walls", "1,0"],
        ["Sheltered: enclosed garden below trees", "1,2"],
    ]


@pytest.mark.parametrize("variant", VARIANTS)
def test_table_cells_leave_the_running_text(pages: dict[tuple[str, int], dict[str, Any]], variant: str) -> None:
    texts = [ln["text"] for ln in pages[(variant, 6)]["lines"]]
    assert not any("Windswept" in t or "Sheltered: enclosed" in t for t in texts)
    assert any(t.startswith("(5) Where the site lies between two rows of Table 5.1") for t in texts)


@pytest.mark.parametrize("variant", VARIANTS)
def test_figure_text_is_the_figure_body(pages: dict[tuple[str, int], dict[str, Any]], variant: str) -> None:
    result = pages[(variant, 7)]
    obj = _only_object(result)
    assert "a) shed roof" in obj["body"] and "b) shape coefficient" in obj["body"]
    assert not any("shed roof" == ln["text"] or ln["text"] == "a) shed roof" for ln in result["lines"])


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("page", [3, 5, 6, 7, 8])
def test_running_header_and_footer_removed(
    pages: dict[tuple[str, int], dict[str, Any]], variant: str, page: int
) -> None:
    result = pages[(variant, page)]
    assert result["header"] == ["EN 1991-9-9:2025 (E)"]
    assert result["label"] == str(page)  # the printed page number, read from the footer
    texts = [ln["text"] for ln in result["lines"]]
    assert "EN 1991-9-9:2025 (E)" not in texts
    assert str(page) not in texts
    assert result["has_text"] is True
    assert result["has_image"] is (variant == "scanned")


@pytest.mark.parametrize("variant", VARIANTS)
def test_lines_are_in_reading_order_with_positions(pages: dict[tuple[str, int], dict[str, Any]], variant: str) -> None:
    lines = pages[(variant, 3)]["lines"]
    texts = [ln["text"] for ln in lines]
    assert texts.index("Section 1 General") < texts.index("1.1 Scope") < texts.index("1.2 Normative references")
    tops = [ln["bbox"][1] for ln in lines]
    assert tops == sorted(tops)


# ---------------------------------------------------------------- crop quality
def _drawings_box(path: Path, page: int) -> pymupdf.Rect:
    with pymupdf.open(path) as doc:
        box = pymupdf.Rect()
        for d in doc[page - 1].get_drawings():
            box |= d["rect"]
    return box


@pytest.mark.parametrize("page", sorted(OBJECT_PAGES))
def test_crop_contains_the_whole_drawn_object(
    pages: dict[tuple[str, int], dict[str, Any]], sample_pdf: Path, page: int
) -> None:
    """On the born-digital sample the only vector drawings on pages 5-7 are the tables' rulings and the
    figure's lines, so the crop must contain their bounding box."""
    obj = _only_object(pages[("born-digital", page)])
    crop = pymupdf.Rect(obj["bbox"]) | pymupdf.Rect(obj["caption_bbox"])
    drawn = _drawings_box(sample_pdf, page)
    assert not drawn.is_empty
    grown = pymupdf.Rect(crop.x0 - 3, crop.y0 - 3, crop.x1 + 3, crop.y1 + 3)
    assert grown.contains(drawn), f"crop {crop} misses part of the drawing {drawn}"


# ---------------------------------------------------------------- units
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Table 4.1 \u2014 Recommended values", ("table", "4.1", "Recommended values")),
        ("Table A.I: Snow load shape coefficients", ("table", "A.1", "Snow load shape coefficients")),
        ("Figure 5.1", ("figure", "5.1", "")),
        ("Fig. 3.2 - Shape", ("figure", "3.2", "Shape")),
        ("Table 5. 2 Exposure coefficient", ("table", "5.2", "Exposure coefficient")),
        ("Figure B1 \u2014 Drifts", ("figure", "B.1", "Drifts")),
        # a scan's text layer: the separator read twice, an amendment mark before the caption
        ("Table A.II .. Stored products - solid fuels", ("table", "A.11", "Stored products - solid fuels")),
        ("~Table 7.4b - Recommended values", ("table", "7.4b", "Recommended values")),
        ("~ Table 7.5 - Recommended values", ("table", "7.5", "Recommended values")),  # the mark set apart
        ("15) Table 7.3b - Recommended values", ("table", "7.3b", "Recommended values")),  # the mark read as "15)"
    ],
)
def test_parse_caption(text: str, expected: tuple[str, str, str]) -> None:
    assert parse_caption(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Table 4.1 shows the values",
        "Tables are given in Annex A",
        "Figure 5.1 \u2014 lower case continues",
        "The Table 4.1 values",
        "Table 12.3.4.5.6 Too deep",
        "Table 2-1 Wind loads .... 14",
        "3) Table 5.2 gives the values for sheltered sites",  # a list's item that names a table
    ],
)
def test_parse_caption_rejects_running_text(text: str) -> None:
    assert parse_caption(text) is None


def _ln(text: str, x0: float, y0: float, width: float = 40) -> dict[str, Any]:
    return {"text": text, "bbox": [x0, y0, x0 + width, y0 + 10]}


def test_table_rows_from_positions() -> None:
    lines = [
        _ln("0,8", 300, 30),
        _ln("Windswept", 100, 30, 120),  # cells of one row, any order
        _ln("Topography", 100, 10, 120),
        _ln("Ce", 305, 10),
        _ln("1,2", 302, 50),
        _ln("Sheltered", 101, 50, 120),
    ]
    rows = table_rows(lines)
    assert rows == [["Topography", "Ce"], ["Windswept", "0,8"], ["Sheltered", "1,2"]]
    md = rows_to_markdown(rows)
    assert md.splitlines() == ["| Topography | Ce |", "|---|---|", "| Windswept | 0,8 |", "| Sheltered | 1,2 |"]


def test_a_labels_unit_printed_on_the_next_line_stays_in_its_label() -> None:
    """OCR set the unit of a label ending in a number on a line of its own ("30 kN < gross vehicle
    weight ≤ 160" / "kN"): it is that label's end, not a row; a label of words under it stays a row."""
    rows = table_rows(
        [
            _ln("Category G", 100, 10),
            _ln("30 kN < gross vehicle weight ≤ 160", 100, 22, 180),
            _ln("5,0", 320, 22),
            _ln("kN", 100, 34),
            _ln("Category F", 100, 46),
            _ln("2,5", 320, 46),
            _ln("MPa", 100, 58),
        ]
    )
    assert rows == [
        ["Category G", ""],
        ["30 kN < gross vehicle weight ≤ 160 kN", "5,0"],
        ["Category F", "2,5"],
        ["MPa", ""],  # the label above ends in a word: a row of its own
    ]


def test_a_cells_text_wrapped_onto_a_line_of_its_own_stays_in_its_cell() -> None:
    """ "NOTE 2: The recommended value" / "is 1,0 kN/m2." in the notes column: one cell, so that the
    sentence reads whole; so is a word hyphenated over the line end. A line that starts anew (a capital
    after a full stop), that fills more than one cell or that is in the rows' labels' column is a row."""
    rows = table_rows(
        [
            _ln("Personnel", 100, 10),
            _ln("NOTE 2: The recommended value", 300, 10, 150),
            _ln("is 1,0 kN/m2. See also 4.11.2.", 300, 22, 150),
            _ln("Storage", 100, 34),
            _ln("Modelled as free actions; construc-", 300, 34, 150),
            _ln("tion materials", 300, 46, 150),
            _ln("Waste", 100, 58),
            _ln("Taken into account.", 300, 58, 150),
            _ln("the next row", 300, 70, 150),
            _ln("Loads", 100, 82),
            _ln("from parts", 100, 94),
            _ln("2,0", 300, 94),
            _ln("normal weight", 100, 106),
        ]
    )
    assert rows == [
        ["Personnel", "NOTE 2: The recommended value is 1,0 kN/m2. See also 4.11.2."],
        ["Storage", "Modelled as free actions; construc-tion materials"],
        ["Waste", "Taken into account."],
        ["", "the next row"],
        ["Loads", ""],
        ["from parts", "2,0"],
        ["normal weight", ""],  # in the labels' column: a label of its own
    ]


def test_table_rows_empty_cell_and_pipe_escaped() -> None:
    rows = table_rows([_ln("a|b", 100, 10), _ln("x", 300, 10), _ln("Only first", 100, 30)])
    assert rows == [["a|b", "x"], ["Only first", ""]]
    assert "a\\|b" in rows_to_markdown(rows)
    assert rows_to_markdown([]) == ""


def test_footnotes_read_as_a_tables_last_rows_go_under_its_grid_as_printed() -> None:
    """Notes printed under a table inside its region come out of find-the-rows as rows: a marker in a
    cell of its own ("a" | "Windswept ..."), lines a note goes on over, "1) ..." (OCR's "I) ..."),
    "b The ...", "NOTE 2". They leave the grid, one line each as printed, from the first that opens a
    note; the grid keeps its rows of words and numbers."""
    grid = [["Topography", "Ce"], ["Windswept a", "0,8"], ["Normal b", "1,0"]]
    notes = [
        ["a", "Windswept: flat unobstructed areas exposed on all sides"],
        ["without shelter afforded by terrain or trees.", ""],
        ["b Normal topography: areas where there is no removal of snow", ""],
        ["I) Increase by 1 kN/m3 for reinforced concrete", ""],
        ["NOTE 2 The National Annex may give other values.", ""],
    ]
    assert table_footnotes(grid + notes) == (
        grid,
        [
            "a Windswept: flat unobstructed areas exposed on all sides",
            "without shelter afforded by terrain or trees.",
            "b Normal topography: areas where there is no removal of snow",
            "I) Increase by 1 kN/m3 for reinforced concrete",
            "NOTE 2 The National Annex may give other values.",
        ],
    )
    # a table of categories ends in rows of words that no note opens; a lettered row with its value
    # in a cell of its own is the table's
    categories = [["Category", "Use"], ["A", "Domestic"], ["C3: Areas without obstacles", "Public buildings"]]
    assert table_footnotes(categories) == (categories, [])
    lettered = [["Case", "Value"], ["a) persistent", "1,0"], ["b) accidental", "0,5"]]
    assert table_footnotes(lettered) == (lettered, [])
    # a table of words alone, its rows numbered or lettered as notes are: left whole
    risk = [["Risk category", "Nature of occupancy"], ["I", "Buildings of low risk to human life"]]
    risk += [["II", "All buildings except those listed in I, III and IV"], ["a", "Agricultural facilities"]]
    assert table_footnotes(risk) == (risk, [])
    assert table_footnotes([["a", "Only a note in a table of one row"]]) == (
        [["a", "Only a note in a table of one row"]],
        [],
    )


# ---------------------------------------------------------------- other layouts (tests/helpers/layouts.py)
@pytest.fixture(scope="module")
def two_column_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from helpers.layouts import write_two_column

    return write_two_column(tmp_path_factory.mktemp("layouts") / "two_column.pdf")


def _write_rows(page: pymupdf.Page, rows: Sequence[Sequence[str]], xs: Sequence[int], top: int) -> None:
    """A table's rows set on ``page``: each cell at its column's x, one row every 16 points from ``top``."""
    for i, row in enumerate(rows):
        for x, cell in zip(xs, row, strict=True):
            page.insert_text((x, top + 16 * i), cell, fontsize=8)


def test_two_columns_above_a_full_width_table_are_read_column_by_column(tmp_path: Path) -> None:
    """Two columns of clauses over a table as wide as the page (a row of four cells, as two-column codes
    print them): the table's short cells on both sides of the gutter do not hide the columns, and a
    left line that reaches near the right column does not move the gutter into the left one. Before,
    each left line was read with the right line on its baseline ("1. SCOPE 4. IMPOSED LOADS ...")."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    left = [
        "1. SCOPE",
        "1.1 This standard covers the imposed loads to be",
        "assumed in the design of buildings and of their",
    ]
    left += [
        "parts, for the occupancies given in Table 1.",
        "2. TERMINOLOGY",
        "2.1 Occupancy - The principal use for which the",
    ]
    left += ["building or part of a building is used or designed to be used by."]  # the longest, to x 289
    right = [
        "3. IMPOSED LOADS ON FLOORS",
        "3.1 The imposed loads on floors shall be those",
        "given in Table 1 for the occupancies listed.",
    ]
    right += [
        "3.2 Reduction - The reduction of imposed loads",
        "on floors is given in 3.2.1 for buildings with",
        "more than two storeys above the ground level.",
    ]
    for i, text in enumerate(left):
        page.insert_text((50, 80 + 14 * i), text, fontsize=8.6)
    for i, text in enumerate(right):
        page.insert_text((310, 80 + 14 * i), text, fontsize=8.6)
    page.insert_text((150, 220), "TABLE 1 IMPOSED FLOOR LOADS FOR DIFFERENT OCCUPANCIES", fontsize=9)
    rows = [("Sl No.", "Occupancy", "Uniform load", "Point load"), ("i)", "Residential", "2.0", "1.8")]
    _write_rows(page, rows, (60, 120, 300, 460), 245)
    path = tmp_path / "two_columns_table.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        texts = [ln["text"] for ln in extract_page(pdf, 0, crop=False)["lines"]]
    assert texts.index("1. SCOPE") < texts.index(left[-1]) < texts.index("3. IMPOSED LOADS ON FLOORS")
    assert texts.index("3. IMPOSED LOADS ON FLOORS") < texts.index(right[-1])
    assert not [t for t in texts if "SCOPE" in t and "IMPOSED" in t]


def test_a_framed_table_owns_its_cells_beyond_its_caption(tmp_path: Path) -> None:
    """A table in a ruled frame as wide as the page, under two columns of clauses, a shorter centred
    caption and a line set under it (the clauses it serves): the cells left and right of the caption's
    extent and its "(1) (2) (3) (4)" row are the table's (its region is the frame drawn under the
    caption), not clause text. Before, the table stopped at the caption's width and at
    "(1)" (a paragraph's number elsewhere), and its cells were read into clause 4.1."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    left = ["3. IMPOSED LOADS ON FLOORS", "3.1 Imposed Loads - The imposed loads to be"]
    left += ["assumed in the design of floors shall be those given", "in Table 1 for the occupancies listed."]
    right = ["4. IMPOSED LOADS ON ROOFS", "4.1 The imposed loads on flat roofs with access"]
    right += ["shall be 1.5 kN/m2 (see also 3.1)."]
    for x, column in ((50, left), (310, right)):  # two columns above the table
        for i, text in enumerate(column):
            page.insert_text((x, 80 + 14 * i), text, fontsize=8.6)
    page.insert_text((150, 200), "TABLE 1 IMPOSED FLOOR LOADS FOR DIFFERENT OCCUPANCIES", fontsize=9, fontname="hebo")
    page.insert_text((260, 214), "(Clauses 3.1 and 3.1.1)", fontsize=8)  # a line under the caption
    page.draw_rect(pymupdf.Rect(55, 220, 545, 300), color=(0, 0, 0), width=0.6)
    rows = [("Sl No.", "Occupancy", "Uniform load", "Point load"), ("(1)", "(2)", "(3)", "(4)")]
    rows += [("i)", "Residential buildings", "2.0", "1.8"), ("ii)", "Office buildings", "2.5", "2.7")]
    _write_rows(page, rows, (60, 120, 300, 480), 230)
    path = tmp_path / "framed_table.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        result = extract_page(pdf, 0, crop=False)
    texts = [ln["text"] for ln in result["lines"]]
    assert left[-1] in texts and right[-1] in texts  # the clauses keep their lines
    assert not [t for t in texts if "Sl No." in t or t.strip() in ("i)", "ii)") or "Point load" in t]
    (table,) = [o for o in result["objects"] if o["kind"] == "table"]
    assert "| Sl No. |" in table["body"] and "| ii) |" in table["body"] and "Point load" in table["body"]


def test_a_caption_wrapped_into_the_tables_first_row_is_the_captions(tmp_path: Path) -> None:
    """A caption's second line set centred inside the table's frame was read as a head over the
    columns ("| | for different types of bridge decks ... | | |"): it is the caption's, in the table's
    title and on its caption line, and the table's rows start with its real heads."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "6.1 Bridge decks", fontsize=10, fontname="hebo")
    page.insert_text((60, 96), "(1) The temperature differences are given in Table 6.1.", fontsize=9)
    page.insert_text((60, 130), "Table 6.1: Recommended values of linear temperature difference component", fontsize=9)
    page.draw_rect(pymupdf.Rect(55, 136, 545, 240), color=(0, 0, 0), width=0.6)
    page.insert_text((170, 150), "for different types of bridge decks for road and rail bridges", fontsize=9)
    rows = [("Type of deck", "Top warmer than bottom", "Bottom warmer than top")]
    rows += [("Steel deck", "18", "13"), ("Composite deck", "15", "18"), ("Concrete slab", "15", "8")]
    _write_rows(page, rows, (60, 250, 420), 170)
    path = tmp_path / "wrapped_caption.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        result = extract_page(pdf, 0, crop=False)
    (table,) = [o for o in result["objects"] if o["kind"] == "table"]
    assert table["title"].endswith("component for different types of bridge decks for road and rail bridges")
    assert "for different types" not in table["body"]
    assert table["body"].startswith("| Type of deck |") and "| Steel deck |" in table["body"]


def test_a_caption_after_an_amendment_mark_read_as_a_number_starts_its_own_table(tmp_path: Path) -> None:
    """Two ruled tables one under the other, the second's caption opening with a scan's amendment mark
    read as "15)": the mark is no list item's number, the caption is the second table's, and its rows
    are not the first table's. Before, the caption was read as a row of the first table, so the second
    table had no section of its own and its values were cited as the first's."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "Table 7.3a - Recommended values of pressure coefficients for upwind faces", fontsize=9)
    page.draw_rect(pymupdf.Rect(55, 88, 545, 170), color=(0, 0, 0), width=0.6)
    first = [("Pitch", "Zone F", "Zone G", "Zone H"), ("5", "-1,7", "-1,2", "-0,6"), ("15", "-0,9", "-0,8", "-0,3")]
    _write_rows(page, first, (60, 200, 320, 440), 105)
    caption = "15) Table 7.3b - Recommended values of pressure coefficients for side faces"
    page.insert_text((60, 200), caption, fontsize=9)
    page.draw_rect(pymupdf.Rect(55, 208, 545, 290), color=(0, 0, 0), width=0.6)
    second = [("Pitch", "Zone Fup", "Zone Flow", "Zone I"), ("5", "-2,1", "-2,1", "-0,6")]
    second += [("30", "-1,5", "-1,5", "-0,5")]
    _write_rows(page, second, (60, 200, 320, 440), 225)
    path = tmp_path / "marked_caption.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        result = extract_page(pdf, 0, crop=False)
    tables = {o["number"]: o for o in result["objects"] if o["kind"] == "table"}
    assert sorted(tables) == ["7.3a", "7.3b"]
    assert tables["7.3b"]["title"] == "Recommended values of pressure coefficients for side faces"
    assert "Zone Fup" in tables["7.3b"]["body"] and "Zone Fup" not in tables["7.3a"]["body"]
    assert "Table 7.3b" not in tables["7.3a"]["body"]


def test_a_closing_amendment_mark_is_no_part_of_a_captions_title(tmp_path: Path) -> None:
    """A scan reads the mark that closes an amended caption as "@1]", "<51" or "(§]" at the end of its line:
    the table's title ends with its last word; its caption line keeps what the page prints. A bracket
    that closes a symbol ("(Qc)") stays in the title. Before, the mark was cited as part of the title."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    captions = [
        ("7.2", "Recommended values of external pressure coefficients for flat roofs <51"),
        ("7.5", "Recommended values of external pressure coefficients for hipped roofs @1]"),
        ("4.1", "Representation of construction loads (Qc)"),
    ]
    for i, (number, title) in enumerate(captions):
        top = 80 + 200 * i
        page.insert_text((60, top), f"Table {number} - {title}", fontsize=9)
        page.draw_rect(pymupdf.Rect(55, top + 8, 545, top + 90), color=(0, 0, 0), width=0.6)
        _write_rows(page, [("Zone", "F", "G"), ("cpe,10", "-1,8", "-1,2")], (60, 250, 420), top + 25)
    path = tmp_path / "closing_marks.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        tables = {o["number"]: o for o in extract_page(pdf, 0, crop=False)["objects"] if o["kind"] == "table"}
    assert tables["7.2"]["title"] == "Recommended values of external pressure coefficients for flat roofs"
    assert tables["7.5"]["title"] == "Recommended values of external pressure coefficients for hipped roofs"
    assert tables["4.1"]["title"] == "Representation of construction loads (Qc)"
    assert tables["7.5"]["caption"].endswith("hipped roofs @1]")


def _titles_and_lines(doc: pymupdf.Document, path: Path) -> tuple[dict[str, str], list[str]]:
    """The page saved to ``path`` and read: its objects' titles by number, and its text lines."""
    doc.save(path)
    with pymupdf.open(path) as pdf:
        result = extract_page(pdf, 0, crop=False)
    return {o["number"]: o["title"] for o in result["objects"]}, [ln["text"] for ln in result["lines"]]


def test_a_caption_wrapped_onto_a_centred_line_keeps_its_end(tmp_path: Path) -> None:
    """A caption's second line set centred under the first ("and obstructions") is its title's end, not
    the text of the clause below; a centred line that opens a sentence under a finished caption is not."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "6.2 Drifting at projections", fontsize=10, fontname="hebo")
    page.insert_text((60, 96), "(1) The shape coefficients are given in Figure 6.1 and Figure 6.2.", fontsize=9)
    for top, (first, second) in (
        (110, ("Figure 6.1: Snow load shape coefficients at projections", "and obstructions")),
        (330, ("Figure 6.2: Snow overhanging the edge of a roof.", "Values apply to all roofs")),
    ):
        page.draw_rect(pymupdf.Rect(150, top, 450, top + 150), color=(0, 0, 0), width=0.8)
        caption = pymupdf.get_text_length(first, fontsize=10)
        page.insert_text((300 - caption / 2, top + 170), first, fontsize=10)
        page.insert_text((300 - pymupdf.get_text_length(second, fontsize=10) / 2, top + 183), second, fontsize=10)
    page.insert_text((60, 560), "6.3 Snow overhanging the edge of a roof", fontsize=10, fontname="hebo")
    titles, texts = _titles_and_lines(doc, tmp_path / "centred_caption.pdf")
    assert titles["6.1"] == "Snow load shape coefficients at projections and obstructions"
    assert titles["6.2"] == "Snow overhanging the edge of a roof."
    assert "and obstructions" not in texts and "Values apply to all roofs" in texts


def test_a_scans_centred_caption_line_a_little_larger_and_off_centre_is_the_captions(tmp_path: Path) -> None:
    """OCR sizes and places a caption's two lines a few tenths of a point and a few points apart
    ("Figure 5.7: ... roofs abutting to" at 11.5 pt, "taller construction works" at 11.6 pt, their
    middles 8.5 pt apart): still one title."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "5.3.6 Roofs abutting taller construction works", fontsize=10, fontname="hebo")
    page.draw_rect(pymupdf.Rect(150, 110, 450, 300), color=(0, 0, 0), width=0.8)
    first, second = "Figure 5.7: Snow load shape coefficients for roofs abutting to", "taller construction works"
    page.insert_text((300 - pymupdf.get_text_length(first, fontsize=11) / 2, 320), first, fontsize=11)
    offset = 300 + 9 - pymupdf.get_text_length(second, fontsize=11.4) / 2
    page.insert_text((offset, 334), second, fontsize=11.4)
    page.insert_text((60, 380), "(2) The drift length is given in 5.3.6(3).", fontsize=10)
    figure, _ = _read_figure(doc, tmp_path / "scan_caption.pdf")
    assert figure["title"] == "Snow load shape coefficients for roofs abutting to taller construction works"


def test_a_caption_line_broken_off_goes_on_on_the_next_wherever_a_scan_placed_it(tmp_path: Path) -> None:
    """A caption's first line that breaks off on a word no title ends on ("... - roofs where") goes on
    on the next line in lower case, though a scan placed it neither under the title's start nor
    centred; so does one set with a hanging indent ("... for roofs" / "abutting and close to taller
    structures"). A line in lower case set at the margin under a title ending on a noun is the clause's."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "B4 Roofs where drifting occurs at parapets", fontsize=10, fontname="hebo")
    for top, (first, second, x) in (
        (100, ("Figure B4: Shape coefficients for exceptional snow drifts - roofs where", "drifting at parapets", 84)),
        (320, ("Figure B5: Shape coefficients for exceptional snow drifts for roofs", "abutting tall walls", 120)),
        (540, ("Figure B6: Shape coefficients for exceptional snow drifts on a roof", "drifting is also possible", 84)),
    ):
        page.draw_rect(pymupdf.Rect(150, top, 450, top + 160), color=(0, 0, 0), width=0.8)
        page.insert_text((84, top + 180), first, fontsize=11)
        page.insert_text((x, top + 193), second, fontsize=11.3)
    page.insert_text((60, 780), "(4) The shape coefficient given in Figure B4 is the least of three.", fontsize=10)
    titles, texts = _titles_and_lines(doc, tmp_path / "broken_caption.pdf")
    assert titles["B.4"] == "Shape coefficients for exceptional snow drifts - roofs where drifting at parapets"
    assert titles["B.5"] == "Shape coefficients for exceptional snow drifts for roofs abutting tall walls"
    assert titles["B.6"] == "Shape coefficients for exceptional snow drifts on a roof"
    assert "drifting at parapets" not in texts and "abutting tall walls" not in texts
    assert "drifting is also possible" in texts


def _map_page(path: Path, heading: str | None) -> None:
    """A scanned map's page: a picture with a legend and a compass beside it, a bare "Figure C.2" at
    its foot and, when given, its title printed as a heading above it at twice the caption's size."""
    drawn = pymupdf.open()
    sketch = drawn.new_page(width=450, height=330)
    rng = random.Random(1)
    for _ in range(40):
        x, y = rng.random() * 400, rng.random() * 290
        box = pymupdf.Rect(x, y, x + 30 + rng.random() * 60, y + 20 + rng.random() * 40)
        sketch.draw_rect(box, color=(0, 0, 0), fill=(0.4 + rng.random() * 0.5,) * 3, width=0.5)
    doc = pymupdf.open()
    page = doc.new_page(width=842, height=595)
    page.insert_text((60, 40), "EN 1991-1-3:2003 (E)", fontsize=9)
    if heading:
        page.insert_text((260, 100), heading, fontsize=24)
    page.insert_image(pymupdf.Rect(150, 130, 600, 460), pixmap=sketch.get_pixmap(dpi=100))
    page.insert_text((640, 185), "Zone  kN/m2", fontsize=7)
    for i, (zone, value) in enumerate([("1", "0,7"), ("2", "1,3"), ("3", "1,9")]):
        page.insert_text((640, 200 + 14 * i), f"{zone}   {value}", fontsize=7)
    page.insert_text((400, 480), "N", fontsize=12)
    page.insert_text((520, 300), "W*E", fontsize=40)
    page.insert_text((360, 490), "Figure C.2", fontsize=11)
    doc.save(path)


def test_a_bare_figure_captions_title_printed_as_a_heading_over_the_figure_is_its_title(tmp_path: Path) -> None:
    """A map's title set large above it ("Alpine Region: ..."), with only "Figure C.2" at its foot, is
    the figure's title and leaves the text; without such a heading the title stays empty (a compass's
    "W*E" set large is no title)."""
    for heading in ("Alpine Region: Snow Load at Sea Level", None):
        path = tmp_path / f"map-{bool(heading)}.pdf"
        _map_page(path, heading)
        with pymupdf.open(path) as pdf:
            result = extract_page(pdf, 0, crop=False)
        (figure,) = [o for o in result["objects"] if o["kind"] == "figure"]
        assert figure["number"] == "C.2"
        assert figure["title"] == (heading or "")
        assert figure["caption"] == f"Figure C.2 {heading}" if heading else figure["caption"] == "Figure C.2"
        assert not any("Alpine" in ln["text"] for ln in result["lines"])


def test_a_tables_first_row_is_its_captions_only_when_it_reads_on_from_it() -> None:
    """Three words or more in lower case in one cell, under a title that does not end a sentence: a
    row of units, one head, or a row under a finished title stay the table's."""
    rows = [["", "for road and rail bridges", ""], ["Type", "Top", "Bottom"], ["Steel", "18", "13"]]
    assert caption_run_on("Linear temperature difference", rows) == ("for road and rail bridges", rows[1:])
    assert caption_run_on("Linear temperature difference.", rows) == ("", rows)
    heads = (["", "kN/m2", ""], ["Zone", "", ""], ["", "Values for road bridges", ""], ["a", "b", "c"])
    for first in (*heads, ["ategories of traffic areas", "", ""]):  # the row labels' head, its C lost
        assert caption_run_on("Imposed loads on floors", [first, *rows[1:]]) == ("", [first, *rows[1:]])


@pytest.fixture(scope="module")
def objects_pages(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, Any]]:
    from helpers.layouts import write_objects

    path = write_objects(tmp_path_factory.mktemp("layouts") / "objects.pdf")
    with pymupdf.open(path) as doc:
        return {pno + 1: extract_page(doc, pno, crop=True) for pno in range(len(doc))}


def test_two_columns_are_read_column_by_column(two_column_pdf: Path) -> None:
    with pymupdf.open(two_column_pdf) as doc:
        result = extract_page(doc, 1, crop=False)
    texts = [ln["text"] for ln in result["lines"]]
    assert result["columns"] is True
    assert texts[0].startswith("A full-width title line")  # a full-width line stays in place
    first = {
        word: next(i for i, t in enumerate(texts) if t.startswith(word)) for word in ("7 Wind", "7.1", "Charlie", "7.2")
    }
    assert first["7 Wind"] < first["7.1"] < first["Charlie"] < first["7.2"]
    left_end = max(i for i, ln in enumerate(result["lines"]) if ln["bbox"][2] < 300 and i > 0)
    right_start = min(i for i, ln in enumerate(result["lines"]) if ln["bbox"][0] > 300)
    assert left_end < right_start  # no line of the right column between lines of the left one
    assert all(ln["bbox"][2] < 300 or ln["bbox"][0] > 300 for ln in result["lines"][1:])  # nothing merged across


def test_running_header_footer_and_page_number_leave_the_text(two_column_pdf: Path) -> None:
    with pymupdf.open(two_column_pdf) as doc:
        result = extract_page(doc, 2, crop=False)
    texts = [ln["text"] for ln in result["lines"]]
    assert "ACME 12-3:2024 Actions on widgets" in result["header"]
    assert result["label"] == "12"
    assert "12" not in texts and not any("ACME Guide to Widgets" in t for t in texts)


def test_a_page_turned_to_landscape_keeps_its_running_header_out_of_the_text(tmp_path: Path) -> None:
    """A portrait document with one page turned to landscape (a wide table): its three-line running header
    stands as far from the paper's edge as on the portrait pages, so it is a header there too."""
    doc = pymupdf.open()
    for width, height in ((612, 792), (792, 612)):
        page = doc.new_page(width=width, height=height)
        for i, line in enumerate(["ACME 12-3", "11 April 2023", "Change 4, 3 June 2025"]):
            page.insert_text((width - 160, 48 + 14 * i), line, fontsize=11)
        for i in range(12):
            page.insert_text(
                (72, 120 + 16 * i), f"Row {i + 1} of the table of widget loads runs across the page.", fontsize=10
            )
        page.insert_text((width / 2, height - 30), str(len(doc)), fontsize=10)
    path = tmp_path / "turned.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        pages = [extract_page(pdf, i, crop=False) for i in range(2)]
    for page in pages:
        texts = [ln["text"] for ln in page["lines"]]
        assert page["header"] == ["ACME 12-3", "11 April 2023", "Change 4, 3 June 2025"], page["header"]
        assert texts[0].startswith("Row 1 ") and not any("April" in t for t in texts)


@pytest.mark.parametrize(
    ("page", "kind", "number", "title", "side"),
    [
        (1, "figure", "3", "Frame layout of the widget", "above"),
        (2, "table", "2", "Loads on widget decks", "below"),
        (3, "table", "A1.2(B)", "Design values of actions", "below"),
        (3, "table", "7.3a", "Factors for widget shapes", "above"),
        (4, "figure", "3-1", "Flow chart of the procedure", "below"),
        (5, "figure", "4", "Side view", "above"),
        (5, "table", "2-1", "Risk categories", "above"),
    ],
)
def test_captions_in_other_styles_and_the_side_of_their_object(
    objects_pages: dict[int, dict[str, Any]], page: int, kind: str, number: str, title: str, side: str
) -> None:
    """FIG./TABLE/Fig., numbers with a suffix or a chapter hyphen, captions above and below: the
    region is on the side where the drawing or the table is, never the caption alone."""
    obj = next(o for o in objects_pages[page]["objects"] if o["number"] == number)
    assert (obj["kind"], obj["title"]) == (kind, title)
    box, cap = obj["bbox"], obj["caption_bbox"]
    if side == "above":
        assert box[3] <= cap[3] + 1 and box[1] < cap[1] - 60
    else:
        assert box[1] >= cap[1] - 1 and box[3] > cap[3] + 60
    pix = pymupdf.Pixmap(obj["png"])
    assert pix.height > 4 * (cap[3] - cap[1]) * 110 / 72  # the object, not a caption-only sliver


def test_a_drawn_object_is_inside_its_crop(objects_pages: dict[int, dict[str, Any]]) -> None:
    figure = next(o for o in objects_pages[4]["objects"] if o["number"] == "3-1")
    y = 80 + 2 * 14  # the page's two lines above the caption (helpers.layouts)
    drawn = pymupdf.Rect(150, y + 30, 450, y + 180)
    assert (pymupdf.Rect(figure["bbox"]) + (-2, -2, 2, 2)).contains(drawn)


def test_a_numbered_expression_drawn_as_a_picture_is_cropped(objects_pages: dict[int, dict[str, Any]]) -> None:
    """Only "(5.1)" is in the text layer: the crop is the band from its line up to the text above,
    across the text width, so the formula picture is in it."""
    (expr,) = objects_pages[6]["expressions"]
    assert expr["number"] == "5.1"
    y = 80 + 14
    picture = pymupdf.Rect(120, y + 6, 340, y + 46)
    box = pymupdf.Rect(expr["bbox"])
    assert box.contains(picture) and box.x1 > 520  # the number at the right margin too
    assert box.y1 < y + 60  # not the "where:" line below
    assert expr["png"].startswith(PNG_MAGIC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("FIG. 3 Frame layout", ("figure", "3", "Frame layout")),
        ("Fig. 3 Frame layout", ("figure", "3", "Frame layout")),
        ("TABLE 2 Loads", ("table", "2", "Loads")),
        ("Table A1.2(B) Design values", ("table", "A1.2(B)", "Design values")),
        ("Table 7.3a Factors", ("table", "7.3a", "Factors")),
        ("Figure 3-1 Flow chart", ("figure", "3-1", "Flow chart")),
        ("Table 2-1 Risk Category", ("table", "2-1", "Risk Category")),
        ("Figure C-1.", ("figure", "C-1", "")),
        ("Table 12.2-1 Design Coefficients", ("table", "12.2-1", "Design Coefficients")),
        ("Table 4-1(a) Performance Objectives", ("table", "4-1(a)", "Performance Objectives")),
        # change marks ("\\4\\ ... /4/") around a changed caption or inside it
        ("Table 2-1 \\4\\ /4/ Wind Induced Deflection Limits", ("table", "2-1", "Wind Induced Deflection Limits")),
        ("\\2\\ Figure 3-2 Crane Runway", ("figure", "3-2", "Crane Runway")),
        # one caption naming several parts or objects: keyed by the first, the rest not its title
        ("Figure 12a and b  Through the trap", ("figure", "12a", "Through the trap")),
        ("Figures 3 and 4 Edge protection", ("figure", "3", "Edge protection")),
        ("Table 5.1a, 5.1b: Loads on parapets", ("table", "5.1a", "Loads on parapets")),
        ("FIGS. 2 & 3 TRENCH SUPPORTS", ("figure", "2", "TRENCH SUPPORTS")),
    ],
)
def test_parse_caption_other_styles(text: str, expected: tuple[str, str, str]) -> None:
    assert parse_caption(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "TABLE OF CONTENTS",
        "Figure 2-1 Performance-based design process ............ 2-6",
        "FIG. 3 shows the frame",
        "Figure 12a and b show the trap",
        "Tables 6.1 and 6.2 give the values",
        "Tables 1.5-1 and 1.5-2 [Replacement]",  # a heading's line naming another code's tables
    ],
)
def test_parse_caption_rejects_lists_and_sentences(text: str) -> None:
    assert parse_caption(text) is None


def test_a_symbol_fonts_private_use_marks_are_read_as_the_marks_they_draw() -> None:
    """A tolerance guide marks defects with Wingdings crosses and accepted work with ticks (U+F0FB and
    U+F0FC as the PDF stores them): the text keeps the difference. An unknown dingbat is a bullet; other
    fonts' text is left alone."""
    from clausewise.nodes.ingest.extract_page import _span_text

    def span(text: str, font: str) -> dict[str, Any]:
        return {"text": text, "font": font}

    assert _span_text(span("\uf0fb", "Wingdings-Regular")) == "\u2717"
    assert _span_text(span("\uf0fc ", "Wingdings-Regular")) == "\u2713 "
    assert _span_text(span("5\uf0ab", "Wingdings-Regular")) == "5\u2605"
    assert _span_text(span("\uf021", "Wingdings")) == "\u2022"
    assert _span_text(span("\uf0fc", "Helvetica")) == "\uf0fc"
    assert _span_text(span("Concrete floor", "Wingdings-Regular")) == "Concrete floor"


def test_a_list_mark_given_twice_is_read_once() -> None:
    """Publishing software sets a list's mark in a symbol font and the tab after it as a blank glyph
    claiming to be the same mark, each a line of its own on the item's baseline ("■ ■ be strong ...",
    "– – a main guard rail"): one mark is drawn. A mark inside a line, and two different marks, are
    left as they are."""
    from clausewise.nodes.ingest.extract_page import _merge_row

    def row(*texts: str) -> list[dict[str, Any]]:
        return [{"text": t, "bbox": [10.0 * i, 0, 10.0 * i + 5, 10]} for i, t in enumerate(texts)]

    assert _merge_row(row("■", "■", "be strong"))["text"] == "■ be strong"
    assert _merge_row(row("–", "–", "a main guard rail"))["text"] == "– a main guard rail"
    assert _merge_row(row("––", "a main guard rail"))["text"] == "– a main guard rail"
    assert _merge_row(row("loads of 2 – 3 kN", "■ ■ here"))["text"] == "loads of 2 – 3 kN ■ ■ here"
    assert _merge_row(row("■", "● mixed"))["text"] == "■ ● mixed"


def test_a_mark_a_font_declares_as_a_letter_is_read_as_a_bullet() -> None:
    """A font whose list mark claims to be a letter of no word (a drawn "›" read "ȣ", given twice as
    above) gives "• 2 mm where ...", at a line's start, after a tick or between two columns of a list; a
    word of one letter, a Roman numeral, a symbol given twice in a formula, a mathematical letter and
    the doubled letter at a line's end (no text follows to be marked) are left as they are."""
    from clausewise.nodes.ingest.extract_page import _merge_row

    def row(*texts: str) -> list[dict[str, Any]]:
        return [{"text": t, "bbox": [10.0 * i, 0, 10.0 * i + 5, 10]} for i, t in enumerate(texts)]

    assert (
        _merge_row(row("ȣȣ", "2 mm where the floor plane is flush"))["text"] == "• 2 mm where the floor plane is flush"
    )
    assert _merge_row(row("ȣ", "ȣ", "New Zealand Standards"))["text"] == "• New Zealand Standards"
    assert _merge_row(row("à", "la charge"))["text"] == "à la charge"
    assert _merge_row(row("II", "Area with low vegetation"))["text"] == "II Area with low vegetation"
    assert _merge_row(row("° °", "C"))["text"] == "° ° C"
    assert _merge_row(row("𝑅𝑅", "is the response"))["text"] == "𝑅𝑅 is the response"
    assert _merge_row(row("✓", "ȣȣ", "10±3 mm"))["text"] == "✓ • 10±3 mm"
    assert _merge_row(row("• Paint runs", "ȣȣ", "Dust"))["text"] == "• Paint runs • Dust"
    assert _merge_row(row("Façade", "éé"))["text"] == "Façade éé"


def _margin_page(page: pymupdf.Page, body: list[str], notes: list[tuple[float, list[str], bool]]) -> None:
    """Body text at x 198-540 in 11 pt, a blank line between paragraphs (""), and blocks of notes in the
    left margin (x 59-162) at a given height, bold when asked."""
    y = 80.0
    for line in body:
        if line:
            page.insert_text((198, y), line, fontsize=11, fontname="helv")
        y += 13.8 if line else 10.0
    for top, lines, bold in notes:
        for i, line in enumerate(lines):
            page.insert_text((59, top + 13.8 * i), line, fontsize=11, fontname="hebo" if bold else "helv")


def test_a_margin_note_is_read_at_a_paragraph_break_of_the_text_beside_it(tmp_path: Path) -> None:
    """A wide outer margin with notes beside the text (FEMA's house style): the text beside a note is
    one column; the note is read at the first paragraph break below its top (or before the paragraph
    beside it when none is below), not before the text (on a page where the margin is on the left),
    which cut a sentence running on from the page before."""
    words = "the wind pressure on the walls of the building is taken from the map of the region and"
    first = [f"Alpha paragraph line {i} {words}" for i in range(6)] + [""]
    second = [f"Bravo paragraph line {i} {words}" for i in range(6)] + [""]
    third = [f"Charlie paragraph line {i} {words}" for i in range(5)]
    path = tmp_path / "margin.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page(width=612, height=792)
        notes = [
            (120.0, ["Wind pressure depends", "on the terrain around", "the building site."], False),
            (300.0, ["The last paragraph runs", "on to the next page of", "the code, unbroken."], False),
        ]
        _margin_page(
            page, ["the sentence carries on from the page before and ends here.", *first, *second, *third], notes
        )
        doc.save(path)
    with pymupdf.open(path) as doc:
        texts = [ln["text"] for ln in extract_page(doc, 0, crop=False)["lines"]]
    assert texts[0].startswith("the sentence carries on")
    note = texts.index("Wind pressure depends")
    assert texts[note - 1].startswith("Alpha paragraph line 5") and texts[note + 3].startswith("Bravo paragraph line 0")
    assert texts[note : note + 3] == ["Wind pressure depends", "on the terrain around", "the building site."]
    # beside the page's last paragraph, which runs on to the next page: read before that paragraph
    last = texts.index("The last paragraph runs")
    assert texts[last + 3].startswith("Charlie paragraph line 0") and texts[-1].startswith("Charlie paragraph line 4")


def test_side_heads_in_the_margin_stay_before_their_text(tmp_path: Path) -> None:
    """Headings set in the margin beside their paragraph (bold side-heads) are not notes: the margin is
    read as before, column by column."""
    words = "the wind pressure on the walls of the building is taken from the map of the region and"
    body = [f"Alpha paragraph line {i} {words}" for i in range(6)] + [""]
    body += [f"Bravo paragraph line {i} {words}" for i in range(6)]
    path = tmp_path / "sidehead.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page(width=612, height=792)
        _margin_page(page, body, [(80.0, ["Wind actions on walls"], True), (180.0, ["Snow actions on roofs"], True)])
        doc.save(path)
    with pymupdf.open(path) as doc:
        texts = [ln["text"] for ln in extract_page(doc, 0, crop=False)["lines"]]
    alpha = next(i for i, t in enumerate(texts) if t.startswith("Alpha paragraph line 0"))
    assert texts.index("Wind actions on walls") < texts.index("Snow actions on roofs") < alpha


def test_a_drawings_labels_in_the_margin_neither_join_nor_hide_the_columns(tmp_path: Path) -> None:
    """A margin of figures and their captions beside the text (HSG150's layout): the drawings' labels
    ("1", "4", a large "3" that reaches towards the text) are not lines of a column, so the margin is
    still read as its own column: a heading beside a caption stays its own line, and a paragraph
    beside a label keeps its number at the start."""
    words = "the work is planned so that nobody has to stand on the sheets of the roof and"
    path = tmp_path / "labels.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page(width=612, height=792)
        body = [f"229 When considering the job line 0 {words}", *[f"line {i} {words}" for i in range(1, 4)]]
        _margin_page(page, body, [])
        page.insert_text((150, 100), "3", fontsize=36, fontname="helv")  # a drawing's label, into the gutter
        page.insert_text((120, 180), "1", fontsize=9, fontname="helv")
        page.insert_text((140, 160), "4", fontsize=9, fontname="helv")
        for i, line in enumerate(["Figure 19 Ladder showing", "correct 1 in 4 angle (means", "of securing omitted"]):
            page.insert_text((59, 300 + 12 * i), line, fontsize=9, fontname="helv")
        page.insert_text((59, 500), "Figure 20a Correct - two", fontsize=9, fontname="helv")
        page.insert_text((59, 511), "clear rungs", fontsize=9, fontname="helv")
        page.insert_text((198, 500), "Roof work and fragile surfaces", fontsize=12, fontname="hebo")
        for i in range(4):
            opening = "230 Almost" if i == 0 else "and"
            page.insert_text((198, 530 + 13.8 * i), f"{opening} line {i} {words}", fontsize=11)
        doc.save(path)
    with pymupdf.open(path) as doc:
        texts = [ln["text"] for ln in extract_page(doc, 0, crop=False)["lines"]]
    assert "Roof work and fragile surfaces" in texts, texts
    assert any(t.startswith("229 When considering") for t in texts), texts
    assert any(t.startswith("Figure 20a Correct - two") and "Roof" not in t for t in texts), texts


def test_a_text_layer_set_invisible_is_told_from_printed_text(tmp_path: Path) -> None:
    """A scan's OCR layer is set invisible over its picture: there a line of one to three letters or
    digits is as often a table's value or a broken word as a drawing's label, so labels are read as
    such on printed (visible) text only."""
    from clausewise.nodes.ingest.extract_page import _invisible_text

    path = tmp_path / "layers.pdf"
    with pymupdf.open() as doc:
        for mode in (0, 3):  # 3: neither filled nor stroked, as OCR layers are written
            page = doc.new_page(width=612, height=792)
            for i in range(5):
                page.insert_text((72, 100 + 14 * i), f"Line {i} of the clause text", fontsize=11, render_mode=mode)
        doc.save(path)
    with pymupdf.open(path) as doc:
        printed, layer = (doc[i].get_text("dict") for i in range(2))
    assert not _invisible_text(printed) and _invisible_text(layer)


def test_a_page_label_above_the_footer_band_leaves_the_text(tmp_path: Path) -> None:
    """A scan's "Page 37" printed just above the bottom band, where a paragraph runs on to the next
    page, is the page's label, not the paragraph's words; a clause's number alone there stays."""
    path = tmp_path / "label.pdf"
    with pymupdf.open() as doc:
        page = doc.new_page(width=595, height=841)
        y = 100.0
        for i in range(30):
            page.insert_text((72, y), f"(1) Line {i} of the clause text on ties runs on to the next page", fontsize=10)
            y += 21
        page.insert_text((72, 735), "12", fontsize=10)  # a number in the text's last lines: not a label
        page.insert_text((486, 760), "Page 37", fontsize=10)  # 0.9 of the height is 757
        doc.save(path)
    with pymupdf.open(path) as doc:
        result = extract_page(doc, 0, crop=False)
    texts = [ln["text"] for ln in result["lines"]]
    assert "Page 37" not in texts and result["label"] == "37"
    assert "12" in texts


def test_a_table_boxed_over_its_column_heads_only_takes_the_rows_set_below_them() -> None:
    """A scan's table whose rows the layout model did not box: the rows below the boxed heads (three
    or more cells set apart; a NOTE or a "(1)" inside a column is a cell's text, a line wrapped in one
    column goes on with its row) are the table's, down to the paragraph that starts at its left edge;
    prose below a table (one piece a line), a caption or a wide gap stop it."""

    from clausewise.nodes.ingest.extract_page import _table_rows_below

    def line(x: float, y: float, text: str) -> dict[str, Any]:
        return {"text": text, "bbox": [x, y, x + 6.0 * len(text), y + 10]}

    def row(y: float, *cells: str) -> list[dict[str, Any]]:
        return [line(x, y, c) for x, c in zip((50, 200, 380), cells, strict=False) if c]

    page = pymupdf.Rect(0, 0, 595, 842)
    heads = [*row(110, "Type", "Description", "Notes")]
    rows = [
        *row(135, "Personnel", "Working staff", "NOTE 1: qca,k may be set"),
        line(200, 147, "with hand tools"),
        *row(160, "Storage", "(1) Movable items", "NOTE 2: 1,0 kN/m2"),
        *row(175, "Waste", "Accumulation", "See 4.11.2"),
    ]
    after = [line(50, 200, "(2) The next paragraph of the clause starts at the margin.")]
    region = [40.0, 100.0, 555.0, 125.0]
    assert _table_rows_below(region, heads + rows + after, page) == [40.0, 100.0, 555.0, 185.0]

    prose = [line(50, 135 + 12 * i, "A sentence of the clause runs on below the table here.") for i in range(4)]
    assert _table_rows_below(region, heads + prose, page) == region  # no rows of cells: the region stands
    caption = [line(50, 132, "Table 4.2 Other loads")]
    assert _table_rows_below(region, heads + caption + rows, page) == region  # the next table's caption
    far = [{**ln, "bbox": [ln["bbox"][0], ln["bbox"][1] + 60, ln["bbox"][2], ln["bbox"][3] + 60]} for ln in rows]
    assert _table_rows_below(region, heads + far, page) == region  # a wide gap: not its rows


def _shaded_table_page(path: Path) -> None:
    """A born-digital guide's table without a caption: rows set off by shading, a head row, and cells
    whose text wraps onto two lines beside cells of one line centred on the row (as guides print them)."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 80), "Surfaces are judged from a normal viewing position, which depends on the", fontsize=9)
    page.insert_text((60, 92), "material inspected, as follows:", fontsize=9)
    rows = [
        (["MATERIAL"], ["VIEWING POSITION"], ["REFERENCE"]),
        (["Kitchen benches"], ["Standing at a distance of", "600 mm to 1 m"], ["Agreed by the group"]),
        (
            ["Exposed block walls", "in feature areas"],
            ["Not less than 6 m away in", "diffuse lighting"],
            ["Masonry code"],
        ),
        (["Roof sheets"], ["Standing at a distance of 3 m"], ["Roofing association"]),
    ]
    top = 110.0
    for i, row in enumerate(rows):
        height = 30.0
        shade = (0.2, 0.3, 0.6) if i == 0 else ((0.92, 0.92, 0.92) if i % 2 else (1, 1, 1))
        page.draw_rect(pymupdf.Rect(60, top, 540, top + height), color=None, fill=shade, width=0)
        for x, cell in zip((65, 225, 385), row, strict=True):
            y0 = top + height / 2 - 6 * (len(cell) - 1) + 3
            for k, text in enumerate(cell):
                page.insert_text((x, y0 + 12 * k), text, fontsize=8.5)
        page.draw_line((60, top + height), (540, top + height), color=(0.8, 0.8, 0.8), width=0.5)
        top += height
    page.insert_text((60, top + 30), "Where lighting is critical, defects may show that are not defects.", fontsize=9)
    doc.save(path)


def test_a_drawn_tables_wrapped_cells_are_read_row_by_row(tmp_path: Path) -> None:
    """An uncaptioned table drawn with shaded rows, its cells wrapped onto two lines: each row is read
    as one line, its cells in order ("Exposed block walls in feature areas Not less than 6 m away in
    diffuse lighting Masonry code"). Before, the lines were read by baseline across the columns, a
    wrapped cell's two lines above and below the row's other cells."""
    path = tmp_path / "shaded_table.pdf"
    _shaded_table_page(path)
    with pymupdf.open(path) as pdf:
        texts = [ln["text"] for ln in extract_page(pdf, 0, crop=False)["lines"]]
    assert "Kitchen benches Standing at a distance of 600 mm to 1 m Agreed by the group" in texts
    assert "Exposed block walls in feature areas Not less than 6 m away in diffuse lighting Masonry code" in texts
    assert "Roof sheets Standing at a distance of 3 m Roofing association" in texts
    assert texts[0].startswith("Surfaces are judged") and texts[-1].startswith("Where lighting is critical")
    order = [
        next(i for i, t in enumerate(texts) if t.startswith(s)) for s in ("MATERIAL", "Kitchen", "Exposed", "Roof")
    ]
    assert order == sorted(order)


def test_cell_rows_leave_rows_of_one_line_cells_and_text_outside_the_table() -> None:
    lines = [
        _ln("Intro line above the table", 60, 50, 200),
        _ln("Label", 65, 110, 40),
        _ln("Value", 225, 110, 40),
        _ln("Wrapped label", 65, 140, 60),
        _ln("goes on", 65, 152, 40),
        _ln("Value two", 225, 146, 50),
    ]
    table = [[[60, 105, 220, 125], [220, 105, 540, 125]], [[60, 135, 220, 165], [220, 135, 540, 165]]]
    ((row, members),) = cell_rows([table], lines)
    assert row["text"] == "Wrapped label goes on Value two" and row["cells"] == 2
    assert sorted(members) == [3, 4, 5]


def test_a_page_the_table_finder_fails_on_keeps_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The table finder raising on a page loses nothing: the page is read by baselines, as before it
    ran, and the failure is logged with the page's number."""
    path = tmp_path / "shaded_table.pdf"
    _shaded_table_page(path)

    def broken(self: pymupdf.Page, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("cannot read this page's drawings")

    monkeypatch.setattr(pymupdf.Page, "find_tables", broken)
    with pymupdf.open(path) as pdf, caplog.at_level("WARNING"):
        result = extract_page(pdf, 0, crop=False)
    texts = [ln["text"] for ln in result["lines"]]
    assert "Roof sheets Standing at a distance of 3 m Roofing association" in texts
    assert "Standing at a distance of" in texts and "600 mm to 1 m" in texts  # by baseline, every word kept
    assert "page 1: table finder failed" in caplog.text
    assert result["tables_failed"] is True  # said again in the document's warnings (merge-sections)
    monkeypatch.undo()
    with pymupdf.open(path) as pdf:
        assert extract_page(pdf, 0, crop=False)["tables_failed"] is False


def _chart_over_key(key: list[str]) -> pymupdf.Document:
    """A drawn chart, the lines ``key`` printed under it and its caption below them, between two
    numbered paragraphs of the clause."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    page.insert_text((60, 40), "EN 1991-1-7:2006 (E)", fontsize=9)
    clause = "(3) The values of the reduction factor may be given in the National Annex."
    page.insert_text((60, 100), clause, fontsize=10)
    page.draw_line((120, 350), (440, 350), width=1.5)
    page.draw_line((120, 170), (120, 350), width=1.5)
    page.draw_polyline([(120, 200), (230, 200), (330, 340), (440, 340)], width=3)
    for i in range(6):
        page.insert_text((115 + 60 * i, 365), f"{i}", fontsize=9)
    page.insert_text((95, 205), "1,0", fontsize=9)
    page.insert_text((280, 375), "h", fontsize=10)
    page.draw_line((230, 190), (230, 350), dashes="[3] 0")
    page.draw_line((330, 190), (330, 350), dashes="[3] 0")
    y = 405
    for text in key:
        page.insert_text((60, y), text, fontsize=10)
        y += 13
    page.insert_text((70, y + 16), "Figure 4.2 - Recommended value of the reduction factor", fontsize=10)
    page.insert_text((60, y + 50), "(4) Impact on the deck need not be considered above the clearance h1.", fontsize=10)
    return doc


def test_a_figures_key_printed_above_its_caption_is_the_figures() -> None:
    """Symbols defined between a drawing and the caption under it ("h0 is the clearance ... The
    recommended value of h0 is 5,0 m") are the figure's key: its body, not the clause's text. A
    numbered paragraph there, or a sentence opening with a word ("It is the ..."), stays in the clause."""
    key = [
        "h0 is the clearance below which an impact is taken into account without reduction. The",
        "recommended value of h0 is 5,0 m",
    ]
    for lines, is_key in (
        (key, True),
        (["(3) The recommended clearance is given in the National Annex. The value should take", key[1]], False),
        (["It is the clearance below which an impact is taken into account without reduction. The", key[1]], False),
    ):
        result = extract_page(_chart_over_key(lines), 0, crop=False)
        (figure,) = result["objects"]
        assert figure["number"] == "4.2" and figure["region"] == "layout"
        text = [ln["text"] for ln in result["lines"]]
        assert ("recommended value of h0 is 5,0 m" in figure["body"]) is is_key
        assert ("recommended value of h0 is 5,0 m" in text) is not is_key
        assert text[0].startswith("(3) The values") and text[-1].startswith("(4) Impact")


def test_a_picture_standing_off_its_caption_over_a_key_is_the_figures() -> None:
    """The layout model's picture may end well above the caption when a long key is printed between
    them (further than a caption stands off its figure): it is still the figure's, grown over the key;
    not when a paragraph stands there, nor a picture beside the caption rather than over it."""
    from clausewise.nodes.ingest.extract_page import _keyed_picture

    def row(y: float, text: str, x: float = 84.0) -> dict[str, Any]:
        return {"text": text, "bbox": [x, y, x + 5.5 * len(text), y + 11]}

    caption = [97.0, 708.0, 514.0, 719.0]
    picture = {"bbox": [86.0, 416.0, 420.0, 557.0], "class": "picture"}
    aside = {"bbox": [522.0, 416.0, 590.0, 557.0], "class": "picture"}
    key = [
        row(567, "[§) h is the physical clearance between the road surface and the underside of the deck"),
        row(592, "h0 is the clearance below which an impact is taken into account without reduction. The"),
        row(615, "recommended value of h0 is 5,0 m (+ allowances for sag and deflection)"),
        row(640, "h1 is the clearance above which no impact need be considered. The recommended value"),
        row(663, "of h1 is 6,0 m (+ allowances for future resurfacing and expected settlements)"),
    ]
    found = _keyed_picture(caption, [aside, picture], key)
    assert found is not None
    index, region = found
    assert index == 1
    assert region[1] == 416.0 and region[3] == 707.0  # down to the caption
    assert region[0] <= 84.0 and region[2] >= max(ln["bbox"][2] for ln in key)
    paragraph = [row(567, "(5) The clearance should take account of resurfacing of the road."), *key[1:]]
    assert _keyed_picture(caption, [picture], paragraph) is None
    assert _keyed_picture(caption, [aside], key) is None  # not over the caption
    assert _keyed_picture(caption, [picture], []) is None  # a blank gap is no key


def _figure_page(
    path: Path, lines: list[tuple[float, str]], drawing: tuple[float, float], picture: bool
) -> tuple[dict[str, Any], str]:
    """A page of text lines (top edge, text) and a hatched drawing between two heights, drawn in vector
    lines or (``picture``) pasted as a picture, as a scan shows it; read, its one figure and its
    running text."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    top, bottom = drawing
    box = pymupdf.Rect(150, top, 440, bottom)
    if picture:
        sketch = pymupdf.open()
        art = sketch.new_page(width=box.width, height=box.height)
        for k in range(0, int(box.width), 12):
            art.draw_line((k, box.height), (k + 20, box.height - 20), width=0.8)
        art.draw_rect(pymupdf.Rect(40, 10, 250, box.height - 30), width=1.5)
        page.insert_image(box, pixmap=art.get_pixmap(dpi=100))
    else:
        for k in range(0, int(box.width), 12):
            page.draw_line((box.x0 + k, bottom), (box.x0 + k + 20, bottom - 20), width=0.8)
        page.draw_rect(pymupdf.Rect(box.x0 + 40, top + 10, box.x1 - 40, bottom - 30), width=1.5)
    for y, text in lines:
        page.insert_text((90, y + 9), text, fontsize=9)
    return _read_figure(doc, path)


def _read_figure(doc: pymupdf.Document, path: Path) -> tuple[dict[str, Any], str]:
    """The page saved to ``path`` and read: its one figure and its running text."""
    doc.save(path)
    with pymupdf.open(path) as pdf:
        result = extract_page(pdf, 0, crop=False)
    (figure,) = [o for o in result["objects"] if o["kind"] == "figure"]
    return figure, "\n".join(ln["text"] for ln in result["lines"])


@pytest.mark.parametrize("picture", [False, True])
def test_a_figures_notes_between_its_drawing_and_its_caption_under_it_are_the_figures(
    tmp_path: Path, picture: bool
) -> None:
    """EN codes print a figure's NOTEs under the drawing and above its caption ("NOTE 1 reference
    height ...", "Figure 7.21 - Key for signboards"): they are the figure's, and the clause the page
    runs on in keeps none of them; the clause's own NOTE above the drawing stays the clause's."""
    figure, text = _figure_page(
        tmp_path / "figure-notes.pdf",
        [
            (80, "(2) The resultant force normal to the signboard should be taken to act at its centre."),
            (94, "NOTE The value of the eccentricity may be given in the National Annex of the country."),
            (300, "NOTE 1 reference height: ze = zg + h/2, measured from the ground to the middle"),
            (312, "of the board, as the drawing above shows it."),
            (328, "NOTE 2 reference area: Aref = b . h"),
            (350, "Figure 7.21 - Key for signboards"),
            (380, "(3) Signboards separated from the ground by a small height should be treated as walls."),
        ],
        (120, 285),
        picture,
    )
    assert figure["number"] == "7.21"
    notes = figure["body"].split("\n")[-3:]
    assert notes == [
        "NOTE 1 reference height: ze = zg + h/2, measured from the ground to the middle",
        "of the board, as the drawing above shows it.",
        "NOTE 2 reference area: Aref = b . h",
    ]
    assert "reference height" not in text and "reference area" not in text and "drawing above" not in text
    assert "NOTE The value of the eccentricity" in text  # the clause's NOTE, above the drawing
    assert "Signboards separated" in text


def test_a_note_that_goes_on_from_a_clauses_text_above_a_caption_stays_the_clauses(tmp_path: Path) -> None:
    """A NOTE set right under a line of the clause's text, with the caption under it and the drawing
    under the caption (a figure captioned above): the NOTE goes on from the clause, so the clause
    keeps it and the figure takes none."""
    figure, text = _figure_page(
        tmp_path / "note-above-caption.pdf",
        [
            (80, "(1) The pressure on the wall should be taken from the zones shown in the following figure."),
            (94, "NOTE The zones may be defined by the National Annex, which may also give other values."),
            (112, "Figure 7.5 - Key for vertical walls"),
        ],
        (130, 300),
        False,
    )
    assert "NOTE" not in figure["body"]
    assert "NOTE The zones may be defined" in text


@pytest.mark.parametrize("picture", [False, True])
def test_a_sentence_naming_a_figure_at_a_lines_start_is_no_caption_beside_the_figures_own(
    tmp_path: Path, picture: bool
) -> None:
    """A sentence broken so that its next line opens with the figure's name ("... Examples are given in"
    / "Figure E.3. For guyed masts ...") reads like a caption; the figure's own caption further down
    the page is the caption, and the sentence stays in the clause's text."""
    figure, text = _figure_page(
        tmp_path / "sentence-naming-a-figure.pdf",
        [
            (80, "(1) The correlation length should be positioned in the range of antinodes. Examples are given in"),
            (91, "Figure E.3. For guyed masts and continuous multispan bridges special advice is necessary."),
            (300, "NOTE If more than one correlation length is shown, it is safe to use them simultaneously."),
            (325, "Figure E.3 - Examples for application of the correlation length"),
        ],
        (120, 285),
        picture,
    )
    assert figure["title"] == "Examples for application of the correlation length"
    assert "positioned" not in figure["body"] and "guyed masts" not in figure["body"]
    assert figure["body"].endswith(
        "NOTE If more than one correlation length is shown, it is safe to use them simultaneously."
    )
    assert "Examples are given in" in text and "Figure E.3. For guyed masts" in text


def test_a_caption_line_reads_on_from_a_sentence_not_from_a_caption_stacked_above_it() -> None:
    """A line opening with "Figure 4.1" carries on the sentence above it ("... (see"), also through a
    line that itself carries one on ("Figure 4.1 (a)) and ... (see" / "Figure 4.1 (b)) shall ..."), but
    not under another caption (two captions stacked under pictures side by side) nor under a sentence
    that ends with a stop."""

    def line(text: str, y: float, x1: float = 520) -> dict[str, Any]:
        return {"text": text, "bbox": [76.0, y, x1, y + 14]}

    sentence = line("(1)P Both the uniform component of the temperature distribution (see", 380)
    first = line("Figure 4.1 (a)) and the linearly varying temperature difference component (see", 394)
    second = line("Figure 4.1 (b)) shall be considered for each layer.", 408, 336)
    assert _read_into(first, [sentence, first, second])
    assert _read_into(second, [sentence, first, second])
    assert not _read_into(first, [first, second])  # nothing above the first: the second is under a caption
    stacked = [
        line("Figure 12 Split around fixing in a timber", 380, 300),
        line("Figure 13 Gap of more than 2 mm", 394, 260),
    ]
    assert not _read_into(stacked[1], stacked)
    ended = [line("(2) The values are given in the figure below.", 380), line("Figure 5.1 - Key for walls", 394, 300)]
    assert not _read_into(ended[1], ended)


def test_text_set_beside_a_picture_is_not_the_notes_of_the_figure_under_it(tmp_path: Path) -> None:
    """A guide sets a photo at the right of its text, the caption under the photo: the text at the
    left, a "Note:" line opening it, is beside the photo, not between photo and caption, and stays
    the section's."""
    doc = pymupdf.open()
    page = doc.new_page(width=595, height=842)
    photo = pymupdf.open()
    art = photo.new_page(width=150, height=110)
    art.draw_rect(pymupdf.Rect(5, 5, 145, 105), color=(0.3, 0.2, 0.1), fill=(0.6, 0.5, 0.4))
    page.insert_image(pymupdf.Rect(368, 430, 520, 542), pixmap=art.get_pixmap(dpi=100))
    lines = [
        "Note: Information on acceptable grades of timber weatherboards is available from the grading rules.",
        "CUPPING/GAPS",
        "Gaps resulting from missing plugs or scribers between the",
        "board profile and window or other facings (where specified).",
        "Gaps between laps of up to 2 mm per 150 mm width of fully painted",
        "weatherboards with a light reflectance value of 40% or more.",
    ]
    for i, text in enumerate(lines):  # down to just above the caption's line
        page.insert_text((76, 480 + 12 * i), text, fontsize=8)
    page.insert_text((368, 560), "Figure 13 Gap of more than 2 mm between", fontsize=8)
    figure, text = _read_figure(doc, tmp_path / "beside.pdf")
    assert "Note" not in figure["body"] and "weatherboards" not in figure["body"]
    assert "Note: Information on acceptable grades" in text and "light reflectance value" in text


def _span(text: str, x: float, box: tuple[float, float], base: float, size: float = 9.0) -> dict[str, Any]:
    return {
        "text": text,
        "bbox": [x, box[0], x + 6 * len(text), box[1]],
        "origin": (x, base),
        "size": size,
        "ascender": 0.8,
        "descender": -0.2,
        "font": "ArialMT",
        "flags": 0,
    }


def _raw_line(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "bbox": [
            min(s["bbox"][0] for s in spans),
            min(s["bbox"][1] for s in spans),
            max(s["bbox"][2] for s in spans),
            max(s["bbox"][3] for s in spans),
        ],
        "spans": list(spans),
    }


def _lettered_notes(ohm_box: tuple[float, float]) -> dict[str, Any]:
    """A table's lettered notes as PyMuPDF gives them: the letters in a column of their own, and note b.
    with a math font's "Ω" (boxed ``ohm_box``: 50 pt high on a 9 pt line, as UFC 3-301-01 sets it)."""
    lines = [
        _raw_line(_span("a.", 60, (480, 493), 490)),
        _raw_line(_span("Response modification coefficient, R, for use throughout.", 81, (480, 493), 490)),
        _raw_line(_span("b.", 60, (495, 507), 504)),
        _raw_line(
            _span("Where the overstrength factor, ", 81, (494.5, 506.8), 503.9),
            _span("Ω", 267, ohm_box, 503.9),
            _span(", is greater than 2, it may be reduced", 275, (494.5, 506.8), 503.9),
        ),
        _raw_line(_span("with flexible diaphragms.", 81, (505, 517), 514)),
        _raw_line(_span("c.", 60, (519, 532), 529)),
        _raw_line(_span("Deflection amplification factor, Cd, for use in 12.8.6.", 81, (519, 532), 529)),
    ]
    return {"blocks": [{"lines": [ln]} for ln in lines]}


def test_a_math_glyph_boxed_far_above_its_line_leaves_the_line_in_its_row() -> None:
    """A typeset glyph boxed far above and below its line (a math font's Ω) is measured from its
    baseline: note b. stays in its own row after note a.'s, where the glyph's box had put its line
    level with note a. (and note b.'s text before a.'s)."""
    rows = [
        " ".join(ln["text"] for ln in row)
        for row in _rows(_page_lines(_lettered_notes((475.8, 526.1)), None, typeset=True))
    ]
    assert rows[0].startswith("a. Response modification")
    assert rows[1].startswith("b. Where the overstrength factor")
    assert rows[2] == "with flexible diaphragms."
    assert rows[3].startswith("c. Deflection")
    # a scan's text layer keeps its boxes: they are the words' extent on the picture
    scan = _page_lines(_lettered_notes((475.8, 526.1)), None)
    assert [ln["bbox"][1] for ln in scan if ln["text"].startswith("Where")] == [475.8]
    # a line turned upright (a column head) is as tall as its text is long: it keeps its box
    upright = _lettered_notes((475.8, 526.1))
    for block in upright["blocks"]:
        block["lines"][0]["dir"] = (0.0, -1.0)
    assert [ln["bbox"][1] for ln in _page_lines(upright, None, typeset=True) if ln["text"].startswith("Where")] == [
        475.8
    ]
    # and a typeset line without such a glyph keeps the box PyMuPDF gives it
    plain = _page_lines(_lettered_notes((494.5, 506.8)), None, typeset=True)
    assert [ln["bbox"] for ln in plain if ln["text"].startswith("Where")] == [[81, 494.5, 275 + 6 * 38, 506.8]]
