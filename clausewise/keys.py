"""Store keys: one normalisation of document designations and object codes.

Every store entry is keyed ``PUBLISHER_DOCCODE_OBJECTCODE`` (DESIGN.md, "Stores"). References are
resolved through these keys, so every spelling of a designation seen in real text -- "EN 1991-1-3",
"BS EN 1991-1-3:2003", "prEN 1991-1-3", OCR slips such as "EN 199 1-1-3" or "EN1991 1-3" -- must map
to the same key. :func:`parse_designation` is the one place that does it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Bodies that issue designations; "BS EN" is CEN's document adopted by BSI, keyed under CEN.
_PREFIXES = r"(?:pr\s*)?(?:(?:BS|DIN|NF|I\.?S\.?|SS|NEN)\s*)?(?:EN\s*ISO|EN|ISO|BS|IEC)"
_DESIGNATION = re.compile(
    r"(?<![A-Za-z])(?P<na>NA(?:\s?\+\s?A\d:\s?\d{4})?\s+(?:to\s+)?)?(?P<prefix>" + _PREFIXES + r")\s*"
    r"(?P<number>\d{3}\s\d(?!\d)|\d{2}\s\d{2}(?!\d)|\d{3,5}(?!\d))"  # OCR may split "199 1"
    r"(?P<parts>(?:\s?[-\u2010-\u2013]\s?\d{1,2}|\s\d{1,2}(?=-\d))*)"  # -1-3 ; "1991 1-3"
    r"(?P<year>\s?:\s?(?:19|20)\d\d)?"
    r"(?:\s?\+\s?A\d:\s?\d{4})?",
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
        """The designation as engineers write it: ``EN 1991-1-3``."""
        m = re.match(r"(NA-)?(EN-ISO|EN|ISO|BS|IEC)(\d+)(.*)", self.code)
        if not m:
            return self.code
        na, body, number, rest = m.groups()
        return f"{'NA to ' if na else ''}{body.replace('-', ' ')} {number}{rest}"


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


def parse_designation(text: str) -> DocId | None:
    """Normalise the first document designation in ``text``; None when there is none."""
    m = _DESIGNATION.search(text)
    return _from_match(m) if m else None


def find_designations(text: str) -> list[tuple[DocId, tuple[int, int], str]]:
    """Every designation in ``text`` with its span and raw spelling, in order."""
    return [(_from_match(m), m.span(), m.group(0)) for m in _DESIGNATION.finditer(text)]


def doc_id(publisher: str | None, code: str) -> DocId:
    """A DocId from a user-given code ("EN 1991-1-3:2003"), with an optional publisher override."""
    parsed = parse_designation(code)
    if parsed is None:
        cleaned = re.sub(r"[\s_]+", "", code)
        if not cleaned or not re.fullmatch(r"[A-Za-z0-9.+-]+", cleaned):
            raise ValueError(f"not a document code: {code!r}")
        parsed = DocId(publisher or "LOCAL", cleaned)
    if publisher:
        if "_" in publisher or not re.fullmatch(r"[A-Za-z0-9-]+", publisher):
            raise ValueError(f"not a publisher name: {publisher!r}")
        parsed = DocId(publisher.upper(), parsed.code, parsed.edition)
    return parsed


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


def split_key(key: str) -> tuple[str, str, str]:
    """``CEN_EN1991-1-3_5.3.2`` -> (``CEN``, ``EN1991-1-3``, ``5.3.2``); object code may be empty."""
    parts = key.split("_", 2)
    if len(parts) < 2:
        raise ValueError(f"not a store key: {key!r}")
    return parts[0], parts[1], parts[2] if len(parts) == 3 else ""


def is_safe_key(key: str) -> bool:
    """Keys become file names: no path characters, no traversal."""
    return bool(key) and re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.()+-]*", key) is not None and ".." not in key
