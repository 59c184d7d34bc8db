"""extract-page (one Send per page): text lines with positions, captioned figures and tables, cropped images.

Works on born-digital pages and on scans with an OCR text layer alike: figures and tables are found
as regions of the page (PyMuPDF's layout model, run only on pages that carry a caption), cropped from
the rendered page, and linked to the number and title of their caption.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import re
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pymupdf

from clausewise.keys import clean_number
from clausewise.pdf import MUPDF_LOCK, open_pdf

if TYPE_CHECKING:  # page workers import this module: keep LangGraph out of their start-up
    from clausewise.graph.state import PageTask

CROP_DPI = 110
_NUM = r"[A-Z]?\s?\.?\s?(?:[\dIlS][\dIlOS]?|(?<=\.)s)(?:\s?\.\s?(?:[\dIlOS]{1,2}|s\b)){0,3}[a-z]?"
CAPTION = re.compile(
    r"^\s*(?P<kind>Table|Figure|Fig\.)\s*(?P<number>" + _NUM + r")\s*"
    r"(?:(?P<sep>[:\-\u2013\u2014\u2022\u00b7.]|\s(?=[A-Z(]))\s*(?P<title>.*?))?\s*$"
)
_PARAGRAPH_START = re.compile(r"^\s*\(\s?\d{1,2}\s?\)|^\s*NOTE|^\s*\d+(\.\d+)+\.?\s+[A-Z]|^\s*Section\s+\d")


def parse_caption(text: str, *, strict: bool = False) -> tuple[str, str, str] | None:
    """(kind, number, title) when ``text`` opens with a table or figure caption. ``strict`` refuses
    the forms a wrapped cross-reference also takes ("Figure 5.7." or "Table 5.2" alone)."""
    m = CAPTION.match(text)
    if not m:
        return None
    title = (m.group("title") or "").strip()
    if m.group("sep") is None and title:
        return None
    if strict and not title:
        return None
    if title and not (title[0].isupper() or title[0] in "(\"'"):
        return None
    number = clean_number(m.group("number"))
    if not re.fullmatch(r"(([A-Z]\d?\.)?\d{1,2}(\.\d{1,2}){0,3}|[A-Z]\.?\d{1,2})[a-z]?", number):
        return None
    kind = "table" if m.group("kind") == "Table" else "figure"
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


def _merge_row(row: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "text": " ".join(ln["text"] for ln in row),
        "bbox": [
            min(ln["bbox"][0] for ln in row),
            min(ln["bbox"][1] for ln in row),
            max(ln["bbox"][2] for ln in row),
            max(ln["bbox"][3] for ln in row),
        ],
    }


def table_rows(lines: list[dict[str, Any]]) -> list[list[str]]:
    """Rebuild a table's rows and cells from the positions of its text lines.

    Rows are lines sharing a baseline; columns are the clusters of the cells' left edges across the
    table, so a cell lands in the column whose start it is nearest to.
    """
    rows = _rows(lines)
    starts = sorted(ln["bbox"][0] for row in rows for ln in row)
    columns: list[float] = []
    for x in starts:
        if not columns or x - columns[-1] > 18:
            columns.append(x)
    out = []
    for row in rows:
        cells = [""] * len(columns)
        for ln in row:
            col = max(i for i, c in enumerate(columns) if c <= ln["bbox"][0] + 18)
            cells[col] = (cells[col] + " " + ln["text"]).strip()
        out.append(cells)
    return out


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
    below = [ln for ln in body if 0 <= ln["bbox"][1] - line["bbox"][3] < 20]
    return bool(below) and below[0]["text"][:1].isupper() and not _PARAGRAPH_START.match(below[0]["text"])


def _layout_regions(page: pymupdf.Page) -> list[dict[str, Any]]:
    import pymupdf.layout  # noqa: F401  (activates the ONNX layout model)

    page.get_layout()
    info = page.layout_information or []
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


def _fallback_region(kind: str, caption: list[float], body: list[dict[str, Any]], page_rect: Any) -> list[float]:
    """A region when the layout model found none: the blank band above a figure caption, or the
    lines below a table caption up to the next numbered paragraph."""
    x0, x1 = page_rect.x0 + 40, page_rect.x1 - 40
    if kind == "figure":
        above = [ln["bbox"][3] for ln in body if ln["bbox"][3] <= caption[1] - 2]
        top = max([caption[1] - 260, *[y for y in above if caption[1] - y > 40]], default=caption[1] - 260)
        return [x0, max(page_rect.y0 + 40, top), x1, caption[1]]
    below = sorted((ln for ln in body if ln["bbox"][1] >= caption[3]), key=lambda ln: ln["bbox"][1])
    bottom = page_rect.y1 - 0.075 * page_rect.height
    for ln in below:
        if ln["bbox"][1] > caption[3] + 20 and (_PARAGRAPH_START.match(ln["text"]) or parse_caption(ln["text"])):
            bottom = ln["bbox"][1] - 2
            break
    return [x0, caption[3], x1, bottom]


def _inside(line: dict[str, Any], region: list[float]) -> bool:
    b = line["bbox"]
    cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    return region[0] - 2 <= cx <= region[2] + 2 and region[1] - 2 <= cy <= region[3] + 2


def read_page(doc: pymupdf.Document, pno: int, *, crop: bool = True) -> dict[str, Any]:
    """Everything ingestion needs from one page; ``pno`` is 0-based, the result's page is 1-based."""
    t0 = time.perf_counter()
    with MUPDF_LOCK:
        page = doc[pno]
        rect = page.rect
        raw = page.get_text("dict", flags=pymupdf.TEXT_PRESERVE_WHITESPACE | pymupdf.TEXT_PRESERVE_LIGATURES)
        has_image = bool(page.get_images(full=False))
        # Text comes in unrotated coordinates; a landscape page (rotated 90) is read as it is shown.
        turn = page.rotation_matrix if page.rotation else None
    lines = []
    for block in raw["blocks"]:
        for line in block.get("lines", []):
            text = "".join(span["text"] for span in line["spans"])
            text = re.sub(r"\s+", " ", text).strip()
            if text:
                box = pymupdf.Rect(line["bbox"]) * turn if turn is not None else line["bbox"]
                lines.append({"text": text, "bbox": [round(v, 1) for v in box]})
    height = rect.height
    header, footer, body = [], [], []
    for ln in lines:
        y0, y1 = ln["bbox"][1], ln["bbox"][3]
        if (
            y1 < rect.y0 + 0.075 * height
            and len(ln["text"]) < 70
            or (y1 < rect.y0 + 0.095 * height and re.search(r"\b(EN|BS|ISO)\s?\d", ln["text"]) and len(ln["text"]) < 40)
        ):
            header.append(ln)
        elif y0 > rect.y0 + 0.925 * height and len(ln["text"]) < 40:
            footer.append(ln)
        else:
            body.append(ln)

    candidates = []
    for row in _rows(body):
        merged = _merge_row(row)
        parsed = parse_caption(merged["text"])
        if parsed:
            candidates.append((parsed, merged))
            continue
        for ln in row:  # rotated pages: a caption line shares its "row" with the figure's labels
            parsed = parse_caption(ln["text"])
            if parsed:
                candidates.append((parsed, ln))

    objects: list[dict[str, Any]] = []
    title_lines: list[list[float]] = []
    layout_s = 0.0
    captions = []
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
            captions.append(((kind, number, title), cap))
    free = [r for r in regions if r["class"] in ("table", "picture")]
    if captions:
        for (kind, number, title), cap in captions:
            want = "table" if kind == "table" else "picture"
            scored = sorted(
                (_distance(kind, cap["bbox"], r["bbox"]) + (0 if r["class"] == want else 50), i)
                for i, r in enumerate(free)
            )
            if scored and scored[0][0] < 80:
                region, source = free.pop(scored[0][1])["bbox"], "layout"
            else:
                region, source = _fallback_region(kind, cap["bbox"], body, rect), "estimate"
            if not title:
                below = [ln for ln in body if 0 <= ln["bbox"][1] - cap["bbox"][3] < 20]
                if below and not parse_caption(below[0]["text"]) and len(below[0]["text"]) < 120:
                    title = below[0]["text"]
                    title_lines.append(below[0]["bbox"])
                    cap = {"text": cap["text"] + " " + title, "bbox": cap["bbox"]}
            objects.append(
                {
                    "kind": kind,
                    "number": number,
                    "title": title,
                    "caption": cap["text"],
                    "caption_bbox": cap["bbox"],
                    "bbox": [round(v, 1) for v in region],
                    "region": source,
                }
            )
    # Assign lines: object bodies leave the running text; caption lines stay as anchors.
    flow = []
    for ln in body:
        if ln["bbox"] in title_lines:
            continue
        owner = next((o for o in objects if o["caption_bbox"] != ln["bbox"] and _inside(ln, o["bbox"])), None)
        if owner is not None:
            owner.setdefault("lines", []).append(ln)
        if owner is None or (owner["region"] == "estimate" and owner["kind"] == "figure"):
            flow.append(ln)  # the band above an unfound figure may hold clause text: keep it there too
    drawings: list[pymupdf.Rect] = []
    if objects:
        with MUPDF_LOCK:  # born-digital pages draw figures and table rules as vector paths
            drawings = [
                pymupdf.Rect(d["rect"])
                for d in page.get_drawings()
                if d["rect"].width * d["rect"].height < 0.5 * rect.width * rect.height
            ]  # no page frames
        if turn is not None:
            drawings = [r * turn for r in drawings]
    for obj in objects:
        obj_lines = obj.pop("lines", [])
        if obj["kind"] == "table":
            rows = table_rows(obj_lines)
            obj["rows"] = rows
            obj["body"] = rows_to_markdown(rows)
        else:
            obj["body"] = " ".join(_merge_row(r)["text"] for r in _rows(obj_lines))
        x0, y0, x1, y1 = obj["bbox"]
        for drawn in drawings:  # the layout box hugs text; take in the vector lines it cuts
            if drawn.x0 <= x1 + 12 and drawn.x1 >= x0 - 12 and drawn.y0 <= y1 + 12 and drawn.y1 >= y0 - 12:
                x0, y0, x1, y1 = min(x0, drawn.x0), min(y0, drawn.y0), max(x1, drawn.x1), max(y1, drawn.y1)
        obj["bbox"] = [round(v, 1) for v in pymupdf.Rect(x0, y0, x1, y1) & rect]
        if crop:
            box = pymupdf.Rect(obj["bbox"]) | pymupdf.Rect(obj["caption_bbox"])
            with MUPDF_LOCK:
                pix = page.get_pixmap(clip=box & rect, dpi=CROP_DPI, colorspace=pymupdf.csGRAY)
                obj["png"] = pix.tobytes("png")
    page_label = next((ln["text"] for ln in footer if re.fullmatch(r"[ivxlc\d]{1,4}", ln["text"].strip())), None)
    return {
        "page": pno + 1,
        "lines": [_merge_row(r) for r in _rows(flow)],
        "header": [ln["text"] for ln in header],
        "label": page_label,
        "objects": objects,
        "has_text": bool(lines),
        "has_image": has_image,
        "layout_s": round(layout_s, 4),
        "seconds": round(time.perf_counter() - t0, 4),
    }


# ---- page workers in processes: MuPDF and the layout model hold the GIL, so threads cannot share
# the two cores; a small pool of spawned processes can (each opens the PDF once and caches it).
_pool: ProcessPoolExecutor | None = None
_pool_lock = threading.Lock()
_pool_broken = False
_worker_docs: dict[tuple[str, int, int], pymupdf.Document] = {}


def _exit_with_parent(parent: int) -> None:
    """Page workers end when the ingest that started them is killed (they would be orphans)."""

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def _extract_in_worker(path: str, pno: int, crop: bool) -> dict[str, Any]:
    stat = Path(path).stat()
    key = (path, stat.st_mtime_ns, stat.st_size)
    doc = _worker_docs.get(key)
    if doc is None:
        for old in _worker_docs.values():
            old.close()
        _worker_docs.clear()
        doc = _worker_docs[key] = pymupdf.open(path)
    return read_page(doc, pno, crop=crop)


def _shutdown_pool() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


def read_page_pooled(path: str, pno: int, *, crop: bool, processes: int) -> dict[str, Any]:
    """:func:`read_page` in one of ``processes`` worker processes (in this process when <= 1, or
    when worker processes cannot start, e.g. from a script without a ``__main__`` guard)."""
    global _pool, _pool_broken
    if processes <= 1 or _pool_broken:
        return read_page(open_pdf(path), pno, crop=crop)
    with _pool_lock:
        if _pool is None or _pool._max_workers != processes:
            _shutdown_pool()
            _pool = ProcessPoolExecutor(
                processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with_parent,
                initargs=(os.getpid(),),
            )
            atexit.register(_shutdown_pool)
        pool = _pool
    try:
        return pool.submit(_extract_in_worker, path, pno, crop).result()
    except BrokenProcessPool:
        _pool_broken = True
        return read_page_pooled(path, pno, crop=crop, processes=1)


def extract_page(task: PageTask) -> dict[str, Any]:
    page = read_page_pooled(task["path"], task["pno"], crop=task["crop"], processes=task["processes"])
    return {"page_results": [page]}
