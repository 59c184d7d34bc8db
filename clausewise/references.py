"""Cross-references in code text: spotting them (ingestion) and checking the ones a model claims
(query), with one set of rules, and resolving them when they are read.

A reference is ``{"raw", "span", "kind", "target", "document", "resolved"}``: the words as printed,
where they are in the section's text, the kind of thing named (clause, table, figure, expression,
annex, document, neighbour), the store key it points to, and whether that key existed at ingest.
A reference into another document names the most specific object the words give ("EN 1990, Annex A1,
Table A1.1" is ``CEN_EN1990_table_A1.1``); whether it leads anywhere depends on what the store holds
when it is read, so readers (follow-refs, ``clausewise show``, ``GET /sections/{key}``) ask
:func:`resolve` / :class:`Resolver`, never the stored ``resolved`` flag, which is a snapshot of commit.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from clausewise.keys import DocId, clean_number, find_designations, object_key, split_key

if TYPE_CHECKING:
    from clausewise.stores import Stores

Section = dict[str, Any]

_OBJ = (
    r"(?P<kind>[Tt]ables?|[Ff]igures?|Fig\.|[Ee]xpressions?|[Ee]quations?|Eqs?\.|[Aa]nnex(?:es)?|[Aa]ppendix|[Aa]ppendices"
    r"|Sections?|[Cc]lauses?|[Ss]ubclauses?)"
)
# Lower case ("taken from annex A", "given by expression (3.1)", as some codes print them) counts where the
# document has what it names: "sections 65" on a contents line names none, so "section" stays capitalised.
_LOWER_KINDS = ("table", "figure", "expression", "equation", "annex", "appendi")
# a number of at most two digits a level: "Appendices 129" on a contents line is a page, not Appendix 12
_NUMTOK = r"(?:[A-H]\s?\.?\s?)?\d{1,2}(?:\s?\.\s?\d{1,2}){0,4}(?!\d)[a-z]?"
_OBJECT_REF = re.compile(
    _OBJ + r"\s*(?P<first>\(?\s?" + _NUMTOK + r"\s?\)?|[A-H]\b)"
    r"(?P<more>(?:\s?(?:,|and|or|to|-)\s?(?:\(?\s?" + _NUMTOK + r"\s?\)?|[A-H]\b))*)"
)
# Numbers the grammar above cannot hold: suffixes "Table A1.2(B)", chapter-hyphen "Table 2-1",
# "Figure C-1", "2-1.1", quoted codes' "Section 1705.13". Taken only where the document has such keys.
# a hyphen may end a printed line ("Table 4-\n1", "paragraphs 131-\n139"); a run may take an en dash
_WIDE_NUM = r"(?P<num>(?:[A-Z]\d?[.-]?)?\d{1,4}(?:(?:\.|-\n?|–)\d{1,3}){0,4}[a-z]?(?:\([A-Z0-9]{1,2}\))?)(?![\w-])"
_WIDE_OBJECT_REF = re.compile(
    r"(?P<kind>Tables?|TABLES?|Figures?|FIGURES?|Fig\.|FIG\.|Expressions?|Equations?|Eqs?\.|Sections?|[Cc]lauses?"
    r"|[Pp]aragraphs?|[Ss]ubclauses?)\s*\(?" + _WIDE_NUM
)
_CLAUSE_NUM = r"(?P<num>[1-9]\d?(?:\.\d{1,2}){1,4})"
_PARA = r"\(\s?\d{1,2}\s?\)(?:[ ]?P\b)?"  # "(3)", "(2)P"
_BARE_CLAUSE = re.compile(
    rf"(?<![\w.,(]){_CLAUSE_NUM}(?P<para>[ ]?{_PARA})?(?![\w.]*\d)(?!\s?(?:m|mm|kN|N|%|°|m2|m3)\b)"
)
# A clause in brackets, "(6.3.1.2 (11))" or "(4.2.3)", named by three levels or a paragraph: an
# expression's number has two levels and no paragraph ("(6.10)").
_BRACKETED_CLAUSE = re.compile(rf"(?<=\(){_CLAUSE_NUM}(?P<para>\s?{_PARA})?(?![\w.]*\d)")
_ANNEX_PARA = re.compile(r"(?<![\w.])(?P<letter>[A-H])\s?\((?P<para>\d{1,2})\)")
# A clause of an annex by its number: "given in A.3", "see E.2.5", "B. 2 (3)" (OCR's spaces), "A 1.3(2)"
# (clause 3 of annex A1). Without it, "A 1.3(2)" was read as clause 1.3.
_ANNEX_CLAUSE = re.compile(
    rf"(?<![\w.])(?P<num>[A-H](?:\s?[1-9])?\s?\.\s?\d{{1,2}}(?:\s?\.\s?\d{{1,2}}){{0,3}})(?P<para>\s?{_PARA})?(?![\w.]*\d)"
)
# An annex clause whose dot a scan lost, "given in B4(2)": read only with its paragraph and where the
# document has clause B.4 and nothing numbered B4 (Annex A1's clauses are A1.1, A1.2).
_DOTLESS_ANNEX_CLAUSE = re.compile(rf"(?<![\w.])(?P<letter>[A-H])(?P<num>[1-9]\d?)(?P<para>\s?{_PARA})(?![\w.]*\d)")
# the next number of a list after a wide one ("Tables C-1, C-2, and C-3")
_WIDE_MORE = re.compile(r"\s?(?:,\s?(?:and\s|or\s)?|\s(?:and|or|to)\s)\s?" + _WIDE_NUM)
_OWN_PARAGRAPH = re.compile(r"\(\s?\d{1,2}\s?\)")  # "clauses (4) and (5)": paragraphs of the clause itself
_SECTION_PARA = re.compile(r"(?<![\w.,])(?P<num>[1-9]\d?)\s?\((?P<para>\d{1,2})\)(?!\s?[a-z]\))")
_NEIGHBOUR = re.compile(
    r"\b(?P<dir>see above|given above|shown above|as above|see below|given below|shown below|"
    r"(?:the )?following (?:table|figure|expression|clauses?|paragraphs?))\b",
    re.I,
)
MIN_NUMBERED_PARAGRAPHS = 20  # as merge-sections asks of a run of numbered paragraphs
# A number in a row of values ("-0.5 -1.4 -1.5" in a table's body, "= 1.5") is a value, not a clause
_VALUE_BEFORE = re.compile(r"(?:(?<![\w.,])-?\d{1,3}(?:[.,]\d+)?[ \t]+|(?<=\S)[-+=×<>≤≥±]|[=<>≤≥±][ \t]?)$")
_VALUE_AFTER = re.compile(r"[ \t]+-?\d{1,3}(?:[.,]\d+)?(?![\w.,(])")
_CUE = re.compile(r"(see|in|given in|according to|accordance with|defined in|from|of|to|and|using|with|by)\s*$", re.I)


def _kind_code(kind: str) -> str:
    k = kind.lower().rstrip("s.")
    return {
        "table": "table",
        "figure": "figure",
        "fig": "figure",
        "expression": "expression",
        "equation": "expression",
        "eq": "expression",
        "annexe": "annex",
        "annex": "annex",
        "appendix": "annex",  # "Appendix 1", "Appendix B": an annex by another name
        "appendice": "annex",
        "section": "clause",
        "clause": "clause",
        "subclause": "clause",
    }.get(k, k)


def _wide_target(kind: str, number: str) -> str:
    """The object code of a number in the wide form, as the caption or heading printed it."""
    number = re.sub(r"\s", "", number)
    kind = "clause" if kind.lower().startswith("paragraph") else _kind_code(kind)
    return number if kind == "clause" else f"{kind}_{number}"


def _target_code(kind: str, number: str) -> str:
    number = number.strip().strip("()").strip()
    if kind == "annex":
        return "annex_" + re.sub(r"\s", "", number)[:2].rstrip(".")
    number = clean_number(number)
    return number if kind == "clause" else f"{kind}_{number}"


# ---- objects of another document: "EN 1990, Annex A1, Table A1.1", "Expression (6.10) of EN 1990"
# Looser than the rules above (lower-case words, OCR'd digits "Al.1", "A.I.I"): they only run next to a
# designation, where a number can only be a place in that document.
_EXT_KIND = (
    r"(?P<kind>[Tt]ables?|[Ff]igures?|[Ff]ig\.|[Ee]xpressions?|[Ee]quations?|[Ee]qs?\.|[Aa]nnex(?:es)?|ANNEX"
    r"|[Ss]ections?|[Cc]lauses?|[Ss]ubclauses?)"
)
_EXT_NUM = (
    r"(?:(?:[A-H]\s?\.?\s?[\dIl]|\d)[\dIl]?(?:\s?\.(?:\s?\d|[Il])[\dIl]?){0,4}[a-z]?(?![A-Za-z\d])"
    r"|\(\s?(?:[A-H]\s?\.?\s?)?\d{1,2}(?:\s?\.\s?\d{1,2}){0,3}(?:\s?[a-z])?\s?\)|[A-H]\d?\b)"
)
_EXT_BARE = (
    r"(?:[A-H]\d?\.\d{1,2}(?:\.\d{1,2}){0,4}|[1-9]\d?(?:\.\d{1,2}){1,4})(?![\w.]*\d)(?!\s?(?:m|mm|kN|N|%|°|m2|m3)\b)"
)
_EXT_PARA = r"(?P<para>\s?\(\s?\d{1,2}\s?\)(?:\s?P\b)?)?"
# after the designation: ", Annex A1", " Table A.1", ", 6.4.3.2", " A1.2.2(1)", " clause 3.1.2" (a comma
# may break the line; a bare space may not: "EN 1991-1-1\n6.2 Title" is not 6.2 of EN 1991-1-1)
_EXT_AFTER = re.compile(
    r"(?:\s?,\s?|[ \t])(?:" + _EXT_KIND + r"\s?(?P<num>" + _EXT_NUM + r")|(?P<bare>" + _EXT_BARE + r"))" + _EXT_PARA
)
# before it: "Expression (6.10) of EN 1990", "see 4.3 of EN 1991-1-4", "Tables 5.1 and 5.2 of EN 1990",
# "Annex A2 to EN 1990"
_EXT_BEFORE = re.compile(
    r"(?:(?<![A-Za-z])" + _EXT_KIND + r"\s?(?P<num>" + _EXT_NUM + r")"
    r"(?P<more>(?:\s?(?:,|and|or)\s?" + _EXT_NUM + r")*)"
    r"|(?<![\w.,(])(?P<bare>" + _EXT_BARE + r"))" + _EXT_PARA + r"\s?,?\s(?P<prep>of|in|to)\s$"
)
_RANK = {"annex": 1, "clause": 2, "table": 3, "figure": 3, "expression": 3}
_OLD_TAIL = re.compile(r"\s?,?\s?(?:clause\s)?(?P<num>\d{1,2}(?:\.\d{1,2}){1,4})")


def _external_code(kind: str, number: str) -> tuple[str, str]:
    """(kind, object code) of a number printed after a kind word, in another document."""
    kind = _kind_code(kind)
    number = re.sub(r"\s", "", number.strip().strip("()"))
    if kind == "annex":
        m = re.match(r"([A-H])\.?([\dIl]?)", number)
        letter = (m.group(1) + m.group(2).replace("I", "1").replace("l", "1")) if m else number[:2]
        return "annex", f"annex_{letter}"
    return kind, _target_code(kind, number)


def _bare_code(number: str) -> tuple[str, str]:
    return "clause", clean_number(number)


def _objects_after(text: str, end: int) -> tuple[int, tuple[str, str] | None]:
    """The objects named right after a designation ending at ``end``: where the words end and the most
    specific (table > clause > annex) as (kind, code), or None."""
    best: tuple[str, str] | None = None
    for _ in range(3):
        m = _EXT_AFTER.match(text, end)
        if not m:
            break
        found = _external_code(m.group("kind"), m.group("num")) if m.group("kind") else _bare_code(m.group("bare"))
        if best is None or _RANK.get(found[0], 0) >= _RANK.get(best[0], 0):
            best = found
        end = m.end()
    return end, best


def _objects_before(text: str, start: int) -> tuple[list[tuple[tuple[int, int], tuple[str, str]]], int] | None:
    """The objects named right before "of/in <designation>" starting at ``start``: [(span, (kind, code))]
    in text order, and where the words begin; None when there are none."""
    window_start = max(0, start - 90)
    m = _EXT_BEFORE.search(text, window_start, start)
    if not m:
        return None
    if m.group("bare") and m.group("prep") == "in" and not _CUE.search(text[max(0, m.start() - 25) : m.start()]):
        return None  # "a factor 1.5 in EN 1990" is not clause 1.5: "in" needs a cue ("given in 4.3 in ...")
    if m.group("bare") and m.group("prep") == "to":
        return None  # "Annex A2 to EN 1990" is its annex; "from 1.5 to EN ..." names nothing
    if m.group("bare"):
        return [((m.start(), start), _bare_code(m.group("bare")))], m.start()
    kind = m.group("kind")
    found = [((m.start(), m.end("num")), _external_code(kind, m.group("num")))]
    more_start = m.start("more")
    for n in re.finditer(_EXT_NUM, m.group("more") or ""):
        found.append(((more_start + n.start(), more_start + n.end()), _external_code(kind, n.group(0))))
    return found, m.start()


_OCR_VARIANTS = [("8", "B"), ("0", "D"), ("6", "G"), ("5", "S"), ("1", "I")]


def _ocr_variant(key: str, known: Collection[str]) -> str | None:
    """A known key that an OCR slip turned into ``key``: "Figure 81" is Figure B.1, "Annex 0" Annex D."""
    prefix, _, code = key.rpartition("_")
    for digit, letter in _OCR_VARIANTS:
        if code.startswith(digit):
            rest = code[1:].lstrip(".")
            for candidate in (f"{letter}.{rest}", f"{letter}{rest}", letter if not rest else None):
                if candidate and f"{prefix}_{candidate}" in known:
                    return f"{prefix}_{candidate}"
    return None


_PART = re.compile(r"[a-z]|\([a-z0-9]{1,2}\)")


def _parts(key: str, known: Collection[str]) -> list[str]:
    """A table's or figure's parts printed under its number with a letter: "table_4-1" has "table_4-1(a)"
    and "table_4-1(b)", "figure_6.2" has "figure_6.2a". None for a clause (7.4a is not a part of 7.4)."""
    if not re.search(r"_(table|figure)_", key):
        return []
    return sorted(k for k in known if k.startswith(key) and _PART.fullmatch(k[len(key) :]))


_RANGE = re.compile(r"(?:\bto|-|–)\s*\(?\s*$")
MAX_RANGE = 30  # "Tables 7.1 to 7.5": the members named in between, at most this many


def _between(first: str, last: str) -> list[str]:
    """The codes strictly between two ends of a range of one level: "table_7.1" .. "table_7.5" gives
    7.2, 7.3, 7.4; "4.3" .. "4.7" gives 4.4 to 4.6; "580" .. "597" the paragraphs between."""
    a, b = re.fullmatch(r"(.*?)(\d+)", first), re.fullmatch(r"(.*?)(\d+)", last)
    if not a or not b or a.group(1) != b.group(1):
        return []
    lo, hi = int(a.group(2)), int(b.group(2))
    return [f"{a.group(1)}{i}" for i in range(lo + 1, hi)] if 0 < hi - lo <= MAX_RANGE else []


def _among_values(text: str, start: int, end: int) -> bool:
    """A bare number that a number or a sign joins on its line: a value among values, not a clause."""
    line_start = text.rfind("\n", 0, start) + 1
    return bool(_VALUE_BEFORE.search(text[max(line_start, start - 12) : start]) or _VALUE_AFTER.match(text, end))


# A number a scan printed with letters for digits: "(see A.S)" for A.8, "Figure 7.B", "defined in
# E.1.S.2.4", "expression (C.l)"; or, after an object's name, with a comma for a dot ("Figure 7,28").
# Read only where one digit reading names a section of the document (or one of several is named by a
# word of its title just before: 'a "key element" (see A.S)' is A.8, Key elements, not A.5, Horizontal
# ties); otherwise the rules below read what they can of it, as before.
_GARBLED_REF = re.compile(
    r"(?:(?P<kind>(?i:tables?|figures?|expressions?|equations?))\s?\(?\s?|(?P<cue>\b(?i:see|in)\s))"
    r"(?P<num>(?:[A-H]|[1-9]\d?)(?:[.,][\dIlOSB]{1,2}){1,4}|(?:[A-H]|[1-9]\d?)A[a-z]?)(?![\w.]*\d)(?!\w)"
)
# ".4" that a scan read as one letter "A": "Table EA" for E.4, "Figure AA" for A.4, "Table 7Aa" for 7.4a;
# only after an object's name, where the document has no such section as printed
_MERGED_FOUR = re.compile(r"(?P<head>[A-H]|[1-9]\d?)A(?P<suffix>[a-z]?)")
_GARBLED_DIGITS = {"I": "1", "l": "1", "O": "0", "S": "58", "B": "8"}
GARBLED_TITLE_REACH = 200  # characters before the reference where a word of the meant section's title counts
_TITLE_WORD = re.compile(r"[a-z]{3,}")
_TITLE_STOPWORDS = frozenset(("the", "and", "for", "with", "from", "general", "other", "more"))


def _garbled_target(doc: DocId, kind: str | None, number: str, known: Collection[str], before: str) -> str | None:
    """The section a garbled number names (see ``_GARBLED_REF``), or None when no reading, or more than one
    that no title word before it tells apart, names one."""
    if "," in number and not kind:
        return None  # "in 2,5": a value
    merged = _MERGED_FOUR.fullmatch(number)
    if merged:  # read only after an object's name ("see EA" names nothing)
        if not kind:
            return None
        key = object_key(doc, f"{_kind_code(kind)}_{merged['head']}.4{merged['suffix']}")
        return key if key in known and object_key(doc, f"{_kind_code(kind)}_{number}") not in known else None
    head, rest = re.split(r"[.,]", number, maxsplit=1)
    if not re.search(r"[IlOSB]", rest) and "," not in number:
        return None
    rest = rest.replace(",", ".")
    readings = [head + "."]
    for ch in rest:
        readings = [r + d for r in readings for d in _GARBLED_DIGITS.get(ch, ch)]
    prefix = f"{_kind_code(kind)}_" if kind else ""
    found = [key for key in dict.fromkeys(object_key(doc, prefix + r) for r in readings) if key in known]
    if len(found) > 1 and isinstance(known, Mapping):
        words = {w.rstrip("s") for w in _TITLE_WORD.findall(before.lower())}
        found = [
            key
            for key in found
            if ({w.rstrip("s") for w in _TITLE_WORD.findall(str(known[key] or "").lower())} - _TITLE_STOPWORDS) & words
        ]
    return found[0] if len(found) == 1 else None


# A section named by its title: quoted anywhere ("refer 'Critical lighting' in this guide"), or after
# "see", "refer to", "entitled" as printed, capitalised ("see Inspecting surfaces and fixtures"); not a
# title that runs on into a longer name ("see Confined Spaces Regulations").
_TITLE_CUES = r"(?:see|refer to|refer|entitled|section on)\s+(?:the\s+)?"
_PLAIN_TITLES = frozenset(
    (
        "general",
        "scope",
        "notes",
        "introduction",
        "definitions",
        "symbols",
        "contents",
        "foreword",
        "references",
        "background",
        "summary",
        "purpose",
        "overview",
        "examples",
        "front matter",
        "cover",
    )
)


class SectionTitles(dict[str, str]):
    """A document's section keys with their titles, as ``known`` for :func:`spot_references`: the titles
    that name a section and their pattern are worked out once for the document, not once a section."""

    @cached_property
    def named(self) -> dict[str, str]:
        """A title (lower case) -> the first section printing it, for titles of two words or more that
        say what the section holds ("Critical lighting", not "General" or a page's continuation)."""
        out: dict[str, str] = {}
        for key, title in self.items():
            t = re.sub(r"\s+", " ", title or "").strip()
            if (
                len(t.split()) >= 2
                and len(t) >= 8
                and t.lower() not in _PLAIN_TITLES
                and not re.search(r"\(page \d+\)$", t)
            ):
                out.setdefault(t.lower(), key)
        return out

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        names = "|".join(re.escape(t).replace(r"\ ", r"\s+") for t in sorted(self.named, key=len, reverse=True))
        return re.compile(
            rf"[‘'\"“]\s*(?P<quoted>{names})\s*[’'\"”]|\b{_TITLE_CUES}(?P<cued>{names})(?-i:(?!\s+[A-Z][a-z]))", re.I
        )


def spot_references(doc: DocId, section: Section, known: Collection[str]) -> list[dict[str, Any]]:
    """Every reference in a section: objects, clauses, annexes, other documents, neighbours. ``known``: the
    document's section keys; a mapping of each key to its title also lets a garbled number that two
    sections could be read as find the one its sentence names (:func:`_garbled_target`)."""
    text: str = section["text"]
    refs: list[dict[str, Any]] = []
    taken: list[tuple[int, int]] = []

    def add(
        raw: str,
        span: tuple[int, int],
        target: str | None,
        kind: str,
        document: DocId | None = None,
        maybe_clause: bool = False,
        member: bool = False,
    ) -> None:
        """``member``: one more target of words already taken ("Tables 7.1 to 7.5" names 7.2 too)."""
        if not member and any(a <= span[0] < b for a, b in taken):
            return
        if document is not None and document.code == doc.code:
            document = None
        if document is None and target is not None and target not in known:
            as_clause = re.sub(r"_(table|figure|expression)_", "_", target)
            # "Table 6.2 and 6.3.1.2(8)": a number after an object word may name a clause
            target = _ocr_variant(target, known) or (as_clause if maybe_clause and as_clause in known else target)
        taken.append(span)
        # "Table 4-1" where the document prints Tables 4-1(a) and 4-1(b) (or 7.4a and 7.4b): each part
        parts = _parts(target, known) if document is None and target is not None and target not in known else []
        # A reference into another document is resolved when read (resolve()), against the store as it is.
        targets: list[str | None] = list(parts) or [target]
        for one in targets:  # None: a reference to a whole document
            refs.append(
                {
                    "raw": raw,
                    "span": list(span),
                    "kind": kind,
                    "target": one,
                    "document": (document or doc).key,
                    "resolved": document is None and one in known,
                }
            )

    # Other documents first ("EN 1990, 6.4.3.2"), so their clause numbers are not read as ours.
    for found, span, _ in find_designations(text):
        if found.code == doc.code:  # the document naming itself, whatever publisher it was filed under
            tail = _OLD_TAIL.match(text[span[1] : span[1] + 20])
            taken.append((span[0], span[1] + (tail.end() if tail else 0)))
            continue
        before = _objects_before(text, span[0])
        if before and not any(a <= before[1] < b for a, b in taken):
            objects = before[0]
            for i, ((start, end), (kind, code)) in enumerate(objects):
                end = span[1] if i == len(objects) - 1 else end  # the last one runs to the designation
                add(text[start:end], (start, end), object_key(found, code), kind, found)
            taken.append((before[1], span[1]))  # "and 5.2" in between is not ours either
            continue
        end, best = _objects_after(text, span[1])
        if best is None:
            add(text[span[0] : end], (span[0], end), found.key, "document", found)
        else:
            add(text[span[0] : end], (span[0], end), object_key(found, best[1]), best[0], found)
    for m in _GARBLED_REF.finditer(text):
        preceding = text[max(0, m.start() - GARBLED_TITLE_REACH) : m.start()]
        target = _garbled_target(doc, m.group("kind"), m.group("num"), known, preceding)
        if target is not None:
            kind = _kind_code(m.group("kind")) if m.group("kind") else "clause"
            start = m.start("num") if m.group("cue") else m.start()
            end = m.end() + (text[m.end() : m.end() + 1] == ")" and "(" in m.group(0))  # "expression (C.l)"
            add(text[start:end], (start, end), target, kind)
    wide_kinds = {split_key(k)[2].split("_")[0] for k in known if re.search(r"\d-\d|[A-Z]-\d|\)$", split_key(k)[2])}
    # a document whose sections are numbered paragraphs ("126"): "see paragraph 46" names one, and
    # "paragraphs 580-597" the first of a run
    paragraphs = sum(1 for k in known if split_key(k)[2].isdigit()) >= MIN_NUMBERED_PARAGRAPHS
    for m in _WIDE_OBJECT_REF.finditer(text):
        number = m.group("num").replace("\n", "")
        run = re.fullmatch(r"(\d{1,4})(?:[-–](\d{1,4}))?", number)  # "580" or "580-597"
        if paragraphs and m.group("kind").lower().startswith("paragraph") and run:
            first, last = run.groups()
            if object_key(doc, first) in known:  # "paragraphs 580-597": each of the run
                add(m.group(0), m.span(), object_key(doc, first), "clause")
                for code in _between(first, last) + [last] if last else []:
                    if object_key(doc, code) in known:
                        add(m.group(0), m.span(), object_key(doc, code), "clause", member=True)
            continue
        if not re.search(r"\d-\d|[A-Z]-\d|\(|\d{3}", number):
            continue  # the usual "Table 5.1": the rules below
        code = _wide_target(m.group("kind"), number)
        key = object_key(doc, code)
        kind = code.split("_")[0] if "_" in code else "clause"
        if key in known or (kind in wide_kinds or kind == "clause" and "clause" in wide_kinds) and "-" in number:
            add(m.group(0), m.span(), key, kind)
            pos = m.end()  # "Tables C-1, C-2, and C-3": each number of the list, in the same form
            while more := _WIDE_MORE.match(text, pos):
                member = object_key(doc, _wide_target(m.group("kind"), more.group("num")))
                if member in known:
                    add(more.group("num"), more.span("num"), member, kind)
                taken.append(more.span())
                pos = more.end()
        elif re.match(r"\d{3}", number):
            taken.append(m.span())  # "Section 1603" of a quoted code is not our Section 16

    def named(kind: str, number: str) -> str:
        if kind == "clause" and _OWN_PARAGRAPH.fullmatch(number.strip()):
            return str(section["key"])  # a paragraph of this clause: no reference out of it
        return object_key(doc, _target_code(kind, number))

    for m in _OBJECT_REF.finditer(text):
        kind = _kind_code(m.group("kind"))
        head = (m.start(), m.end("first"))  # "Tables 5.1": the word and the first number
        if any(a <= m.start("first") < b for a, b in taken):
            continue  # read already ("ASCE 7-16 Table 13.6-1", "Tables C-1, C-2"): its "-1" is no clause 1
        target = named(kind, m.group("first"))
        if m.group("kind").startswith(_LOWER_KINDS) and target not in known and _ocr_variant(target, known) is None:
            continue
        add(text[head[0] : head[1]], head, target, kind)
        more_start = m.start("more")
        previous = m.group("first")
        for n in re.finditer(r"\(?\s?" + _NUMTOK + r"\s?\)?|[A-H]\b", m.group("more") or ""):
            span = (more_start + n.start(), more_start + n.end())  # "Tables 5.1 and 5.2": each its own span
            add(text[span[0] : span[1]], span, named(kind, n.group(0)), kind, maybe_clause=True)
            if _RANGE.search(text[max(more_start, span[0] - 5) : span[0]]):
                # "Tables 7.1 to 7.5": the ones in between are named too
                for code in _between(_target_code(kind, previous), _target_code(kind, n.group(0))):
                    if object_key(doc, code) in known:
                        add(text[span[0] : span[1]], span, object_key(doc, code), kind, member=True)
            previous = n.group(0)
    for m in _ANNEX_PARA.finditer(text):
        add(m.group(0), m.span(), object_key(doc, f"annex_{m.group('letter')}"), "annex")
    for m in _ANNEX_CLAUSE.finditer(text):
        key = object_key(doc, re.sub(r"\s", "", m.group("num")))
        cue = _CUE.search(text[max(0, m.start() - 25) : m.start()])
        if key in known and (cue or m.group("para")) and not _among_values(text, m.start(), m.end()):
            add(m.group(0).strip(), m.span(), key, "clause")
    for m in _DOTLESS_ANNEX_CLAUSE.finditer(text):
        dotted, dotless = (object_key(doc, f"{m['letter']}{sep}{m['num']}") for sep in (".", ""))
        if dotted in known and not any(k == dotless or k.startswith(dotless + ".") for k in known):
            add(m.group(0), m.span(), dotted, "clause")
    for m in _BARE_CLAUSE.finditer(text):
        key = object_key(doc, m.group("num"))
        cue = _CUE.search(text[max(0, m.start() - 25) : m.start()])
        if cue or (key in known and not _among_values(text, m.start(), m.end())):
            add(m.group(0).strip(), m.span(), key, "clause")
    for m in _BRACKETED_CLAUSE.finditer(text):
        key = object_key(doc, m.group("num"))
        if key in known and (m.group("para") or m.group("num").count(".") >= 2):
            add(m.group(0), m.span(), key, "clause")
    for m in _SECTION_PARA.finditer(text):
        key = object_key(doc, m.group("num"))
        if key in known and _CUE.search(text[max(0, m.start() - 25) : m.start()]):
            add(m.group(0), m.span(), key, "clause")
    for m in _NEIGHBOUR.finditer(text):
        phrase = m.group("dir").lower()
        if "above" in phrase:
            target = section.get("previous")
        else:
            wanted = next((w for w in ("table", "figure", "expression") if w in phrase), None)
            target = section.get("next_" + wanted) if wanted else section.get("next")
            target = target or section.get("next")
        add(m.group(0), m.span(), target, "neighbour")
    titles = known if isinstance(known, SectionTitles) else SectionTitles(known) if isinstance(known, Mapping) else None
    if titles is not None and titles.named:
        for m in titles.pattern.finditer(text):
            name = "quoted" if m.group("quoted") else "cued"
            if name == "cued" and not m.group(name)[0].isupper():
                continue  # a title cited is printed as a title
            span = m.span() if name == "quoted" else m.span(name)
            add(text[span[0] : span[1]], span, titles.named[re.sub(r"\s+", " ", m.group(name)).lower()], "clause")
    self_key = section["key"]
    out = [r for r in refs if r["target"] != self_key]
    out.sort(key=lambda r: r["span"][0])
    return out


def claimed_references(section: Section, claimed: list[str], known: set[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """References a model says a section makes: kept only when the words are in the section's text,
    then resolved with the same rules as ingestion."""
    text = " ".join(section["text"].split())
    publisher, code, _ = split_key(section["doc_key"])
    kept, wrong = [], []
    for raw in dict.fromkeys(claimed):
        if " ".join(raw.split()) not in text:
            wrong.append(raw)
            continue
        probe = {"key": section["key"], "text": raw, "previous": section.get("previous"), "next": section.get("next")}
        found = spot_references(DocId(publisher, code), probe, known)
        kept += [dict(r, span=None) for r in found] if found else []
        if not found:
            wrong.append(raw)
    return kept, wrong


NOT_INGESTED = "document not ingested"
NOT_FOUND = "target not found in the document"


@dataclass(frozen=True)
class Resolution:
    """Where a reference leads now: ``key`` (a section key, or a document key for a reference to a whole
    document) in ``document``; or None and the ``reason``."""

    key: str | None
    document: str
    reason: str | None = None

    @property
    def resolved(self) -> bool:
        return self.key is not None


class Resolver:
    """Resolves references against the store as it is when asked: a document is there while its
    manifest is (as for every reader), read once per resolver, and its sections are those of the
    generation that manifest serves. Make one per read (a query step, a request): it does not see
    later changes."""

    def __init__(self, stores: Stores):
        self.stores = stores
        self._present: dict[str, bool] = {}
        self._visible: set[str] | None = None
        self._sections: dict[str, set[str]] = {}

    def present(self, doc_key: str) -> bool:
        if doc_key not in self._present:
            self._present[doc_key] = self.stores.manifest(doc_key) is not None
        return self._present[doc_key]

    @property
    def visible(self) -> set[str]:
        if self._visible is None:
            self._visible = set(self.stores.visible_documents())
        return self._visible

    def document(self, doc_key: str) -> str | None:
        """The visible document a cited key stands for: itself, or the one document filed under another
        publisher with the same code ("BSI_EN1990" ingested with --publisher BSI for "EN 1990")."""
        if self.present(doc_key):
            return doc_key
        code = split_key(doc_key)[1]
        same = [d for d in self.visible if split_key(d)[1] == code]
        return same[0] if len(same) == 1 else None

    def sections(self, doc_key: str) -> set[str]:
        if doc_key not in self._sections:
            self._sections[doc_key] = set(self.stores.doc_table(doc_key, "sections"))
        return self._sections[doc_key]

    def resolve(self, ref: dict[str, Any], source: str | None = None) -> Resolution:
        """Where ``ref`` (made by section ``source``, when known) leads now."""
        cited = ref["document"]
        doc_key = self.document(cited)
        if doc_key is None:
            return Resolution(None, cited, NOT_INGESTED)
        target = ref.get("target")
        if not target:
            return Resolution(None, doc_key, NOT_FOUND)
        if doc_key != cited and target.startswith(cited + "_"):
            target = doc_key + target[len(cited) :]
        elif target == cited:
            target = doc_key
        if target == doc_key:
            return Resolution(doc_key, doc_key)
        known = self.sections(doc_key)
        if target in known:
            return Resolution(target, doc_key)
        internal = source is not None and source.startswith(cited + "_")
        for variant in [] if internal or ref.get("kind") == "neighbour" else _variants(target, known):
            return Resolution(variant, doc_key)  # ingestion already tried these inside a document
        return Resolution(None, doc_key, NOT_FOUND)


def _variants(key: str, known: set[str]) -> list[str]:
    """Known keys an OCR slip or a spelling turned into ``key``: "Figure 81" is B.1, "A.1.1" is A1.1."""
    out = []
    ocr = _ocr_variant(key, known)
    if ocr:
        out.append(ocr)
    prefix, _, code = key.rpartition("_")
    m = re.fullmatch(r"([A-H])\.(\d\.\d.*)", code)  # "table A.I.I" read as A.1.1: Table A1.1
    if m and f"{prefix}_{m.group(1)}{m.group(2)}" in known:
        out.append(f"{prefix}_{m.group(1)}{m.group(2)}")
    return out


_QUESTION = DocId("QUESTION", "question")  # where a question's words are read: every designation is another document
# a word or a paragraph that makes a number a section's ("clause 1.5", "Table 2", "5.2(7)")
_NAMING = re.compile(
    r"(?i)\b(?:tables?|fig(?:ure)?s?|annex(?:es)?|appendix|appendices|sections?|(?:sub)?clauses?|expressions?|"
    r"equations?|eqs?|paragraphs?)\b|\(\s?\d"
)


def named_sections(question: str, resolver: Resolver) -> list[dict[str, Any]]:
    """The sections a question names ("Table 6.2 of EN 1991-1-1", "EN 1991-1-4, 7.2(3)", "Annex B",
    "5.2(7)"), in the order named, each as ``{"raw", "focus", "keys"}``: the words, the paragraph named
    ("(7)", or "*" for the whole) and the keys it stands for. A number without its document is read in
    the documents the question names, or in every visible document when it names none ("Table 5.2"
    then stands for each one's Table 5.2). A bare number of one or two levels ("1.5", "4.5 degrees")
    is a value, not a clause, unless a word or a paragraph says otherwise ("clause 1.5", "5.2(7)")."""
    probe = {"key": f"{_QUESTION.key}_question", "text": question}
    refs = [r for r in spot_references(_QUESTION, probe, set()) if r["document"] != _QUESTION.key]
    taken = [r["span"] for r in refs]
    named = [resolver.document(doc.key) for doc, _, _ in find_designations(question)]
    for doc_key in [d for d in dict.fromkeys(named) if d] or sorted(resolver.visible):
        publisher, code, _ = split_key(doc_key)
        for ref in spot_references(DocId(publisher, code), probe, resolver.sections(doc_key)):
            a, b = ref["span"]
            if ref["document"] != doc_key or any(x < b and a < y for x, y in taken):
                continue  # another document's, or words a designation already took
            if ref["raw"].count(".") < 2 and not _NAMING.search(ref["raw"]):
                continue  # "a factor of 1.5": a value
            if re.match(r"\s?[-.]\d", question[ref["span"][1] :]):
                continue  # "Section 2" of "Section 2-1.1": a number this document does not have
            refs.append(ref)
    # one document's longer reading of the words wins over another's shorter one ("Section 2-1.1", not 2)
    refs = [r for r in refs if not any(_inside(r["span"], o["span"]) for o in refs)]
    found: dict[str, dict[str, Any]] = {}
    for ref in sorted(refs, key=lambda r: r["span"][0]):
        if ref["kind"] in ("document", "neighbour"):
            continue
        to = resolver.resolve(ref, f"{ref['document']}_question")  # typed, not scanned: no OCR variants
        raw = ref["raw"].strip()
        if to.key is None or to.key == to.document or split_key(to.key)[2].rpartition("_")[2] not in raw:
            continue  # not found, a whole document, or an OCR reading of another number ("6.2" as G.2)
        entry = found.setdefault(raw, {"raw": raw, "focus": paragraph_named(raw) or "*", "keys": []})
        if to.key not in entry["keys"]:
            entry["keys"].append(to.key)
    return list(found.values())


def paragraph_named(raw: str) -> str | None:
    """The paragraph a reference's words name, "(7)" of "5.2(7)" or "5.2 (7)"; None for a whole section."""
    para = re.search(r"\(\s?(\d{1,2})\s?\)", raw)
    return f"({para.group(1)})" if para else None


def _inside(span: tuple[int, int], other: tuple[int, int]) -> bool:
    return other[0] <= span[0] and span[1] <= other[1] and tuple(span) != tuple(other)


def resolve(ref: dict[str, Any], stores: Stores, source: str | None = None) -> Resolution:
    """Where one reference (made by section ``source``) leads in ``stores`` now (a :class:`Resolver`
    for many)."""
    return Resolver(stores).resolve(ref, source)


def resolved_references(refs: list[dict[str, Any]], resolver: Resolver, source: str) -> list[dict[str, Any]]:
    """Section ``source``'s stored references as they resolve now: ``resolved``, ``target`` (the key
    found, in the document that holds it), ``document`` and ``reason`` (None when resolved) replaced."""
    out = []
    for ref in refs:
        found = resolver.resolve(ref, source)
        out.append(
            dict(
                ref,
                resolved=found.resolved,
                target=found.key or ref.get("target"),
                document=found.document,
                reason=found.reason,
            )
        )
    return out


def resolve_external(references: dict[str, list[dict[str, Any]]], doc_key: str, stores: Stores) -> dict[str, set[str]]:
    """At commit: mark each reference into another document with how it resolves now (a snapshot for
    the ingest summary; readers resolve again) and return referenced document -> citing section keys."""
    resolver = Resolver(stores)
    external: dict[str, set[str]] = {}
    for src, refs in references.items():
        for ref in refs:
            if ref["document"] != doc_key:
                external.setdefault(ref["document"], set()).add(src)
                found = resolver.resolve(ref, src)
                ref["resolved"] = found.resolved
                if found.reason:
                    ref["reason"] = found.reason
    return external


def doc_display(doc_key: str) -> str:
    """``CEN_EN1991-1-3`` -> ``EN 1991-1-3``."""
    publisher, code, _ = split_key(doc_key)
    return DocId(publisher, code).display
