"""merge-sections: page results merged into sections: numbered clauses, annexes, front matter, tables, figures,
expressions, with pages, parents and previous/next keys.

Headings are recognised by their numbering and accepted only when the number is a plausible
successor of the last accepted one (5.3.1 -> 5.3.2, 5.4, 6, 5.3.1.1), which keeps values, axis labels
and cross-references at the start of a line from being taken for clause headings. The body starts at
the first clause 1 that is followed by a 1.1, so a table of contents or a foreword cannot swallow it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.keys import DocId, clean_number, object_key, split_key
from clausewise.nodes.ingest.check_document import IngestError, doc_id_of
from clausewise.nodes.ingest.extract_page import parse_caption
from clausewise.page_map import page_at
from clausewise.pdf import close_pdf

_DIGITISH = str.maketrans({"l": "1", "I": "1", "]": "1", "/": "1", "|": "1", "O": "0", "o": "0"})
NUMBERED = re.compile(r"^(?P<num>[1-9]\d?(?:\s?\.\s?[\dlI\]/|Oo]{1,2}){0,5})(?P<dot>\.)?(?:\s+(?P<rest>.*))?$")
SECTION = re.compile(r"^(?:SECTION|Section)\s*(?P<num>[1-9lI]\d?)\b\.?\s*(?P<rest>.*)$")
ANNEX = re.compile(r"^(?:ANNEX|Annex)\s*(?P<letter>[A-H08](?:\s?[1-9](?!\s?\.\d))?)\b\s*(?P<rest>.*)$")
EXPRESSION = re.compile(
    r"\(\s?(?P<num>(?:[A-H]\d?\s?\.\s?\d{1,2}(?:\.\d{1,2})?|\d{1,2}\s?\.\s?\d{1,2})[a-z]?)\s?\)\s*$"
)
_STATUS = re.compile(r"^\(\s?(?P<status>i\s?n\s?f\s?o|n\s?o\s?r\s?m)[\w ]*\)?", re.I)  # "(infonnative)"
OCR_LETTER_SLIPS = {"B": "8", "D": "0", "G": "6", "S": "5", "I": "1"}
_TOC_LEADER = re.compile(r"(\.\s?){5,}|…{2,}")


def _title_ok(text: str | None) -> bool:
    if not text:
        return False
    text = text.strip()
    return bool(re.match(r"^[A-Za-z]", text)) and len(text) < 140 and not _TOC_LEADER.search(text)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "front"


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
    leaders = sum(1 for ln in lines if _TOC_LEADER.search(ln["text"]))
    bare_numbers = sum(1 for ln in lines if re.fullmatch(r"\d{1,3}", ln["text"].strip()))
    titled_numbers = sum(1 for ln in lines if re.search(r"[A-Za-z]{3,}\s+\d{1,3}$", ln["text"].strip()))
    contents = any(re.fullmatch(r"(table of )?contents", ln["text"].strip(), re.I) for ln in lines[:6])
    return (
        leaders >= 4
        or bare_numbers >= 8
        or titled_numbers >= 8
        or (contents and bare_numbers + leaders + titled_numbers >= 3)
    )


class _Parser:
    def __init__(self, doc: DocId, pages: list[dict[str, Any]]):
        self.doc = doc
        self.pages = pages
        self.lines: list[Line] = []
        self.toc_pages = {p["page"] for p in pages if _is_toc_page(p["lines"])}
        for p in pages:
            self.lines += [Line(ln["text"], p["page"], ln["bbox"]) for ln in p["lines"]]
        self.drafts: list[Draft] = []
        self.current_number: tuple[int, ...] | None = None
        self.current_annex: str | None = None

    # ---- heading recognition ----
    def _numbered(self, i: int) -> tuple[tuple[int, ...], str, int, bool] | None:
        """(number, title, lines consumed, strong) for a clause heading at line i, else None."""
        line = self.lines[i]
        if line.page in self.toc_pages:
            return None
        nxt = self.lines[i + 1].text if i + 1 < len(self.lines) else None
        m = SECTION.match(line.text)
        if m:
            number = (int(m.group("num").translate(_DIGITISH)),)
            rest = m.group("rest").strip()
            if rest.endswith(".") or ". " in rest or rest.startswith("."):
                return None  # "... given in Section 6. Annex B gives ..." is a sentence
            if rest and _title_ok(rest):
                return number, rest, 1, True
            if not rest and _title_ok(nxt):
                return number, nxt or "", 2, True
            return None
        m = NUMBERED.match(line.text)
        if not m:
            return None
        raw = m.group("num")
        parts = [p for p in re.split(r"\s?\.\s?", raw) if p]
        if not all(re.fullmatch(r"\d{1,2}", p.translate(_DIGITISH)) for p in parts):
            return None
        number = tuple(int(p.translate(_DIGITISH)) for p in parts)
        rest = (m.group("rest") or "").strip()
        if len(number) == 1 and rest and not re.match(r"^[A-Z][A-Za-z]{2,}", rest):
            return None  # a top-level heading needs a real word: "1 General", not "7 A" from a formula
        if rest:
            if not _title_ok(rest) or not rest[0].isupper():
                return None  # "5.3.2 and 5.3.3 apply ..." is a sentence, not a heading
            return number, rest, 1, False
        if _title_ok(nxt) and not NUMBERED.match(nxt or "") and not (nxt or "").startswith("("):
            return number, nxt or "", 2, False
        return None

    def _annex(self, i: int) -> tuple[str, str, str, int] | None:
        """(letter, status, title, lines consumed) for an annex heading at line i."""
        line = self.lines[i]
        m = ANNEX.match(line.text.replace("AnnexA", "Annex A"))
        if not m or line.page in self.toc_pages:
            return None
        rest = m.group("rest").strip()
        following = [ln.text for ln in self.lines[i + 1 : i + 4]]
        status_text = rest if _STATUS.match(rest) else (following[0] if following else "")
        sm = _STATUS.match(status_text)
        if not sm:
            return None
        status = "informative" if re.sub(r"\s", "", sm.group("status")).lower().startswith("inf") else "normative"
        used = 1 if status_text is rest else 2
        after = _STATUS.sub("", status_text).strip(" )")
        title = after or (following[used - 1] if len(following) >= used else "")
        if not after and title:
            used += 1
        letter = m.group("letter").replace(" ", "")
        letter = {"0": "D", "8": "B"}.get(letter[0], letter[0]) + letter[1:]  # OCR: "Annex 0" is Annex D
        return letter, status, title.strip(), used

    def _body_start(self) -> int:
        for i in range(len(self.lines)):
            found = self._numbered(i)
            if found and found[0] == (1,):
                for j in range(i + 1, min(len(self.lines), i + 80)):
                    nxt = self._numbered(j)
                    if nxt and nxt[0] == (1, 1):
                        return i
        return len(self.lines)

    # ---- the pass ----
    def parse(self) -> list[Draft]:
        start = self._body_start()
        self._front_matter(self.lines[:start])
        i = start
        current: Draft | None = None
        while i < len(self.lines):
            line = self.lines[i]
            annex = self._annex(i)
            if annex and (self.current_annex is None or annex[0] > self.current_annex):
                letter, status, title, used = annex
                self.current_annex, self.current_number = letter, None
                current = self._open(Draft(f"annex_{letter}", "annex", title, extra={"status": status}), line)
                current.lines += self.lines[i + 1 : i + used]
                i += used
                continue
            if self.current_annex:
                text = line.text
                if text[:1] == OCR_LETTER_SLIPS.get(self.current_annex[0]):
                    text = self.current_annex[0] + text[1:]
                m = re.match(
                    re.escape(self.current_annex)
                    + r"\s?\.?\s?(?P<num>\d{1,2}(?:\s?\.\s?\d{1,2}){0,4})\.?(?:\s+(?P<rest>.*))?$",
                    text,
                )
                rest = m.group("rest") if m else None
                if m and ((_title_ok(rest) and rest[0].isupper()) or (not rest and i + 1 < len(self.lines))):
                    number = tuple(int(p) for p in re.split(r"\s?\.\s?", m.group("num")))
                    if plausible_next(self.current_number, number) or self.current_number is None:
                        self.current_number = number
                        title = m.group("rest") or self.lines[i + 1].text
                        code = f"{self.current_annex}." + ".".join(map(str, number))
                        parent = (
                            f"{self.current_annex}." + ".".join(map(str, number[:-1]))
                            if len(number) > 1
                            else f"annex_{self.current_annex}"
                        )
                        current = self._open(Draft(code, "clause", title, number, parent), line)
                        used = 1 if m.group("rest") else 2
                        current.lines += self.lines[i + 1 : i + used]
                        i += used
                        continue
            else:
                found = self._numbered(i)
                if found and plausible_next(self.current_number, found[0], jump=9 if found[3] else 3):
                    number, title, used, _ = found
                    self.current_number = number
                    code = ".".join(map(str, number))
                    parent = ".".join(map(str, number[:-1])) or None
                    current = self._open(Draft(code, "clause", title.strip(), number, parent), line)
                    current.lines += self.lines[i + 1 : i + used]
                    i += used
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
        """Split what comes before clause 1 at unnumbered headings (Foreword, National annex ...)."""
        current: Draft | None = None
        seen: set[str] = set()
        for k, line in enumerate(lines):
            prev = lines[k - 1] if k else None
            nxt = lines[k + 1] if k + 1 < len(lines) else None
            text = line.text.strip()
            heading = (
                line.page not in self.toc_pages
                and 2 < len(text) < 70
                and len(text.split()) <= 9
                and text[0].isupper()
                and not re.search(r"[.,;:]$", text)
                and (prev is None or prev.page != line.page or re.search(r"[.:)]\s*$", prev.text))
                and nxt is not None
                and nxt.page == line.page
                and not parse_caption(text)
            )
            in_toc = line.page in self.toc_pages
            if current is None or heading or (in_toc and current.kind != "contents"):
                title = "Contents" if in_toc else (text if heading else "Front matter")
                code = slug(title)
                n = 2
                while code in seen:
                    code, n = f"{slug(title)}-{n}", n + 1
                seen.add(code)
                current = self._open(Draft(code, "contents" if in_toc else "front", title), line)
                continue
            current.lines.append(line)


def _join(lines: list[Line]) -> tuple[str, list[list[int]]]:
    """Section text and its page map: [[char offset, page], ...] at every page change."""
    text, page_map = "", []
    for line in lines:
        if not page_map or page_map[-1][1] != line.page:
            page_map.append([len(text) + (1 if text else 0), line.page])
        text = f"{text}\n{line.text}" if text else line.text
    return text, page_map


def build_sections(doc: DocId, title: str, pages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every section entry of a document, keyed by store key, in reading order."""
    drafts = _Parser(doc, pages).parse()
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
        for obj in page["objects"]:
            parent = caption_owner.get((page["page"], obj["kind"], obj["number"])) or _section_on_page(
                entries, page["page"]
            )
            number = _annex_number(obj["number"], _annex_of(entries, parent))
            code = f"{obj['kind']}_{number}"
            key = object_key(doc, code)
            body = obj.get("body", "")
            text = obj["caption"] + ("\n" + body if body else "")
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
                "section": code.replace("_", " ").title(),
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
    _expressions(doc, entries, ordered)
    for i, key in enumerate(ordered):
        entries[key]["previous"] = ordered[i - 1] if i else None
        entries[key]["next"] = ordered[i + 1] if i + 1 < len(ordered) else None
    return {key: entries[key] for key in ordered}


def _section_on_page(entries: dict[str, dict[str, Any]], page: int) -> str | None:
    """The last clause, annex or front section that has text on ``page`` (or before it)."""
    best = None
    for key, entry in entries.items():
        if entry["kind"] in ("clause", "annex", "front") and entry["pages"] and entry["pages"][0] <= page:
            best = key
    return best


def _annex_of(entries: dict[str, dict[str, Any]], key: str | None) -> str | None:
    while key:
        entry = entries.get(key)
        if entry is None:
            return None
        if entry["kind"] == "annex":
            return str(entry["section"]).removeprefix("annex_")
        key = entry.get("parent")
    return None


def _annex_number(number: str, annex: str | None) -> str:
    """Inside Annex B, an object numbered "81" or "8.1" is OCR for "B.1"."""
    if annex and number[:1] == OCR_LETTER_SLIPS.get(annex) and len(number) > 1:
        return f"{annex}.{number[1:].lstrip('.')}"
    return number


def _insert_after(ordered: list[str], parent: str | None, key: str) -> None:
    if parent in ordered:
        idx = ordered.index(parent) + 1
        while idx < len(ordered) and split_key(ordered[idx])[2].split("_")[0] in ("table", "figure", "expression"):
            idx += 1
        ordered.insert(idx, key)
    else:
        ordered.append(key)


def _expressions(doc: DocId, entries: dict[str, dict[str, Any]], ordered: list[str]) -> None:
    """Numbered expressions "(5.1)" at the end of a line become expression entries."""
    for key in list(ordered):
        entry = entries[key]
        if entry["kind"] not in ("clause", "annex"):
            continue
        lines = entry["text"].split("\n")
        for idx, line in enumerate(lines):
            m = EXPRESSION.search(line)
            if not m or re.search(r"\b(see|Expression|Equation|in|and|to)\s*$", line[: m.start()], re.I):
                continue
            number = clean_number(m.group("num"))
            formula = line[: m.start()].strip()
            if not formula and idx:
                formula = lines[idx - 1].strip()
            if len(formula) > 120 or (formula and formula[0] == "("):
                formula = formula[-120:] if not formula.startswith("(") else formula
            ekey = object_key(doc, f"expression_{number}")
            if ekey in entries:
                continue
            offset = sum(len(ln) + 1 for ln in lines[:idx])
            page = page_at(entry["page_map"], offset)
            entries[ekey] = {
                "key": ekey,
                "document": doc.display,
                "doc_key": doc.key,
                "section": f"Expression ({number})",
                "kind": "expression",
                "title": f"Expression ({number})",
                "text": f"{formula} ({number})".strip(),
                "formula": formula,
                "page_map": [[0, page]],
                "pages": [page],
                "parent": key,
                "number": number,
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


def merge_sections(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Every page is in: close the file, build the sections, and warn about pages nobody can search."""
    close_pdf(state["path"])
    doc = state["doc"]
    pages = state["page_results"]
    if not any(p["has_text"] for p in pages):
        raise IngestError(f"{Path(state['path']).name}: no page has a text layer; run OCR on the scan first")
    sections = build_sections(doc_id_of(doc), doc["title"], pages)
    warnings = list(state.get("warnings", []))
    blank = [p["page"] for p in pages if not p["has_text"] and p["has_image"]]
    if blank:
        warnings.append(
            f"{len(blank)} page(s) have an image but no text layer (not searchable): "
            f"{', '.join(map(str, blank[:20]))}{' ...' if len(blank) > 20 else ''}"
        )
    if not any(s["kind"] == "clause" for s in sections.values()):
        warnings.append("no numbered clauses found; the document is indexed as front matter only")
    return {"sections": with_neighbours(sections), "warnings": warnings}
