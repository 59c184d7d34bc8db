"""extract-page (one Send per page): text lines with positions, captioned figures and tables, cropped images.

Works on born-digital pages and on scans with an OCR text layer alike: figures and tables are found
as regions of the page (PyMuPDF's layout model, run only on pages that carry a caption), cropped from
the rendered page, and linked to the number and title of their caption.
"""

from __future__ import annotations

import logging
import re
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymupdf

from clausewise.keys import clean_number
from clausewise.pdf import MUPDF_LOCK, WorkerPool, open_pdf, worker_document

if TYPE_CHECKING:  # page workers import this module: keep LangGraph out of their start-up
    from clausewise.graph.state import PageTask

log = logging.getLogger(__name__)

CROP_DPI = 110
MAX_CROP_PX = 3000  # longest side of a cropped figure, table or expression
MAX_LAYOUT_PT = 5000  # pages larger than this (about 1.8 m) skip the layout model
RUNNING_BAND = 0.075  # the share of a page's height at its top and its foot where running lines are printed
# A caption's number: "5.1", "B.1", "A1.2(B)", "7.3a", "3-1", "C-1", "B-16.1", "12a-b", with the OCR
# slips of scans ("5. 2", "A.I", "6.l", "e.8" for "C.8": the annex it is printed in tells, at merge).
_NUM = (
    r"(?:[A-Z]\d?\s?[.\-]?\s?|[ce]\s?\.\s?(?=\d))?(?:[\dIlS][\dIlOS]{0,3}|(?<=\.)s)"
    r"(?:(?:\s?\.\s?|-)(?:[\dIlOS]{1,3}|s\b)){0,3}[a-z]?(?:\([A-Za-z0-9]{1,2}\))?(?:-[a-z]\b)?"
)
# A change mark: "\4\ ... /4/" brackets what a numbered change of a document altered (US DoD criteria mark
# their changes so). Headings and captions are recognised without them; the text keeps them.
CHANGE_MARK = re.compile(r"(?<!\S)(?:\\\d{1,2}\\|/\d{1,2}/)(?!\S)\s*")
# A scan's text layer may put an amendment mark before the caption ("~Table 7.4b", or the mark read as a
# list's number: "15) Table 7.3b -") and read its separator twice ("Table A.II .. Stored products").
# One caption may name several parts of an object, or several objects drawn together ("Figure 12a and b",
# "Figures 3 and 4", "Table 2.1a, b"): the object is keyed by the first; the others are not its title,
# which names the drawing in words.
CAPTION = re.compile(
    r"^\s*(?:~\s*|\d{1,2}\)\s*)?(?P<kind>Tables?|TABLES?|Figures?|FIGURES?|Figs?\.|FIGS?\.?)\s*"
    r"(?P<number>" + _NUM + r")"
    r"(?P<more>(?:\s?(?:,|and|&)\s?(?:" + _NUM + r"|\(?[a-z]\)?)(?![\w.]))*)\s*"
    r"(?:(?P<sep>[:\-\u2013\u2014\u2022\u00b7.|](?:\s?[\-\u2013.])?|\s(?=[A-Z(\[]))\s*(?P<title>.*?))?\s*$"
)
# A scan's closing amendment mark read onto the end of a caption's title, often from the line it wrapped
# onto: "... for flat roofs <51", "... roofs ®J", "(§]", "@1]", "~", "011" (for "@1]"). A bracketed word
# or symbol that closes ("(B)", "(Qc)") is no mark.
_MARK_TAIL = re.compile(r"\s+(?:~|[®@]\S{0,3}|[<(\[][\dA-Z§]{1,2}[\]>J]?|0\d\d)\s*$")
_NUMBER_OK = re.compile(
    r"(?:(?:[A-Z]\d?[.\-]|[ce]\.)?\d{1,2}(?:\.\d{1,2}){0,3}|\d{3,4}\.\d{1,2}(?:\.\d{1,2})?|[A-Z]\.?\d{1,2}|(?:[A-Z]-)?\d{1,2}-\d{1,3}(?:\.\d{1,2}){0,2}"
    r"|[A-Z]\d\.\d{1,2}(?:\.\d{1,2})?|\d{1,2}(?:\.\d{1,2}){1,2}-\d{1,2})[a-z]?(?:\([A-Za-z0-9]{1,2}\))?(?:-[a-z])?"
)
_DIVISION_HEADING = re.compile(r"^\s*(chapter|section|part|annex|appendix)\b", re.I)
_PARAGRAPH_START = re.compile(r"^\s*\(\s?\d{1,2}\s?\)|^\s*NOTE|^\s*\d+(\.\d+)+\.?\s+[A-Z]|^\s*Section\s+\d")
# A numbered expression: "(5.1)", "(E.7)", "(6.12a)", "(Equation 16-18a)" closing a line.
EXPRESSION = re.compile(
    r"\(\s?(?:(?:Equation|Eq\.|Eqn\.?)\s?(?P<hnum>\d{1,2}-\d{1,3}[a-z]?)|(?P<num>(?:[A-H]\d?\s?\.\s?\d{1,2}(?:\.\d{1,2})?"
    r"|\d{1,2}\s?\.\s?\d{1,2})[a-z]?))\s?\)\s*$"
)
EXPRESSION_CITED = re.compile(
    r"\b(see|Expression|Expressions|Equation|Equations|Eq\.|in|and|to|from|of|with|using)\s*$", re.I
)
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi", re.I)
_ITALIC_FONT = re.compile(r"italic|oblique", re.I)
# A page label that names itself: found in the outer fifth of a page, not only in the header or footer band
_PAGE_LABEL = re.compile(r"^\s*page\s+\d{1,4}(?:\s+of\s+\d{1,4})?\s*$", re.I)
# A printed page number: "12", "xiv", "2-10", "Page 31 of 141", "- 12 -".
PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-\u2013\s]*(?:\d{1,4}|[ivxlcdm]{1,6}|[A-Z]?\d{1,2}-\d{1,3}|[A-Z]-\d{1,3})(?:\s+of\s+\d{1,4})?[-\u2013\s]*$",
    re.I,
)


def expression_number(text: str) -> str | None:
    """The number of a numbered expression closing ``text`` ("... (5.1)"), unless the line cites it."""
    m = EXPRESSION.search(text)
    if not m or EXPRESSION_CITED.search(text[: m.start()]):
        return None
    if m.group("hnum"):
        return m.group("hnum")
    return clean_number(m.group("num"))


def caption_number(raw: str) -> str:
    """A caption's number normalised: OCR slips fixed ("A.I" -> "A.1"), suffixes kept ("A1.2(B)")."""
    raw = re.sub(r"\s+", "", raw)
    m = re.fullmatch(r"(?P<core>.*?)(?P<tail>\([A-Za-z0-9]{1,2}\)|-[a-z])?", raw)
    core, tail = (m.group("core"), m.group("tail") or "") if m else (raw, "")
    if "-" in core or re.match(r"[A-Z]\d\.", core):  # "3-1", "B-16.1", "A1.2": no annex-letter rules
        head = (
            core[:1] if core[:1].isalpha() and core[1:2] in ("-", "1", "2", "3", "4", "5", "6", "7", "8", "9") else ""
        )
        body = core[len(head) :]
        body = body.replace("I", "1").replace("l", "1").replace("O", "0")
        return head + body.strip(".") + tail
    return clean_number(core) + tail


def parse_caption(text: str, *, strict: bool = False) -> tuple[str, str, str] | None:
    """(kind, number, title) when ``text`` opens with a table or figure caption. ``strict`` refuses
    the forms a wrapped cross-reference also takes ("Figure 5.7." or "Table 5.2" alone)."""
    m = CAPTION.match(CHANGE_MARK.sub("", text))
    if not m:
        return None
    title = (m.group("title") or "").strip()
    if m.group("sep") is None and title:
        return None
    if strict and not title:
        return None
    if title and not (title[0].isupper() or title[0] in "(\"'["):
        return None
    if m.group("more") and not title[:1].isalpha():
        return None  # "Tables 1.5-1 and 1.5-2 [Replacement]": a heading naming another code's tables
    if m.group("kind").isupper() and title and title.split()[0].isalpha() and title.split()[0].islower():
        return None
    if re.search(r"(\.\s?){4,}|…{2,}|_{4,}", title):
        return None  # a line of a list of tables or figures ("Table 2-1 Wind ...... 14")
    number = caption_number(m.group("number"))
    if not _NUMBER_OK.fullmatch(number):
        return None
    kind = "table" if m.group("kind").lower().startswith("table") else "figure"
    return kind, number, title


def _overlap_y(a: list[float], b: list[float]) -> float:
    inter = min(a[3], b[3]) - max(a[1], b[1])
    return inter / max(1e-6, min(a[3] - a[1], b[3] - b[1]))


def _overlap_x(a: list[float], b: list[float]) -> float:
    return min(a[2], b[2]) - max(a[0], b[0])


def _rows(lines: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Group lines that share a baseline (a label and its text, table cells) into rows, top to bottom."""
    rows: list[list[dict[str, Any]]] = []
    for line in sorted(lines, key=lambda ln: (ln["bbox"][1], ln["bbox"][0])):
        if rows and _overlap_y(rows[-1][0]["bbox"], line["bbox"]) > 0.5:
            rows[-1].append(line)
        else:
            rows.append([line])
    return [sorted(row, key=lambda ln: ln["bbox"][0]) for row in rows]


TALL_GLYPH = 1.5  # a glyph boxed this many times its font's height at its size is measured from its baseline
CELL_GAP = 12.0  # points between two pieces of one baseline that make them cells of a table


def _merge_row(row: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {
        "text": _MISREAD_MARK.sub("\u2022", _REPEATED_MARK.sub(r"\1", " ".join(ln["text"] for ln in row))),
        "bbox": [
            min(ln["bbox"][0] for ln in row),
            min(ln["bbox"][1] for ln in row),
            max(ln["bbox"][2] for ln in row),
            max(ln["bbox"][3] for ln in row),
        ],
    }
    if "size" in row[0]:
        merged["size"] = max(ln["size"] for ln in row)
        chars = [len(ln["text"]) for ln in row]
        merged["bold"] = sum(c for c, ln in zip(chars, row, strict=True) if ln["bold"]) >= 0.6 * sum(chars)
        merged["italic"] = sum(c for c, ln in zip(chars, row, strict=True) if ln.get("italic")) >= 0.6 * sum(chars)
        lead = row[0]["lead"] or (row[0]["text"] if row[0]["bold"] else "")
        for ln in row[1:]:  # "1.1" and its bold title are separate lines on one baseline
            if lead != " ".join(x["text"] for x in row[: row.index(ln)]) or not (ln["bold"] or ln["lead"]):
                break
            lead = f"{lead} {ln['text'] if ln['bold'] else ln['lead']}"
        merged["lead"] = "" if merged["bold"] else lead
    bands = {ln.get("band") for ln in row} - {None}
    if bands:
        merged["band"] = bands.pop()
    cells = 1 + sum(
        b["bbox"][0] - a["bbox"][2] >= max(CELL_GAP, 1.5 * a.get("size", 0.0))
        for a, b in zip(row, row[1:], strict=False)
    )
    cells += sum(ln.get("cells", 1) - 1 for ln in row)  # a drawn table's row, read cell by cell already
    if cells >= 2:  # pieces set wide apart on the line: a table's row (3 or more), a flowchart's "Yes    Yes"
        merged["cells"] = cells
    return merged


def drawn_tables(page: pymupdf.Page, turn: Any) -> list[list[list[list[float]]]] | None:
    """The tables drawn on a born-digital page (ruled, or rows set off by shading) that PyMuPDF's table
    finder sees, each as its rows of cell boxes, in the page's coordinates as shown; None where the
    finder fails on the page (its lines are then read by baseline). Call under the MuPDF lock."""
    if max(page.rect.width, page.rect.height) > MAX_LAYOUT_PT:
        return []  # a drawing sheet of several metres: read by baselines, as the layout model skips it
    try:
        found = page.find_tables().tables
    except Exception as exc:  # noqa: BLE001 - a page the finder cannot read keeps its text as baselines
        log.warning("page %d: table finder failed (%s); its lines are read by baseline", page.number + 1, exc)
        return None
    out = []
    for table in found:
        if table.row_count < 2 or table.col_count < 2:
            continue
        rows = []
        for row in table.rows:
            boxes = [pymupdf.Rect(c) * turn if turn is not None else pymupdf.Rect(c) for c in row.cells if c]
            if boxes:
                rows.append([[round(b.x0, 1), round(b.y0, 1), round(b.x1, 1), round(b.y1, 1)] for b in boxes])
        out.append(rows)
    return out


def _union(table: list[list[list[float]]]) -> list[float]:
    cells = [c for row in table for c in row]
    return [min(c[0] for c in cells), min(c[1] for c in cells), max(c[2] for c in cells), max(c[3] for c in cells)]


def _in_cell(line: dict[str, Any], cell: list[float]) -> bool:
    x, y = (line["bbox"][0] + line["bbox"][2]) / 2, (line["bbox"][1] + line["bbox"][3]) / 2
    return cell[0] - 1 <= x <= cell[2] + 1 and cell[1] - 1 <= y <= cell[3] + 1


def cell_rows(
    tables: list[list[list[list[float]]]], lines: list[dict[str, Any]]
) -> list[tuple[dict[str, Any], list[int]]]:
    """A drawn table's rows read cell by cell: where a cell's text wraps onto two or more lines, set
    beside cells of one line centred on the row ("Standing at a distance of" / "Bathroom and kitchen
    cabinetry  As agreed ..." / "to 1 m"), the row is one line, its cells in order, each cell's lines
    joined. Returns each such row's line with the indices (into ``lines``) of the lines it replaces;
    a row whose cells hold one line each is left to the baseline rows, which read it so already."""
    out = []
    taken: set[int] = set()
    for table in tables:
        for row in table:
            cells = [[i for i, ln in enumerate(lines) if i not in taken and _in_cell(ln, cell)] for cell in row]
            if not any(len(_rows([lines[i] for i in cell])) > 1 for cell in cells):
                continue
            members = [i for cell in cells for i in cell]
            pieces = [_merge_row([ln for r in _rows([lines[i] for i in cell]) for ln in r]) for cell in cells if cell]
            merged = {**_merge_row([{**p, "cells": 1} for p in pieces]), "lead": ""}
            merged.pop("cells", None)
            if len(pieces) > 1:
                merged["cells"] = len(pieces)
            taken.update(members)
            out.append((merged, members))
    return out


def table_rows(lines: list[dict[str, Any]]) -> list[list[str]]:
    """Rebuild a table's rows and cells from the positions of its text lines.

    Rows are lines sharing a baseline; columns are the clusters of the cells' left edges across the
    table, so a cell lands in the column whose start it is nearest to. A line with one cell that goes on
    with the text of that cell above it (in lower case, or after a hyphen) is that cell's text wrapped,
    not a row of its own; not in the column of the rows' labels, where a line in lower case is often a
    label of its own ("normal weight" under "density class LC 2,0"), but for a unit alone under a label
    ending in a number ("... gross vehicle weight ≤ 160" / "kN").
    """
    rows = _rows(lines)
    starts = sorted(ln["bbox"][0] for row in rows for ln in row)
    columns: list[float] = []
    for x in starts:
        if not columns or x - columns[-1] > 18:
            columns.append(x)
    built: list[list[str]] = []
    for row in rows:
        cells = [""] * len(columns)
        for ln in row:
            col = max(i for i, c in enumerate(columns) if c <= ln["bbox"][0] + 18)
            cells[col] = (cells[col] + " " + ln["text"]).strip()
        built.append(cells)
    labels = min((i for cells in built for i, c in enumerate(cells) if c), default=0)  # the rows' labels
    out: list[list[str]] = []
    for cells in built:
        filled = [i for i, c in enumerate(cells) if c]
        above, more = (out[-1][filled[0]], cells[filled[0]]) if out and len(filled) == 1 else ("", "")
        if more and (filled[0] > labels and _runs_on_into(above, more) or _unit_after_number(above, more)):
            # a cell's text wrapped onto a line of its own
            out[-1][filled[0]] = above + more if above.endswith("-") else f"{above} {more}"
            continue
        out.append(cells)
    return out


_UNIT_ONLY = re.compile(r"(?:k?N|MN|kg|t|m|mm|cm|kPa|MPa|psf|lbs?\.?)(?:\s?/\s?m[23²³]?)?[23²³]?|°C|%")


def _unit_after_number(above: str, more: str) -> bool:
    """A label's unit printed on the next line ("30 kN < gross vehicle weight ≤ 160" / "kN"): the label
    ends in a number and the line holds a unit alone. Any other line in the labels' column is a label."""
    return bool(re.search(r"\d\s*$", above)) and _UNIT_ONLY.fullmatch(more.strip()) is not None


def _runs_on_into(above: str, more: str) -> bool:
    """Does a cell's text go on in the line below ("NOTE 2: The recommended value" / "is 1,0 kN/m2."):
    it ends without a full stop or colon and the line goes on in lower case, or it ends in a hyphen."""
    if not above or above.endswith((".", ":", ";")):
        return False
    return above.endswith("-") or more[:1].islower()


NOTE_LINE = re.compile(r"(?:NOTES?|Notes?)\b")  # a NOTE's opening, in a clause or under a table
# a footnote's opening under a table: "a)", "1)", "I)" (OCR's "1)"), "(a)", "*", "a The ...", "a. The ...",
# "NOTE 2"; its marker may sit in a cell of its own, left of its text
_FOOTNOTE_OPENS = re.compile(
    r"(?:(?:[a-z]|\d{1,2}|[IVX])\)|\([a-z\d]\)|[*†‡§]{1,3}(?=\s*[A-Z])|[a-z]\.?(?=\s+[A-Z])|" + NOTE_LINE.pattern + ")"
)
_MARKER_CELL = re.compile(r"(?:[a-z]|\d{1,2})\)?|[*†‡§]{1,3}")
_NUMBER_CELL = re.compile(r"[-+±]?\s?\d+(?:[.,]\d+)?(?:\s?(?:to|-|–)\s?[-+]?\d+(?:[.,]\d+)?)?")


def table_footnotes(rows: list[list[str]]) -> tuple[list[list[str]], list[str]]:
    """A table's grid, and the footnotes printed under it that were read as its last rows (one line
    each, as printed: a note's marker and text, or a line it goes on over): from the first row that
    opens a note ("a) ...", "1) ...", "b The ...", "NOTE 2 ...") in the run of rows at the table's foot
    that hold only words, in one or two cells (a marker and its text). A row with a number in a cell
    of its own is the table's, and so is a run of word-only rows that no note opens (the rows of a
    table of categories), and a table whose rows all hold only words in one or two cells is left whole
    (its rows lettered "a", "b" or numbered "I", "II" could be notes or its rows)."""

    def words_only(row: list[str]) -> bool:
        filled = [c for c in row if c]
        return (
            0 < len(filled) <= 2
            and not any(_NUMBER_CELL.fullmatch(c) for c in filled)
            and bool(re.search(r"[A-Za-z]{3,}", " ".join(filled)))
        )

    def opens(row: list[str]) -> bool:
        filled = [c for c in row if c]
        marker_apart = len(filled) == 2 and _MARKER_CELL.fullmatch(filled[0]) is not None
        return marker_apart or _FOOTNOTE_OPENS.match(filled[0]) is not None

    foot = len(rows)
    while foot > 2 and words_only(rows[foot - 1]):
        foot -= 1
    first = next((i for i in range(foot, len(rows)) if opens(rows[i])), None)
    if first is None or all(words_only(row) or not any(row) for row in rows[:first]):
        return rows, []
    return rows[:first], [" ".join(c for c in row if c) for row in rows[first:]]


def _centred_run_on(line: dict[str, Any], cap: dict[str, Any], body: list[dict[str, Any]]) -> bool:
    """A caption's second line set centred under its first ("Figure 6.1: Snow load shape coefficients
    at projections" / "and obstructions"): shorter, its middle within 8 pt of the caption line's (its
    number and title may be apart on the line), going on in lower case after a title with no full stop.
    A scan places and sizes the two lines a little apart: the middles within 5 % of the caption's width."""
    band = [cap["bbox"], *(ln["bbox"] for ln in body if _same_band(ln, cap))]
    left, right = min(b[0] for b in band), max(b[2] for b in band)
    x0, x1 = line["bbox"][0], line["bbox"][2]
    return (
        line["text"][:1].islower()
        and not cap["text"].rstrip().endswith((".", ":"))
        and x1 - x0 < right - left
        and abs((x0 + x1) / 2 - (left + right) / 2) < max(8.0, 0.05 * (right - left))
    )


# the words a title does not end on: it breaks off there and goes on on the next line
_BREAKS_OFF = re.compile(
    r"\b(?:where|which|whose|when|of|and|or|for|to|at|in|on|by|with|from|between|the|a|an|under|over)\s*$", re.I
)


def _carried_on(line: dict[str, Any], cap: dict[str, Any]) -> bool:
    """A caption's second line that carries on its first, wherever a scan placed it ("Figure B4: ...
    - roofs where" / "drifting occurs at parapets"): going on in lower case under a title with no
    full stop, set within the caption line's width, after a word a title does not end on or indented
    past the caption's start (a hanging indent; the clause's text starts at the margin)."""
    return (
        line["text"][:1].islower()
        and not cap["text"].rstrip().endswith((".", ":", ";"))
        and cap["bbox"][0] - 4 <= line["bbox"][0]
        and line["bbox"][2] <= cap["bbox"][2] + 4
        and (bool(_BREAKS_OFF.search(cap["text"])) or line["bbox"][0] >= cap["bbox"][0] + 6)
    )


def caption_run_on(title: str, rows: list[list[str]]) -> tuple[str, list[list[str]]]:
    """The words of a table's caption that wrapped into its first row ("Table 6.1: Recommended values of
    ... component" / "for different types of bridge decks for road, foot and railway bridges", read as
    a head over the columns), and the rows without them: a first row of one cell, not the first column's,
    of three words or more in lower case, under a title that does not end a sentence. A row of units
    ("kN/m2"), of one head ("Zone"), or the head of the first column (the row labels' head, OCR's
    "ategories of traffic areas") is no run-on."""
    if not title or title.rstrip().endswith((".", ":", ";")) or len(rows) < 2:
        return "", rows
    filled = [i for i, c in enumerate(rows[0]) if c]
    words = rows[0][filled[0]].split() if len(filled) == 1 and filled[0] > 0 else []
    if len(words) >= 3 and words[0][:1].islower() and sum(w.isalpha() for w in words) >= 0.75 * len(words):
        return " ".join(words), rows[1:]
    return "", rows


def rows_to_markdown(rows: list[list[str]]) -> str:
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    cells = [[c.replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(cells[0]) + " |", "|" + "---|" * width]
    lines += ["| " + " | ".join(r) + " |" for r in cells[1:]]
    return "\n".join(lines)


def _strong(candidate: tuple[tuple[str, str, str], dict[str, Any]], body: list[dict[str, Any]]) -> bool:
    """A caption with its title, or a bare "Table 5.1" line (a wrapped cross-reference usually ends
    with a full stop or runs on into the sentence)."""
    (_, _, title), line = candidate
    if title:
        return parse_caption(line["text"], strict=True) is not None
    return not line["text"].rstrip().endswith(".")


def _titled_below(line: dict[str, Any], body: list[dict[str, Any]]) -> bool:
    """A bare "Table 5.1" line whose title is the next line (upper-case start, not a paragraph)."""
    if line["text"].rstrip().endswith("."):
        return False
    below = sorted(
        (ln for ln in body if 0 <= ln["bbox"][1] - line["bbox"][3] < 20),
        key=lambda ln: (ln["bbox"][1] // 4, ln["bbox"][0]),
    )
    return bool(below) and below[0]["text"][:1].isupper() and not _PARAGRAPH_START.match(below[0]["text"])


def crop_dpi(clip: pymupdf.Rect) -> int:
    """``CROP_DPI``, lowered so that no side of a crop passes ``MAX_CROP_PX`` pixels (a 200-inch page)."""
    longest = max(clip.width, clip.height, 1.0)
    return max(1, min(CROP_DPI, int(MAX_CROP_PX * 72 / longest)))


def _layout_regions(page: pymupdf.Page) -> list[dict[str, Any]]:
    if max(page.rect.width, page.rect.height) > MAX_LAYOUT_PT:
        return []  # the layout model renders the page whole: a huge page takes the text-based regions
    import pymupdf.layout  # noqa: F401  (activates the ONNX layout model)

    page.get_layout()
    info: list[Any] = page.layout_information or []
    return [
        {"bbox": [float(v) for v in box[:4]], "class": box[4]}
        for box in info
        if box[4] in ("table", "picture", "caption")
    ]


def _distance(kind: str, caption: list[float], region: list[float]) -> float:
    """How well a region fits a caption: tables hang below their caption, figures above it."""
    h_overlap = min(caption[2], region[2]) - max(caption[0], region[0])
    if h_overlap < 0:
        if _overlap_y(caption, region) > 0:  # a rotated page: the caption stands beside the figure
            return max(region[0] - caption[2], caption[0] - region[2])
        return 1e9
    if region[1] - 4 <= caption[1] and caption[3] <= region[3] + 4:
        return 0.0  # caption inside the region
    if kind == "table":
        gap = region[1] - caption[3]
        return gap if gap > -6 else 1e6 + abs(gap)
    gap = caption[1] - region[3]
    return gap if gap > -6 else 1e6 + abs(gap)


def _drawn_chain(caption: list[float], drawn: list[Any], side: str, x0: float, x1: float) -> Any:
    """The vector drawing or picture next to a caption (table rules, a drawn figure, a photo),
    following the pieces that touch one another away from the caption: their union, or None."""
    reach = caption[3] if side == "below" else caption[1]
    found = None
    # pieces mostly over the caption: a table's shaded rows beside the figure are not part of it
    pending = [r for r in drawn if min(r.x1, x1 + 10) - max(r.x0, x0 - 10) >= 0.6 * r.width]
    while True:
        gap = 22 if found is not None else 40  # a caption stands a little further off than the pieces
        if side == "below":
            step = [r for r in pending if reach - 6 <= r.y0 <= reach + gap]
        else:
            step = [r for r in pending if reach - gap <= r.y1 <= reach + 6]
        if not step:
            break
        for r in step:
            found = pymupdf.Rect(r) if found is None else found | r
        taken = {id(r) for r in step}  # by identity: Rect equality is slow and a page may hold thousands
        pending = [r for r in pending if id(r) not in taken]
        reach = max(r.y1 for r in step) if side == "below" else min(r.y0 for r in step)
    return found


def _fallback_region(
    kind: str,
    caption: list[float],
    body: list[dict[str, Any]],
    page_rect: Any,
    side: str | None = None,
    column: tuple[float, float] | None = None,
    drawn: list[Any] | None = None,
) -> list[float]:
    """A region when the layout model found none, on the ``side`` of the caption the object is on:
    the drawing next to the caption when it is drawn, else the blank band next to a figure caption,
    or a table's rows up to the next numbered paragraph or heading."""
    side = side or ("below" if kind == "table" else "above")
    x0, x1 = column or (page_rect.x0 + 40, page_rect.x1 - 40)
    top_limit = page_rect.y0 + RUNNING_BAND * page_rect.height
    bottom_limit = page_rect.y1 - RUNNING_BAND * page_rect.height
    mine = [ln for ln in body if ln["bbox"][2] >= x0 - 4 and ln["bbox"][0] <= x1 + 4 and ln["bbox"] != caption]
    rows = [_merge_row(r) for r in _rows(mine)]
    # what is drawn right next to the caption, on its side (within the caption's reach across)
    box = _drawn_chain(caption, drawn or [], side, caption[0], caption[2])
    if box is not None and box.height > 30:
        if kind == "figure":  # the drawing or picture itself, with the caption's width
            return [min(box.x0, caption[0]), box.y0, max(box.x1, caption[2]), box.y1]
        if box.width >= caption[2] - caption[0]:  # a table's ruled frame, as wide as its caption or wider:
            # the table, wherever its cells reach ("(1) (2) (3)" heads its columns, no paragraph's number)
            x0, x1 = min(x0, box.x0 - 2), max(x1, box.x1 + 2)
            if side == "below":
                return [x0, caption[3], x1, box.y1 + 2]
            return [x0, box.y0 - 2, x1, caption[1]]
    chain = None if box is None else (box.y1 if side == "below" else box.y0)
    if kind == "figure" and side == "above":
        above = [ln["bbox"][3] for ln in rows if ln["bbox"][3] <= caption[1] - 2]
        top = max([caption[1] - 260, *[y for y in above if caption[1] - y > 40]], default=caption[1] - 260)
        return [x0, max(top_limit, top), x1, caption[1]]
    if kind == "figure":
        below = [ln["bbox"][1] for ln in rows if ln["bbox"][1] >= caption[3] + 2]
        bottom = min([caption[3] + 260, *[y for y in below if y - caption[3] > 40]], default=caption[3] + 260)
        return [x0, caption[3], x1, min(bottom_limit, bottom)]

    def stops(ln: dict[str, Any]) -> bool:
        return bool(_PARAGRAPH_START.match(ln["text"]) or parse_caption(ln["text"]) or _heading_row(ln))

    if side == "above":  # a caption under its table
        top = max(top_limit, caption[1] - 400)
        for ln in sorted((r for r in rows if r["bbox"][3] <= caption[1] + 2), key=lambda r: -r["bbox"][3]):
            if caption[1] - ln["bbox"][3] > 20 and stops(ln):
                top = ln["bbox"][3] + 2
                break
        if chain is not None and caption[1] - chain > 30:
            top = max(top, chain - 2)
        return [x0, top, x1, caption[1]]
    bottom = bottom_limit
    for ln in sorted((r for r in rows if r["bbox"][1] >= caption[3]), key=lambda r: r["bbox"][1]):
        if ln["bbox"][1] > caption[3] + 20 and stops(ln):
            bottom = ln["bbox"][1] - 2
            break
    if chain is not None and chain - caption[3] > 30:
        bottom = min(bottom, chain + 2)
    return [x0, caption[3], x1, bottom]


def _grown_to_rules(bbox: list[float], drawn: list[Any], kind: str, page_rect: Any) -> list[float]:
    """An object's box grown to take in the vector lines it cuts (a layout box hugs text), not a shaded
    panel or frame much bigger than it; a tall drawing only for a figure."""
    x0, y0, x1, y1 = bbox
    box_area = max(1.0, (x1 - x0) * (y1 - y0))
    for r in drawn:
        if r.x0 <= x1 + 12 and r.x1 >= x0 - 12 and r.y0 <= y1 + 12 and r.y1 >= y0 - 12:
            grown = pymupdf.Rect(min(x0, r.x0), min(y0, r.y0), max(x1, r.x1), max(y1, r.y1))
            if grown.width * grown.height > 1.6 * box_area and r.width * r.height > 0.5 * box_area:
                continue
            if r.height < page_rect.height * 0.6 or kind == "figure":
                x0, y0, x1, y1 = min(x0, r.x0), min(y0, r.y0), max(x1, r.x1), max(y1, r.y1)
    return [round(v, 1) for v in pymupdf.Rect(x0, y0, x1, y1) & page_rect]


FIGURE_NOTE_GAP = 24.0  # points between the lines of a figure's NOTEs (a NOTE's paragraphs are set apart)
_FIGURE_NOTE = re.compile(r"\s*(?:NOTES?|Notes?)(?:\s?\d{1,2})?(?=[\s:.]|$)")  # "NOTE", "NOTE 1:", "NOTE2"


def _words_read(text: str) -> bool:
    """A line of words (a NOTE's words going on), not a drawing's labels ("Width [m]", "-50 -40", "////")."""
    letters = sum(c.isalpha() for c in text)
    return len(re.findall(r"[A-Za-z]{2,}", text)) >= 2 and letters >= 0.5 * len(text.replace(" ", ""))


def notes_over_caption(
    cap: list[float], column: tuple[float, float], body: list[dict[str, Any]], drawing: list[float] | None = None
) -> list[dict[str, Any]]:
    """The NOTEs a figure prints between its drawing and its caption under it ("NOTE 1 reference
    height ...", then "Figure 7.21 - Key for signboards"): the lines right above the caption, read upwards
    while each is a NOTE's opening or words going on and no wider gap than a NOTE's paragraphs leave,
    up to the topmost NOTE's opening. A drawing's labels end the run, so none of the drawing is taken.
    Where a line of text runs on right above the topmost NOTE, the NOTEs go on from a clause's text
    (the figure is not between them), and none is taken. With the ``drawing`` found, only lines under
    it and across from it or the caption are read: text set beside a picture is not under it."""
    x0, x1 = column
    left, right = (min(cap[0], drawing[0]), max(cap[2], drawing[2])) if drawing else (cap[0], cap[2])
    floor = drawing[3] - 2 if drawing else -1.0
    above = [ln for ln in body if floor <= ln["bbox"][1] and ln["bbox"][3] <= cap[1] + 2 and ln["bbox"] != cap]
    rows = [
        r
        for r in _rows(above)
        if any(ln["bbox"][2] > x0 and ln["bbox"][0] < x1 for ln in r)
        and max(ln["bbox"][2] for ln in r) > left
        and min(ln["bbox"][0] for ln in r) < right
    ]
    run: list[list[dict[str, Any]]] = []
    top = 0
    edge = cap[1]
    for row in sorted(rows, key=lambda r: -max(ln["bbox"][3] for ln in r)):
        merged = _merge_row(row)
        if edge - merged["bbox"][3] > FIGURE_NOTE_GAP:
            break
        if any(_FIGURE_NOTE.match(ln["text"]) for ln in row if ln["bbox"][0] <= merged["bbox"][0] + 4):
            top = len(run) + 1
        elif not _words_read(merged["text"]) or _heading_row(merged):
            break
        run.append(row)
        edge = merged["bbox"][1]
    if len(run) > top:  # words right above the topmost NOTE: a line of text if it spans half the column
        line = _merge_row(run[top])["bbox"]
        if line[2] - line[0] >= 0.5 * (x1 - x0):
            return []
    return [ln for row in reversed(run[:top]) for ln in row]


def _read_into(cap: dict[str, Any], body: list[dict[str, Any]], depth: int = 0) -> bool:
    """A line that looks like a caption but carries on the sentence of the line right above it ("...
    Examples are given in" / "Figure E.3. For guyed masts ..."): that line starts where it starts, is
    set close above it, spans most of its width or more and ends on a word, no stop; a caption there
    counts only if it carries on a sentence itself ("(see" / "Figure 4.1 (a)) and ... (see" / "Figure
    4.1 (b)) shall ..."), not one of two captions stacked under pictures side by side."""
    x0, y0 = cap["bbox"][0], cap["bbox"][1]
    height = cap["bbox"][3] - y0
    above = [
        ln
        for ln in body
        if abs(ln["bbox"][0] - x0) <= 3
        and -0.5 * height <= y0 - ln["bbox"][3] < 0.6 * height  # a scan's boxes may overlap a little
        and ln["bbox"] != cap["bbox"]
    ]
    return any(
        re.search(r"[a-z]{2,}$", ln["text"].rstrip())
        and ln["bbox"][2] - ln["bbox"][0] >= 0.6 * (cap["bbox"][2] - x0)
        and (not parse_caption(ln["text"]) or (depth < 3 and _read_into(ln, body, depth + 1)))
        for ln in above
    )


def _is_list_page(rows: list[dict[str, Any]]) -> bool:
    """A contents page or a list of tables or figures: its captions are entries, not objects."""
    texts = [r["text"] for r in rows]
    # dot leaders running to a page number ("Scope ........ 12", "... 2-6"), not a chart's dotted lines
    leaders = sum(
        1 for t in texts if re.search(r"(?:(\.\s?){5,}|…{2,})\s*(?:\d{1,4}|[A-Z]?\d{0,2}-\d{1,3}|[ivxlc]{1,5})$", t)
    )
    titled = any(
        re.fullmatch(r"(table of )?contents|list of (tables|figures|illustrations)", t.strip(), re.I) for t in texts[:5]
    )
    return leaders >= 4 or (titled and leaders >= 1)


def _heading_row(row: dict[str, Any]) -> bool:
    """A numbered heading row ("3.5 Title", "2-1.1 TITLE") set in bold: it ends the object above it."""
    return bool(row.get("bold")) and bool(
        re.match(r"^(?:[A-Z]-)?\d{1,4}(?:[.-]\d{1,3})*\.?(?:\s+[-\u2013\u2014])?\s+[A-Z\[]", row["text"])
    )


def _inside(line: dict[str, Any], region: list[float]) -> bool:
    b = line["bbox"]
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    return region[0] - 2 <= cx <= region[2] + 2 and region[1] - 2 <= cy <= region[3] + 2


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span.get("flags", 0) & 16) or bool(_BOLD_FONT.search(span.get("font", "")))


def _is_italic(span: dict[str, Any]) -> bool:
    return bool(span.get("flags", 0) & 2) or bool(_ITALIC_FONT.search(span.get("font", "")))


# Symbol fonts put their glyphs in the private use area (U+F0xx): a list's ticks, crosses and bullets
# would reach the text as unreadable code points. The marks lists are made of, by font and code.
_DINGBATS = {
    "wingdings": {
        0x6C: "\u25cf",  # ● black circle
        0x6E: "\u25a0",  # ■ black square
        0x6F: "\u25a1",  # □ white square
        0x71: "\u2751",  # ❑
        0x75: "\u25c6",  # ◆
        0x76: "\u2756",  # ❖
        0xA7: "\u25aa",  # ▪ small black square
        0xAB: "\u2605",  # ★ black star (a rating: "5★")
        0xD8: "\u27a2",  # ➢
        0xFB: "\u2717",  # ✗ ballot x
        0xFC: "\u2713",  # ✓ check mark
        0xFD: "\u2612",  # ☒
        0xFE: "\u2611",  # ☑
    },
}
_PRIVATE_USE = re.compile("[\uf000-\uf0ff]")
# A list item's mark given twice ("■ ■ be strong ..."): publishing software sets the mark in a symbol
# font and the tab after it as a blank glyph that claims to be the same mark. One is drawn.
_REPEATED_MARK = re.compile(r"^([■●•▪◆◦‣–—])(?:\s*\1)+(?=\s)")
# The same with a font that declares its mark as a letter of no word ("ȣȣ 2 mm where ..." for a drawn
# "›"): an accented or extended Latin letter twice over as a word of its own is a mark, read as a bullet
# (after a tick, "✓ ȣȣ 10 mm", or between two columns of a list, "• Paint runs ȣȣ Dust", too).
_MISREAD_MARK = re.compile(r"(?:^|(?<=\s))([\u00c0-\u02af])\s*\1(?=\s)")


def _span_text(span: dict[str, Any]) -> str:
    """A span's text, a symbol font's private-use marks as the Unicode marks they draw ("\uf0fc" in
    Wingdings is ✓); an unknown mark in a dingbat font is a bullet."""
    text: str = span["text"]
    font = str(span.get("font", "")).lower()
    table = next((t for name, t in _DINGBATS.items() if name in font), None)
    if table is None or not _PRIVATE_USE.search(text):
        return text
    return _PRIVATE_USE.sub(lambda m: table.get(ord(m.group(0)) - 0xF000, "\u2022"), text)


def _invisible_text(raw: dict[str, Any]) -> bool:
    """Most of the page's text is set invisible (alpha 0): an OCR layer over a scanned picture."""
    spans = [sp for block in raw["blocks"] for line in block.get("lines", []) for sp in line["spans"]]
    hidden = sum(len(sp["text"]) for sp in spans if sp.get("alpha", 255) == 0)
    return hidden > 0.5 * max(1, sum(len(sp["text"]) for sp in spans))


def _page_lines(raw: dict[str, Any], turn: Any, typeset: bool = False) -> list[dict[str, Any]]:
    """Text lines with their box and typography: font size, whether the line is bold, and the bold
    words a line opens with when the rest is not ("7.3.3 Terrain category. The ..." run-in heads).
    On a ``typeset`` page (text drawn, not an OCR layer) a line's box is measured from its spans'
    baselines (:func:`_typeset_box`)."""
    lines = []
    for block in raw["blocks"]:
        for line in block.get("lines", []):
            spans = [sp for sp in line["spans"] if sp["text"].strip()]
            text = re.sub(r"\s+", " ", "".join(_span_text(span) for span in line["spans"])).strip()
            if not text or not spans:
                continue
            box = _typeset_box(line["bbox"], spans) if typeset and _level(line) else line["bbox"]
            box = pymupdf.Rect(box) * turn if turn is not None else box
            weights = [(len(re.sub(r"\W", "", sp["text"])), _is_bold(sp)) for sp in spans]
            chars = sum(w for w, _ in weights) or 1
            bold_chars = sum(w for w, b in weights if b)
            italic_chars = sum(w for (w, _), sp in zip(weights, spans, strict=True) if _is_italic(sp))
            lead = ""
            if spans and _is_bold(spans[0]) and bold_chars < chars:
                for sp in spans:
                    if not _is_bold(sp):
                        break
                    lead += sp["text"]
            lines.append(
                {
                    "text": text,
                    "bbox": [round(v, 1) for v in box],
                    "size": round(max(sp["size"] for sp in spans), 1),
                    "bold": bold_chars / chars >= 0.6,
                    "italic": italic_chars / chars >= 0.6,
                    "lead": re.sub(r"\s+", " ", lead).strip(),
                }
            )
    return lines


def _typeset_box(bbox: Any, spans: list[dict[str, Any]]) -> list[float]:
    """A typeset line's box, its height that of its type: a glyph whose box runs far above and below
    its line (a math font's "Ω" in "overstrength factor, Ω, is greater than", boxed 50 pt high on a
    9 pt line) is measured from its baseline, by its font's ascender and descender, so the line is
    not read as level with the lines above and below it (UFC 3-301-01 Table 3-1's note b. had been
    read into note a.'s row). Lines without such a glyph keep their box; so does a line set at an angle
    (:func:`_level`), whose box is as tall as its text is long."""
    if not any(_tall(sp) for sp in spans):
        return list(bbox)
    tops, bottoms = [], []
    for sp in spans:
        if _tall(sp):
            base, size = sp["origin"][1], sp["size"]
            tops.append(base - sp.get("ascender", 0.8) * size)
            bottoms.append(base - sp.get("descender", -0.2) * size)
        else:
            tops.append(sp["bbox"][1])
            bottoms.append(sp["bbox"][3])
    return [bbox[0], min(tops), bbox[2], max(bottoms)]


def _level(line: dict[str, Any]) -> bool:
    """A line written left to right along the page (not a column head turned upright)."""
    dx, dy = line.get("dir", (1.0, 0.0))
    return dx > 0.99 and abs(dy) < 0.01


def _tall(span: dict[str, Any]) -> bool:
    """A span boxed over half as high again as its font's ascender to descender at its size."""
    height = span["bbox"][3] - span["bbox"][1]
    return span["size"] > 0 and height > TALL_GLYPH * span["size"] * (
        span.get("ascender", 0.8) - span.get("descender", -0.2)
    )


def _split_bands(lines: list[dict[str, Any]], rect: Any) -> tuple[list[dict[str, Any]], ...]:
    """Running header, footer and body of a page, by position: short lines in the top and bottom
    bands (with the lines stacked right against them), and printed page numbers there. The bands are
    measured on the page's longer side: a page turned to landscape in a portrait document keeps its
    running lines as far from the paper's edge as the other pages do."""
    height = max(rect.height, rect.width)
    top, bottom = rect.y0 + RUNNING_BAND * height, rect.y1 - RUNNING_BAND * height
    header: list[dict[str, Any]] = []
    footer: list[dict[str, Any]] = []
    body: list[dict[str, Any]] = []
    for ln in sorted(lines, key=lambda ln: (ln["bbox"][1], ln["bbox"][0])):
        y0, y1 = ln["bbox"][1], ln["bbox"][3]
        text = ln["text"]
        if (
            y1 < top
            and len(text) < 70
            or (y1 < rect.y0 + 0.095 * height and re.search(r"\b(EN|BS|ISO)\s?\d", text) and len(text) < 40)
            or (
                y1 < rect.y0 + 0.12 * height
                and len(text) < 70
                and any(h["bbox"][3] > y0 - 6 for h in header)  # a header block of several lines
            )
            or (y1 < rect.y0 + 0.1 * height and PAGE_NUMBER.match(text) and not _opens_paragraph(ln, lines))
            or (y1 < rect.y0 + 0.2 * height and _PAGE_LABEL.match(text))
        ):
            header.append(ln)
        elif (
            y0 > bottom
            and len(text) < 40
            and not (PAGE_NUMBER.match(text) and _opens_paragraph(ln, lines))
            or (y0 > rect.y1 - 0.1 * height and PAGE_NUMBER.match(text) and not _opens_paragraph(ln, lines))
            or (y0 > rect.y1 - 0.2 * height and _PAGE_LABEL.match(text))  # "Page 37" says what it is
        ):
            footer.append(ln)
        else:
            if y1 < rect.y0 + 0.12 * height:
                ln["band"] = "top"
            elif y0 > rect.y1 - 0.1 * height:
                ln["band"] = "bottom"
            body.append(ln)
    return header, footer, body


def _opens_paragraph(line: dict[str, Any], lines: list[dict[str, Any]]) -> bool:
    """``line`` (a bare number) opens a paragraph: running text stands on its baseline and runs on
    into the line right below it. A page number beside a running title has no such line below."""
    for other in lines:
        if other is line or len(other["text"]) < 40 or _overlap_y(line["bbox"], other["bbox"]) <= 0.5:
            continue
        top, height = other["bbox"][1], other["bbox"][3] - other["bbox"][1]
        if any(
            below is not other
            and 0.5 * height < below["bbox"][1] - top <= 1.6 * height
            and _overlap_x(below["bbox"], other["bbox"]) > 0.5
            for below in lines
        ):
            return True
    return False


def _label(line: dict[str, Any]) -> bool:
    """A drawing's label ("3", "1", "A"), not a line of text (a mark alone, "✓" or "■", is not one: it
    belongs to the item beside it)."""
    return re.fullmatch(r"[A-Za-z0-9]{1,3}", line["text"]) is not None


def _gutter(lines: list[dict[str, Any]], labels: bool = False) -> float | None:
    """The x of a column gutter: a vertical strip no line crosses (full-width titles and tables
    aside), with text columns on both sides that stand side by side; a table's rows (three or more
    pieces on a baseline) and, with ``labels``, a drawing's labels are not counted. None on a
    one-column page."""
    lines = [ln for ln in lines if not (labels and _label(ln))]
    # Rows of three or more pieces on one baseline, one after another, are a table's (under the
    # columns, or in one): its short cells on both sides would make neither side a column of text.
    # Two columns put at most two lines on a baseline, one each. A table whose cells wrap (rows of
    # one or two pieces between) stays: its left cells would pass for a column.
    rows = _rows(lines)
    wide = [len(row) >= 3 for row in rows]
    table = [w and ((k > 0 and wide[k - 1]) or (k + 1 < len(rows) and wide[k + 1])) for k, w in enumerate(wide)]
    lines = [ln for row, t in zip(rows, table, strict=True) if not t for ln in row]
    if len(lines) < 6:
        return None
    x0, x1 = min(ln["bbox"][0] for ln in lines), max(ln["bbox"][2] for ln in lines)
    width = x1 - x0
    if width < 200:
        return None
    beside: list[int] = []  # the x where the two sides stand side by side as columns of text
    for x in range(int(x0 + 0.12 * width), int(x1 - 0.12 * width), 2):
        left = [ln for ln in lines if ln["bbox"][2] <= x + 1]
        right = [ln for ln in lines if ln["bbox"][0] >= x - 1]
        crossing = len(lines) - len(left) - len(right)
        if crossing <= 0.3 * len(lines) and _column_like(left) and _column_like(right):
            ly = (min(ln["bbox"][1] for ln in left), max(ln["bbox"][3] for ln in left))
            ry = (min(ln["bbox"][1] for ln in right), max(ln["bbox"][3] for ln in right))
            if min(ly[1], ry[1]) - max(ly[0], ry[0]) > 20:  # side by side, not one above the other
                beside.append(x)
    runs = [r for r in _stretches(beside) if r[1] - r[0] >= 6]
    if not runs:
        return None
    best = max(runs, key=lambda r: r[1] - r[0])
    # the middle of the stretch that the fewest lines of the left column reach into (its longest lines
    # may end inside the run; a line that starts inside it, a footer set off-centre, does not count)
    crossed = {
        x: sum(1 for ln in lines if ln["bbox"][0] < best[0] - 1 and ln["bbox"][2] > x + 1)
        for x in range(best[0], best[1] + 1, 2)
    }
    fewest = min(crossed.values())
    low, high = max(_stretches([x for x, n in crossed.items() if n == fewest]), key=lambda r: r[1] - r[0])
    return (low + high) / 2


def _stretches(xs: list[int]) -> list[tuple[int, int]]:
    """Runs of consecutive even steps in the ascending ``xs``: (first, last) of each."""
    out: list[tuple[int, int]] = []
    for x in xs:
        if out and out[-1][1] == x - 2:
            out[-1] = (out[-1][0], x)
        else:
            out.append((x, x))
    return out


def _column_like(lines: list[dict[str, Any]]) -> bool:
    """Lines that make a column of text: a few of them, a real width, and most of them filling it
    (a list of symbols or a table's first column is not a column)."""
    if len(lines) < 2:
        return False
    extent = max(ln["bbox"][2] for ln in lines) - min(ln["bbox"][0] for ln in lines)
    widths = sorted(ln["bbox"][2] - ln["bbox"][0] for ln in lines)
    median = widths[len(widths) // 2]
    words = sum(len(ln["text"].split()) for ln in lines)
    return extent >= 70 and median >= 0.45 * extent and words >= 3 * len(lines)


def reading_groups(lines: list[dict[str, Any]], depth: int = 0, labels: bool = False) -> list[list[dict[str, Any]]]:
    """The page's lines in reading order, as groups: column by column between the full-width lines
    (titles, wide tables), which stay in place. One group on a one-column page. ``labels``: a line of
    one to three letters or digits is a drawing's label (a born-digital page: on a scan's text layer
    such a line is as often a table's value or a broken word), which neither makes nor breaks a
    column and goes with the side it mostly stands on."""
    gutter = _gutter(lines, labels) if depth < 2 else None
    if gutter is None:
        return [lines] if lines else []
    ordered = sorted(lines, key=lambda ln: (ln["bbox"][1], ln["bbox"][0]))
    groups: list[list[dict[str, Any]]] = []
    left: list[dict[str, Any]] = []
    right: list[dict[str, Any]] = []

    def flush() -> None:
        aside = _aside(left, right, labels)
        if aside is not None:
            main = right if aside is left else left
            groups.extend(g for part in _around_asides(main, aside) for g in reading_groups(part, depth + 1, labels))
        else:
            for side in (left, right):
                if side:
                    groups.extend(reading_groups(list(side), depth + 1, labels))
        left.clear()
        right.clear()

    for ln in ordered:
        label = labels and _label(ln)
        if ln["bbox"][2] <= gutter + 1 or (label and ln["bbox"][0] + ln["bbox"][2] < 2 * gutter):
            left.append(ln)
        elif ln["bbox"][0] >= gutter - 1 or label:
            right.append(ln)
        else:  # a full-width line: the columns above it are read first
            flush()
            if groups and groups[-1] and groups[-1][0].get("_wide"):
                groups[-1].append(ln)
            else:
                groups.append([ln])
            ln["_wide"] = True
    flush()
    for group in groups:
        for ln in group:
            ln.pop("_wide", None)
    return groups


def _aside(
    left: list[dict[str, Any]], right: list[dict[str, Any]], labels: bool = False
) -> list[dict[str, Any]] | None:
    """The side of a split that is a margin column of notes beside the text ("The underlying philosophy
    of current building codes is minimizing hazard to life." in a wide outer margin): less than half as
    wide as the other side, with fewer lines, none set as a heading (bold, larger, or numbered as a
    clause). None when the two sides are columns of text, or side-heads."""
    if not left or not right:
        return None

    def extent(side: list[dict[str, Any]]) -> float:
        return max(ln["bbox"][2] for ln in side) - min(ln["bbox"][0] for ln in side)

    narrow, wide = (left, right) if extent(left) < extent(right) else (right, left)
    if extent(narrow) >= 0.5 * extent(wide) or len(narrow) >= len(wide):
        return None
    body_size = sorted(ln.get("size", 0.0) for ln in wide)[len(wide) // 2]
    for ln in narrow:
        if labels and _label(ln):  # a drawing's label beside its caption
            continue
        if ln.get("bold") or ln.get("lead") or ln.get("size", 0.0) > body_size + 0.5 or _CLAUSE_START.match(ln["text"]):
            return None
    return narrow


_CLAUSE_START = re.compile(r"\(?[A-Z]?\d{1,4}(?:[.-]\d{1,3})+\)?\s")  # "2.1.3 ", "A.4 ", "2-1.1 "


def _around_asides(main: list[dict[str, Any]], aside: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The main column's lines with each block of margin notes read at the first paragraph break of the
    main column below the block's top, else before the paragraph it stands beside, else at the end of
    the page: a note does not cut a sentence of the text beside it, nor one running on from the page
    before or into the next."""
    main = sorted(main, key=lambda ln: ln["bbox"][1])
    pitches = sorted(b["bbox"][1] - a["bbox"][1] for a, b in zip(main, main[1:], strict=False))
    pitch = pitches[len(pitches) // 2] if pitches else 0.0
    breaks = [i for i in range(1, len(main)) if main[i]["bbox"][1] - main[i - 1]["bbox"][1] > 1.4 * pitch]
    blocks: list[list[dict[str, Any]]] = []
    for ln in sorted(aside, key=lambda ln: ln["bbox"][1]):
        if blocks and ln["bbox"][1] - blocks[-1][-1]["bbox"][3] < 0.8 * (ln["bbox"][3] - ln["bbox"][1]):
            blocks[-1].append(ln)
        else:
            blocks.append([ln])
    parts: list[list[dict[str, Any]]] = []
    start = 0
    for block in blocks:
        top = block[0]["bbox"][1]
        above = [i for i in breaks if i >= start and main[i]["bbox"][1] <= top]
        at = next((i for i in breaks if i >= start and main[i]["bbox"][1] > top), above[-1] if above else len(main))
        parts += [main[start:at], block]
        start = at
    parts.append(main[start:])
    return [part for part in parts if part]


def _rows_in_order(groups: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    return [row for group in groups for row in _rows(group)]


def _side_of(kind: str, caption: list[float], body: list[dict[str, Any]], drawn: list[Any], rect: Any) -> str:
    """Which side of its caption an object without a found region lies on: where the drawing or the
    blank band is, not where the running text goes on; tables below and figures above by default."""
    default = "below" if kind == "table" else "above"
    x0, x1 = caption[0] - 60, caption[2] + 60

    def near(r: Any) -> bool:
        return r.x1 >= x0 and r.x0 <= x1

    above = sum(1 for r in drawn if near(r) and caption[1] - 150 < r.y1 <= caption[1] + 4)
    below = sum(1 for r in drawn if near(r) and caption[3] - 4 <= r.y0 < caption[3] + 150)
    if above != below and (above == 0 or below == 0):
        return "above" if above > below else "below"

    def gap(direction: str) -> float:
        if direction == "above":
            ys = [
                ln["bbox"][3] for ln in body if ln["bbox"][3] <= caption[1] - 2 and _overlap_x(ln["bbox"], caption) > 0
            ]
            return caption[1] - max(ys, default=rect.y0)
        ys = [ln["bbox"][1] for ln in body if ln["bbox"][1] >= caption[3] + 2 and _overlap_x(ln["bbox"], caption) > 0]
        return min(ys, default=rect.y1) - caption[3]

    if kind == "figure" and gap("above") < 25 and gap("below") > 60:
        return "below"
    return default


# The opening of a figure's key: "Key", "Legend", or a symbol defined ("h is the ...", "[§) ho is
# the ..." where OCR misread "Key"), not a capitalised word ("It is the ...").
_KEY_OPENING = re.compile(
    r"^\s*(?:\S{1,4}\s+)?(?:Key|KEY|Legend|LEGEND)\b"
    r"|^\s*(?:\S{1,4}\s+)?(?![A-Z][a-z])[A-Za-z][A-Za-z0-9_,']{0,3}\s+(?:is|are)\s+(?:the|a|an)\b"
)


def _over_key(box: list[float], caption: list[float], body: list[dict[str, Any]]) -> list[float] | None:
    """A figure's region ``box`` grown down to its caption over the key printed between them ("h is
    the clearance ...; the recommended value of h0 is 5,0 m"), whose lines are then the figure's,
    not the clause's; None when nothing stands between or what does is not a key: its first line
    opens no key, or a line opens a paragraph, a heading or a caption."""
    x0, x1 = min(box[0], caption[0]), max(box[2], caption[2])
    lines = [
        ln
        for ln in body
        if box[3] - 2 <= (ln["bbox"][1] + ln["bbox"][3]) / 2 <= caption[1]
        and ln["bbox"][2] >= x0
        and ln["bbox"][0] <= x1
        and ln["bbox"] != caption
    ]
    between = sorted((_merge_row(row) for row in _rows(lines)), key=lambda ln: ln["bbox"][1])
    if not between or not _KEY_OPENING.match(between[0]["text"]):
        return None
    if any(_PARAGRAPH_START.match(ln["text"]) or parse_caption(ln["text"]) or _heading_row(ln) for ln in between):
        return None
    return [
        min(x0, *(ln["bbox"][0] for ln in between)),
        box[1],
        max(x1, *(ln["bbox"][2] for ln in between)),
        caption[1] - 1,
    ]


def _keyed_picture(
    caption: list[float], free: list[dict[str, Any]], body: list[dict[str, Any]]
) -> tuple[int, list[float]] | None:
    """The picture nearest above a figure caption standing further off than a caption stands because
    its key is printed between them: its index in ``free`` and its region grown over the key."""
    best = None
    for i, r in enumerate(free):
        box = r["bbox"]
        gap = caption[1] - box[3]
        if r["class"] != "picture" or not 0 < gap <= 260 or _overlap_x(box, caption) <= 0 or box[3] - box[1] < 30:
            continue
        if (best is None or gap < best[2]) and (region := _over_key(box, caption, body)) is not None:
            best = (i, region, gap)
    return None if best is None else (best[0], best[1])


def _region_height_ok(region: list[float], caption: list[float]) -> bool:
    return region[3] - region[1] >= 30 and not (caption[1] - 4 <= region[1] and region[3] <= caption[3] + 4)


def _expression_crops(
    flow: list[dict[str, Any]], groups: list[list[dict[str, Any]]], rect: Any, drawn: list[Any] | None = None
) -> list[dict[str, Any]]:
    """Numbered expressions: the band of the page from the expression's line up to the text line
    above it (the formula itself is often a picture on a scan), across the column's text width, and
    down as far as the formula reaches (a number is set at the formula's middle) before the next line."""
    found = []
    for group in groups:
        g_lines = [ln for ln in group if ln in flow]
        if not g_lines:
            continue
        gx0 = min(ln["bbox"][0] for ln in g_lines)
        gx1 = max(ln["bbox"][2] for ln in g_lines)
        for ln in g_lines:
            number = expression_number(ln["text"])
            if number is None:
                continue
            y0, y1 = ln["bbox"][1], ln["bbox"][3]
            above = [o for o in g_lines if o["bbox"][3] <= y0 + 1 and not _same_band(o, ln)]
            # the formula's own text pieces (subscripts, fractions) overlap the line: skip them
            prose = [o for o in above if len(o["text"]) > 25 or not re.search(r"[=+/]", o["text"])]
            top = max([o["bbox"][3] for o in prose], default=y0 - 120)
            top = max(top, y0 - 220, rect.y0)
            pieces = [o for o in g_lines if o["bbox"][1] >= top - 1 and o["bbox"][1] < y1 + 2 and o["bbox"][3] > y1]
            below = [o["bbox"][1] for o in g_lines if o["bbox"][1] >= y1 - 1 and o not in pieces and o is not ln]
            limit = min(below, default=rect.y1) - 0.5
            bottom = max([y1 + 2, y1 + 0.8 * (y0 - top), *[o["bbox"][3] for o in pieces if o["bbox"][3] - y1 < 20]])
            for r in drawn or []:  # a formula set as a picture or drawn: all of it
                if r.x1 >= gx0 and r.x0 <= gx1 and r.y1 > top and r.y0 < limit:
                    bottom = max(bottom, r.y1 + 1)
            bottom = min(bottom, limit)
            found.append(
                {
                    "number": number,
                    "bbox": [round(gx0 - 4, 1), round(top + 0.5, 1), round(gx1 + 4, 1), round(bottom + 1, 1)],
                    "line": ln["text"],
                    "line_bbox": ln["bbox"],
                }
            )
    return found


TABLE_ROW_GAP = 36.0  # points of blank between a table's rows beyond which what follows is not the table


def _table_rows_below(region: list[float], body: list[dict[str, Any]], rect: Any) -> list[float]:
    """A table region the layout model drew over its column heads only (a scan's table whose rows it
    did not box): the rows set below it go on with it, down to the first paragraph, NOTE or heading
    that starts at the table's left edge or further left, a caption, a gap of ``TABLE_ROW_GAP`` or the
    page's foot, when at least two of them are rows of three or more cells set apart (prose is one
    piece a line). A NOTE or a "(1)" inside a column is a cell's text; a table's footnote is its own."""
    inside = [ln["bbox"][0] for ln in body if _inside(ln, region)]
    below = [ln for ln in body if ln["bbox"][1] >= region[3] - 2 and _overlap_x(ln["bbox"], region) > 0]
    rows = [_merge_row(r) for r in _rows(below)]
    left = min(inside, default=rows[0]["bbox"][0] if rows else region[0])
    bottom, right, x0, taken = region[3], region[2], region[0], []
    for row in rows:
        text, (a, top, b, end) = row["text"], row["bbox"]
        starts = (_PARAGRAPH_START.match(text) or _CLAUSE_START.match(text)) and a <= left + 4
        if (
            top - bottom > TABLE_ROW_GAP
            or end > rect.y1 - RUNNING_BAND * rect.height
            or parse_caption(text)
            or (starts and row.get("cells", 1) < 3)
        ):
            break
        taken.append(row)
        bottom, right, x0 = max(bottom, end), max(right, b), min(x0, a)
    if sum(row.get("cells", 1) >= 3 for row in taken) < 2:
        return region
    return [x0, region[1], right, bottom]


def _same_band(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return _overlap_y(a["bbox"], b["bbox"]) > 0.3


def _running_rows(rows: list[dict[str, Any]], rect: Any) -> list[dict[str, Any]]:
    """Rows of the top or bottom band that open or close with a page number ("12 | Title",
    "Title | A-4") and stand apart from the text above and below them: a running header or footer.
    A numbered paragraph opening low on the page ("46 If mobile gangs ...") runs on into the next
    row, so it stays text."""
    found = []
    for k, row in enumerate(rows):
        words = row["text"].split()
        if not words or len(row["text"]) > 120:
            continue
        ends = PAGE_NUMBER.match(words[0]) or PAGE_NUMBER.match(words[-1]) or _LETTER_PAGE.fullmatch(words[-1])
        if not ends:
            continue
        above = rows[k - 1]["bbox"][3] if k else rect.y0
        below = rows[k + 1]["bbox"][1] if k + 1 < len(rows) else rect.y1
        apart = row["bbox"][1] - above >= 10 and below - row["bbox"][3] >= 10
        if apart and (row["bbox"][1] > rect.y0 + 0.9 * rect.height or row["bbox"][3] < rect.y0 + 0.1 * rect.height):
            found.append(row)
    return found


_LETTER_PAGE = re.compile(r"[A-Z]-\d{1,3}")


def _upright_unrotated(raw: dict[str, Any]) -> bool:
    """Most of the page's text runs left to right before the page's rotation is applied."""
    upright = turned = 0
    for block in raw["blocks"]:
        for line in block.get("lines", []):
            chars = sum(len(sp["text"].strip()) for sp in line["spans"])
            if abs(line["dir"][0]) > 0.9 and line["dir"][0] > 0:
                upright += chars
            else:
                turned += chars
    return upright > 2 * turned


def read_page(doc: pymupdf.Document, pno: int, *, crop: bool = True) -> dict[str, Any]:
    """Everything ingestion needs from one page; ``pno`` is 0-based, the result's page is 1-based."""
    t0 = time.perf_counter()
    with MUPDF_LOCK:
        page = doc[pno]
        raw = page.get_text("dict", flags=pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_PRESERVE_LIGATURES)
        if page.rotation and _upright_unrotated(raw):
            page.set_rotation(0)  # a landscape figure turned on a portrait page: its text reads unturned
        rect = page.rect
        has_image = bool(page.get_images(full=False))
        images = [pymupdf.Rect(info["bbox"]) for info in page.get_image_info()] if has_image else []
        # Text comes in unrotated coordinates; a landscape page (rotated 90) is read as it is shown.
        turn = page.rotation_matrix if page.rotation else None
    area = rect.width * rect.height
    scanned = any(r.width * r.height > 0.8 * area for r in images)  # text is an OCR layer over a picture
    typeset = not scanned and not _invisible_text(raw)  # not a scan's text layer (over a picture, or invisible)
    lines = _page_lines(raw, turn, typeset=typeset)
    header, footer, body = _split_bands(lines, rect)
    # A drawing's labels are read as such on a born-digital page only: a scan's text layer (over a
    # picture, or set invisible over one) has a table's values and OCR's broken words as short lines.
    groups = reading_groups(body, labels=typeset)

    candidates = []
    all_rows = _rows_in_order(groups)
    for row in [] if _is_list_page([_merge_row(r) for r in all_rows]) else all_rows:
        merged = _merge_row(row)
        parsed = parse_caption(merged["text"])
        side_by_side = [(p, ln) for ln in row if (p := parse_caption(ln["text"]))]
        if len(side_by_side) > 1:  # "Figure 2 ..." and "Figure 3 ..." under two pictures side by side
            candidates += side_by_side
            continue
        if parsed:
            candidates.append((parsed, merged))
            continue
        for k, ln in enumerate(row):  # rotated pages: a caption line shares its "row" with the figure's labels
            parsed = parse_caption(ln["text"])
            if parsed and not parsed[2] and k + 1 < len(row):  # "Table 8.1 -" | "Depth of the deck": one caption
                rest = _merge_row(row[k:])
                with_title = parse_caption(rest["text"])
                if with_title and rest["bbox"][2] - ln["bbox"][2] < 400:
                    parsed, ln = with_title, rest
            if parsed:
                candidates.append((parsed, ln))

    objects: list[dict[str, Any]] = []
    title_lines: list[list[float]] = []
    layout_s = 0.0
    captions: list[tuple[tuple[str, str, str], dict[str, Any]]] = []
    # The layout model (~0.2 s a page) runs only where a figure caption needs its drawing found; a
    # table's OCR rows already say where it is (from its caption down to the next paragraph).
    regions: list[dict[str, Any]] = []
    if any(_strong(c, body) for c in candidates if c[0][0] == "figure"):
        t1 = time.perf_counter()
        with MUPDF_LOCK:
            regions = _layout_regions(page)
        if turn is not None:
            for r in regions:
                r["bbox"] = list(pymupdf.Rect(r["bbox"]) * turn)
        layout_s = time.perf_counter() - t1
    boxes = [r["bbox"] for r in regions if r["class"] == "caption"]
    objects_found = [r["bbox"] for r in regions if r["class"] in ("table", "picture")]
    for (kind, number, title), cap in candidates:
        confirmed = any(_overlap_y(b, cap["bbox"]) > 0.3 and _overlap_x(b, cap["bbox"]) > 0 for b in boxes)
        # A bare "Figure C.2" line (no title, no full stop) beside a figure the model found.
        beside = (
            not title
            and not cap["text"].rstrip().endswith(".")
            and any(_distance(kind, cap["bbox"], b) < 80 for b in objects_found)
        )
        titled_below = kind == "table" and not regions and _titled_below(cap, body)
        if confirmed or beside or titled_below or parse_caption(cap["text"], strict=True):
            twin = next((i for i, c in enumerate(captions) if c[0][:2] == (kind, number)), None)
            if twin is None:
                captions.append(((kind, number, title), cap))
            elif _read_into(captions[twin][1], body) and not _read_into(cap, body):
                captions[twin] = ((kind, number, title), cap)  # the first was a sentence naming it
            # else the same caption twice on a page (a label repeated): the first one
    drawings: list[pymupdf.Rect] = []
    vectors = 0
    if captions or crop or not scanned:
        with MUPDF_LOCK:  # born-digital pages draw figures and table rules as vector paths
            drawings = [
                pymupdf.Rect(d["rect"])
                for d in page.get_drawings()
                if d["rect"].width * d["rect"].height < 0.5 * area  # no page frames
                and not (d.get("type") == "f" and min(d.get("fill") or (0,)) > 0.97)  # nor white paper
            ]
        vectors = len(drawings)
        drawings += [r for r in images if r.width * r.height < 0.8 * area]  # pictures, not the scan itself
        if turn is not None:
            drawings = [r * turn for r in drawings]
    free = [r for r in regions if r["class"] in ("table", "picture")]
    for (kind, number, title), cap in captions:
        want = "table" if kind == "table" else "picture"
        scored = sorted(
            (_distance(kind, cap["bbox"], r["bbox"]) + (0 if r["class"] == want else 50), i) for i, r in enumerate(free)
        )
        region = None
        if scored and scored[0][0] < 80 and _region_height_ok(free[scored[0][1]]["bbox"], cap["bbox"]):
            region, source = free.pop(scored[0][1])["bbox"], "layout"
            if kind == "figure" and region[3] <= cap["bbox"][1]:
                region = _over_key(region, cap["bbox"], body) or region
        elif kind == "figure" and (keyed := _keyed_picture(cap["bbox"], free, body)) is not None:
            del free[keyed[0]]
            region, source = keyed[1], "layout"
        if region is None:
            column = _column_of(cap["bbox"], groups, rect)
            side = _side_of(kind, cap["bbox"], body, drawings, rect)
            region, source = _fallback_region(kind, cap["bbox"], body, rect, side, column, drawings), "estimate"
            chain = _drawn_chain(cap["bbox"], drawings, side, cap["bbox"][0], cap["bbox"][2])
            if kind == "figure" and chain is not None and chain.height > 30:
                source = "drawn"  # the drawing or picture next to the caption, as it is
        if kind == "table" and region[1] >= cap["bbox"][1]:
            region = _table_rows_below(region, body, rect)
        if title:
            height = cap["bbox"][3] - cap["bbox"][1]
            wrap = [
                ln
                for ln in body
                if -0.2 * height <= ln["bbox"][1] - cap["bbox"][3] < 0.4 * height
                and ln["bbox"][0] <= cap["bbox"][2]
                and ln["bbox"][2] >= cap["bbox"][0]
                and ln["bbox"] != cap["bbox"]
                and ln.get("size", 0) <= cap.get("size", 0) + 0.5  # a scan's sizes differ by a few tenths
                and not parse_caption(ln["text"])
                and not _PARAGRAPH_START.match(ln["text"])
                and len(ln["text"]) < 90
            ]
            starts = [
                cap["bbox"][0],
                *[ln["bbox"][0] for ln in body if _same_band(ln, cap) and ln["bbox"] != cap["bbox"]],
            ]
            if (
                len(wrap) == 1
                and "size" in cap
                and (
                    # aligned with the caption's words, set no larger
                    (
                        any(abs(wrap[0]["bbox"][0] - x) < 6 for x in starts)
                        and wrap[0].get("size", 0) <= cap["size"] + 0.1
                    )
                    or _centred_run_on(wrap[0], cap, body)  # or set centred under it, going on in lower case
                    or _carried_on(wrap[0], cap)  # or carrying on the words the caption's line broke off
                )
                and not any(  # not a table's row (a caption beside this one is not in its way)
                    _same_band(ln, wrap[0]) and ln is not wrap[0] and _overlap_x(ln["bbox"], cap["bbox"]) > -20
                    for ln in body
                )
            ):  # the title wrapped onto the next line
                title = f"{title} {wrap[0]['text']}"
                title_lines.append(wrap[0]["bbox"])
                w = wrap[0]["bbox"]
                union = [
                    min(cap["bbox"][0], w[0]),
                    cap["bbox"][1],
                    max(cap["bbox"][2], w[2]),
                    max(cap["bbox"][3], w[3]),
                ]
                cap = {**cap, "text": cap["text"] + " " + wrap[0]["text"], "bbox": union}
        if not title:
            below = sorted(
                (
                    ln
                    for ln in body
                    if 0 <= ln["bbox"][1] - cap["bbox"][3] < 20 and _overlap_x(ln["bbox"], cap["bbox"]) > 0
                ),
                key=lambda ln: (ln["bbox"][1] // 4, ln["bbox"][0]),
            )
            if below and not parse_caption(below[0]["text"]) and len(below[0]["text"]) < 120:
                title = below[0]["text"]
                title_lines.append(below[0]["bbox"])
                cap = {"text": cap["text"] + " " + title, "bbox": cap["bbox"]}
        heading = _heading_in(region, cap, body, alone=len(captions) == 1) if not title and kind == "figure" else None
        if heading is not None:
            title = heading["text"].strip()
            title_lines.append(heading["bbox"])
            cap = {**cap, "text": cap["text"] + " " + title}
        objects.append(
            {
                "kind": kind,
                "number": number,
                "title": _MARK_TAIL.sub("", title),
                "caption": cap["text"],
                "caption_bbox": cap["bbox"],
                "bbox": [round(v, 1) for v in region],
                "region": source,
                "reads_on": _read_into(cap, body),  # a sentence naming it at a line's start, maybe
            }
        )
    # A table owns the lines of its box grown to the rules drawn round it (its left cells, outside a
    # box estimated from its caption, stayed in the clause text before); a figure those of its box as
    # found (a drawn line beside it is no reason to take the text beside that from the clauses).
    owned: dict[int, list[float]] = {}
    for obj in objects:
        grown = _grown_to_rules(obj["bbox"], drawings[:vectors] if obj["region"] != "drawn" else [], obj["kind"], rect)
        owned[id(obj)] = grown if obj["kind"] == "table" else obj["bbox"]
        obj["bbox"] = grown
    # A figure's NOTEs between its drawing and its caption under it are the figure's, not the clause's.
    noted: dict[int, dict[str, Any]] = {}
    for obj in objects:
        box, cap = obj["bbox"], obj["caption_bbox"]
        found_below = obj["region"] != "estimate" and box[1] >= cap[3] - 2 and box[3] - box[1] > 30
        if obj["kind"] == "figure" and not found_below:  # a drawing found under its caption has none
            column = _column_of(cap, groups, rect) or (rect.x0 + 40, rect.x1 - 40)
            for ln in notes_over_caption(cap, column, body, None if obj["region"] == "estimate" else box):
                noted.setdefault(id(ln), obj)
    # Assign lines: object bodies leave the running text; caption lines stay as anchors.
    flow = []
    for ln in body:
        if ln["bbox"] in title_lines:
            continue
        if id(ln) in noted:
            noted[id(ln)].setdefault("notes", []).append(ln)
            continue
        owner = next((o for o in objects if o["caption_bbox"] != ln["bbox"] and _inside(ln, owned[id(o)])), None)
        if owner is not None and _inside(ln, owner["caption_bbox"]):
            owner = None  # a piece of the caption row
        if owner is not None:
            owner.setdefault("lines", []).append(ln)
        if owner is None or (owner["region"] in ("estimate", "drawn") and owner["kind"] == "figure"):
            flow.append(ln)  # the band above an unfound figure may hold clause text: keep it there too
    for obj in objects:
        obj_lines = obj.pop("lines", [])
        if obj["kind"] == "table":
            cells, notes = table_footnotes(table_rows(obj_lines))
            more, cells = caption_run_on(obj["title"], cells)
            if more:  # the clause keeps the caption's first line, where merge-sections finds it
                obj["title"], obj["caption"] = f"{obj['title']} {more}", f"{obj['caption']} {more}"
            obj["rows"] = cells
            obj["body"] = "\n".join([rows_to_markdown(cells), *notes])
        else:
            notes = [  # a row's pieces left to right; pieces that start together (OCR's overlaps) top down
                " ".join(ln["text"] for ln in sorted(r, key=lambda ln: (round(ln["bbox"][0] / 6), ln["bbox"][1])))
                for r in _rows(obj.pop("notes", []))
            ]
            obj["body"] = "\n".join([" ".join(_merge_row(r)["text"] for r in _rows(obj_lines)), *notes]).strip("\n")
        if crop:
            box = pymupdf.Rect(obj["bbox"]) | pymupdf.Rect(obj["caption_bbox"])
            with MUPDF_LOCK:
                pix = page.get_pixmap(clip=box & rect, dpi=crop_dpi(box & rect), colorspace=pymupdf.csGRAY)
                obj["png"] = pix.tobytes("png")
    in_flow = {id(ln) for ln in flow}
    flow_groups = [[ln for ln in g if id(ln) in in_flow] for g in groups]
    # A drawn table's wrapped cells read as its rows (a captioned table's lines are its object's already),
    # only where rules are drawn and a baseline holds cells set apart: the finder costs about 0.2 s a page.
    tables_failed = False
    if (
        not scanned
        and vectors
        and not _invisible_text(raw)
        and any(len(r) > 1 and "cells" in _merge_row(r) for r in _rows_in_order(flow_groups))
    ):
        with MUPDF_LOCK:
            found = drawn_tables(page, turn)
        tables_failed = found is None
        boxes = [o["bbox"] for o in objects]
        spans = [(t, _union(t)) for t in found or []]
        tables = [t for t, u in spans if not any(_overlap_x(u, b) > 0 and _overlap_y(u, b) > 0 for b in boxes)]
        rebuilt = cell_rows(tables, flow)
        first_of = {id(flow[min(m, key=lambda i: flow[i]["bbox"][1::-1])]): row for row, m in rebuilt}
        gone = {id(flow[i]) for _, m in rebuilt for i in m} - set(first_of)
        flow = [first_of.get(id(ln), ln) for ln in flow if id(ln) not in gone]
        flow_groups = [[first_of.get(id(ln), ln) for ln in g if id(ln) not in gone] for g in flow_groups]
    if not drawings and images:
        drawings = [r for r in images if r.width * r.height < 0.8 * area]
    expressions = _expression_crops(flow, flow_groups, rect, drawings)
    if crop:
        for expr in expressions:
            with MUPDF_LOCK:
                clip = pymupdf.Rect(expr["bbox"]) & rect
                pix = page.get_pixmap(clip=clip, dpi=crop_dpi(clip), colorspace=pymupdf.csGRAY)
                expr["png"] = pix.tobytes("png")
    rows = [_merge_row(r) for r in _rows_in_order(flow_groups)]
    for running in _running_rows(rows, rect):  # "FEMA P-58-6 | A: Appendix title | A-4" on one baseline
        rows.remove(running)
        (header if running["bbox"][3] < rect.y0 + 0.5 * rect.height else footer).append(running)
    page_label = next((ln["text"] for ln in footer + header if PAGE_NUMBER.match(ln["text"].strip())), None)
    if page_label:
        page_label = re.sub(r"(?i)^page\s+|\s+of\s+\d+$", "", page_label.strip()).strip(" -\u2013")
    return {
        "page": pno + 1,
        "lines": rows,
        "header": [ln["text"] for ln in header],
        "footer": [ln["text"] for ln in footer],
        "label": page_label,
        "objects": objects,
        "expressions": expressions,
        "has_text": bool(lines),
        "has_image": has_image,
        "scanned": scanned,
        "columns": len(groups) > 1,
        "tables_failed": tables_failed,
        "layout_s": round(layout_s, 4),
        "seconds": round(time.perf_counter() - t0, 4),
    }


def _heading_in(
    region: list[float], cap: dict[str, Any], body: list[dict[str, Any]], *, alone: bool
) -> dict[str, Any] | None:
    """A bare "Figure C.2" caption's title printed as a heading over the figure instead (a map's
    "Alpine Region: Snow Load at Sea Level" at twice the caption's size, the caption alone at the
    foot): the topmost line set at least half as large again as the caption, of two or more words
    and mostly letters, inside the figure, or above the caption anywhere on a page with no other
    caption (the layout model may find only the map's legend). A label inside a drawing is set no
    larger than the caption or is a word or a number ("W*E", "N"); a chapter's heading names itself."""
    size = cap.get("size") or 0
    found = [
        ln
        for ln in body
        if size
        and ln.get("size", 0) >= 1.5 * size
        and len(re.findall(r"[A-Za-z]{3,}", ln["text"])) >= 2
        and sum(c.isalpha() for c in ln["text"]) >= 0.6 * len(ln["text"].replace(" ", ""))
        and len(ln["text"]) < 120
        and not parse_caption(ln["text"])
        and not _PARAGRAPH_START.match(ln["text"])
        and not _DIVISION_HEADING.match(ln["text"])
    ]
    inside = [ln for ln in found if _inside(ln, region)]
    if not inside and alone:
        inside = [ln for ln in found if ln["bbox"][3] <= cap["bbox"][1]]
    return min(inside, key=lambda ln: ln["bbox"][1], default=None)


def _column_of(box: list[float], groups: list[list[dict[str, Any]]], rect: Any) -> tuple[float, float] | None:
    """The x-extent of the text column a caption stands in; None on a one-column page."""
    if len(groups) < 2:
        return None
    for group in groups:
        gx0, gx1 = min(ln["bbox"][0] for ln in group), max(ln["bbox"][2] for ln in group)
        if len(group) > 1 and gx0 - 4 <= box[0] and box[2] <= gx1 + 4 and gx1 - gx0 < 0.7 * rect.width:
            return gx0, gx1
    return None


# ---- page workers in processes: MuPDF and the layout model hold the GIL, so threads cannot share
# the two cores; a small pool of spawned processes can (each opens the PDF once and keeps it).
_POOL = WorkerPool()


def _extract_in_worker(path: str, pno: int, crop: bool) -> dict[str, Any]:
    return read_page(worker_document(path), pno, crop=crop)


def read_page_pooled(path: str, pno: int, *, crop: bool, processes: int) -> dict[str, Any]:
    """:func:`read_page` in one of ``processes`` worker processes (in this process when <= 1, or
    when worker processes cannot start, e.g. from a script without a ``__main__`` guard)."""
    if processes <= 1 or _POOL.broken:
        return read_page(open_pdf(path), pno, crop=crop)
    try:
        return _POOL.get(processes).submit(_extract_in_worker, path, pno, crop).result()
    except BrokenProcessPool:
        _POOL.mark_broken()
        return read_page_pooled(path, pno, crop=crop, processes=1)
    except Exception as exc:  # a page MuPDF cannot read: one line, not the worker's traceback
        first = (str(exc).strip().splitlines() or [""])[0][:160]
        raise PageError(f"{Path(path).name}: page {pno + 1} cannot be read ({type(exc).__name__}: {first})") from None


class PageError(ValueError):
    """A page that cannot be extracted; the message is one line for the user."""


def extract_page(state: PageTask) -> dict[str, Any]:
    """One page of the file, as one Send's worker: its state is the page's task, not the graph's."""
    page = read_page_pooled(state["path"], state["pno"], crop=state["crop"], processes=state["processes"])
    return {"page_results": [page]}
