"""The typesetter: page geometry, fonts, word wrap and the writer that lays the sample's blocks out.

The layout imitates a Eurocode part: running header and page number, bold headings kept with the
next lines, wrapped paragraphs, symbol lists, numbered expressions, ruled tables with the caption
above and figures with the caption below.
"""

from __future__ import annotations

import pymupdf

from clausewise.sample.text import (
    Block,
    Cover,
    Expression,
    Figure,
    Heading,
    Lines,
    PageBreak,
    Paragraph,
    Space,
    Symbol,
    Table,
    load_text,
)

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

_fonts: dict[str, pymupdf.Font] = {}


def font(bold: bool = False) -> pymupdf.Font:
    """The built-in Helvetica (Nimbus Sans), regular or bold; one Font object each."""
    name = "hebo" if bold else "helv"
    if name not in _fonts:
        _fonts[name] = pymupdf.Font(name)
    return _fonts[name]


_advances: dict[tuple[bool, str], float] = {}


def text_width(text: str, size: float = FONT_SIZE, bold: bool = False) -> float:
    """Text width in points (per-glyph advances cached; Font.text_length is slow)."""
    total = 0.0
    for ch in text:
        adv = _advances.get((bold, ch))
        if adv is None:
            adv = _advances[(bold, ch)] = font(bold).text_length(ch, fontsize=1.0)
        total += adv
    return total * size


def wrap(text: str, width: float = TEXT_WIDTH, size: float = FONT_SIZE) -> list[str]:
    """Greedy word wrap limited by both the printable width and MAX_CHARS."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        candidate = f"{current} {word}" if current else word
        if current and (text_width(candidate, size) > width or len(candidate) > MAX_CHARS):
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


class Writer:
    """Lays blocks out page by page into a new PDF (``self.doc``)."""

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
        self.tw.append((x, y), s, font=font(bold), fontsize=size)

    def text_right(self, x_right: float, y: float, s: str, *, bold: bool = False, size: float = FONT_SIZE) -> None:
        self.text(x_right - text_width(s, size, bold), y, s, bold=bold, size=size)

    def text_centred(self, x_mid: float, y: float, s: str, *, bold: bool = False, size: float = FONT_SIZE) -> None:
        self.text(x_mid - text_width(s, size, bold) / 2, y, s, bold=bold, size=size)

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
    def heading(self, h: Heading) -> None:
        if not self.at_top():
            self.y += h.gap_before
        self.ensure(LEADING * 3)  # keep with the next two lines
        if h.centred:
            self.text_centred(PAGE_WIDTH / 2, self.y, h.text, bold=h.bold)
        else:
            self.text(LEFT, self.y, h.text, bold=h.bold)
        self.y += LEADING + 3

    def para(self, p: Paragraph) -> None:
        for line in wrap(p.text):
            self.ensure(LEADING)
            self.text(LEFT, self.y, line)
            self.y += LEADING
        self.y += PARA_GAP

    def lines(self, block: Lines) -> None:
        for line in block.lines:
            assert len(line) <= MAX_CHARS, line
            self.ensure(LEADING)
            self.text(LEFT, self.y, line)
            self.y += LEADING
        self.y += PARA_GAP

    def symbol(self, s: Symbol) -> None:
        self.ensure(LEADING)
        self.text(LEFT, self.y, s.symbol)
        self.text(SYMBOL_X, self.y, s.meaning)
        self.y += LEADING

    def expression(self, e: Expression) -> None:
        self.y += 4
        self.ensure(LEADING)
        self.text(EXPR_X, self.y, e.formula)
        self.text_right(RIGHT, self.y, e.number)
        self.y += LEADING + 6

    def table(self, t: Table) -> None:
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

    def figure(self, f: Figure) -> None:
        if not self.at_top():
            self.y += 6
        self.ensure(f.height + LEADING + 10)
        assert self.page is not None
        area = pymupdf.Rect(LEFT, self.y - 10, RIGHT, self.y - 10 + f.height)
        f.draw(self.page, area, self)
        self.y = area.y1 + 14
        self.text_centred(PAGE_WIDTH / 2, self.y, f.caption, bold=True)
        self.y += LEADING + 6

    def render(self, blocks: list[Block]) -> None:
        for b in blocks:
            if isinstance(b, Heading):
                self.heading(b)
            elif isinstance(b, Paragraph):
                self.para(b)
            elif isinstance(b, Lines):
                self.lines(b)
            elif isinstance(b, Symbol):
                self.symbol(b)
            elif isinstance(b, Expression):
                self.expression(b)
            elif isinstance(b, Table):
                self.table(b)
            elif isinstance(b, Figure):
                self.figure(b)
            elif isinstance(b, Space):
                self.y += b.height
            elif isinstance(b, PageBreak):
                self.new_page()
            else:  # pragma: no cover - programming error
                raise TypeError(b)

    # -- pages -------------------------------------------------------------
    def cover(self, cover: Cover) -> None:
        """The cover page: no running header; designation, title, notice and reference number."""
        self.new_page(running=False)
        assert self.page is not None
        self.text(LEFT, 110, cover.label, bold=True, size=12)
        self.text_right(RIGHT, 110, f"{self.designation}:{self.year}", bold=True, size=16)
        self.page.draw_line((LEFT, 122), (RIGHT, 122), color=(0, 0, 0), width=1.0)
        self.text(LEFT, 150, f"{self.designation}:{self.year}", bold=True, size=20)
        y = 200.0
        for line in cover.title_lines:
            self.text(LEFT, y, line, bold=True, size=14)
            y += 20
        y += 30
        for line in wrap(cover.notice):
            self.text(LEFT, y, line)
            y += LEADING
        self.page.draw_line((LEFT, 760), (RIGHT, 760), color=(0, 0, 0), width=0.5)
        self.text(LEFT, 775, cover.reference, size=9)


def typeset_sample(designation: str, year: int, text: str = "main") -> pymupdf.Document:
    """The born-digital sample (``text``: a name in :data:`~clausewise.sample.text.TEXTS`) as an open
    document: cover, foreword page, then the body."""
    content = load_text(designation, year, text)
    w = Writer(designation, year)
    w.cover(content.cover)
    w.new_page()
    w.render(content.foreword)
    w.new_page()
    w.render(content.body)
    w.flush()
    return w.doc
