"""Store keys: one normalisation of document designations and object codes.

Every store entry is keyed ``PUBLISHER_DOCCODE_OBJECTCODE`` (DESIGN.md, "Stores"). References are
resolved through these keys, so every spelling of a designation seen in real text -- "EN 1991-1-3",
"BS EN 1991-1-3:2003", "prEN 1991-1-3", OCR slips such as "EN 199 1-1-3" or "EN1991 1-3" -- must map
to the same key. :func:`parse_designation` is the one place that does it, and :func:`doc_id` and
:func:`publisher_name` are the one place that validates what a user types (``--code``, ``--publisher``,
the HTTP form fields).

The grammar covers the families a design office meets: EN / BS EN / NA to BS EN / BS / ISO / EN ISO /
IEC (the European family), IS n (Part m) (BIS), ASCE n-yy, ACI n-yy, AISC n-yy, AS, AS/NZS, NZS, DIN,
CSA, UFC n-nnn-nn, FEMA P-n, PD n and HSE's HSG/INDG series. Codes never carry the year (that is the
edition) and never an underscore, so keys stay safe file names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

# Bodies that issue designations; "BS EN" is CEN's document adopted by BSI, keyed under CEN.
_PREFIXES = r"(?:pr\s*)?(?:(?:BS|DIN|NF|I\.?S\.?|SS|NEN)\s*)?(?:EN\s*ISO|EN|ISO|BS|IEC)"
_DESIGNATION = re.compile(
    r"(?<![A-Za-z])(?P<na>NA(?:\s?\+\s?A\d:\s?\d{4})?\s+(?:to\s+)?)?(?P<prefix>" + _PREFIXES + r")\s*"
    r"(?P<number>\d{3}\s\d(?!\d)|\d{2}\s\d{2}(?!\d)|\d{3,5}(?!\d))"  # OCR may split "199 1"
    r"(?P<parts>(?:\s?[-\u2010-\u2013]\s?\d{1,2}|\s\d{1,2}(?=-\d))*)"  # -1-3 ; "1991 1-3"
    r"(?P<year>\s?:\s?(?:19|20)\d\d)?"
    r"(?:\s?\+\s?A\d:\s?\d{4})?",
)

_DASH = "-\u2010-\u2014"  # hyphen, non-breaking hyphen, figure dash, en and em dash
_YEAR = r"(?:19|20)\d\d(?!\d)"
# A number followed by a unit is a quantity in a sentence ("AS 300 mm"), not a designation.
_NOT_QUANTITY = r"(?!\s?(?:mm|cm|m|km|kN|N|kg|t|s|h|min|Pa|kPa|MPa|GPa|deg|degrees|percent)\b)(?!\s?[%°])"
# Words that make "AS"/"IS" English in capitals: "SUCH AS 2005", "THIS IS 300", "IT IS 450".
_ENGLISH_BEFORE = frozenset(
    "SUCH THIS IT THAT THERE WHAT WHICH WHO HERE SO SAME WELL JUST EXACTLY KNOWN WHERE WHEN ALSO THUS "
    "AS IS ONLY NOW STILL ALWAYS".split()
)


@dataclass(frozen=True)
class DocId:
    """A normalised document designation: publisher and code (no spaces, no year)."""

    publisher: str
    code: str
    edition: str | None = None

    @property
    def key(self) -> str:
        return f"{self.publisher}_{self.code}"

    @property
    def display(self) -> str:
        """The designation as engineers write it: ``EN 1991-1-3``, ``IS 875 (Part 3)``, ``FEMA P-58-6``."""
        return display_code(self.code)


def display_code(code: str) -> str:
    """The printed form of a key's code (the inverse of the normalisation, up to the year)."""
    m = re.match(r"(NA-)?(EN-ISO|EN|ISO|BS|IEC)(\d+)(.*)", code)
    if m:
        na, body, number, rest = m.groups()
        return f"{'NA to ' if na else ''}{body.replace('-', ' ')} {number}{rest}"
    m = re.fullmatch(r"IS(\d+)(?:-(\d+)(?:-(\d+))?)?", code)
    if m:
        number, part, sec = m.groups()
        tail = f" (Part {part}{f'/Sec {sec}' if sec else ''})" if part else ""
        return f"IS {number}{tail}"
    if re.fullmatch(r"(?:HSG|INDG)\d+", code):
        return code  # HSE prints "HSG150"
    m = re.fullmatch(r"FEMA-P-(.+)", code)
    if m:
        return f"FEMA P-{m.group(1)}"
    m = re.fullmatch(r"CSA-(.+)", code)
    if m:
        return f"CSA {m.group(1)}"
    m = re.fullmatch(r"(AS-NZS|AS|NZS|ASCE|ACI|AISC|DIN|UFC|FEMA|PD)(\d.*)", code)
    if m:
        return f"{m.group(1).replace('-', '/')} {m.group(2)}"
    return code


def _publisher(body: str, national_annex: bool) -> str:
    if national_annex:
        return "BSI"
    if body.startswith("EN"):
        return "CEN"
    return {"ISO": "ISO", "BS": "BSI", "IEC": "IEC"}.get(body, body)


def _from_match(m: re.Match[str]) -> DocId:
    prefix = re.sub(r"\s+", " ", m.group("prefix")).strip()
    body_tokens = prefix.replace("pr", "").split()
    # "BS EN" -> EN, "EN ISO" -> EN-ISO, "BS" alone stays BS.
    if body_tokens[-1] == "ISO" and len(body_tokens) > 1 and body_tokens[-2] == "EN":
        body = "EN-ISO"
    elif "EN" in body_tokens:
        body = "EN"
    else:
        body = body_tokens[-1].upper()
    number = re.sub(r"\s", "", m.group("number"))
    parts = re.findall(r"\d{1,2}", m.group("parts") or "")
    code = body + number + "".join(f"-{p}" for p in parts)
    national_annex = bool(m.group("na"))
    if national_annex:
        code = "NA-" + code
    year = m.group("year")
    edition = re.sub(r"\D", "", year) if year else None
    return DocId(_publisher(body, national_annex), code, edition)


# ---------------------------------------------------------------- the other families
def _year(raw: str | None) -> str | None:
    """A printed year as four digits: "2015", ": 2015", "-19" (ACI, ASCE and CSA print two digits)."""
    if not raw:
        return None
    digits = re.sub(r"\D", "", raw)
    if len(digits) == 2:
        yy = int(digits)
        return str((2000 if yy <= date.today().year % 100 + 1 else 1900) + yy)
    return digits[:4] if len(digits) >= 4 else None


def _english_before(text: str, start: int) -> bool:
    """True when the word before ``start`` on the same line makes a bare "AS"/"IS" an English word."""
    before = re.search(r"([A-Za-z]+)[ \t]+$", text[max(0, start - 30) : start])
    return before is not None and before.group(1) in _ENGLISH_BEFORE


def _standards_body(m: re.Match[str], text: str) -> DocId | None:
    """AS, AS/NZS, NZS: "AS 1170.4-2007", "AS/NZS 1170.0:2002", "NZS 3101:2006"."""
    body = re.sub(r"[\s/-]", "", m.group("body"))
    number, year = m.group("number"), _year(m.group("year"))
    digits = len(number.split(".")[0])
    if body == "AS" and _english_before(text, m.start()):
        return None
    if digits < (4 if body == "NZS" else 3) and not year:
        return None  # "AS 12": too short to be a designation without its year
    publisher, code = {"ASNZS": ("SA-SNZ", "AS-NZS"), "AS": ("SA", "AS"), "NZS": ("SNZ", "NZS")}[body]
    return DocId(publisher, code + number, year)


def _indian(m: re.Match[str], text: str) -> DocId | None:
    """BIS: "IS 875 (Part 3) : 2015", "IS 1893 (Part 1):2016", "IS : 456 - 1978", "IS 800:2007"."""
    if _english_before(text, m.start()):
        return None
    number = m.group("number")
    part = m.group("part") or m.group("part2")
    sec = m.group("sec") or m.group("sec2")
    year = _year(m.group("year"))
    if len(number) < 3 and not (part or year):
        return None
    code = "IS" + number + (f"-{int(part)}" if part else "") + (f"-{int(sec)}" if part and sec else "")
    return DocId("BIS", code, year)


def _american(m: re.Match[str], _text: str) -> DocId | None:
    """ASCE 7-22, ASCE/SEI 7-16, ACI 318-19, ACI 318M-14, ACI 350.3-06, ANSI/AISC 360-16."""
    body = m.group("body")
    number = m.group("number") + (m.group("suffix") or "")
    if body in ("ACI", "AISC") and len(m.group("number").split(".")[0]) < 3:
        return None
    return DocId(body, body + number, _year(m.group("year")))


def _din(m: re.Match[str], _text: str) -> DocId | None:
    parts = re.findall(r"\d{1,3}", m.group("parts") or "")
    return DocId("DIN", "DIN" + m.group("number") + "".join(f"-{p}" for p in parts), _year(m.group("year")))


def _ufc(m: re.Match[str], _text: str) -> DocId | None:
    return DocId("DOD", "UFC" + re.sub(r"\s", "", m.group("number")))


def _fema(m: re.Match[str], _text: str) -> DocId | None:
    parts = re.findall(r"\d{1,2}", m.group("parts") or "")
    number = m.group("number") + "".join(f"-{p}" for p in parts)
    return DocId("FEMA", ("FEMA-P-" if m.group("p") else "FEMA") + number)


def _hse(m: re.Match[str], _text: str) -> DocId | None:
    return DocId("HSE", m.group("series") + m.group("number"))


def _csa(m: re.Match[str], _text: str) -> DocId | None:
    return DocId("CSA", "CSA-" + m.group("number"), _year(m.group("year")))


def _bsi_pd(m: re.Match[str], _text: str) -> DocId | None:
    parts = re.findall(r"\d{1,2}", m.group("parts") or "")
    return DocId("BSI", "PD" + m.group("number") + "".join(f"-{p}" for p in parts), _year(m.group("year")))


_FAMILIES: list[tuple[re.Pattern[str], Callable[[re.Match[str], str], DocId | None]]] = [
    (
        re.compile(
            rf"(?<![A-Za-z/-])(?P<body>AS\s?[/-]\s?NZS|AS|NZS)\s?(?P<number>\d{{1,5}}(?:\.\d{{1,2}}){{0,2}})(?![\d.]\d)"
            rf"(?:(?P<year>\s?[:{_DASH}]\s?{_YEAR})|{_NOT_QUANTITY})"
        ),
        _standards_body,
    ),
    (
        re.compile(
            r"(?<![A-Za-z.])IS\s?:?\s?(?P<number>\d{1,5})(?!\d)"
            r"(?:\s?\(\s?(?:Part|PART|Pt\.?)\s?(?P<part>\d{1,2})"
            r"(?:\s?[/,]\s?(?:Sec(?:tion)?|SEC(?:TION)?)\.?\s?(?P<sec>\d{1,2}))?\s?\)"
            rf"|[{_DASH}](?P<part2>\d{{1,2}})(?!\d)(?:[{_DASH}](?P<sec2>\d{{1,2}})(?!\d))?)?"
            rf"(?:(?P<year>\s?[:{_DASH}]\s?{_YEAR})|{_NOT_QUANTITY})"
        ),
        _indian,
    ),
    (
        re.compile(
            r"(?<![A-Za-z])(?:(?:ANSI|SEI)\s?/\s?)*(?P<body>ASCE|ACI|AISC)(?:\s?/\s?SEI)?\s?"
            r"(?P<number>\d{1,3}(?:\.\d{1,2})?)(?P<suffix>[A-Z]?)(?![A-Za-z\d])"
            rf"(?:\s?[{_DASH}]\s?(?P<year>\d{{2}}(?!\d)|{_YEAR}))?"
        ),
        _american,
    ),
    (
        re.compile(
            r"(?<![A-Za-z])DIN\s?(?P<number>\d{3,5})(?!\d)"
            rf"(?P<parts>(?:\s?[{_DASH}]\s?\d{{1,3}}(?!\d))*)(?P<year>\s?:\s?{_YEAR}(?:-\d\d(?!\d))?)?"
        ),
        _din,
    ),
    (re.compile(r"(?<![A-Za-z])UFC\s?(?P<number>\d\s?-\s?\d{3}\s?-\s?\d{2}(?:[A-Z]{1,2}(?![a-z]))?)(?!\d)"), _ufc),
    (
        re.compile(
            rf"(?<![A-Za-z])FEMA\s?[{_DASH}]?\s?(?P<p>P\s?[{_DASH}]?\s?)?(?P<number>\d{{2,4}}(?!\d))"
            rf"(?P<parts>(?:[{_DASH}]\d{{1,2}}(?!\d))*)"
        ),
        _fema,
    ),
    (re.compile(r"(?<![A-Za-z])(?P<series>HSG|INDG)\s?(?P<number>\d{1,3})(?!\d)"), _hse),
    (
        re.compile(
            rf"(?<![A-Za-z])(?:CAN\s?/\s?)?CSA\s?[{_DASH}]?\s?(?P<number>[A-Z]{{1,2}}\d{{1,4}}(?:\.\d{{1,2}})*)(?![A-Za-z\d])"
            rf"(?:\s?[:{_DASH}]\s?(?P<year>\d{{2}}(?!\d)|{_YEAR}))?"
        ),
        _csa,
    ),
    (
        re.compile(
            rf"(?<![A-Za-z])PD\s?(?P<number>\d{{4}})(?!\d)(?P<parts>(?:[{_DASH}]\d{{1,2}}(?!\d))*)"
            rf"(?P<year>\s?:\s?{_YEAR})?"
        ),
        _bsi_pd,
    ),
]


def find_designations(text: str) -> list[tuple[DocId, tuple[int, int], str]]:
    """Every designation in ``text`` with its span and raw spelling, in order. The European family is
    read first; another family's match is kept only where it does not overlap one already read."""
    found = [(_from_match(m), m.span(), m.group(0)) for m in _DESIGNATION.finditer(text)]
    taken = [span for _, span, _ in found]
    for pattern, build in _FAMILIES:
        for m in pattern.finditer(text):
            start, end = m.span()
            if any(a < end and start < b for a, b in taken):
                continue
            parsed = build(m, text)
            if parsed is not None:
                raw = m.group(0).rstrip()
                found.append((parsed, (start, start + len(raw)), raw))
                taken.append((start, end))
    found.sort(key=lambda f: f[1][0])
    return found


def parse_designation(text: str) -> DocId | None:
    """Normalise the first document designation in ``text``; None when there is none."""
    found = find_designations(text)
    return found[0][0] if found else None


# ---------------------------------------------------------------- what users type
_EXAMPLES = "e.g. 'EN 1991-1-3:2003', 'IS 875 (Part 3):2015', 'UFC 3-301-01', 'HSG150'"


def publisher_name(raw: str) -> str:
    """A publisher given by a user (``--publisher``, the ``publisher`` form field), upper-cased, or
    ValueError: letters and digits, single hyphens inside ("SA-SNZ"), at most 24 characters."""
    name = (raw or "").strip()
    if not re.fullmatch(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,23}", name):
        raise ValueError(f"not a publisher name: {raw!r} (letters, digits and hyphens, e.g. BSI, CEN, BIS)")
    return name.upper()


def doc_id(publisher: str | None, code: str) -> DocId:
    """A DocId from a user-given code, printed ("IS 875 (Part 3):2015", "FEMA P-58-6") or in key form
    ("IS875-3"), with an optional publisher override; ValueError with a one-line reason otherwise."""
    text = " ".join((code or "").split())
    if not text or any(ord(c) < 32 for c in code or ""):
        raise ValueError(f"not a document code: {code!r} ({_EXAMPLES})")
    parsed: DocId | None = None
    compact = parse_designation(display_code(text)) if " " not in text else None
    if compact is not None and compact.code == text:  # the key form: "NA-EN1991-1-3", "FEMA-P-58-6"
        parsed = compact
    if parsed is None:
        found = find_designations(text)
        if len({d.key for d, _, _ in found}) > 1:
            names = ", ".join(dict.fromkeys(d.display for d, _, _ in found))
            raise ValueError(f"{code!r} names more than one document ({names}); give one")
        if found:
            start, end = found[0][1][0], found[-1][1][1]
            rest = text[:start] + " " + text[end:]
            if ".." in rest or not re.fullmatch(r"[A-Za-z0-9 .,:;()+\u2013-]*", rest):
                raise ValueError(f"not a document code: {code!r} ({_EXAMPLES})")
            parsed = found[0][0]
            if parsed.edition is None:  # "EN 1991-1-3 (2003)", "FEMA P-58-6 December 2018"
                year = re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", text[end:])
                parsed = DocId(parsed.publisher, parsed.code, year.group(0) if year else None)
    if parsed is None:
        m = re.fullmatch(r"(?P<body>.*?)(?:\s?(?::|\()\s?(?P<year>(?:19|20)\d\d)\)?)?", text)
        body = m.group("body") if m else text
        cleaned = re.sub(r"[\s_]+", "", body)
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9.()+-]{0,63}", cleaned) or ".." in cleaned:
            raise ValueError(f"not a document code: {code!r} ({_EXAMPLES})")
        parsed = DocId(publisher_name(publisher) if publisher else "LOCAL", cleaned, m.group("year") if m else None)
    if publisher:
        parsed = DocId(publisher_name(publisher), parsed.code, parsed.edition)
    if not is_safe_key(parsed.key) or parsed.key.count("_") != 1:
        raise ValueError(f"not a document code: {code!r} ({_EXAMPLES})")
    return parsed


def given_identity(publisher: str | None, code: str | None) -> DocId | None:
    """Validate what a user gave (``--publisher`` / ``--code``, the HTTP form fields) before any work:
    the DocId the code names (None without a code), or ValueError with a one-line reason."""
    if code is not None and code.strip():
        return doc_id(publisher or None, code)
    if code is not None and code != "":
        raise ValueError(f"not a document code: {code!r} ({_EXAMPLES})")
    if publisher:
        publisher_name(publisher)
    return None


def clean_number(raw: str) -> str:
    """OCR slips in object numbers: "A.I" -> "A.1", "5. 2" -> "5.2", "6.l" -> "6.1"."""
    s = re.sub(r"\s+", "", raw).strip(".")
    s = re.sub(r"^([A-Z])(?=\d+[a-z]?$)", r"\1.", s)  # "B1" -> "B.1"; "A2.1" (Annex A2) stays
    head, _, rest = s.partition(".") if re.match(r"^[A-Z]\.", s) else ("", "", s)
    suffix = ""
    if re.search(r"\d[a-z]$", rest):  # "Table 7.3a"
        rest, suffix = rest[:-1], rest[-1]
    rest = rest.replace("I", "1").replace("l", "1").replace("O", "0").replace("S", "5")
    rest = re.sub(r"(?:(?<=\.)|^)s$", "5", rest)  # "C.s": an OCR'd "C.5"
    if not head and rest.startswith("0."):  # "Table 0.1": an OCR'd "D.1" (there is no section 0)
        head, rest = "D", rest[2:]
    return (f"{head}.{rest}" if head else rest) + suffix


def object_key(doc: DocId | str, object_code: str) -> str:
    """``CEN_EN1991-1-3`` + ``table_5.2`` -> ``CEN_EN1991-1-3_table_5.2``."""
    prefix = doc.key if isinstance(doc, DocId) else doc
    return f"{prefix}_{object_code}"


OBJECT_KINDS = ("table", "figure", "expression")  # the numbered objects a clause cites, each a section


def code_label(code: str) -> str:
    """A section code as an engineer reads it: ``annex_D`` -> ``Annex D``, ``table_5.2`` -> ``Table 5.2``,
    ``expression_6.1`` -> ``Expression (6.1)``; a clause's code as it is."""
    kind, sep, number = code.partition("_")
    if not sep or kind not in ("annex", *OBJECT_KINDS):
        return code
    return f"Expression ({number})" if kind == "expression" else f"{kind.capitalize()} {number}"


def section_label(key: str, stored: str) -> str:
    """A stored section's number as listed: a table's, figure's or expression's read from its key, as
    printed ("Table 7.4a", also from a store that labelled it "Table 7.4A" when it was ingested)."""
    code = split_key(key)[2]
    return code_label(code) if code.partition("_")[0] in OBJECT_KINDS else stored


def slug(text: str) -> str:
    """A heading's words as a section code, for a section without a number: "Excavations" -> "excavations"."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "front"


def heading_coded(section: str, title: str | None) -> bool:
    """Is this the code of a section without a number, made from its heading's words ("excavations-2")?"""
    return bool(title) and re.fullmatch(re.escape(slug(title or "")) + r"(?:-\d+)?", section) is not None


def cited(document: str, section: str, title: str | None) -> str:
    """A passage as an engineer cites it: "EN 1991-1-3 5.2", "HSG150 345"; a section without a number
    by its heading instead of the code the store made from it: "HSG150 Excavations"."""
    return f"{document} {' '.join((title or '').split())}" if heading_coded(section, title) else f"{document} {section}"


def split_key(key: str) -> tuple[str, str, str]:
    """``CEN_EN1991-1-3_5.3.2`` -> (``CEN``, ``EN1991-1-3``, ``5.3.2``); object code may be empty."""
    parts = key.split("_", 2)
    if len(parts) < 2:
        raise ValueError(f"not a store key: {key!r}")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else ""


def document_of(key: str) -> str:
    """``CEN_EN1991-1-3_5.3.2`` -> ``CEN_EN1991-1-3``; KeyError for a key that is not a store key."""
    if not is_safe_key(key):
        raise KeyError(f"not a valid key: {key!r}")
    try:
        publisher, code, _ = split_key(key)
    except ValueError as exc:
        raise KeyError(str(exc)) from None
    return f"{publisher}_{code}"


def is_safe_key(key: str) -> bool:
    """Keys become file names: no path characters, no traversal."""
    return bool(key) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.()+-]*", key) is not None and ".." not in key
