"""Generator of a small, ORIGINAL and fictional code-of-practice PDF.

The document imitates the layout of a Eurocode part (running header, numbered
sections and clauses, "(1)P" paragraphs, NOTEs, symbols list, definitions,
numbered expression, ruled tables with captions above, a figure with caption
below and an informative annex) so that the ingestion pipeline can be tested
without shipping any copyrighted standard.  All wording is written for this
project; the subject ("leaf loads on garden structures") is invented.

Public API::

    write_sample_pdf(path, *, scanned=False, designation="EN 1991-9-9", year=2025)

``scanned=True`` produces a "scanned-style" file: every page is a single
150 dpi grayscale image of the born-digital page plus an invisible
(``render_mode=3``) OCR-like text layer placed at the original text positions.
Tables and the figure then exist only as pixels, as in old scanned standards.

The output is deterministic (fixed metadata, no timestamps, fixed file ID).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pymupdf

__all__ = ["write_sample_pdf", "SAMPLE_TITLE", "PAGE_WIDTH", "PAGE_HEIGHT"]

PAGE_WIDTH = 595
PAGE_HEIGHT = 842

LEFT = 70.0
RIGHT = 525.0
TEXT_WIDTH = RIGHT - LEFT
TOP = 80.0  # first body baseline
BOTTOM = 772.0  # last allowed body baseline
HEADER_Y = 40.0
FOOTER_Y = 810.0

FONT_SIZE = 11.0
LEADING = 14.0
PARA_GAP = 5.0
MAX_CHARS = 90
SYMBOL_X = LEFT + 45.0
EXPR_X = LEFT + 40.0
DASH = "\u2014"  # em dash, rendered fine by the built-in Helvetica (Nimbus Sans)

SAMPLE_TITLE = (
    "Eurocode 1: Actions on structures - Part 9-9: General actions - "
    "Loads on garden structures (clausewise sample, fictional)"
)
SCAN_DPI = 150

_FIXED_DATE = "D:20250101000000Z"

_fonts: dict[str, pymupdf.Font] = {}


def _font(bold: bool = False) -> pymupdf.Font:
    name = "hebo" if bold else "helv"
    if name not in _fonts:
        _fonts[name] = pymupdf.Font(name)
    return _fonts[name]


_advances: dict[tuple[bool, str], float] = {}


def _width(text: str, size: float = FONT_SIZE, bold: bool = False) -> float:
    """Text width in points (per-glyph advances cached; Font.text_length is slow)."""
    total = 0.0
    for ch in text:
        adv = _advances.get((bold, ch))
        if adv is None:
            adv = _advances[(bold, ch)] = _font(bold).text_length(ch, fontsize=1.0)
        total += adv
    return total * size


def _wrap(text: str, width: float = TEXT_WIDTH, size: float = FONT_SIZE) -> list[str]:
    """Greedy word wrap limited by both the printable width and MAX_CHARS."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and (_width(candidate, size) > width or len(candidate) > MAX_CHARS):
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


# --------------------------------------------------------------------------
# Content model
# --------------------------------------------------------------------------


@dataclass
class _Heading:
    text: str
    centred: bool = False
    bold: bool = True
    gap_before: float = 10.0


@dataclass
class _Para:
    text: str


@dataclass
class _Lines:
    """Lines written one per row, no wrapping (e.g. a list of references)."""

    lines: list[str]


@dataclass
class _Symbol:
    symbol: str
    meaning: str


@dataclass
class _Expression:
    formula: str
    number: str


@dataclass
class _Table:
    caption: str
    header: list[str]
    rows: list[list[str]]
    col_widths: list[float]
    footnotes: list[str]


@dataclass
class _Figure:
    caption: str
    height: float
    draw: Callable[[pymupdf.Page, pymupdf.Rect, _Writer], None]


@dataclass
class _PageBreak:
    pass


@dataclass
class _Space:
    height: float


# --------------------------------------------------------------------------
# Writer / layout engine
# --------------------------------------------------------------------------


class _Writer:
    def __init__(self, designation: str, year: int) -> None:
        self.doc = pymupdf.open()
        self.designation = designation
        self.year = year
        self.page: pymupdf.Page | None = None
        self.tw: pymupdf.TextWriter | None = None
        self.y = TOP
        self.page_no = 0

    # -- low level ---------------------------------------------------------
    def text(self, x: float, y: float, s: str, *, bold: bool = False, size: float = FONT_SIZE) -> None:
        assert self.tw is not None
        self.tw.append((x, y), s, font=_font(bold), fontsize=size)

    def text_right(self, x_right: float, y: float, s: str, *, bold: bool = False, size: float = FONT_SIZE) -> None:
        self.text(x_right - _width(s, size, bold), y, s, bold=bold, size=size)

    def text_centred(self, x_mid: float, y: float, s: str, *, bold: bool = False, size: float = FONT_SIZE) -> None:
        self.text(x_mid - _width(s, size, bold) / 2, y, s, bold=bold, size=size)

    def flush(self) -> None:
        if self.page is not None and self.tw is not None:
            self.tw.write_text(self.page)
        self.tw = None

    def new_page(self, *, running: bool = True) -> None:
        self.flush()
        self.page = self.doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
        self.tw = pymupdf.TextWriter(self.page.rect)
        self.page_no += 1
        self.y = TOP
        if running:
            self.text_right(RIGHT, HEADER_Y, f"{self.designation}:{self.year} (E)", size=10)
            self.text_centred(PAGE_WIDTH / 2, FOOTER_Y, str(self.page_no), size=10)

    def at_top(self) -> bool:
        return self.y <= TOP + 0.1

    def ensure(self, height: float) -> None:
        """Start a new page unless ``height`` points fit below the current line."""
        if self.y + height - LEADING > BOTTOM:
            self.new_page()

    # -- blocks ------------------------------------------------------------
    def heading(self, h: _Heading) -> None:
        if not self.at_top():
            self.y += h.gap_before
        self.ensure(LEADING * 3)  # keep with the next two lines
        if h.centred:
            self.text_centred(PAGE_WIDTH / 2, self.y, h.text, bold=h.bold)
        else:
            self.text(LEFT, self.y, h.text, bold=h.bold)
        self.y += LEADING + 3

    def para(self, p: _Para) -> None:
        for line in _wrap(p.text):
            self.ensure(LEADING)
            self.text(LEFT, self.y, line)
            self.y += LEADING
        self.y += PARA_GAP

    def lines(self, block: _Lines) -> None:
        for line in block.lines:
            assert len(line) <= MAX_CHARS, line
            self.ensure(LEADING)
            self.text(LEFT, self.y, line)
            self.y += LEADING
        self.y += PARA_GAP

    def symbol(self, s: _Symbol) -> None:
        self.ensure(LEADING)
        self.text(LEFT, self.y, s.symbol)
        self.text(SYMBOL_X, self.y, s.meaning)
        self.y += LEADING

    def expression(self, e: _Expression) -> None:
        self.y += 4
        self.ensure(LEADING)
        self.text(EXPR_X, self.y, e.formula)
        self.text_right(RIGHT, self.y, e.number)
        self.y += LEADING + 6

    def table(self, t: _Table) -> None:
        row_h = 18.0
        n_rows = 1 + len(t.rows)
        height = LEADING + 6 + n_rows * row_h + 8 + len(t.footnotes) * 12
        if not self.at_top():
            self.y += 6
        self.ensure(height)
        assert self.page is not None
        page = self.page
        self.text_centred(PAGE_WIDTH / 2, self.y, t.caption, bold=True)
        top = self.y + 8
        total_w = sum(t.col_widths)
        x0 = (PAGE_WIDTH - total_w) / 2
        xs = [x0]
        for w in t.col_widths:
            xs.append(xs[-1] + w)
        bottom = top + n_rows * row_h
        page.draw_rect(pymupdf.Rect(x0, top, xs[-1], bottom), color=(0, 0, 0), width=0.8)
        for x in xs[1:-1]:
            page.draw_line((x, top), (x, bottom), color=(0, 0, 0), width=0.5)
        for r in range(1, n_rows):
            y = top + r * row_h
            page.draw_line((x0, y), (xs[-1], y), color=(0, 0, 0), width=0.8 if r == 1 else 0.5)
        for r, row in enumerate([t.header, *t.rows]):
            base = top + r * row_h + 12.5
            for c, cell in enumerate(row):
                if c == 0:
                    self.text(xs[c] + 5, base, cell, bold=(r == 0))
                else:
                    self.text_centred((xs[c] + xs[c + 1]) / 2, base, cell, bold=(r == 0))
        y = bottom + 12
        for foot in t.footnotes:
            self.text(x0, y, foot, size=9)
            y += 12
        self.y = y + LEADING - 2

    def figure(self, f: _Figure) -> None:
        if not self.at_top():
            self.y += 6
        self.ensure(f.height + LEADING + 10)
        assert self.page is not None
        area = pymupdf.Rect(LEFT, self.y - 10, RIGHT, self.y - 10 + f.height)
        f.draw(self.page, area, self)
        self.y = area.y1 + 14
        self.text_centred(PAGE_WIDTH / 2, self.y, f.caption, bold=True)
        self.y += LEADING + 6

    def render(self, blocks: list[object]) -> None:
        for b in blocks:
            if isinstance(b, _Heading):
                self.heading(b)
            elif isinstance(b, _Para):
                self.para(b)
            elif isinstance(b, _Lines):
                self.lines(b)
            elif isinstance(b, _Symbol):
                self.symbol(b)
            elif isinstance(b, _Expression):
                self.expression(b)
            elif isinstance(b, _Table):
                self.table(b)
            elif isinstance(b, _Figure):
                self.figure(b)
            elif isinstance(b, _Space):
                self.y += b.height
            elif isinstance(b, _PageBreak):
                self.new_page()
            else:  # pragma: no cover - programming error
                raise TypeError(b)


# --------------------------------------------------------------------------
# Figure 5.1
# --------------------------------------------------------------------------


def _arrow_down(page: pymupdf.Page, x: float, y0: float, y1: float) -> None:
    page.draw_line((x, y0), (x, y1), color=(0, 0, 0), width=0.8)
    page.draw_polyline(
        [(x - 3, y1 - 6), (x, y1), (x + 3, y1 - 6)],
        color=(0, 0, 0),
        fill=(0, 0, 0),
        closePath=True,
        width=0.5,
    )


def _draw_figure_5_1(page: pymupdf.Page, area: pymupdf.Rect, w: _Writer) -> None:
    black = (0, 0, 0)
    # (a) left part: a shed with a slightly pitched roof and the leaf load on it
    gx0, gx1 = area.x0 + 20, area.x0 + 190
    ground = area.y0 + 150
    wall_l = (gx0 + 20, ground)
    wall_r = (gx1 - 20, ground)
    eave_l = (gx0 + 20, ground - 70)
    eave_r = (gx1 - 20, ground - 55)
    page.draw_line((gx0, ground), (gx1, ground), color=black, width=1.2)
    for i in range(9):  # hatching of the ground
        x = gx0 + 6 + i * 19
        page.draw_line((x, ground), (x - 6, ground + 6), color=black, width=0.5)
    page.draw_line(wall_l, eave_l, color=black, width=1.2)
    page.draw_line(wall_r, eave_r, color=black, width=1.2)
    page.draw_line((eave_l[0] - 8, eave_l[1] - 1.6), (eave_r[0] + 8, eave_r[1] + 1.6), color=black, width=1.6)
    page.draw_rect(pymupdf.Rect(gx0 + 75, ground - 40, gx0 + 95, ground), color=black, width=0.6)  # door
    # uniformly distributed leaf load: a band of arrows
    load_top = eave_l[1] - 40
    page.draw_line((eave_l[0], load_top), (eave_r[0], load_top), color=black, width=0.6)
    n = 6
    for i in range(n):
        x = eave_l[0] + i * (eave_r[0] - eave_l[0]) / (n - 1)
        y_roof = eave_l[1] + (eave_r[1] - eave_l[1]) * (x - eave_l[0]) / (eave_r[0] - eave_l[0])
        _arrow_down(page, x, load_top, y_roof - 3)
    w.text((eave_l[0] + eave_r[0]) / 2 - 30, load_top - 6, "s = \u03bc \u00b7 Ce \u00b7 sk", size=9)
    w.text(eave_r[0] + 6, eave_r[1] - 10, "\u03b1", size=10)
    w.text(gx0 + 40, ground + 22, "a) shed roof", size=9)

    # (b) right part: plot of mu against the roof pitch alpha
    px0, py0 = area.x0 + 265, area.y0 + 150  # origin
    pw, ph = 160.0, 110.0
    page.draw_line((px0, py0), (px0 + pw + 10, py0), color=black, width=0.8)  # alpha axis
    page.draw_line((px0, py0), (px0, py0 - ph - 10), color=black, width=0.8)  # mu axis
    page.draw_polyline([(px0 + pw + 4, py0 - 3), (px0 + pw + 10, py0), (px0 + pw + 4, py0 + 3)], color=black, width=0.8)
    page.draw_polyline([(px0 - 3, py0 - ph - 4), (px0, py0 - ph - 10), (px0 + 3, py0 - ph - 4)], color=black, width=0.8)

    def pt(alpha: float, mu: float) -> tuple[float, float]:
        return (px0 + alpha / 60.0 * (pw - 20), py0 - mu / 1.0 * (ph - 10))

    for a, label in ((0, "0\u00b0"), (30, "30\u00b0"), (60, "60\u00b0")):
        x, _ = pt(a, 0)
        page.draw_line((x, py0), (x, py0 + 4), color=black, width=0.6)
        w.text_centred(x, py0 + 15, label, size=9)
    for mu, label in ((0.8, "0,8"), (1.0, "1,0")):
        _, y = pt(0, mu)
        page.draw_line((px0 - 4, y), (px0, y), color=black, width=0.6)
        w.text_right(px0 - 6, y + 3, label, size=9)
    page.draw_line(pt(30, 0), pt(30, 0.8), color=black, width=0.4, dashes="[2 2] 0")
    page.draw_polyline([pt(0, 0.8), pt(30, 0.8), pt(60, 0.0)], color=black, width=1.6)
    w.text(px0 + pw + 12, py0 + 4, "\u03b1", size=10)
    w.text(px0 - 4, py0 - ph - 14, "\u03bc", size=10)
    x_lab, y_lab = pt(32, 0.86)
    w.text(x_lab, y_lab, "\u03bc", size=9)
    w.text(px0 + 30, py0 + 32, "b) shape coefficient", size=9)


# --------------------------------------------------------------------------
# The text of the sample (original wording, fictional content)
# --------------------------------------------------------------------------


def _body(designation: str) -> list[object]:
    H, P, S = _Heading, _Para, _Symbol
    return [
        # ---------------------------------------------------------- Section 1
        H("Section 1 General", gap_before=0),
        H("1.1 Scope"),
        P(
            "(1) This Part gives guidance for determining the values of leaf load to be used for "
            "the structural design of garden structures such as sheds, pergolas, carports and "
            "small greenhouses."
        ),
        P(
            "(2) Leaf load from fallen branches and from snow is not covered. For the snow load on "
            "the same roofs see EN 1991-1-3; for snow accumulations the method of ISO 4355 may be "
            "used."
        ),
        P(
            "(3)P Garden structures shall be designed for the leaf load defined in Section 5 in "
            "combination with the other actions and the basis of design given in EN 1990."
        ),
        P(
            "(4) The rules given in this Part assume that the leaves are removed from the roof at "
            "least once a year. Where this cannot be assumed, the values given in Annex A should "
            "be increased, see 4.1."
        ),
        P("NOTE: The National Annex may restrict the use of this Part to structures of consequence class CC1."),
        H("1.2 Normative references"),
        P(
            "(1) The following documents are referred to in the text in such a way that some or all "
            "of their content constitutes requirements of this document. For dated references, only "
            "the edition cited applies."
        ),
        _Lines(
            [
                "EN 1990  Eurocode - Basis of structural design",
                "EN 1991-1-1  Eurocode 1 - Actions on structures - Part 1-1: Densities and self-weight",
                "EN 1991-1-3  Eurocode 1 - Actions on structures - Part 1-3: Snow loads",
                "ISO 4355  Bases for design of structures - Determination of snow loads on roofs",
            ]
        ),
        H("1.3 Symbols"),
        P("(1) For the purposes of this Part, the following symbols apply."),
        S("s", "leaf load on the roof"),
        S("sk", "characteristic value of leaf load on the ground"),
        S("\u03bc", "shape coefficient"),
        S("Ce", "exposure coefficient"),
        S("\u03b1", "pitch of the roof, in degrees"),
        S("\u03c80", "factor for the combination value of a variable action"),
        S("\u03c82", "factor for the quasi-permanent value of a variable action"),
        _Space(PARA_GAP),
        P("NOTE: Further symbols are defined where they first occur, for example in Expression (5.1)."),
        H("1.4 Terms and definitions"),
        P("(1) For the purposes of this Part, the terms and definitions given in EN 1990 and the following apply."),
        H("1.4.1", bold=True, gap_before=2),
        H("leaf load", bold=True, gap_before=0),
        P(
            "load on a structure caused by the accumulation of fallen leaves, needles, blossom and "
            "similar organic debris, wet or dry"
        ),
        H("1.4.2", bold=True, gap_before=2),
        H("characteristic value of leaf load on the ground", bold=True, gap_before=0),
        P("leaf load on flat open ground near the site, with an annual probability of exceedance of 0,02, see 4.1"),
        H("1.4.3", bold=True, gap_before=2),
        H("garden structure", bold=True, gap_before=0),
        P(
            "light structure of low consequence placed in a private or public garden and not "
            "intended for permanent occupancy"
        ),
        H("1.5 Assumptions"),
        P("(1) The general assumptions given in EN 1990 apply."),
        P(
            "(2) Gutters, valleys and the areas behind parapets are assumed to be cleaned after each "
            "autumn. Where regular cleaning cannot be relied upon, the one-sided load arrangement "
            "defined in 5.2 should be checked with the full value of s on both sides of the ridge, "
            "and the value of the shape coefficient should be taken as shown in Figure 5.1 for a "
            "flat roof, whatever the actual pitch of the roof is. This assumption also applies to "
            "roofs covered with vegetation, where leaves are retained by the plants, and to roofs "
            "with solar panels or other equipment that prevents the leaves from sliding off."
        ),
        P(
            "(3) Leaf load is assumed to act together with the self-weight of the structure and with "
            "any permanent dead load of fixtures. The combination with the imposed load for "
            "maintenance is given in 5.2(3)."
        ),
        P(
            "(4) Values expressed in kN/m2 refer to the horizontal projection of the roof. The unit "
            "weight of wet leaves may be taken as 2,5 kN/m3 where a depth of leaves is measured."
        ),
        P("NOTE: The assumptions given above are also the basis of the values given in Table 4.1."),
        # ---------------------------------------------------------- Section 4
        _PageBreak(),
        H("Section 4 Ground values", gap_before=0),
        H("4.1 Characteristic values"),
        P(
            "(1)P The characteristic value of leaf load on the ground sk shall be taken as the value "
            "for the site under consideration, determined from records of at least ten autumns."
        ),
        P("NOTE: The National Annex may give a different value. The recommended value is 0,5."),
        P(
            "(2) Where no records are available, sk may be taken as 0,3 kN/m2 for open gardens and "
            "as 0,6 kN/m2 for gardens with trees taller than 5 m within a distance of 10 m. For "
            "light structures the reduced values given in Annex A may be used."
        ),
        P(
            "(3) Leaf load is a variable action. It should not be treated as part of the dead load "
            "of the structure, and it should be kept separate from the self-weight of the roof "
            "covering and from the imposed load, see 5.1(3)."
        ),
        P(
            "(4) Wet leaves weigh considerably more than dry leaves. The values given above include "
            "an allowance for saturation after rain and no further increase is needed."
        ),
        H("4.2 Other representative values"),
        P(
            "(1) The combination value and the quasi-permanent value of leaf load should be "
            "obtained with the \u03c8 factors given in Table 4.1 and the rules of EN 1990."
        ),
        P(
            "(2) The factors depend on the location of the structure. The recommended values are "
            "given in the following table."
        ),
        P("NOTE: The National Annex may give different values of \u03c80 and \u03c82."),
        _Table(
            caption=f"Table 4.1 {DASH} Recommended values of \u03c8 factors",
            header=["Location of the structure", "\u03c80", "\u03c82"],
            rows=[
                ["Open garden", "0,5", "0,0"],
                ["Garden with trees a)", "0,7", "0,2"],
                ["Woodland plot", "0,8", "0,4"],
            ],
            col_widths=[190, 80, 80],
            footnotes=["a) Trees taller than 5 m within a distance of 10 m from the structure."],
        ),
        P(
            "(3) For the combination of leaf load with the imposed load on roofs see 5.2(3). The "
            "factors given in Table 4.1 apply to all load arrangements defined in 5.2."
        ),
        P(
            "(4) For structures in a woodland plot the value of \u03c82 given in Table 4.1 should also "
            "be used for the check of deformations, see above."
        ),
        # ---------------------------------------------------------- Section 5
        # no page break: clause 5.1(2) runs over the page break (continuation test)
        H("Section 5 Loads on garden structures", gap_before=16),
        H("5.1 General"),
        P("(1)P The leaf load on the roof s shall be determined from Expression (5.1):"),
        _Expression("s = \u03bc \u00b7 Ce \u00b7 sk", "(5.1)"),
        P("where:"),
        S("\u03bc", "is the shape coefficient, see 5.3 and Figure 5.1;"),
        S("Ce", "is the exposure coefficient given in Table 5.1;"),
        S("sk", "is the characteristic value of leaf load on the ground, see 4.1."),
        _Space(PARA_GAP),
        P(
            "(2) The leaf load acts vertically and refers to the horizontal projection of the roof "
            "area. Expression (5.1) applies to roofs with a pitch not greater than 60\u00b0."
        ),
        P(
            "(3) The dead load of the roof, including the self-weight of gutters and fixings, should "
            "be taken from EN 1991-1-1. The imposed load on the roof should be taken from EN 1991-1-1 "
            "and combined with the leaf load as given in 5.2(3)."
        ),
        H("5.2 Load arrangements"),
        P("(1)P Both the uniform and the one-sided load arrangement shall be considered."),
        P(
            "(2) The uniform arrangement should be taken as the value of s from Expression (5.1) "
            "over the whole roof. For the one-sided arrangement, half of this value should be "
            "applied to the side of the roof that is less favourable."
        ),
        P(
            "(3) Leaf load need not be applied simultaneously with the imposed load on roofs that "
            "are not accessible except for normal maintenance, see EN 1991-1-1."
        ),
        P("NOTE: The National Annex may give a different rule. The rule given above is recommended."),
        P(
            "(4) The exposure coefficient Ce should be taken as 1,0 unless the site conditions are "
            "known. For known site conditions Ce may be taken from the following table."
        ),
        _Table(
            caption=f"Table 5.1 {DASH} Exposure coefficient Ce for different sites",
            header=["Topography", "Ce"],
            rows=[
                ["Windswept: open site with no shelter", "0,8"],
                ["Normal: some shelter from hedges or walls", "1,0"],
                ["Sheltered: enclosed garden below trees", "1,2"],
            ],
            col_widths=[260, 80],
            footnotes=[],
        ),
        P(
            "(5) Where the site lies between two rows of Table 5.1, the higher value of Ce should be "
            "used. For light structures see also Annex A."
        ),
        H("5.3 Shape coefficients"),
        H("5.3.1 General", gap_before=4),
        P(
            "(1) The shape coefficient \u03bc depends on the pitch \u03b1 of the roof, as shown in "
            "Figure 5.1. Leaves are assumed to slide off steeper roofs."
        ),
        P("(2) For roofs with a pitch greater than 60\u00b0, \u03bc may be taken as 0."),
        H("5.3.2 Flat roofs of sheds", gap_before=4),
        P(
            "(1) For flat and monopitch roofs of sheds with a pitch between 0\u00b0 and 30\u00b0 the "
            "shape coefficient should be taken as \u03bc = 0,8, as shown in Figure 5.1."
        ),
        _Figure(
            caption=f"Figure 5.1 {DASH} Shape coefficient for flat shed roofs",
            height=200,
            draw=_draw_figure_5_1,
        ),
        P(
            "(2) For a pitch between 30\u00b0 and 60\u00b0, \u03bc should be reduced linearly from 0,8 "
            "to 0, as shown in Figure 5.1."
        ),
        P(
            "(3) Where a parapet, a gutter board or a green roof prevents the leaves from sliding "
            "off, \u03bc should be taken as 0,8 for any pitch, see above and see 5.2(3) for the "
            "combination with the imposed load."
        ),
        P("NOTE 1: The values of \u03bc given in Figure 5.1 apply to clean roof coverings."),
        P("NOTE 2: For roofs with moss or rough coverings a value of 1,2 may be more appropriate."),
        # ---------------------------------------------------------- Annex A
        _PageBreak(),
        H("Annex A", centred=True, gap_before=0),
        H("(informative)", centred=True, bold=False, gap_before=0),
        H("Leaf loads on light garden structures", centred=True, gap_before=0),
        _Space(6),
        H("A.1 General"),
        P(
            "(1) This Annex gives simplified values for light structures such as pergolas, small "
            "greenhouses and tool sheds with a self-weight not greater than 0,5 kN/m2."
        ),
        P(
            "(2) The values given in this Annex are alternatives to those given in 4.1 and are not "
            "intended to be combined with the reductions for sheltered sites, see above."
        ),
        P("NOTE 1: The National Annex may decide whether this Annex may be used."),
        P("NOTE 2: For a greenhouse the glazing should also be checked for the imposed load during cleaning."),
        H("A.2 Values for light structures"),
        P(
            "(1) For light structures the characteristic value sk given in 4.1 may be reduced by "
            "20 %, but it should not be taken less than 0,3 kN/m2."
        ),
        P(
            "(2) For greenhouse roofs with a pitch of 24,0\u00b0 or more, the shape coefficient "
            "given in Figure 5.1 may be multiplied by 0,8."
        ),
        P(
            "(3) For a structure in a woodland plot (see Table 4.1) the reduction in A.2(1) should "
            "not be applied, and the exposure coefficient should be taken as the value given in "
            "Table 5.1 for sheltered sites."
        ),
        P(
            "(4) The design value of leaf load on a light structure should be combined with its dead "
            f"load according to EN 1990. For the symbols see 1.3 of {designation}."
        ),
    ]


def _cover(w: _Writer) -> None:
    w.new_page(running=False)
    w.text(LEFT, 110, "CLAUSEWISE SAMPLE DOCUMENT", bold=True, size=12)
    w.text_right(RIGHT, 110, f"{w.designation}:{w.year}", bold=True, size=16)
    w.page.draw_line((LEFT, 122), (RIGHT, 122), color=(0, 0, 0), width=1.0)  # type: ignore[union-attr]
    w.text(LEFT, 150, f"{w.designation}:{w.year}", bold=True, size=20)
    y = 200.0
    for line in (
        "Eurocode 1: Actions on structures -",
        "Part 9-9: General actions -",
        "Loads on garden structures",
        "(clausewise sample, fictional)",
    ):
        w.text(LEFT, y, line, bold=True, size=14)
        y += 20
    y += 30
    for line in _wrap(
        "This document is an original, fictional sample written for testing the clausewise "
        "ingestion pipeline. It imitates the layout of a European design code but it is not a "
        "standard and none of its values may be used for design."
    ):
        w.text(LEFT, y, line)
        y += LEADING
    w.page.draw_line((LEFT, 760), (RIGHT, 760), color=(0, 0, 0), width=0.5)  # type: ignore[union-attr]
    w.text(LEFT, 775, f"Ref. No. {w.designation}:{w.year} (E)", size=9)


def _foreword(w: _Writer) -> None:
    w.new_page()
    d = w.designation
    w.heading(_Heading("Foreword", gap_before=0))
    w.para(
        _Para(
            f"This document ({d}:{w.year}) has been prepared as a fictional example for the clausewise "
            "project. It follows the structure of the Eurocode parts: general rules in Section 1, "
            "ground values in Section 4, loads on structures in Section 5 and an informative annex."
        )
    )
    w.para(
        _Para(
            f"{d} is intended to be used together with EN 1990 and EN 1991-1-3. The leaf load defined "
            "here is a variable action."
        )
    )
    w.heading(_Heading(f"National annex for {d}"))
    w.para(
        _Para(
            "This standard gives values with notes indicating where national choices may be made. "
            "The National Annex may therefore contain alternative values."
        )
    )
    w.para(_Para(f"National choice is allowed in {d} through clauses:"))
    w.lines(_Lines(["4.1(1), 4.2(2), 5.2(3), Table 4.1"]))


# --------------------------------------------------------------------------
# Scanned-style conversion
# --------------------------------------------------------------------------


def _to_scanned(src: pymupdf.Document) -> pymupdf.Document:
    out = pymupdf.open()
    font = _font(False)
    for page_no in range(src.page_count):
        page = src[page_no]
        pix = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY, alpha=False)
        new = out.new_page(width=page.rect.width, height=page.rect.height)
        new.insert_image(new.rect, stream=pix.tobytes("jpeg", jpg_quality=80))
        # OCR layers use one plain font and stretch each text run horizontally to the
        # width of what was recognised (PDF "Tz").  Emulate that: write every span of the
        # original page at its origin in plain Helvetica, scaled in x so that it covers
        # the original (possibly bold) span.  Consecutive spans with the same scale share
        # one TextWriter, so the content-stream (= extraction) order stays the original.
        runs: list[tuple[float, pymupdf.TextWriter]] = []
        for block in page.get_text("dict")["blocks"]:
            for line in block.get("lines", []):
                for span in line["spans"]:
                    text = span["text"]
                    if not text.strip():
                        continue
                    plain = _width(text, span["size"])
                    scale = round((span["bbox"][2] - span["bbox"][0]) / plain, 3) if plain else 1.0
                    if abs(scale - 1.0) < 0.01:
                        scale = 1.0
                    if not runs or runs[-1][0] != scale:
                        runs.append((scale, pymupdf.TextWriter(new.rect)))
                    x, y = span["origin"]
                    runs[-1][1].append((x / scale, y), text, font=font, fontsize=span["size"])
        for scale, tw in runs:
            tw.write_text(new, render_mode=3, matrix=pymupdf.Matrix(scale, 1.0))
    return out


# --------------------------------------------------------------------------
# Public API
# --------------------------------------------------------------------------


def _build(designation: str, year: int) -> pymupdf.Document:
    w = _Writer(designation, year)
    _cover(w)
    _foreword(w)
    w.new_page()
    w.render(_body(designation))
    w.flush()
    return w.doc


def write_sample_pdf(
    path: str | Path,
    *,
    scanned: bool = False,
    designation: str = "EN 1991-9-9",
    year: int = 2025,
) -> Path:
    """Write the fictional sample code of practice to ``path`` and return it as a Path.

    ``scanned=False`` gives a born-digital PDF (real text, vector tables and figure).
    ``scanned=True`` gives one 150 dpi grayscale image per page with an invisible
    OCR-like text layer (render mode 3) at the original text positions.
    """
    path = Path(path)
    doc = _build(designation, year)
    if scanned:
        born = doc
        doc = _to_scanned(born)
        born.close()
    doc.subset_fonts()
    doc.set_metadata(
        {
            "title": f"{designation}:{year} - {SAMPLE_TITLE}",
            "author": "clausewise",
            "subject": "Fictional sample code of practice for tests (not a standard)",
            "keywords": "clausewise, sample, fictional",
            "creator": "clausewise.sample",
            "producer": "clausewise.sample",
            "creationDate": _FIXED_DATE,
            "modDate": _FIXED_DATE,
        }
    )
    # fixed file identifier derived from the parameters -> byte-identical output
    ident = hashlib.md5(f"{designation}|{year}|{scanned}".encode()).hexdigest()
    doc.xref_set_key(-1, "ID", f"[<{ident}><{ident}>]")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=3, deflate=True, no_new_id=True)
    doc.close()
    return path


if __name__ == "__main__":  # pragma: no cover - manual helper
    import argparse

    ap = argparse.ArgumentParser(description="Write the clausewise fictional sample PDF.")
    ap.add_argument("path")
    ap.add_argument("--scanned", action="store_true")
    ap.add_argument("--designation", default="EN 1991-9-9")
    ap.add_argument("--year", type=int, default=2025)
    a = ap.parse_args()
    print(write_sample_pdf(a.path, scanned=a.scanned, designation=a.designation, year=a.year))
