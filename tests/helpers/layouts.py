"""PDF fixtures in layouts other than the Eurocodes' (written with PyMuPDF at test time): a two-column
code with running header, footer and printed page numbers; run-in and bold headings; captions in
other styles above and below their objects; a numbered expression whose formula is only a picture."""

from __future__ import annotations

from pathlib import Path

import pymupdf

A4 = (595, 842)
LEFT = (57, 287)
RIGHT = (308, 538)
PAGE_OFFSET = 10  # printed page number = PDF page + 10

WORDS = (
    "the design value of the action shall be taken from the table for the site and the exposure of the "
    "structure with the partial factor applied to the characteristic value of each load case considered"
).split()


def _filler(seed: int, chars: int) -> str:
    words, out = WORDS[seed % len(WORDS) :] + WORDS, []
    while sum(len(w) + 1 for w in out) < chars:
        out.append(words[len(out) % len(words)])
    return " ".join(out)


def _column(page: pymupdf.Page, x: tuple[int, int], y: float, items: list[tuple[str, str]]) -> float:
    """Lines of one column: ("h", heading) in bold, ("H", a chapter's heading) larger and plain, ("p", text)
    wrapped to the column's width."""
    for kind, text in items:
        if kind in ("h", "H"):
            y += 6
            size, font = (10, "hebo") if kind == "h" else (18, "helv")
            page.insert_text((x[0], y), text, fontsize=size, fontname=font)
            y += 16 if kind == "h" else 24
            continue
        words, line = text.split(), ""
        for word in words:
            if pymupdf.get_text_length(f"{line} {word}", fontsize=9) > x[1] - x[0]:
                page.insert_text((x[0], y), line.strip(), fontsize=9)
                y += 12
                line = ""
            line += " " + word
        if line.strip():
            page.insert_text((x[0], y), line.strip(), fontsize=9)
            y += 12
        y += 4
    return y


def _running(page: pymupdf.Page, pno: int) -> None:
    page.insert_text((57, 30), "ACME 12-3:2024 Actions on widgets", fontsize=8)
    page.insert_text((400, 30), f"Edition {2024}", fontsize=8)
    page.insert_text((57, 815), "ACME Guide to Widgets - Part 3: Wind", fontsize=8)
    page.insert_text((520, 815), str(pno + PAGE_OFFSET), fontsize=9)


def write_two_column(path: Path) -> Path:
    """Four pages: a cover, then three two-column pages of numbered clauses, with a running header,
    a running footer and printed page numbers (which are also numbers a parser might take for
    clause headings)."""
    doc = pymupdf.open()
    cover = doc.new_page(width=A4[0], height=A4[1])
    cover.insert_text((100, 300), "ACME 12-3", fontsize=30, fontname="hebo")
    cover.insert_text((100, 350), "Actions on widgets - Part 3: Wind", fontsize=16)
    body = {
        1: (
            [
                ("h", "7 Wind actions"),
                ("p", "Alpha column starts here. " + _filler(1, 380)),
                ("h", "7.1 General"),
                ("p", "Bravo first paragraph of the general clause. " + _filler(2, 600)),
            ],
            [
                ("p", "Charlie continues the general clause in the right column. " + _filler(3, 300)),
                ("h", "7.2 Wind pressure"),
                ("p", "Delta pressure text. " + _filler(4, 700)),
            ],
        ),
        2: (
            [
                ("p", "Echo continues the wind pressure clause. " + _filler(5, 500)),
                ("h", "7.3 Terrain"),
                ("p", "Foxtrot terrain clause text. " + _filler(6, 600)),
            ],
            [
                ("h", "7.4 Orography"),
                ("p", "Golf orography clause text. " + _filler(7, 900)),
            ],
        ),
        3: (
            [
                ("h", "8 Snow actions"),
                ("p", "Hotel snow chapter text. " + _filler(8, 500)),
                ("h", "8.1 General"),
                ("p", "India snow general text. " + _filler(9, 500)),
            ],
            [
                ("h", "8.2 Roof snow"),
                ("p", "Juliett roof snow text. " + _filler(10, 900)),
            ],
        ),
    }
    for pno in (1, 2, 3):
        page = doc.new_page(width=A4[0], height=A4[1])
        _running(page, pno)
        page.insert_text((57, 70), "A full-width title line that runs across both of the columns", fontsize=11)
        left, right = body[pno]
        _column(page, LEFT, 100, left)
        _column(page, RIGHT, 100, right)
    doc.save(path)
    doc.close()
    return path


def _formula_png(text: str) -> bytes:
    """A formula as a picture (no text layer), as a scan carries it."""
    scratch = pymupdf.open()
    page = scratch.new_page(width=220, height=40)
    page.insert_text((10, 26), text, fontsize=16, fontname="tiro")
    png = page.get_pixmap(dpi=150).tobytes("png")
    scratch.close()
    return png


def write_objects(path: Path) -> Path:
    """One page per caption style, the caption above or below its drawn object, and a page with a
    numbered expression whose formula is a picture with only "(5.1)" in the text layer."""
    doc = pymupdf.open()

    def page_with(lines_above: list[str]) -> tuple[pymupdf.Page, float]:
        page = doc.new_page(width=A4[0], height=A4[1])
        y = 80.0
        for text in lines_above:
            page.insert_text((70, y), text, fontsize=10)
            y += 14
        return page, y

    def table(page: pymupdf.Page, top: float, rows: int = 4) -> pymupdf.Rect:
        box = pymupdf.Rect(70, top, 520, top + 18 * rows)
        for r in range(rows + 1):
            page.draw_line((70, top + 18 * r), (520, top + 18 * r))
        for x in (70, 300, 520):
            page.draw_line((x, top), (x, top + 18 * rows))
        for r in range(rows):
            page.insert_text((76, top + 18 * r + 13), f"Case {r + 1}", fontsize=9)
            page.insert_text((306, top + 18 * r + 13), f"{r + 1},5", fontsize=9)
        return box

    def drawing(page: pymupdf.Page, top: float, height: float = 150) -> pymupdf.Rect:
        box = pymupdf.Rect(150, top, 450, top + height)
        page.draw_rect(box)
        page.draw_line(box.tl, box.br)
        page.draw_line(box.bl, box.tr)
        page.draw_circle(box.tl + (150, height / 2), 30)
        return box

    # 1: "FIG. 3" below its drawing
    page, y = page_with(["(1) The frame is shown below.", "(2) The layout follows the plan."])
    drawing(page, y + 10)
    page.insert_text((150, y + 180), "FIG. 3 Frame layout of the widget", fontsize=10)
    page.insert_text((70, y + 220), "(3) Text after the figure continues the clause.", fontsize=10)
    # 2: "TABLE 2" above its table
    page, y = page_with(["(1) Loads are given in the following table."])
    page.insert_text((70, y + 14), "TABLE 2 Loads on widget decks", fontsize=10)
    table(page, y + 24)
    page.insert_text((70, y + 140), "(2) Text after the table.", fontsize=10)
    # 3: "Table A1.2(B)" above, "Table 7.3a" below its table
    page, y = page_with(["(1) Design values follow."])
    page.insert_text((70, y + 14), "Table A1.2(B) Design values of actions", fontsize=10)
    table(page, y + 24)
    second = table(page, y + 160)
    page.insert_text((70, second.y1 + 16), "Table 7.3a Factors for widget shapes", fontsize=10)
    # 4: "Figure 3-1" above its drawing (the drawing hangs below the caption, text above it)
    page, y = page_with(["(1) The flow of the procedure is shown in Figure 3-1.", "(2) Each step is numbered."])
    page.insert_text((150, y + 20), "Figure 3-1 Flow chart of the procedure", fontsize=10)
    drawing(page, y + 30)
    page.insert_text((70, y + 230), "(3) Text after the figure.", fontsize=10)
    # 5: "Fig. 4" below, "Table 2-1" below its table
    page, y = page_with(["(1) Two objects follow."])
    drawing(page, y + 10, 120)
    page.insert_text((150, y + 150), "Fig. 4 Side view", fontsize=10)
    box = table(page, y + 190)
    page.insert_text((70, box.y1 + 16), "Table 2-1 Risk categories", fontsize=10)
    # 6: a numbered expression drawn as a picture: the text layer holds only "(5.1)"
    page, y = page_with(["(1) The snow load on the roof should be determined as follows:"])
    page.insert_image(pymupdf.Rect(120, y + 6, 340, y + 46), stream=_formula_png("s = mu Ce Ct sk"))
    page.insert_text((500, y + 30), "(5.1)", fontsize=10)
    page.insert_text((70, y + 70), "where: mu is the shape coefficient", fontsize=10)
    doc.save(path)
    doc.close()
    return path


def write_numbered_paragraphs(path: Path, appendices: bool = False) -> tuple[Path, dict[int, int]]:
    """A guidance document whose body paragraphs are numbered in one run (1, 2, ... as in HSE's HSG
    series) under unnumbered bold headings (one a page, one of them wrapped onto a second line), with a
    running footer "Title | Page n of m", and on each
    page a paragraph that opens low, in the footer's band, and runs onto the next line. With
    ``appendices``, two numbered appendices follow on pages 6 and 7: "Appendix 1: Inspection report
    form with / timing chart" (a display title on two lines over a form whose items are numbered "1." to
    "12.") and "Appendix 2: Site checklist" (paragraphs numbered from 1 again, then smaller bold headings
    "Access on site" and "Scaffolds", each over a checklist question), and after them "References",
    set as large as the appendices' headings. Returns the path and the PDF page (1-based) each paragraph opens on."""
    doc = pymupdf.open()
    cover = doc.new_page(width=A4[0], height=A4[1])
    cover.insert_text((57, 200), "Safety on widget sites", fontsize=24, fontname="hebo")
    opens: dict[int, int] = {}
    n = 0
    headings = [["Working at height"], ["Site transport"], ["Fire and", "emergencies"], ["Welfare"]]
    for pno, heading in enumerate(headings, 1):  # "Fire and emergencies": a display title wrapped
        page = doc.new_page(width=A4[0], height=A4[1])
        y = 60.0 + 40 * pno
        for part in heading:
            page.insert_text((57, y), part, fontsize=14, fontname="hebo")
            y += 17
        y += 13
        while y < 700:
            n += 1
            if y > 640:
                y = 772.0  # the page's last paragraph opens in the footer's band (the bottom tenth)
            opens[n] = pno + 1
            text = f"Paragraph {n} says that " + _filler(n, 150)
            words, line, first = text.split(), "", True
            for word in words:
                if pymupdf.get_text_length(f"{line} {word}", fontsize=10) > 400:
                    if first:
                        page.insert_text((57, y), str(n), fontsize=10)
                        first = False
                    page.insert_text((90, y), line.strip(), fontsize=10)
                    y += 12
                    line = ""
                line += " " + word
            page.insert_text((90, y), line.strip(), fontsize=10)
            y += 24
        page.insert_text((57, 815), "Safety on widget sites", fontsize=9)
        page.insert_text((480, 815), f"Page {pno + 1} of {7 if appendices else 5}", fontsize=9)
    if appendices:  # (text, size, bold) lines of pages 6 and 7
        form = [(f"{i}. {item}", 10, False) for i, item in enumerate(_FORM_ITEMS, 1)]
        checklist = [(f"{i} " + _filler(i, 90) + ".", 10, False) for i in (1, 2)]
        site = [
            ("Access on site", 11, True),
            ("Are the routes on site kept clear of materials?", 10, False),
            ("Scaffolds", 11, True),
            ("Are scaffolds put up by competent people?", 10, False),
        ]
        after = [("References", 14, True), ("Further reading is listed here in plain type.", 10, False)]
        for pno, lines in enumerate(
            [
                [("Appendix 1: Inspection report form with", 14, True), ("timing chart", 14, True), *form],
                [("Appendix 2: Site checklist", 14, True), *checklist, *site, *after],
            ],
            6,
        ):
            page = doc.new_page(width=A4[0], height=A4[1])
            for i, (text, size, bold) in enumerate(lines):
                page.insert_text((57, 100 + 22 * i), text, fontsize=size, fontname="hebo" if bold else "helv")
            page.insert_text((57, 815), "Safety on widget sites", fontsize=9)
            page.insert_text((480, 815), f"Page {pno} of 7", fontsize=9)
    doc.save(path)
    return path, opens


_FORM_ITEMS = [
    "Name and address of the person the inspection was for.",
    "Site address.",
    "Date and time of the inspection.",
    "Place of work or equipment inspected.",
    "Matters that give rise to a risk.",
    "Can work be carried out safely?",
    "If not, the person told.",
    "Other action taken.",
    "Further action needed.",
    "Name and position of the inspector.",
    "Date and time the report was handed over.",
    "Name and position of the person receiving it.",
]


def write_guide_with_opening(path: Path) -> Path:
    """A guide set in one column with bold unnumbered headings before its numbered chapters: a cover;
    "Acknowledgements" and "Document status" (the publisher's matter); a contents page; then the
    text's own opening, "Introduction" over "Purpose" and "What is a defect?", and "How to use this
    guide" over "Interpreting tolerances" (rules every chapter relies on); then chapters "1 Floors" and
    "2 Walls" with numbered sections."""
    doc = pymupdf.open()
    cover = doc.new_page(width=A4[0], height=A4[1])
    cover.insert_text((57, 200), "Guide to widget finishes", fontsize=24, fontname="hebo")
    wide = (57, 538)
    pages = [
        [
            ("H", "Acknowledgements"),
            ("p", "The ministry thanks the advisory group and the widget association. " + _filler(1, 300)),
            ("h", "Document status"),
            ("p", "This guide is published under the act and replaces the edition of 2010. " + _filler(2, 300)),
        ],
        None,  # the contents page
        [
            ("H", "Introduction"),
            ("h", "Purpose"),
            ("p", "This guide says what finish a home owner may expect of a widget contractor. " + _filler(3, 400)),
            ("h", "What is a defect?"),
            ("p", "A defect is a finish outside the tolerances this guide sets for it. " + _filler(4, 400)),
        ],
        [
            ("H", "How to use this guide"),
            ("h", "Interpreting tolerances"),
            ("p", "A tolerance applies over the length stated and is not to be interpolated. " + _filler(5, 400)),
        ],
        [
            ("H", "1 Floors"),
            ("h", "1.1 Concrete floors"),
            ("p", "A concrete floor shall be flat to within 5 mm over 3 m. " + _filler(6, 400)),
            ("h", "1.2 Timber floors"),
            ("p", "A timber floor shall not deflect more than 3 mm under a person's weight. " + _filler(7, 400)),
        ],
        [
            ("H", "2 Walls"),
            ("h", "2.1 Plastered walls"),
            ("p", "A plastered wall shall be flat to within 4 mm over 2 m. " + _filler(8, 400)),
        ],
    ]
    toc = ["Acknowledgements 2", "Introduction 4", "Purpose 4", "What is a defect? 4", "How to use this guide 5"]
    toc += ["Interpreting tolerances 5", "1 Floors 6", "1.1 Concrete floors 6", "1.2 Timber floors 6", "2 Walls 7"]
    for items in pages:
        page = doc.new_page(width=A4[0], height=A4[1])
        if items is None:
            page.insert_text((57, 80), "Contents", fontsize=14, fontname="hebo")
            for i, entry in enumerate(toc):
                title, number = entry.rsplit(" ", 1)
                page.insert_text((57, 110 + 16 * i), f"{title} {'.' * 40} {number}", fontsize=10)
            continue
        _column(page, wide, 80, items)
    doc.save(path)
    doc.close()
    return path
