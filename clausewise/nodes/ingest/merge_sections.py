"""merge-sections: page results merged into sections: numbered clauses, annexes, front matter, tables, figures,
expressions, with pages, parents and previous/next keys.

Headings are recognised by their numbering and accepted only when the number is a plausible
successor of the last accepted one (5.3.1 -> 5.3.2, 5.4, 6, 5.3.1.1), which keeps values, axis labels
and cross-references at the start of a line from being taken for clause headings. The body starts at
the first clause 1 that is followed by a 1.1, so a table of contents or a foreword cannot swallow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.keys import DocId, code_label, object_key, slug, split_key
from clausewise.nodes.ingest.check_document import IngestError, doc_id_of
from clausewise.nodes.ingest.extract_page import CHANGE_MARK, EXPRESSION, NOTE_LINE, expression_number, parse_caption
from clausewise.page_map import page_at
from clausewise.pdf import close_pdf

_DIGITISH = str.maketrans({"l": "1", "I": "1", "]": "1", "/": "1", "|": "1", "O": "0", "o": "0", "S": "5"})
_DIGITISH_ALSO = {"S": "8"}  # OCR reads an 8 as S too ("A.S Key elements" after A.7)
# words a sentence opening with a clause number goes on with ("5.3.2 and 5.3.3 apply ..."): not a title
_NOT_A_TITLE = frozenset(
    "and or to of in on at by for from with see as is are be the a an apply applies gives give".split()
)
# A clause number opening a line: "5.3.2", OCR slips "5. 3" / "5.l", chapter-hyphen "2-1.1" (UFC), and
# section numbers of other codes quoted as headings ("1603.1.10", accepted on typography only).
NUMBERED = re.compile(
    r"^(?P<num>(?:(?P<letter>[A-Z])-)?[1-9]\d{0,3}(?:-\d{1,3})?(?:\s?\.\s?[\dlI\]/|OoS]{1,3}){0,5})(?P<dot>\.)?"
    r"(?:(?:\s*[\u2013\u2014]\s*|\s+-\s+|\s+)(?P<rest>.*))?$"
)
SECTION = re.compile(
    r"^(?P<word>SECTION|Section|CHAPTER|Chapter)\s*(?P<num>[1-9lI]\d?)\b(?!\.\d)\s*[.\u2013\u2014]?\s*(?P<rest>.*)$"
)
ANNEX = re.compile(
    r"^(?P<word>ANNEX|Annex|APPENDIX|Appendix)\s*(?P<letter>[A-H08](?:\s?[1-9](?!\s?\.\d))?|[1-9]\d?(?!\s?\.\d))\b"
    r"\s*(?P<rest>.*)$"
)
_STATUS = re.compile(r"^\(\s?(?P<status>i\s?n\s?f\s?o|n\s?o\s?r\s?m)[\w ]*\)?", re.I)  # "(infonnative)"
OCR_LETTER_SLIPS = {"B": "8", "D": "0", "G": "6", "S": "5", "I": "1"}
OCR_LOWER_SLIPS = {"C": "e"}  # a capital a scan reads as another lower-case letter ("Figure e.8")
_TOC_LEADER = re.compile(r"(\.\s?){5,}|…{2,}|(\s?\.\s){4,}")
# A line of a contents page: a title and the page it is on ("Scope 12", "1.2 Terms .... 1-3", "ix").
_TOC_ENTRY = re.compile(r"[A-Za-z)\]]{2,}[\s.…_]*\s(?:\d{1,4}|[ivxlc]{1,5}|[A-Z]?\d{1,2}-\d{1,3})$")
# A numbered paragraph: "126 Most accidents involving falls ..." (one run of integers through the body).
_PARAGRAPH_NUMBER = re.compile(r"^(?P<num>[1-9]\d{0,3})\s+(?=[A-Z(\u2018\u201c'\"])")
MIN_PARAGRAPHS = 20  # a run this long numbers paragraphs, not a list or a figure's key
QUOTE_LOOKAHEAD_LINES = 400  # how far past an out-of-sequence heading the next heading is looked for
MIN_FOREIGN_HEADINGS = 10  # a document with this many headings numbered as another code's has them as its own
_FOREIGN = re.compile(r"\d{3,4}(?:\.\d{1,2})+\s")  # "1603.2 ", "403.9 ": another code's clause number
# ISO and IS number the introduction or foreword 0 ("0 Introduction", "0. FOREWORD"): a part before
# clause 1 still, named by its words
_ZERO_NUMBER = re.compile(r"^0\.?\s+(?=[A-Z])")
# Before clause 1, the publisher's matter (the names of the elements a book's or a code's front and back
# matter is made of: foreword, preface, notice, revision record, contents, references) and the text's
# own opening: a heading named as one ("Introduction", "Purpose") begins the document's substance, which
# runs on under other headings ("What is a defect?", "Interpreting tolerances") until the next element
# of publishing.
_PUBLISHING = re.compile(
    r"\b(?:foreword|preface|acknowledge?ments?|dedication|notice|disclaimer|copyright|isbn|contents|revisions?"
    r"|amendments?|errata|corrigend(?:um|a)|editions?|publications?|published|endorsement|committees?"
    r"|contributors|authors?|status|national annex|references|bibliography|further information|index)\b",
    re.I,
)
_OPENING = re.compile(r"(?:introduction|purpose|scope|overview|general|background)(?: and (?:purpose|scope))?", re.I)
# A clause's number alone on a line ("A1.1(1)", "3.1 (5)", "3.1(1)P"): a cell of a table of clauses
_CLAUSE_CELL = re.compile(r"[A-Z]?\d+(?:\s?\.\s?\d+)*\s?\(\s?\d+\s?\)\s?P?")
# What a run-in heading's text opens with on a narrow column ("Reduction in Imposed Loads — The
# reduction", "Concentrated Loads — Floors shall be"): a sentence's first word or its verb, where a
# title's second part ("Walls — Rectangular plan buildings") has neither
_SENTENCE_OPENS = re.compile(
    r"(?:The|A|An|This|These|Where|When|If|For|In|No|All|Each|Every|Any)\b"
    r"|\S+(?:\s+\S+)?\s+(?:shall|should|may|must|is|are|can|will|need|needs)\b"
)
# Run-in headings: "7.3.3.3 Terrain category — The roughness ..." (the title ends at the dash).
_RUN_IN = re.compile(r"^(?P<title>[^.:\u2013\u2014]{3,80}?)(?:\s[\u2013\u2014]\s|\.\s|:\s)(?P<text>[A-Z(].{12,})$")


def _title_ok(text: str | None) -> bool:
    if not text:
        return False
    text = text.strip()
    return (
        bool(re.match(r"^[A-Za-z]", text))
        and bool(re.search(r"[A-Za-z]{2}", text))
        and len(text) < 140
        and not _TOC_LEADER.search(text)
    )


def ocr_number(parts: list[str], current: tuple[int, ...] | None) -> tuple[int, ...]:
    """A clause number read from OCR'd digits ("5.l" is 5.1, "S" 5): where a character reads as two
    digits ("S": 5 or 8), the reading that follows ``current`` in sequence, else the usual one."""
    usual = tuple(int(p.translate(_DIGITISH)) for p in parts)
    if current is None or plausible_next(current, usual) or not any(c in p for p in parts for c in _DIGITISH_ALSO):
        return usual
    other = tuple(int("".join(_DIGITISH_ALSO.get(c, c) for c in p).translate(_DIGITISH)) for p in parts)
    return other if plausible_next(current, other) else usual


def plausible_next(current: tuple[int, ...] | None, new: tuple[int, ...], *, jump: int = 2) -> bool:
    """Is ``new`` a heading number that can follow ``current``? Up to ``jump`` - 1 headings may be
    missing (OCR losses); "Section N" headings are a strong signal and may jump further."""
    if current is None:
        return new in ((1,), (1, 1))
    if len(new) == len(current) + 1 and new[:-1] == current and new[-1] in (1, 2):
        return True
    for i in range(min(len(new), len(current))):
        if new[:i] != current[:i]:
            return False
        if current[i] < new[i] <= current[i] + (jump if i == 0 else 2) and all(x in (1, 2) for x in new[i + 1 :]):
            return True
        if new[i] != current[i]:
            return False
    return False


@dataclass
class Line:
    text: str
    page: int
    bbox: list[float]
    size: float = 0.0
    bold: bool = False
    lead: str = ""
    cells: int = 1  # pieces set wide apart on its baseline: three or more make a table's row, two no title
    italic: bool = False


def _unmarked(line: Line) -> Line:
    """The line as its heading reads, without the change marks set around it (its text keeps them)."""
    if not CHANGE_MARK.search(line.text):
        return line
    return replace(line, text=CHANGE_MARK.sub("", line.text).strip(), lead=CHANGE_MARK.sub("", line.lead).strip())


@dataclass
class Heading:
    number: tuple[int, ...]
    code: str
    title: str
    used: int  # lines the heading takes (number and title on lines of their own)
    strong: bool  # "Section 5": may jump further
    typographic: bool  # bold or larger than the body text


@dataclass
class Draft:
    code: str
    kind: str
    title: str
    number: tuple[int, ...] | None = None
    parent: str | None = None
    lines: list[Line] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _is_toc_page(lines: list[dict[str, Any]]) -> bool:
    """A contents page (or a list of tables/figures): dot leaders, or most lines ending in a page number."""
    texts = [ln["text"].strip() for ln in lines]
    leaders = sum(1 for t in texts if _TOC_LEADER.search(t))
    bare_numbers = sum(1 for t in texts if re.fullmatch(r"\d{1,3}", t))
    titled_numbers = sum(1 for t in texts if re.search(r"[A-Za-z]{3,}\s+\d{1,3}$", t))
    entries = sum(1 for t in texts if _TOC_ENTRY.search(t) and not t.endswith("."))
    contents = any(re.fullmatch(r"(table of )?contents|list of (tables|figures)|index", t, re.I) for t in texts[:6])
    return (
        leaders >= 4
        or bare_numbers >= 8
        or titled_numbers >= 8
        or (entries >= 8 and entries >= 0.4 * len(texts))
        or (contents and bare_numbers + leaders + max(titled_numbers, entries) >= 3)
    )


def _norm(text: str) -> str:
    """Text with digits and spacing normalised: the same running header on every page."""
    return re.sub(r"\s+", " ", re.sub(r"\d+", "#", text.lower())).strip(" .|-\u2013")


def strip_running_lines(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pages without their running headers and footers: lines in the top or bottom band that recur
    (digits normalised) on several pages, and numbers that follow the page sequence (printed page
    numbers that the page's own bands missed)."""
    seen: dict[str, set[int]] = {}
    for p in pages:
        for ln in p["lines"]:
            if ln.get("band"):
                seen.setdefault(_norm(ln["text"]), set()).add(p["page"])
    # on most pages of a stretch (a chapter's header), not on a few pages far apart ("(informative)")
    running = {k for k, v in seen.items() if len(v) >= 3 and len(k) < 120 and len(v) >= 0.4 * (max(v) - min(v) + 1)}
    offsets: dict[int, int] = {}
    for p in pages:
        for ln in p["lines"]:
            if re.fullmatch(r"\d{1,4}", ln["text"].strip()):
                off = int(ln["text"]) - p["page"]
                offsets[off] = offsets.get(off, 0) + 1
    offset = max(offsets, key=lambda o: offsets[o]) if offsets else None
    if offset is not None and offsets[offset] < max(3, 0.2 * len(pages)):
        offset = None
    out = []
    for p in pages:
        keep = [
            ln
            for ln in p["lines"]
            if not (ln.get("band") and _norm(ln["text"]) in running)
            and not (offset is not None and ln["text"].strip() == str(p["page"] + offset))
        ]
        out.append(p if len(keep) == len(p["lines"]) else {**p, "lines": keep})
    return out


class _Parser:
    def __init__(self, doc: DocId, pages: list[dict[str, Any]]):
        self.doc = doc
        self.pages = pages
        self.lines: list[Line] = []
        self.toc_pages = {p["page"] for p in pages if _is_toc_page(p["lines"])}
        # the drawings' boxes: words set inside a drawing (a sign, a flowchart's box) are not headings
        self.drawings = {
            p["page"]: [o["bbox"] for o in p.get("objects", []) if o["kind"] == "figure" and o.get("bbox")]
            for p in pages
        }
        for p in pages:
            self.lines += [
                Line(
                    ln["text"],
                    p["page"],
                    ln["bbox"],
                    ln.get("size", 0.0),
                    ln.get("bold", False),
                    ln.get("lead", ""),
                    ln.get("cells", 1),
                    ln.get("italic", False),
                )
                for ln in p["lines"]
            ]
        self.drafts: list[Draft] = []
        self.current_number: tuple[int, ...] | None = None
        # the number of the last "Chapter N" or "Section N" heading: the next one follows it, whatever
        # other code's clauses ("1603.2", "26.12.1") the code modifies under it
        self.chapter: int | None = None
        self.current_annex: str | None = None
        self.seen_codes: set[str] = set()
        sizes: dict[float, int] = {}
        bold_chars = 0
        for ln in self.lines:
            sizes[ln.size] = sizes.get(ln.size, 0) + len(ln.text)
            bold_chars += len(ln.text) if ln.bold else 0
        self.body_size = max(sizes, key=lambda k: sizes[k]) if sizes else 0.0
        total = sum(sizes.values()) or 1
        # Typography tells headings apart when the body is not bold and numbered lines are.
        bold_numbered = sum(1 for ln in self.lines if (ln.bold or ln.lead) and NUMBERED.match(_unmarked(ln).text))
        self.plain_body = bold_chars < 0.3 * total
        self.typography = self.plain_body and bold_numbered >= 3
        # OCR text layers guess fonts: a plain line there may still be a heading
        self.born_digital = sum(1 for p in pages if p.get("scanned")) < 0.5 * max(1, len(pages))
        self.paragraphs: dict[int, int] = {}
        self.quote_ends = 0  # the line where another code's clause quoted in the text ends
        # headings set apart and numbered as another code's clauses ("1603.2 - Delegated ...")
        self._foreign_numbered = sum(
            1
            for ln in self.lines
            if (ln.bold or ln.lead) and ln.page not in self.toc_pages and _FOREIGN.match(_unmarked(ln).text)
        )

    def _numbered_paragraphs(self) -> dict[int, int]:
        """Lines (by id) opening numbered paragraphs, with their numbers: guidance documents number
        every paragraph of the body in one run ("1 ...", "2 ...", ... "126 ..."), not restarting under
        headings. The run is followed from 1, a number at most one ahead of the expected one, on lines
        set in the body's size and not in bold; a run shorter than ``MIN_PARAGRAPHS`` is a list."""
        run: dict[int, int] = {}
        expected = 1
        for line in self.lines:
            m = _PARAGRAPH_NUMBER.match(line.text)
            if not m or line.page in self.toc_pages or line.bold or abs(line.size - self.body_size) > 0.6:
                continue
            n = int(m.group("num"))
            if n == expected or (run and n == expected + 1):
                run[id(line)] = n
                expected = n + 1
        return run if len(run) >= MIN_PARAGRAPHS else {}

    def _typographic(self, line: Line, number_text: str) -> bool:
        if line.bold or (line.lead and line.lead.startswith(number_text.split()[0])):
            return True
        return bool(self.body_size) and line.size >= self.body_size + 1.5

    # ---- heading recognition ----
    def _numbered(self, i: int) -> Heading | None:
        """The clause heading at line i, else None (read without change marks: "\\4\\ 1607.14 - Bridge
        Crane Support" is the heading of 1607.14)."""
        line = _unmarked(self.lines[i])
        if line.page in self.toc_pages:
            return None
        nxt = self.lines[i + 1].text if i + 1 < len(self.lines) else None
        m = SECTION.match(line.text)
        if m and m.group("word") == "Chapter" and not self._typographic(line, m.group(0)):
            m = None  # "Chapter 3 gives ..." in a sentence; a chapter heading is set apart
        if m:
            number: tuple[int, ...] = (int(m.group("num").translate(_DIGITISH)),)
            rest = m.group("rest").strip()
            if rest.endswith(".") and not line.bold or ". " in rest or rest.startswith("."):
                return None  # "... given in Section 6. Annex B gives ..." is a sentence
            if rest and _title_ok(rest) and (rest[0].isupper() or rest[0] == "("):
                return Heading(number, str(number[0]), rest.rstrip("."), 1, True, line.bold)
            if not rest and _title_ok(nxt):
                return Heading(number, str(number[0]), *self._title_below(i), True, line.bold)
            return None
        m = NUMBERED.match(line.text)
        if not m:
            return None
        raw = m.group("num")
        letter = m.group("letter")
        parts = [p for p in re.split(r"\s?[.\-]\s?", raw[2:] if letter else raw) if p]
        if not all(re.fullmatch(r"\d{1,4}", p.translate(_DIGITISH)) for p in parts):
            return None
        number = ocr_number(parts, self.current_number)
        if any(n > 99 for n in number[1:]):
            return None
        hyphen = "-" in (raw[2:] if letter else raw)
        code = ".".join(map(str, number)) if not hyphen else f"{number[0]}-" + ".".join(map(str, number[1:]))
        typographic = self.typography and self._typographic(line, raw)
        if letter:  # "F-3.2.2" (appendix F of a chapter-hyphen code): on typography only
            if not typographic:
                return None
            code, number = f"{letter}-{code}", (ord(letter) - 64, *number)
        if number[0] > 99 and not typographic:
            return None  # "1603.1" headings of a quoted code: only when set as headings
        rest = (m.group("rest") or "").strip()
        if len(number) == 1 and rest and not re.match(r"^[A-Z][A-Za-z]{2,}", rest):
            return None  # a top-level heading needs a real word: "1 General", not "7 A" from a formula
        if rest:
            if not _title_ok(rest) or not (rest[0].isupper() or rest[0] == "[" or self._lowercase_title(rest, nxt)):
                return None  # "5.3.2 and 5.3.3 apply ..." is a sentence, not a heading
            title, used = self._title(line, raw, rest, i)
            return Heading(number, code, title[:1].upper() + title[1:], used, False, typographic)
        if _title_ok(nxt) and not NUMBERED.match(nxt or "") and not (nxt or "").startswith("("):
            typographic = typographic or self._typographic(self.lines[i + 1], "")
            return Heading(number, code, *self._title_below(i), False, typographic)
        return None

    def _title_below(self, i: int) -> tuple[str, int]:
        """The title of a number set on a line of its own (line i), and the lines the heading takes: the
        next line, and the one after it where that is a display title wrapped ("Chapter 4" /
        "Developing Preliminary and" / "Final Designs")."""
        title_line = self.lines[i + 1]
        whole = self._wrapped_title(title_line.text, title_line, self.lines[i + 2] if i + 2 < len(self.lines) else None)
        return (whole, 3) if whole else (title_line.text, 2)

    def _lowercase_title(self, rest: str, nxt: str | None) -> bool:
        """An OCR text layer may read a title's capital as a small letter ("4.3.4 large and considerably
        higher neighbouring structures"): taken as a title when its first word is no word a sentence goes
        on with, it does not end as a sentence, and the next line opens the clause's paragraph (1)."""
        first = rest.split()[0].lower()
        return (
            first.isalpha()
            and first not in _NOT_A_TITLE
            and not rest.rstrip().endswith((".", ",", ";", ":"))
            and bool(re.match(r"\(\s?[1lI]\s?\)", nxt or ""))
        )

    def _title(self, line: Line, raw: str, rest: str, i: int) -> tuple[str, int]:
        """A heading's title and the lines it takes: a run-in heading's title ends where its bold
        words or its dash end; a bold title wrapped onto a second bold line takes that line too."""
        if line.lead and not line.bold and len(line.lead) > len(raw) + 2:
            title = line.lead[len(raw) :].strip(" .:\u2013\u2014-")
            if title:
                return title, 1
        if not line.bold:
            m = _RUN_IN.match(rest)
            if m and len(m.group("title").split()) <= 8:
                after = m.group("text")
                if len(after.split()) >= 4 or _SENTENCE_OPENS.match(after):
                    return m.group("title").strip(), 1
            return rest, 1
        if i + 1 < len(self.lines):
            nxt = self.lines[i + 1]
            if (
                nxt.bold
                and nxt.page == line.page
                and -0.5 <= (nxt.bbox[1] - line.bbox[3]) / max(1.0, line.bbox[3] - line.bbox[1]) < 0.8
                and len(nxt.text) < 90
                and not NUMBERED.match(nxt.text)
                and not parse_caption(nxt.text)
                and not rest.endswith(".")
            ):
                return f"{rest} {nxt.text}", 2
        return rest.rstrip("."), 1

    def _annex(self, i: int, heading: bool = False) -> tuple[str, str | None, str, int] | None:
        """(letter, status, title, lines consumed) for an annex heading at line i: "Annex B
        (informative)", or an annex or appendix set as a heading without a status (``heading``: the
        line is known to be set apart as one)."""
        line = _unmarked(self.lines[i])
        m = ANNEX.match(line.text.replace("AnnexA", "Annex A"))
        if not m or line.page in self.toc_pages:
            return None
        rest = m.group("rest").strip()
        following = [ln.text for ln in self.lines[i + 1 : i + 4]]
        status_text = rest if _STATUS.match(rest) else (following[0] if following else "")
        sm = _STATUS.match(status_text)
        if not sm:
            return self._plain_annex(i, m, heading)
        status = "informative" if re.sub(r"\s", "", sm.group("status")).lower().startswith("inf") else "normative"
        used = 1 if status_text is rest else 2
        after = _STATUS.sub("", status_text).strip(" )")
        title = after or (following[used - 1] if len(following) >= used else "")
        if not after and title:
            used += 1
        return _annex_letter(m), status, title.strip(), used

    def _plain_annex(self, i: int, m: re.Match[str], heading: bool = False) -> tuple[str, str | None, str, int] | None:
        line = self.lines[i]
        rest = m.group("rest").strip(" :.\u2013\u2014-")
        if (len(m.group("letter")) > 1 and not _numbered_appendix(m)) or len(line.text) > 90:
            return None
        set_apart = heading or (self.typography and self._typographic(line, ""))
        if not (set_apart or m.group("word").isupper()):
            return None
        if rest:
            if not (_title_ok(rest) and rest[0].isupper() and (set_apart or rest.isupper())):
                return None  # "Appendix I contains ..." is a sentence
            nxt = self.lines[i + 1] if i + 1 < len(self.lines) else None
            if whole := self._wrapped_title(rest, line, nxt):
                return _annex_letter(m), None, whole, 2
            return _annex_letter(m), None, rest, 1
        nxt = self.lines[i + 1] if i + 1 < len(self.lines) else None
        if nxt is None or not _title_ok(nxt.text) or nxt.page != line.page:
            return None
        title, used = nxt.text, 2
        after = self.lines[i + 2] if i + 2 < len(self.lines) else None
        if whole := self._wrapped_title(title, nxt, after):
            title, used = whole, 3
        return _annex_letter(m), None, title, used

    def _wrapped_title(self, title: str, line: Line, nxt: Line | None) -> str | None:
        """``title`` (line's) with its rest, where it is a display title (set 3 points or more above the
        body) wrapped onto the next line, set as large and in the same weight right under it on the same
        page: "Demolition, dismantling and" / "structural alteration", "Implementing Performance-" /
        "Based Seismic Design"; not a lead paragraph set as large in a lighter weight under a heading
        ("Purpose" / "This guide has been prepared ..."). None when it is not wrapped."""
        if (
            nxt is None
            or nxt.page != line.page
            or line.size < self.body_size + 3
            or abs(nxt.size - line.size) >= 0.5
            or nxt.bold != line.bold
            or nxt.bbox[1] - line.bbox[3] >= 0.5 * max(1.0, line.bbox[3] - line.bbox[1])
        ):
            return None
        rest = nxt.text.strip()
        return f"{title}{rest}" if title.endswith("-") else f"{title} {rest}"

    def _body_start(self) -> int:
        for i in range(len(self.lines)):
            found = self._numbered(i)
            if found and found.number == (1,):
                for j in range(i + 1, min(len(self.lines), i + 80)):
                    nxt = self._numbered(j)
                    if nxt and nxt.number == (1, 1):
                        return i
        # no "1" followed by "1.1": the first numbered heading set as a heading opens the body
        for i in range(len(self.lines)):
            found = self._numbered(i)
            if found and found.typographic and found.number[0] < 100:
                later = sum(
                    1 for j in range(i + 1, min(len(self.lines), i + 400)) if (h := self._numbered(j)) and h.typographic
                )
                if later >= 2:
                    return i
        return len(self.lines)

    def _accept(self, found: Heading, i: int) -> bool:
        if found.code in self.seen_codes:
            return False
        if len(found.number) == 1 and not found.strong and self._counted_list(i, found.number[0]):
            return False
        if plausible_next(self.current_number, found.number, jump=9 if found.strong else 3):
            return True
        # "CHAPTER 5" after another code's "706.3.2" that ended chapter 4: chapters follow one another
        if found.strong and self.chapter is not None and self.chapter < found.number[0] <= self.chapter + 2:
            return True
        # a heading set in bold needs no sequence (codes that skip numbers or quote other codes' ones)
        return self.typography and found.typographic and len(found.number) > 1

    def _quote_end(self, found: Heading, i: int) -> int | None:
        """A heading numbered as another code's clauses are ("403.9", "104.11": three or four digits
        first), in a document that has only a few of them, out of its sequence, and after which the
        sequence carries on as if it were not there ("2.2.1", then "403.9 Voluntary seismic improvements."
        set in bold, then "2.2.2"): that code's clause quoted in the text, not a section of this one. A
        code that numbers its sections after another code's throughout (UFC 3-301-01 modifies IBC
        "1603.2" and its own "2-4.3" in turn) keeps them. The line where the sequence resumes, else None."""
        if found.number[0] < 100 or self._foreign_numbered >= MIN_FOREIGN_HEADINGS:
            return None
        if self.current_number is None or plausible_next(self.current_number, found.number, jump=3):
            return None
        for j in range(i + found.used, min(len(self.lines), i + QUOTE_LOOKAHEAD_LINES)):
            if self._annex(j):
                return None
            after = self._numbered(j)
            if after is None or after.code in self.seen_codes or (len(after.number) == 1 and not after.strong):
                continue  # "3. New or relocated elements ..." in the quote is a list item
            if plausible_next(found.number, after.number, jump=3):
                return None
            if plausible_next(self.current_number, after.number, jump=3):
                return j
        return None

    def _counted_list(self, i: int, n: int) -> bool:
        """Line i ("5 Total scour depth") counts on from "4 ..." just above it: a figure's key or a
        numbered list, not a chapter heading."""
        page = self.lines[i].page
        for line in self.lines[max(0, i - 2) : i]:
            m = re.match(r"^(\d{1,2})\s", line.text)
            if line.page == page and m and int(m.group(1)) == n - 1:
                return True
        return False

    # ---- the pass ----
    def parse(self) -> list[Draft]:
        start = self._body_start()
        if start == len(self.lines):  # no numbered clauses: the body's paragraphs may be numbered
            self.paragraphs = self._numbered_paragraphs()
        self._front_matter(self.lines[:start])
        i = start
        current: Draft | None = None
        while i < len(self.lines):
            line = self.lines[i]
            annex = self._annex(i)
            if annex and (self.current_annex is None or _later_annex(annex[0], self.current_annex)):
                letter, status, title, used = annex
                self.current_annex, self.current_number = letter, None
                current = self._open(Draft(f"annex_{letter}", "annex", title, extra={"status": status}), line)
                current.lines += self.lines[i + 1 : i + used]
                i += used
                continue
            if self.current_annex and self.current_annex.isdigit():
                pass  # a numbered appendix's lines are its text: "12." in its form is not a clause 1.2
            elif self.current_annex:
                text = line.text
                if text[:1] == OCR_LETTER_SLIPS.get(self.current_annex[0]):
                    text = self.current_annex[0] + text[1:]
                m = re.match(
                    r"\s?".join(map(re.escape, self.current_annex))  # "A 1.3" read for A1.3
                    + r"\s?(?P<sep>[.\-]?)\s?(?P<num>[\dSlIO]{1,2}(?:\s?\.\s?[\dSlIO]{1,2}){0,4})\.?"
                    r"(?:(?:\s*[\u2013\u2014]\s*|\s+-\s+|\s+)(?P<rest>.*))?$",
                    text,
                )
                parts = re.split(r"\s?\.\s?", m.group("num")) if m else []
                number = ocr_number(parts, self.current_number) if m else ()
                if m and not re.search(r"\d", m.group("num")):
                    # no digit at all ("A.S"): a clause only where the sequence expects it, with a title
                    if not (plausible_next(self.current_number, number) and m.group("sep") and m.group("rest")):
                        m = None
                rest = m.group("rest") if m else None
                if m and ((rest and _title_ok(rest) and rest[0].isupper()) or (not rest and i + 1 < len(self.lines))):
                    sep = "-" if m.group("sep") == "-" else "."  # "B-16.1" keeps its hyphen
                    code = f"{self.current_annex}{sep}" + ".".join(map(str, number))
                    typographic = self.typography and self._typographic(line, text.split()[0])
                    if code not in self.seen_codes and (
                        plausible_next(self.current_number, number)
                        or self.current_number is None
                        or (typographic and len(number) > 1)
                    ):
                        self.current_number = number
                        self.seen_codes.add(code)
                        title = (
                            (m.group("rest") or self.lines[i + 1].text).rstrip(".")
                            if typographic
                            else (m.group("rest") or self.lines[i + 1].text)
                        )
                        parent = (
                            f"{self.current_annex}{sep}" + ".".join(map(str, number[:-1]))
                            if len(number) > 1
                            else f"annex_{self.current_annex}"
                        )
                        current = self._open(Draft(code, "clause", title, number, parent), line)
                        used = 1 if m.group("rest") else 2
                        current.lines += self.lines[i + 1 : i + used]
                        i += used
                        continue
            elif i >= self.quote_ends:
                found = self._numbered(i)
                accepted = found is not None and (i == start or self._accept(found, i))  # the body opens at one
                quote_end = self._quote_end(found, i) if found and accepted and i != start else None
                if quote_end is not None:
                    self.quote_ends = quote_end  # the quote's lines are text of the section it is quoted in
                elif found and accepted:
                    self.current_number = found.number
                    if found.strong:
                        self.chapter = found.number[0]
                    self.seen_codes.add(found.code)
                    current = self._open(
                        Draft(found.code, "clause", found.title.strip(), found.number, _parent_code(found.code)), line
                    )
                    current.lines += self.lines[i + 1 : i + found.used]
                    i += found.used
                    continue
            if current is None:  # nothing before clause 1 reached the front matter: cannot happen
                current = self._open(Draft("body", "front", "Body"), line)
            current.lines.append(line)
            i += 1
        return self.drafts

    def _open(self, draft: Draft, first: Line) -> Draft:
        draft.lines.append(first)
        self.drafts.append(draft)
        return draft

    def _front_matter(self, lines: list[Line]) -> None:
        """Split what comes before clause 1 at unnumbered headings (Foreword, National annex ...):
        the cover (first pages with little text, before any heading) and contents pages get kinds of
        their own, and a document without numbered clauses is cut into heading- or page-sized parts. In
        a document whose paragraphs are numbered, a heading those paragraphs follow is a part of the body
        (a clause, their parent), not front matter."""
        current: Draft | None = None
        seen: set[str] = set()
        cover = self._cover_pages(lines)
        first = len(self.drafts)

        def open_(title: str, kind: str, line: Line) -> Draft:
            code = slug(title)
            n = 2
            while code in seen:
                code, n = f"{slug(title)}-{n}", n + 1
            seen.add(code)
            return self._open(Draft(code, kind, title), line)

        part: Draft | None = None  # the heading part numbered paragraphs belong to
        # The headings still open, each with its typographic rank: a born-digital document that does not
        # number its headings sets a chapter's larger or bolder than its sections' ("Groundwork" 28 pt,
        # "Excavations" 11 pt bold, "Inspections and reports" 10 pt bold italic), and a heading belongs
        # to the nearest heading above it that is set stronger.
        levels: list[tuple[tuple[float, bool, bool], Draft]] = []
        ranked: list[tuple[tuple[float, bool, bool], Draft]] = []
        whole = len(lines) == len(self.lines)  # no numbered clauses: an appendix is found here or nowhere
        annex_open: Draft | None = None  # the appendix the lines are in (its first line is its heading)
        skip = 0
        for k, line in enumerate(lines):
            if skip:  # the title lines of an annex heading, already taken
                skip -= 1
                continue
            prev = lines[k - 1] if k else None
            nxt = lines[k + 1] if k + 1 < len(lines) else None
            text = line.text.strip()
            named = _ZERO_NUMBER.sub("", text)  # "0 Introduction", "0. FOREWORD": a heading numbered 0
            in_toc = line.page in self.toc_pages
            number = self.paragraphs.get(id(line))
            if number is not None and (current is None or current.kind in ("front", "clause", "cover")):
                if current is None or current.kind == "cover":
                    part = None
                elif current.kind == "front":  # a heading that numbered paragraphs belong to is body, not front matter
                    part, current.kind = current, "clause"
                title, parent = (part.title, part.code) if part else ("", None)
                current = self._open(Draft(str(number), "clause", title, (number,), parent), line)
                continue
            if line.page in cover:
                if current is None or current.kind != "cover":
                    current = open_("Cover", "cover", line)
                else:
                    current.lines.append(line)
                continue
            heading = (
                not in_toc
                and 2 < len(named) < 70
                and len(named.split()) <= 9
                and named[0].isupper()
                and not re.search(r"[.,;:]$", named)
                and (prev is None or self._may_follow(line, prev, nxt))
                and nxt is not None
                and nxt.page == line.page
                and not parse_caption(text)
                # pieces set wide apart on one baseline: a table's column heads ("MATERIAL  VIEWING POSITION
                # REFERENCE"), the answers on a flowchart's arrows ("Yes    Yes"), not a title
                and line.cells < 2
                and not self._in_drawing(line)
            )
            if (
                heading
                and self.typography
                and self.born_digital
                and current is not None
                and not (line.bold or line.size >= self.body_size + 1.5)
            ):
                heading = False  # where headings are set in bold, a plain line is running text
            annex = self._annex(k, heading=True) if heading and whole else None
            if annex and (self.current_annex is None or _later_annex(annex[0], self.current_annex)):
                letter, status, title, used = annex  # "Appendix 1: Inspection form": an annex, not front matter
                self.current_annex = letter
                current = self._open(Draft(f"annex_{letter}", "annex", title, extra={"status": status}), line)
                current.lines += lines[k + 1 : k + used]
                annex_open, skip = current, used - 1
                levels.clear()
                continue
            if heading and annex_open is not None:
                size = annex_open.lines[0].size
                if line.size and size and line.size >= size - 0.5:
                    annex_open = None  # a heading set as large as the appendix's: the appendices have ended
                else:  # a smaller heading inside an appendix: a part of it ("Access on site" in a checklist)
                    current = open_(text, "clause", line)
                    current.parent = annex_open.code
                    continue
            if heading and (wrapped := self._wrapped_title(named, line, nxt)):
                named = wrapped
            if current is None or heading or (in_toc and current.kind != "contents") or current.kind == "cover":
                title = "Contents" if in_toc else (named if heading else "Front matter")
                current = open_(title, "contents" if in_toc else "front", line)
                if heading and self.born_digital and line.size:
                    rank = self._rank(line)
                    while levels and levels[-1][0] <= rank:
                        levels.pop()
                    current.parent = levels[-1][1].code if levels else None
                    levels.append((rank, current))
                    ranked.append((rank, current))
                continue
            if current.kind == "contents" and not in_toc:
                current = open_("Front matter", "front", line)
                continue
            if (
                line.page != current.lines[-1].page
                and current.kind == "front"
                and sum(len(ln.text) for ln in current.lines) > 1500
            ):  # no heading for a page or more: page-sized parts
                above = current.parent
                current = open_(f"{current.title.split(' (page')[0]} (page {line.page})", "front", line)
                current.parent = above
                continue
            current.lines.append(line)

        if len(ranked) > 1 and ranked[0][0] > max(rank for rank, _ in ranked[1:]):
            # the first heading set larger than every later one is the document's title, not a chapter
            for draft in self.drafts:
                if draft.parent == ranked[0][1].code:
                    draft.parent = None
        self._opening_text(self.drafts[first:])

    @staticmethod
    def _opening_text(drafts: list[Draft]) -> None:
        """The parts before clause 1 that are the text's own opening, not the publisher's matter, become
        clauses: from a heading named as an opening ("Introduction", "0 Introduction", "Purpose") to the
        next one named as an element of publishing ("Acknowledgements", "References"). A part without a
        heading of its own ("Front matter", "Purpose (page 6)") is what the part before it is."""
        substance = False
        for draft in drafts:
            if draft.kind in ("cover", "contents"):
                substance = False
                continue
            if _OPENING.fullmatch(draft.title):  # a heading numbered 0 is titled without its number
                substance = True
            elif _PUBLISHING.search(draft.title):
                substance = False
            if substance and draft.kind == "front":
                draft.kind = "clause"

    @staticmethod
    def _rank(line: Line) -> tuple[float, bool, bool]:
        """How strongly a heading is set: its size (to half a point), then bold, then upright."""
        return (round(line.size * 2) / 2, line.bold, not line.italic)

    def _in_drawing(self, line: Line) -> bool:
        """The line's middle lies inside a figure's box on its page."""
        x, y = (line.bbox[0] + line.bbox[2]) / 2, (line.bbox[1] + line.bbox[3]) / 2
        return any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in self.drawings.get(line.page, []))

    def _may_follow(self, line: Line, prev: Line, nxt: Line | None) -> bool:
        """A heading may follow the line above: it ends a paragraph or a page, or the line is set apart
        from it. Not after "... through clauses:" (a list or a table follows, on this page or overleaf,
        its head often in bold: "Paragraph  Item"), unless the line is set apart and heads numbered
        paragraphs (a guide naming its parts: "... into four sections:", then "Section 1: Preparing
        for work" over paragraph 6); nor after a clause's number alone ("A1.1(1)", a cell of a table of
        clauses: its next row follows)."""
        if prev.text.rstrip().endswith(":"):
            return nxt is not None and id(nxt) in self.paragraphs and self._set_apart(line, prev)
        if prev.page != line.page or self._set_apart(line, prev):
            return True
        return re.search(r"[.)]\s*$", prev.text) is not None and not _CLAUSE_CELL.fullmatch(prev.text.strip())

    def _set_apart(self, line: Line, prev: Line) -> bool:
        """A line set in bold or a larger size than the line above it (a heading after a paragraph
        that ends without a full stop, e.g. a list, or a checklist's last question). It counts where
        the body is plain and the fonts are the document's own (born digital), also when the headings
        are not numbered ("Welfare" after "... or inside buildings?")."""
        apart = line.bold and not prev.bold or line.size >= prev.size + 1.5
        return apart and (self.typography or self.plain_body and self.born_digital)

    def _cover_pages(self, lines: list[Line]) -> set[int]:
        """The first page(s) before any heading with little text: the cover and title pages. A page's
        text is all of it, also what follows clause 1 on it: a foreword in one column of a page whose
        other column opens the clauses ("0. FOREWORD" beside "3.1.1 ...") is not a cover."""
        front = {line.page for line in lines}
        by_page: dict[int, int] = {}
        for line in self.lines:
            if line.page in front:
                by_page[line.page] = by_page.get(line.page, 0) + len(line.text)
        cover: set[int] = set()
        for page in sorted(by_page)[:2]:
            if by_page[page] > 600 or page in self.toc_pages:
                break
            cover.add(page)
        return cover


def _parent_code(code: str) -> str | None:
    """ "5.3.2" -> "5.3"; "2-1.1" -> "2-1"; "2-1" -> "2" (its chapter); "5" -> None."""
    if "." in code:
        return code.rsplit(".", 1)[0]
    if "-" in code:
        return code.split("-", 1)[0]
    return None


def _join(lines: list[Line]) -> tuple[str, list[list[int]]]:
    """Section text and its page map: [[char offset, page], ...] at every page change."""
    text = ""
    page_map: list[list[int]] = []
    for line in lines:
        if not page_map or page_map[-1][1] != line.page:
            page_map.append([len(text) + (1 if text else 0), line.page])
        text = f"{text}\n{line.text}" if text else line.text
    return text, page_map


def build_sections(doc: DocId, title: str, pages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every section entry of a document, keyed by store key, in reading order."""
    pages = strip_running_lines(pages)
    parser = _Parser(doc, pages)
    drafts = parser.parse()
    entries: dict[str, dict[str, Any]] = {}
    caption_owner: dict[tuple[int, str, str], str] = {}
    for draft in drafts:
        key = object_key(doc, draft.code)
        if key in entries:  # a repeated heading (OCR) continues the earlier section
            key = object_key(doc, f"{draft.code}-{sum(1 for k in entries if k.startswith(key))}")
        text, page_map = _join(draft.lines)
        for line in draft.lines:
            cap = parse_caption(line.text)
            if cap:
                caption_owner.setdefault((line.page, cap[0], cap[1]), key)
        entries[key] = {
            "key": key,
            "document": doc.display,
            "doc_key": doc.key,
            "section": draft.code,
            "kind": draft.kind,
            "title": draft.title,
            "text": text,
            "page_map": page_map,
            "pages": sorted({ln.page for ln in draft.lines}),
            "parent": object_key(doc, draft.parent) if draft.parent else None,
            **draft.extra,
        }
    # Parents that were never seen as headings (OCR lost them) fall back to the nearest ancestor.
    for entry in entries.values():
        while entry["parent"] and entry["parent"] not in entries:
            code = split_key(entry["parent"])[2]
            up = code.rsplit(".", 1)[0] if "." in code else None
            entry["parent"] = object_key(doc, up) if up else None
    ordered = list(entries)
    # Tables, figures and expressions as entries of their own, parented by the clause around them.
    for page in pages:
        if page["page"] in parser.toc_pages:
            continue  # a list of figures names every caption: not the objects themselves
        for obj in page["objects"]:
            parent = caption_owner.get((page["page"], obj["kind"], obj["number"])) or _section_on_page(
                entries, page["page"]
            )
            number = _annex_number(obj["number"], _annex_of(entries, parent))
            if number is None:
                continue  # "Figure e.8" outside an Annex C: its line stays in the text around it
            code = f"{obj['kind']}_{number}"
            key = object_key(doc, code)
            body = obj.get("body", "")
            text = obj["caption"] + ("\n" + body if body else "")
            if key in entries and obj.get("reads_on") and obj["kind"] == "figure" and obj["region"] != "layout":
                continue  # "... are given in" / "Figure 4.1 (a)) and ...": a sentence, its lines left in the text
            if key in entries:  # continued on a following page
                prior = entries[key]
                prior["text"] += "\n" + body
                prior["pages"] = sorted(set(prior["pages"]) | {page["page"]})
                prior["page_map"].append([len(prior["text"]) - len(body), page["page"]])
                prior.setdefault("continued", []).append({"page": page["page"], "bbox": obj["bbox"]})
                continue
            entries[key] = {
                "key": key,
                "document": doc.display,
                "doc_key": doc.key,
                "section": code_label(code),  # "Table 7.4a" as printed, not "Table 7.4A"
                "kind": obj["kind"],
                "title": obj["title"],
                "text": text,
                "page_map": [[0, page["page"]]],
                "pages": [page["page"]],
                "parent": parent,
                "number": number,
                "raw_number": obj["number"],
                "caption": obj["caption"],
                "bbox": obj["bbox"],
                "rows": obj.get("rows"),
            }
            _insert_after(ordered, parent, key)
    _table_continued(entries)
    _table_notes(entries)
    _expressions(doc, entries, ordered, pages)
    for i, key in enumerate(ordered):
        entries[key]["previous"] = ordered[i - 1] if i else None
        entries[key]["next"] = ordered[i + 1] if i + 1 < len(ordered) else None
    return {key: entries[key] for key in ordered}


_FOOTNOTE_LINE = re.compile(r"[a-h]\.? [A-Z]")  # a table's footnote: "b The value of db may be ...", "a. The"
_NOTE_NUMBER = re.compile(r"(?:NOTE|Note)\s+(\d{1,2})\b")
_CAPTION_GOES_ON = re.compile(r"[a-z][a-z ,()-]*$")  # a caption's title wrapped onto a second line
MAX_TABLE_NOTE_CHARS = 1500  # a table's notes; more is the clause going on
MAX_PAGE_NOTES_CHARS = 4000  # a page of a table's lettered notes gone on from the page before
# The letters of a table's lettered notes opening its lines; a text layer may read a column of markers
# before their notes' words ("a. b. c. Where the tabulated value ...").
_NOTE_MARKERS = re.compile(r"(?:^|(?<=\n))((?:[a-y]\. ?)+|[a-y] )(?=(?:\\\d{1,2}\\ ?)?[A-Z])")
_FIRST_LETTERED_NOTE = re.compile(r"a\.? (?:[b-y]\. )*[A-Z]")
_PARAGRAPH_START = re.compile(r"\(\d{1,2}\)|[1-9]\d?(?:\.\d{1,2})+\s+[A-Z]")
_PARAGRAPH_OPENS = re.compile(r"(?:^|\n)\(\d{1,2}\)")


_MARKED_NOTE = re.compile(r"(?:[a-z]|\d{1,2})\)|\([a-z\d]\)|[*†‡§]{1,3}")


def _marked_in(table_text: str, text: str, start: int) -> bool:
    """The line at ``start`` opens a note whose marker ("a)", "(1)", "*") the table's rows carry at the
    end of a cell ("| Garden with trees a) | 0,7 |"): a list's item "a) for ..." after a table is not
    its note, unless the table marks it."""
    m = _MARKED_NOTE.match(text, start)
    if m is None or not text[m.end() : m.end() + 2].strip() or _PARAGRAPH_START.match(text, start):
        return False  # "(2) Horizontal actions ...": the clause's next paragraph, whatever a cell holds
    return re.search(r"[^\s|]\s+" + re.escape(m.group(0)) + r"\s*(?:\||$)", table_text, re.M) is not None


_SUPERSCRIPTS = re.compile(r"[a-z]{2}(\d{1,2}(?:,\s?\d{1,2})*)(?=[\s,.;:)]|$)")  # "Objectives1,2": marks 1 and 2
_NUMBERED_NOTE = re.compile(r"(\d{1,2}) \S")


def _superscript_note(caption: str, text: str, start: int) -> bool:
    """The line at ``start`` opens a footnote numbered as a mark the table's caption carries printed
    as a superscript on its last word ("Table 4-1(a) Structural Performance Objectives1,2" /
    "1 CP = Collapse Prevention; ..."): a line opening with a number under a table is otherwise a
    list's item or a paragraph of the clause."""
    m = _NUMBERED_NOTE.match(text, start)
    if m is None or _PARAGRAPH_START.match(text, start):
        return False
    marks = {int(n) for group in _SUPERSCRIPTS.findall(caption) for n in re.split(r",\s?", group)}
    return int(m.group(1)) in marks


def _note_runs_on(table_text: str) -> bool:
    """The table's text ends in one of its notes, mid-sentence: the note runs on over the page."""
    lines = table_text.rstrip().split("\n")
    if lines[-1].startswith("|") or lines[-1].rstrip().endswith((".", ":", ";", "!", "?", ")")):
        return False
    for line in reversed(lines[-12:]):
        if line.startswith("|"):
            return False
        if NOTE_LINE.match(line) or _FOOTNOTE_LINE.match(line):
            return True
    return False


def _table_notes(entries: dict[str, dict[str, Any]]) -> None:
    """A NOTE or footnote printed right under a table belongs to it ("Table 5.2 NOTE", "Table C.2
    footnote b"), though it runs on in the text of the clause around the table: the NOTE and footnote
    lines after the table's caption in that clause (its title may wrap onto a second line), up to the
    next paragraph, caption or heading and not past the page (the next page's text is not a note: a
    table there whose caption OCR could not read would go with it), move to the end of the table's
    text (each line of the page is in one section only, so an answer does not quote it twice). Notes
    that go on numbering the notes of the paragraph before the table ("NOTE 1" above it, "NOTE 2"
    under it) stay that paragraph's: a table's own notes start again at 1. A table whose notes (already
    its own, on a page it runs on to) end mid-sentence takes the lines that go on with it in lower case
    after its caption in the clause: the note's rest, on the next page, and the notes after it. A table
    printed over pages with its caption again on each has its notes under its last part, lettered ones
    also after a line of its own ("FOR SI: ..."), and lettered notes go on at the next page's top while
    their letters do ("c." at the foot, "d." on)."""
    for entry in entries.values():
        parent = entries.get(entry.get("parent") or "")
        if entry["kind"] != "table" or parent is None or not entry.get("caption"):
            continue
        text = parent["text"]
        at = _caption_at(text, entry["caption"])
        if at < 0:
            continue
        page_map = parent.get("page_map", [])
        at = _last_part(text, entry, at, page_map)
        start = text.find("\n", at) + 1
        runs_on = (
            bool(start) and _note_runs_on(entry["text"]) and page_at(page_map, start, 0) != page_at(page_map, at, 0)
        )
        second_end = text.find("\n", start)
        if start and second_end > 0 and not runs_on and _CAPTION_GOES_ON.match(text, start, second_end):
            start = second_end + 1
        while (
            start and (line_end := text.find("\n", start)) > 0 and not CHANGE_MARK.sub("", text[start:line_end]).strip()
        ):
            start = line_end + 1  # a line of change marks alone ("\\4\\ /4/") where a note was deleted
        below = start
        skipped = bool(start) and not _note_opens(entry, text, start, runs_on)
        if skipped:
            # a line of the table's own under its grid ("FOR SI: 1 foot = 304.8 mm") before its lettered
            # notes "a.", "b." ...: the notes are the table's; the line stays where it is
            after = text.find("\n", start) + 1
            same_page = after and page_at(page_map, after, 0) == page_at(page_map, start, 0)
            start = after if same_page and not _PARAGRAPH_START.match(text, start) else 0
            if start and not _FIRST_LETTERED_NOTE.match(text, start):
                start = 0
        page, end = page_at(page_map, start, default=entry["pages"][-1]), 0
        if start:
            end = _note_end(text, start, page_map, page, MAX_TABLE_NOTE_CHARS)
            if skipped and _note_letters(text, start, end)[:2] != ["a", "b"]:
                start = 0  # one line "a ..." after a line of the clause is no series of notes
        if not start and (end := _key_overleaf(entry, text, below, page_map)):
            start = below  # the table filled its pages; its key and notes open the page after
            page = page_at(page_map, end, default=entry["pages"][-1])
        elif not start:  # the table's own lettered notes ("i." its last) going on at the next page's top ("j.")
            start = _next_page_notes(entry, text, page_map)
            if not start:
                continue
            page = page_at(page_map, start, default=entry["pages"][-1])
            end = _note_end(text, start, page_map, page, MAX_PAGE_NOTES_CHARS)
        # lettered notes going on over the page ("c. ..." at the foot, "d. ..." at the next page's top)
        while (nxt := end + 1) < len(text) and page_at(page_map, nxt, default=page) != page:
            if not _letters_go_on(_note_letters(text, start, end), text, nxt):
                break
            page = page_at(page_map, nxt, default=page)
            end = _note_end(text, nxt, page_map, page, MAX_PAGE_NOTES_CHARS)
        note = text[start:end].strip()
        if not note or note[:40] in entry["text"] or _continues_notes(text[:at], note):
            continue
        base = len(entry["text"]) + 1 - start  # the note's offsets in the table's text
        first_page = page_at(page_map, start, 0)
        for a, p in page_map:  # the pages the note is printed on, from where it starts on each
            if start <= a < end or (a <= start and p == first_page):
                if p != entry["pages"][-1]:
                    entry["page_map"].append([max(a, start) + base, p])
                    entry["pages"] = sorted(set(entry["pages"]) | {p})
        entry["text"] += "\n" + note
        _cut(parent, start, end)


_KEY = re.compile(r"([A-Z]{2,6}|\d{1,4})(?=\s*[-–—:]?\s+\S)")  # "NBM - No benchmark ...", "1 Building Type ..."


def _key_overleaf(entry: dict[str, Any], text: str, start: int, page_map: list[list[int]]) -> int:
    """A table that fills its pages, its caption on the first, and its key and notes at the top of the
    page after its last, with no caption there (UFC 3-301-01's Table 4-2: "LS Only buildings ...", "NBM -
    No benchmark year ...", "1 Building Type refers ...", "NBC - ...", "1982 - TM 5-809-10 ..."): the
    clause's text resumes there with them, and they are the table's. A line of the key opens with what
    the table's cells print ("LS", "NBM", "1982") or with the next number of notes numbered from 1; a
    line that opens with neither goes on with the line above when that ends mid-sentence or when it
    opens in lower case ("a. The building ..."), and one line of neither (a sentence, a list's title)
    is the key's when the key goes on right after it. Returns where the key's last line ends, or 0 when
    the lines there are no key (it takes two lines of it at least)."""
    page = page_at(page_map, start, 0)
    if not start or page != entry["pages"][-1] + 1 or [start, page] not in page_map:
        return 0
    cells = entry["text"]
    number, keyed, end, loose = 1, 0, 0, False
    lines = text[start:].split("\n")
    at = start
    for k, line in enumerate(lines):
        token = key.group(1) if (key := _KEY.match(line)) else ""
        opens = bool(token) and (
            token == str(number)
            or (
                (not token.isdigit() or len(token) == 4)  # a year, not a note's number out of sequence
                and re.search(r"(?<![A-Za-z0-9])" + re.escape(token), cells) is not None
            )
        )
        if k == 0 and not opens:
            return 0
        if opens:
            number += token == str(number)
            keyed, end, loose = keyed + 1, at + len(line), False
        elif _PARAGRAPH_START.match(line) or parse_caption(line) or not line.strip():
            break
        elif line[:1].islower() or not lines[k - 1].rstrip().endswith((".", ":", ";")):
            end = at + len(line) if not loose else end
        elif loose:
            break
        else:
            loose = True  # one line of neither: the key's if it goes on after it
        at += len(line) + 1
    return end if keyed >= 2 else 0


def _next_page_notes(entry: dict[str, Any], text: str, page_map: list[list[int]]) -> int:
    """Where the clause around a table goes on with the table's lettered notes on the page after the
    table's last: its text on that page opens with the letter after the table's last note's; 0 if not."""
    starts = [a for a, page in page_map if page == entry["pages"][-1] + 1 and a > 0]
    letters = _note_letters(entry["text"], 0, len(entry["text"]))
    return starts[0] if starts and _letters_go_on(letters, text, starts[0]) else 0


def _letters_go_on(letters: list[str], text: str, at: int) -> bool:
    """The line at ``at`` opens the lettered note after the last of ``letters`` ("d." after "c.")."""
    line_end = text.find("\n", at)
    opening = _note_letters(text, at, line_end if line_end >= 0 else len(text))
    return bool(letters) and opening[:1] == [chr(ord(letters[-1]) + 1)]


def _note_letters(text: str, start: int, end: int) -> list[str]:
    """The letters of the lettered notes opening lines between ``start`` and ``end``, in order."""
    return [c for m in _NOTE_MARKERS.finditer(text, start, end) for c in m.group(1) if c.isalpha()]


def _note_opens(entry: dict[str, Any], text: str, start: int, runs_on: bool) -> bool:
    """The line at ``start``, right under a table's caption in the clause around it, opens its note."""
    return bool(
        NOTE_LINE.match(text, start)
        or _FOOTNOTE_LINE.match(text, start)
        or _marked_in(entry["text"], text, start)
        or _superscript_note(entry["caption"], text, start)
        or (runs_on and text[start : start + 1].islower())
    )


def _note_end(text: str, start: int, page_map: list[list[int]], page: int, most: int) -> int:
    """Where a table's note opening at ``start`` ends: before the next paragraph or caption, at most
    ``most`` characters on, and not past its page."""
    first, *rest = text[start:].split("\n")
    end = start + len(first)
    for line in rest:
        if (
            _PARAGRAPH_START.match(line)
            or parse_caption(line)
            or end - start >= most
            or page_at(page_map, end + 1, default=page) != page
        ):
            break
        end += 1 + len(line)
    return end


def _last_part(text: str, entry: dict[str, Any], at: int, page_map: list[list[int]]) -> int:
    """A table printed over several pages with its caption printed again on each ("Table 3-1 Replacement
    for ..." on each of eight pages): its notes are under its last part, after the caption's last
    printing on one of its pages. ``at`` is the first."""
    words = entry["caption"].split()[:6]
    if len(words) < 3:  # "Table 5.1" alone could open a line that cites it
        return at
    printed = re.compile(r"(?:^|(?<=\n))" + r"\s+".join(re.escape(w.rstrip(",;:.")) for w in words))
    for m in printed.finditer(text, at + 1):
        if page_at(page_map, m.start(), 0) in entry["pages"]:
            at = m.start()
    return at


_WORDS = re.compile(r"[a-z]{2,}")


def _table_continued(entries: dict[str, dict[str, Any]]) -> None:
    """A table that runs on over the next pages without its caption, its column heads printed again at
    the top of each (UFC 3-301-01's Table 2-2 over four pages): what follows them on that page, up to a
    new paragraph or caption, is the table's, not text of the clause around it, so that its rows are
    cited as the table. A page is the table's only when it opens with the table's column heads (its first
    rows before a row of figures, at least four words): nearly all of them among the page's first words.
    A table whose caption is printed again is already joined by its caption."""
    for entry in entries.values():
        parent = entries.get(entry.get("parent") or "")
        if entry["kind"] != "table" or parent is None or not entry.get("rows"):
            continue
        heads: list[str] = []  # its column heads: its first rows (up to three) before a row of figures
        for row in entry["rows"][:3]:
            if heads and any(ch.isdigit() for cell in row for ch in cell):
                break
            heads += [w for cell in row for w in _WORDS.findall(cell.lower())]
        if len(heads) < 4:
            continue
        page = entry["pages"][-1] + 1
        while True:
            starts = {p: a for a, p in parent.get("page_map", [])}
            if page not in starts:
                break
            start = starts[page]
            later = [a for a, p in parent["page_map"] if a > start]
            end = min(later) - 1 if later else len(parent["text"])
            opening = _WORDS.findall(parent["text"][start:end].lower())[: 2 * len(heads)]
            if sum(w in opening for w in heads) < 0.8 * len(heads):
                break
            lines = parent["text"][start:end].split("\n")
            stop = start
            for k, line in enumerate(lines):
                if k and (_PARAGRAPH_START.match(line) or parse_caption(line)):
                    break
                stop += len(line) + (1 if k else 0)
            entry["page_map"].append([len(entry["text"]) + 1, page])
            entry["pages"] = sorted(set(entry["pages"]) | {page})
            entry["text"] += "\n" + parent["text"][start:stop]
            _cut(parent, start, stop)
            page += 1


def _caption_at(text: str, caption: str) -> int:
    """Where a table's caption is printed in the clause around it: the caption whole, or its first line
    when its title's end was set on a second line that is the table's now ("Table 6.1: Recommended
    values ... component" / "for different types of bridge decks ..."); -1 when it is not there."""
    if caption in text:
        return text.find(caption)
    words = caption.split()
    for n in range(len(words) - 1, 2, -1):  # three words at least: "Table 6.1: Recommended", no reference
        if line := re.search(re.escape(" ".join(words[:n])) + r"[ \t]*(?:\n|$)", text):
            return line.start()
    return -1


def _continues_notes(before: str, note: str) -> bool:
    """The note under a table is numbered on from a NOTE of the paragraph the table is printed in."""
    first = _NOTE_NUMBER.match(note)
    opens = [m.start() for m in _PARAGRAPH_OPENS.finditer(before)]
    if first is None or int(first.group(1)) < 2 or not opens:
        return False
    return any(int(n) < int(first.group(1)) for n in _NOTE_NUMBER.findall(before, opens[-1]))


def _cut(entry: dict[str, Any], start: int, end: int) -> None:
    """Take ``text[start:end]`` (and the line break before it) out of a section, its page map kept."""
    gone = end - start + 1  # ``start`` opens a line; the line break before it goes too
    entry["text"] = entry["text"][: start - 1] + entry["text"][end:]
    # a page that started inside the cut now starts where the next line does (at ``start``)
    moved = [[a if a < start else start if a <= end else a - gone, page] for a, page in entry.get("page_map", [])]
    kept: list[list[int]] = []
    for i, (a, page) in enumerate(moved):
        if i and a >= len(entry["text"]):
            continue  # the page held nothing but the cut
        if kept and kept[-1][0] == a:
            kept[-1] = [a, page]  # two pages now start at one offset: the later holds the text there
        elif not kept or kept[-1][1] != page:
            kept.append([a, page])
    entry["page_map"] = kept
    entry["pages"] = sorted({page for _, page in kept}) or entry["pages"]


def _section_on_page(entries: dict[str, dict[str, Any]], page: int) -> str | None:
    """The last clause, annex or front section that has text on ``page`` (or before it)."""
    best = None
    for key, entry in entries.items():
        if entry["kind"] in ("clause", "annex", "front") and entry["pages"] and entry["pages"][0] <= page:
            best = key
    return best


def _numbered_appendix(m: re.Match[str]) -> bool:
    """ "Appendix 2", numbered, not lettered: its digits are not OCR slips for letters ("Annex 0")."""
    return m.group("word").lower() == "appendix" and m.group("letter").isdigit()


def _annex_letter(m: re.Match[str]) -> str:
    """An annex heading's letter ("B", "A1"), OCR slips read as letters ("Annex 0" is Annex D), or a
    numbered appendix's number ("2"): only an appendix's code is all digits."""
    letter = m.group("letter").replace(" ", "")
    if _numbered_appendix(m):
        return letter
    return {"0": "D", "8": "B"}.get(letter[0], letter[0]) + letter[1:]


def _later_annex(letter: str, current: str) -> bool:
    """Annexes come in order: B after A, appendix 10 after appendix 9."""
    return int(letter) > int(current) if letter.isdigit() and current.isdigit() else letter > current


def _annex_of(entries: dict[str, dict[str, Any]], key: str | None) -> str | None:
    while key:
        entry = entries.get(key)
        if entry is None:
            return None
        if entry["kind"] == "annex":
            return str(entry["section"]).removeprefix("annex_")
        key = entry.get("parent")
    return None


def _annex_number(number: str, annex: str | None) -> str | None:
    """Inside Annex B, an object numbered "81" or "8.1" is OCR for "B.1"; inside Annex C, "e.8" or
    "c.8" (a letter read in lower case, the only way the caption reads a letter so) is "C.8". Outside
    an annex of its letter such a number is no object's: None."""
    if annex and number[:1] == OCR_LETTER_SLIPS.get(annex) and len(number) > 1:
        return f"{annex}.{number[1:].lstrip('.')}"
    if number[:1].islower():
        slips = {annex.lower(), *OCR_LOWER_SLIPS.get(annex, "")} if annex and len(annex) == 1 else set()
        return f"{annex}{number[1:]}" if number[0] in slips else None
    return number


def _insert_after(ordered: list[str], parent: str | None, key: str) -> None:
    if parent in ordered:
        idx = ordered.index(parent) + 1
        while idx < len(ordered) and split_key(ordered[idx])[2].split("_")[0] in ("table", "figure", "expression"):
            idx += 1
        ordered.insert(idx, key)
    else:
        ordered.append(key)


def _expressions(
    doc: DocId, entries: dict[str, dict[str, Any]], ordered: list[str], pages: list[dict[str, Any]]
) -> None:
    """Numbered expressions "(5.1)" at the end of a line become expression entries, with the crop of
    the page band that holds the formula (extract-page) when there is one."""
    crops = {(p["page"], e["number"]): e for p in pages for e in p.get("expressions", [])}
    for key in list(ordered):
        entry = entries[key]
        if entry["kind"] not in ("clause", "annex", "front"):
            continue
        lines = entry["text"].split("\n")
        for idx, line in enumerate(lines):
            number = expression_number(line)
            if number is None:
                continue
            formula = line[: EXPRESSION.search(line).start()].strip()  # type: ignore[union-attr]
            if not formula and idx:
                formula = lines[idx - 1].strip()
            if len(formula) > 120 or (formula and formula[0] == "("):
                formula = formula[-120:] if not formula.startswith("(") else formula
            ecode = f"expression_{number}"
            ekey = object_key(doc, ecode)
            if ekey in entries:
                continue
            offset = sum(len(ln) + 1 for ln in lines[:idx])
            page = page_at(entry["page_map"], offset)
            crop = crops.get((page, number))
            if entry["kind"] == "front" and crop is None:
                continue
            entries[ekey] = {
                "key": ekey,
                "document": doc.display,
                "doc_key": doc.key,
                "section": code_label(ecode),
                "kind": "expression",
                "title": code_label(ecode),
                "text": f"{formula} ({number})".strip(),
                "formula": formula,
                "page_map": [[0, page]],
                "pages": [page],
                "parent": key,
                "number": number,
                "raw_number": number,
                "bbox": crop["bbox"] if crop else None,
            }
            _insert_after(ordered, key, ekey)


def with_neighbours(sections: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each section learns the next table/figure/expression after it ("the following table")."""
    keys = list(sections)
    for i, key in enumerate(keys):
        for kind in ("table", "figure", "expression"):
            sections[key][f"next_{kind}"] = next((k for k in keys[i + 1 : i + 12] if sections[k]["kind"] == kind), None)
        parent = sections[key].get("parent")
        sections[key]["parent_title"] = sections[parent]["title"] if parent in sections else ""
    return sections


def page_warnings(pages: list[dict[str, Any]]) -> list[str]:
    """What reading the pages could not do, said once for the document: pages nobody can search, and
    pages whose drawn tables the table finder could not read (their lines were read by baseline)."""

    def listed(numbers: list[int]) -> str:
        return f"{', '.join(map(str, numbers[:20]))}{' ...' if len(numbers) > 20 else ''}"

    out = []
    blank = [p["page"] for p in pages if not p["has_text"] and p["has_image"]]
    if blank:
        out.append(f"{len(blank)} page(s) have an image but no text layer (not searchable): {listed(blank)}")
    failed = [p["page"] for p in pages if p.get("tables_failed")]
    if failed:
        out.append(
            f"{len(failed)} page(s) whose drawn tables could not be read as rows (read line by line): {listed(failed)}"
        )
    return out


def merge_sections(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Every page is in: close the file, build the sections, and warn about pages nobody can search."""
    close_pdf(state["path"])
    doc = state["doc"]
    pages = state["page_results"]
    if not any(p["has_text"] for p in pages):
        raise IngestError(f"{Path(state['path']).name}: no page has a text layer; run OCR on the scan first")
    sections = build_sections(doc_id_of(doc), doc["title"], pages)
    warnings = list(state.get("warnings", [])) + page_warnings(pages)
    if not any(s["kind"] == "clause" for s in sections.values()):
        warnings.append("no numbered clauses found; the document is indexed as front matter only")
    return {"sections": with_neighbours(sections), "warnings": warnings}
