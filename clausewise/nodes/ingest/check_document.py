"""check-document: validate and identify the file before anything is written; skip it when the same
bytes are already ingested."""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf
from langgraph.runtime import Runtime

from clausewise.graph.state import IngestContext, IngestState
from clausewise.keys import DocId, doc_id, find_designations, publisher_name
from clausewise.nodes.ingest.deps import system_of
from clausewise.ocr import find_tessdata, missing_reason, plan_ocr
from clausewise.pdf import MUPDF_LOCK


class IngestError(ValueError):
    """A file that cannot be ingested; the message is one clear line for the user."""


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def validate_pdf(
    path: Path, *, max_file_mb: int, max_pages: int, tessdata_prefix: str | None = None
) -> pymupdf.Document:
    """Open ``path`` as a PDF or raise :class:`IngestError` with a one-line reason. A document without
    any text layer passes when it has an image and OCR can run (English data for Tesseract found in
    ``tessdata_prefix`` or the system's folder)."""
    return validated_pdf(path, max_file_mb=max_file_mb, max_pages=max_pages, tessdata_prefix=tessdata_prefix)[0]


def validated_pdf(
    path: Path, *, max_file_mb: int, max_pages: int, tessdata_prefix: str | None = None
) -> tuple[pymupdf.Document, list[str]]:
    """:func:`validate_pdf`, and the text of each page."""
    name = path.name
    if not path.exists():
        raise IngestError(f"{name}: no such file")
    if not path.is_file():
        raise IngestError(f"{name}: not a regular file")
    size = path.stat().st_size
    if size > max_file_mb * 1024 * 1024:
        raise IngestError(f"{name}: {size / 1e6:.0f} MB is larger than the {max_file_mb} MB limit")
    if size == 0:
        raise IngestError(f"{name}: empty file")
    with open(path, "rb") as fh:
        head = fh.read(1024)
    if b"%PDF-" not in head:
        raise IngestError(f"{name}: not a PDF (no %PDF header)")
    try:
        with MUPDF_LOCK:
            doc = pymupdf.open(path, filetype="pdf")
    except Exception as exc:  # MuPDF raises several types for broken files
        raise IngestError(f"{name}: corrupt PDF ({str(exc).splitlines()[0][:120]})") from exc
    try:
        if doc.needs_pass or doc.is_encrypted:
            raise IngestError(f"{name}: encrypted PDF; remove the password and try again")
        if doc.page_count == 0:
            raise IngestError(f"{name}: the PDF has no pages")
        if doc.page_count > max_pages:
            raise IngestError(f"{name}: {doc.page_count} pages is more than the {max_pages}-page limit")
        with MUPDF_LOCK:
            texts = [doc[i].get_text("text") for i in range(doc.page_count)]
            if doc.is_repaired:
                # MuPDF rebuilt a broken cross-reference table: a truncated file reads as empty pages.
                empty = [
                    i + 1
                    for i in range(doc.page_count)
                    if not texts[i].strip() and not doc[i].get_images() and not doc[i].get_drawings()
                ]
                if empty:
                    raise IngestError(
                        f"{name}: truncated or damaged PDF ({len(empty)} of {doc.page_count} pages unreadable)"
                    )
        if not any(t.strip() for t in texts):
            with MUPDF_LOCK:
                images = any(doc[i].get_images() or doc[i].get_image_info() for i in range(doc.page_count))
            if not images:
                raise IngestError(f"{name}: no page has text or an image; nothing to read")
            if find_tessdata(tessdata_prefix) is None:
                raise IngestError(
                    f"{name}: no page has a text layer and OCR cannot run: {missing_reason(tessdata_prefix)}"
                )
    except IngestError:
        doc.close()
        raise
    except Exception as exc:
        doc.close()
        raise IngestError(f"{name}: corrupt PDF ({str(exc).splitlines()[0][:120]})") from exc
    return doc, texts


# ---------------------------------------------------------------- identity
TITLE_PAGES = 3  # the first pages with text: cover, title page, inside cover
MARGIN_PAGES = 30  # pages whose running headers and footers are read
MARGIN_RUNNING = 0.25  # share of the pages read on which a running header or footer repeats
MARGIN = 0.1  # share of the page height, top and bottom, that holds running headers and footers
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|"
    r"Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
# A date as printed next to a designation or on its own line: "December 2018", "11 April 2023",
# "Published May 2015", "(Third edition, published 2006)".
_DATE = (
    r"\(?(?:(?:[A-Za-z]+\s+)?edition,?\s*)?(?:(?:published|issued|dated)[:\s]+)?"
    rf"(?:\d{{1,2}}(?:st|nd|rd|th)?\s+)?(?:{_MONTH}\s+)?(?:\d{{1,2}},?\s+)?(?P<year>(?:19|20)\d\d)(?!\d)"
)
_DATE_AFTER = re.compile(r"(?i)^[\s/,;|\u2013\u2014-]*" + _DATE)
_DATE_LINE = re.compile(r"(?i)^" + _DATE + r"\)?\.?$")
# A distributor's stamp: the licensee, the copy's status, who supplied it to whom.
_STAMP = re.compile(
    r"(?i)licen[cs]|uncontrolled|downloaded|supplied\s+by|provided\s+by|purchased|subscri(?:ber|ption)|"
    r"single[- ]user|sold\s+to|order\s+(?:no|number)|not\s+for\s+resale|"
    r"for\s+(?:the\s+)?(?:sole|internal|personal)\s+use|printed\s+(?:by|for|on)\b|[\w.+-]+@[\w-]+\.\w"
)
# Context that names an earlier edition ("supersedes UFC 3-301-01, dated 1 October 2019").
_EARLIER = re.compile(r"(?i)(?:supersed|replac|withdr[ae]w|revision\s+of|previous|earlier|amend)\w*\W+(?:\w+\W+){0,3}$")
_BOILERPLATE = re.compile(
    r"(?i)^(?:contents|table\s+of\s+contents|foreword|preface|introduction|acknowledge?ments?|disclaimer|notice|"
    r"copyright|all\s+rights\s+reserved|this\s+page\s+(?:is\s+)?(?:intentionally\s+)?(?:left\s+)?blank|"
    r"approved\s+for\s+public\s+release|draft|confidential|english\s+version|prepared\s+(?:by|for)|published\s+by|"
    r"(?:indian|british|european|australian|new\s+zealand|international|american(?:\s+national)?|german|canadian|"
    r"national)\s+standards?\b|norme\s|europ\S*\s+norm)"
    r"|\u00a9|\(c\)\s|\bisbn\b|\bissn\b|www\.|https?://|@|\bpage\s+\d+\s+of\s+\d+|distribution\s+unlimited|\bics\s+\d"
)
_FILE_TITLE = re.compile(
    r"(?i)\.(?:fm|pdf|docx?|rtf|txt|indd|qxd|qxp|p65|pm\d|tex|dvi|e?ps|xlsx?|pptx?|odt|wpd|html?)\b|"
    r"^(?:microsoft\s+\w+\s+-|untitled|document\d*$|title$|\W*$)|[\\/]"
)
_ORG_WORDS = re.compile(
    r"\b(?:Ministry|Department|Agency|Executive|Council|Institute|Institution|Association|Authority|Board|Bureau|"
    r"Committee|Commission|Administration|Office|Organi[sz]ation|Society|Federation|Corporation|Service|Centre|"
    r"Center|Standards?|Government)\b"
)
# "Health and Safety Executive (HSE)": a body's name followed by its acronym
_NAMED_BODY = re.compile(r"((?:[A-Z][A-Za-z]+,?\s(?:(?:of|and|for|the)\s)*){1,6}[A-Z][A-Za-z]+)\s\(([A-Z]{2,10})\)")
_STOPWORDS = frozenset("a an the to of in on for and or with by at from as its their".split())


@dataclass
class _Line:
    page: int
    block: int
    text: str
    size: float
    top: float  # y of the line's top edge, as a share of the page height
    margin: bool  # a running header or footer, or text turned sideways
    stamp: bool


def _page_lines(page: pymupdf.Page, index: int, margins_only: bool) -> list[_Line]:
    height = page.rect.height or 1.0
    clips: list[pymupdf.Rect | None] = [None]
    if margins_only:
        r = page.rect
        band = (MARGIN + 0.02) * r.height
        clips = [pymupdf.Rect(r.x0, r.y0, r.x1, r.y0 + band), pymupdf.Rect(r.x0, r.y1 - band, r.x1, r.y1)]
    out: list[_Line] = []
    for n, clip in enumerate(clips):
        blocks = page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT, clip=clip)["blocks"]
        for b, block in enumerate(blocks):
            lines = []
            for line in block.get("lines", []):
                text = " ".join("".join(s["text"] for s in line["spans"]).split())
                if not text:
                    continue
                top, bottom = line["bbox"][1] / height, line["bbox"][3] / height
                turned = abs(line["dir"][1]) > 0.5
                margin = turned or bottom <= MARGIN + 0.005 or top >= 1 - MARGIN - 0.005
                if margins_only and not margin:
                    continue
                size = max(s["size"] for s in line["spans"])
                lines.append(_Line(index, n * 10000 + b, text, size, top, margin, bool(_STAMP.search(text))))
            if any(ln.stamp and ln.margin for ln in lines):  # a stamp block in the margin: all of it
                for ln in lines:
                    ln.stamp = True
            out += lines
    return out


def _read_lines(doc: pymupdf.Document) -> list[_Line]:
    """The first pages with text in full, then the running headers and footers of the next pages."""
    lines: list[_Line] = []
    full = 0
    for i in range(min(doc.page_count, MARGIN_PAGES)):
        page_lines = _page_lines(doc[i], i, margins_only=full >= TITLE_PAGES)
        if full < TITLE_PAGES and any(not ln.margin for ln in page_lines):
            full += 1
        lines += page_lines
    return lines


def _blocks(lines: list[_Line]) -> list[list[_Line]]:
    grouped: dict[tuple[int, int], list[_Line]] = {}
    for ln in lines:
        grouped.setdefault((ln.page, ln.block), []).append(ln)
    return list(grouped.values())


def _body_size(lines: list[_Line]) -> float:
    sizes = sorted(ln.size for ln in lines if not ln.margin for _ in range(len(ln.text)))
    return sizes[len(sizes) // 2] if sizes else 10.0


@dataclass
class _Seen:
    doc: DocId
    kind: str  # "margin", "title" (title page, large font), "first" (title page), "meta"
    page: int
    size: float
    after: str  # text that follows it in its block
    earlier: bool  # named as an earlier edition ("supersedes ...")


def _designations_seen(lines: list[_Line], meta: dict[str, str]) -> list[_Seen]:
    title_pages = sorted({ln.page for ln in lines if not ln.margin})[:TITLE_PAGES]
    large = 1.25 * _body_size([ln for ln in lines if ln.page in title_pages])
    seen: list[_Seen] = []
    for block in _blocks(lines):
        text = "\n".join(ln.text for ln in block)
        starts = [0]
        for ln in block[:-1]:
            starts.append(starts[-1] + len(ln.text) + 1)
        for found, (start, end), _ in find_designations(text):
            ln = block[max(i for i, s in enumerate(starts) if s <= start)]
            if ln.stamp:
                continue
            if ln.page in title_pages and ln.size >= large:
                kind = "title"  # printed large on a title page, at its head or not
            elif ln.margin:
                kind = "margin"
            elif ln.page == title_pages[0]:
                kind = "first"  # named in the cover's text; a later page's text cites other codes
            else:
                continue
            after = text[end : end + 60]
            earlier = bool(_EARLIER.search(text[max(0, start - 60) : start]))
            seen.append(_Seen(found, kind, ln.page, ln.size, after, earlier))
            if kind == "margin" and ln.page == title_pages[0]:  # atop the cover, as its own text names it
                seen.append(_Seen(found, "first", ln.page, ln.size, after, earlier))
    for field in ("title", "subject"):
        for found, (_, end), _ in find_designations(meta.get(field) or ""):
            seen.append(_Seen(found, "meta", -1, 0.0, (meta.get(field) or "")[end : end + 60], False))
    return seen


def _read_designation(lines: list[_Line], meta: dict[str, str]) -> tuple[DocId | None, int | None]:
    """The document's own designation: the one its running headers and footers repeat, its title page
    prints large and its metadata names, never a distributor's stamp; the edition is the designation's
    own year, else the date printed next to it, else the title page's date line. Also the page that
    prints it large, if one does."""
    seen = _designations_seen(lines, meta)
    # a running header repeats on many pages; a footnote citing another code does not
    running = max(2, MARGIN_RUNNING * (max((ln.page for ln in lines), default=0) + 1))
    score: Counter[str] = Counter()
    for key in {s.doc.key for s in seen}:
        mine = [s for s in seen if s.doc.key == key]
        margin_pages = len({s.page for s in mine if s.kind == "margin"})
        score[key] += 2 * margin_pages if margin_pages >= running else 0
        score[key] += 4 * any(s.kind == "title" for s in mine) + 3 * any(s.kind == "meta" for s in mine)
        score[key] += min(sum(s.kind in ("title", "first") for s in mine), 3)
    score = Counter({k: v for k, v in score.items() if v > 0})
    if not score:
        return None, None
    order = {s.doc.key: i for i, s in reversed(list(enumerate(seen)))}
    key = max(score, key=lambda k: (score[k], -order[k]))
    mine = [s for s in seen if s.doc.key == key and not s.earlier]
    weight = {"title": 3, "margin": 2, "meta": 1, "first": 1}
    years: Counter[str] = Counter()
    for s in mine:
        if s.doc.edition:
            years[s.doc.edition] += weight[s.kind]
    if not years:
        for s in mine:
            m = _DATE_AFTER.match(s.after)
            if m:
                years[m.group("year")] += weight[s.kind]
    edition = max(years, key=lambda y: years[y]) if years else _date_line(lines)
    doc = next(s.doc for s in seen if s.doc.key == key)
    title_page = max((s for s in mine if s.kind == "title"), key=lambda s: s.size, default=None)
    return DocId(doc.publisher, doc.code, edition), title_page.page if title_page else None


def _date_line(lines: list[_Line]) -> str | None:
    """The year of the first line on the title pages that is a date ("Published May 2015")."""
    for ln in lines:
        if not ln.margin and not ln.stamp:
            m = _DATE_LINE.match(ln.text)
            if m:
                return m.group("year")
    return None


def _without_designations(text: str) -> str:
    for _, (start, end), _ in reversed(find_designations(text)):
        text = text[:start] + " " + text[end:]
    return text


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'\u2019-]+", text)


def _meta_title(meta: dict[str, str]) -> str:
    """The metadata title without lines that only name the designation ("Health and safety\\nHSG150")."""
    kept = [ln.strip() for ln in (meta.get("title") or "").splitlines() if len(_words(_without_designations(ln))) >= 1]
    return " ".join(" ".join(kept).split())


def _looks_like_title(text: str) -> bool:
    """A real title, not a file name ("P06100-1.fm", "875_2.pdf", "Microsoft Word - IS875.doc")."""
    words = [w for w in _words(_without_designations(text)) if len(w) >= 3]
    return len(text) >= 8 and len(words) >= 2 and not _FILE_TITLE.search(text) and "_" not in text


def _page_title(lines: list[_Line], page: int | None = None) -> str | None:
    """The largest lines of the title pages (of ``page`` when given) that are not the designation, a
    date or boilerplate."""
    candidates = [
        ln
        for ln in lines
        if not ln.margin
        and (page is None or ln.page == page)
        and not ln.stamp
        and not _BOILERPLATE.search(ln.text)
        and not _DATE_LINE.match(ln.text)
        and _words(_without_designations(ln.text))
    ]
    for size in sorted({round(ln.size, 1) for ln in candidates}, reverse=True):
        same = [ln for ln in candidates if abs(ln.size - size) <= 0.08 * size]
        page = min(ln.page for ln in same)
        group = sorted((ln for ln in same if ln.page == page), key=lambda ln: ln.top)
        text = " ".join(" ".join(ln.text for ln in group).split())
        if len(_words(text)) >= 2 and len(text) >= 8:
            return text
    return None


def _read_title(lines: list[_Line], meta: dict[str, str], title_page: int | None) -> str | None:
    """The metadata title when it is a real title the title pages bear out; else the title page's: the
    page that prints the designation large (a distributor's cover may come first), else the first."""
    meta_title = _meta_title(meta)
    page_text = " ".join(ln.text for ln in lines if not ln.margin).lower()
    if _looks_like_title(meta_title):
        words = [w.lower() for w in _words(meta_title) if len(w) >= 3]
        if words and sum(w in page_text for w in words) >= 0.6 * len(words):
            return meta_title
    from_page = (_page_title(lines, title_page) if title_page is not None else None) or _page_title(lines)
    return from_page or (meta_title if _looks_like_title(meta_title) else None)


def _acronym(name: str, text: str) -> str | None:
    """The acronym of an issuing body ("Ministry of Business, Innovation and Employment" -> "MBIE"): the
    one the document defines for it ("... (MBIE)"), else the initials of its capitalised words."""
    name = " ".join(name.split())
    own = re.search(r"\(([A-Z]{2,10})\)\s*$", name)
    if own:
        return own.group(1)
    defined = re.search(re.escape(name) + r"\s*\(([A-Z]{2,10})\)", text)
    if defined:
        return defined.group(1)
    initials = "".join(w[0] for w in re.findall(r"[A-Z][A-Za-z]+", name))
    return initials if 2 <= len(initials) <= 10 else None


def _issuer(lines: list[_Line], meta: dict[str, str]) -> str | None:
    """The body that issued a document that has no designation: the metadata author when it names an
    organisation, else an organisation named on the title pages with its acronym."""
    text = " ".join(ln.text for ln in lines if not ln.stamp)
    author = " ".join((meta.get("author") or "").split())
    if author and _ORG_WORDS.search(author):
        return _acronym(author, text)
    for m in _NAMED_BODY.finditer(text):
        if _ORG_WORDS.search(m.group(1)):
            return m.group(2)
    return None


def _code_from_title(title: str) -> str:
    """A short code for a document without a designation: its title's first content words."""
    words = [w for w in _words(re.sub(r"(?<!\d)(?:19|20)\d\d(?!\d)", " ", title)) if w.lower() not in _STOPWORDS]
    return "-".join(re.sub(r"[^A-Za-z0-9]", "", w) for w in words[:4])


def identify(doc: pymupdf.Document, path: Path, publisher: str | None, code: str | None) -> dict[str, Any]:
    """Publisher, code, edition and title, read from the printed designation (title page, running
    headers and footers), the metadata and the title page; ``--publisher`` / ``--code`` override what
    the document says."""
    meta = {k: v or "" for k, v in (doc.metadata or {}).items()}
    with MUPDF_LOCK:
        lines = _read_lines(doc)
    found, title_page = _read_designation(lines, meta)
    title = _read_title(lines, meta, title_page)
    try:
        if code:
            given = doc_id(publisher, code)
            same = found is not None and found.code == given.code
            found = DocId(given.publisher, given.code, given.edition or (found.edition if same and found else None))
        elif found is not None and publisher:
            found = DocId(publisher_name(publisher), found.code, found.edition)
        elif found is None and title:
            issuer = publisher_name(publisher) if publisher else _issuer(lines, meta)
            if issuer:  # guidance without a designation: the issuer and the title's words
                year = re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", title)
                found = doc_id(issuer, _code_from_title(title))
                found = DocId(found.publisher, found.code, _date_line(lines) or (year.group(0) if year else None))
    except ValueError as exc:
        raise IngestError(f"{path.name}: {exc}") from exc
    if found is None:
        raise IngestError(f"{path.name}: {_unidentified(lines, meta)}")
    return {
        "key": found.key,
        "publisher": found.publisher,
        "code": found.code,
        "display": found.display,
        "edition": found.edition,
        "title": (title or found.display)[:300],
        "pages": doc.page_count,
    }


def _unidentified(lines: list[_Line], meta: dict[str, str]) -> str:
    """One line: what was read, and how to name the document instead."""
    shown = sorted((ln for ln in lines if not ln.margin and not ln.stamp), key=lambda ln: -ln.size)
    largest = list(dict.fromkeys(ln.text[:60] for ln in shown))[:3]
    heads = list(dict.fromkeys(ln.text[:60] for ln in lines if ln.margin and not ln.stamp))[:3]
    return (
        "cannot tell which code this is: no designation (such as 'EN 1991-1-3' or 'IS 875 (Part 3)') on the "
        f"title page, in the running headers or in the metadata (largest title-page lines: {largest}; "
        f"headers/footers: {heads}; metadata title: {meta.get('title', '')!r}, author: {meta.get('author', '')!r}); "
        "pass it as printed, e.g. --code 'IS 875 (Part 3):2015' (and --publisher BIS if it is not inferred)"
    )


def doc_id_of(doc: dict[str, Any]) -> DocId:
    """The DocId of an identified document (the ``doc`` state key)."""
    return DocId(doc["publisher"], doc["code"], doc.get("edition"))


def check_document(state: IngestState, runtime: Runtime[IngestContext]) -> dict[str, Any]:
    """Validate, plan OCR, identify (after OCR, in ocr-pages, when the pages identity is read from need
    it) and skip the same bytes already ingested."""
    ctx, system = runtime.context, system_of(runtime)
    path = Path(state["path"])
    started = time.perf_counter()
    prefix = system.settings.tessdata_prefix
    pdf, texts = validated_pdf(path, max_file_mb=ctx.max_file_mb, max_pages=ctx.max_pages, tessdata_prefix=prefix)
    warnings: list[str] = []
    try:
        plan = plan_ocr(pdf, texts, garbage=bool(state.get("ocr")))
        if plan.pages and find_tessdata(prefix) is None:
            if state.get("ocr"):
                raise IngestError(f"{path.name}: --ocr: {missing_reason(prefix)}")
            warnings.append(f"{len(plan.scanned)} page(s) without a text layer not OCR'd: {missing_reason(prefix)}")
            plan.scanned, plan.garbage = [], []
        sha = sha256_of(path)
        ocr_update = {"ocr_plan": plan.as_state()} if plan.pages else {}
        if plan.pages and min(plan.pages) < MARGIN_PAGES:
            # identity is read from pages that OCR has yet to read: ocr-pages identifies the document
            skipped = _same_bytes_ingested(system.stores, sha, state)
            if skipped is not None:
                return {**skipped, "started": started}
            pending = {"pages": pdf.page_count, "sha256": sha}
            return {"doc": pending, "status": "running", "started": started, "warnings": warnings, **ocr_update}
        doc = identify(pdf, path, state.get("publisher"), state.get("code"))
    finally:
        with MUPDF_LOCK:
            pdf.close()
    doc["sha256"] = sha
    update = identified(doc, state, system.stores, path, started)
    update["warnings"] = warnings + update["warnings"]
    return {**update, **ocr_update} if update["status"] == "running" else update


def _same_bytes_ingested(stores: Any, sha: str, state: IngestState) -> dict[str, Any] | None:
    """The skip update when these very bytes are already ingested, complete (checked before OCR, which
    is the expensive part); None otherwise, or when the run names the document or overwrites."""
    if state.get("overwrite") or state.get("code") or state.get("publisher"):
        return None
    for key, entry in stores.read_json("documents.json", {}).items():
        if entry.get("sha256") != sha or entry.get("status") != "ingested":
            continue
        visible = stores.manifest(key)
        if visible and visible.get("sha256") == sha and not stores.missing_files(key, visible):
            entry = {**entry, **(visible.get("entry") or {})}
            doc = {k: entry.get(k) for k in ("publisher", "code", "edition", "title", "pages")}
            return {
                "doc": {**doc, "display": entry.get("code"), "key": key, "sha256": sha},
                "doc_key": key,
                "status": "skipped",
                "summary": {"reason": "same file already ingested (use --overwrite to replace)"},
                "warnings": [],
            }
    return None


def identified(doc: dict[str, Any], state: IngestState, stores: Any, path: Path, started: float) -> dict[str, Any]:
    """The update for an identified document: skip the same bytes already ingested (complete), refuse
    another file under the same key unless overwriting, else run."""
    visible = stores.manifest(doc["key"])
    warnings: list[str] = []
    if visible and not state.get("overwrite"):
        if visible.get("sha256") == doc["sha256"]:
            missing = stores.missing_files(doc["key"], visible)  # skip only a complete copy
            if not missing:
                return {
                    "doc": doc,
                    "doc_key": doc["key"],
                    "status": "skipped",
                    "started": started,
                    "summary": {"reason": "same file already ingested (use --overwrite to replace)"},
                    "warnings": [],
                }
            warnings.append(
                f"the stored copy of {doc['display']} lacks {len(missing)} file(s) "
                f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}); ingesting it again"
            )
            return {"doc": doc, "doc_key": doc["key"], "status": "running", "started": started, "warnings": warnings}
        recorded = stores.read_json("documents.json", {}).get(doc["key"], {})
        if recorded.get("sha256") != doc["sha256"]:  # else: an interrupted ingest of this very file
            raise IngestError(
                f"{path.name}: {doc['display']} is already ingested from another file "
                f"({(visible.get('entry') or {}).get('file')}); use --overwrite to replace it"
            )
    return {"doc": doc, "doc_key": doc["key"], "status": "running", "started": started, "warnings": []}
