"""Structure benchmark: does ingestion find a document's clauses, tables and figures on the right page?

For every PDF of ../shared/corpus/raw and ../shared/corpus/public: the pages are read with extract-page
and merged into sections (no embedding, no stores), and counted: sections, clauses, tables, figures,
expressions and expressions with a cropped image. Then a sample, drawn with a fixed seed from the PDF's
own text by plain regexes written here (independently of the ingest code): 10 numbered clause
headings, 3 table captions and 3 figure captions. Each is checked: found as its own entry (key by its
number), on the right page, and its entry's text holds the heading's words. Last, any section whose
code is a printed page number or whose title is a running header or footer is counted as bad.

usage: python scripts/bench_structure.py [PDF ...] [--seed 0] [--cache DIR] [--json OUT] [-v]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import random
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pymupdf

from clausewise.keys import DocId
from clausewise.nodes.ingest import extract_page as extract_module
from clausewise.nodes.ingest.extract_page import read_page_pooled
from clausewise.nodes.ingest.merge_sections import build_sections

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
CORPORA = [SHARED / "corpus" / "raw", SHARED / "corpus" / "public"]

# ---------------------------------------------------------------- the independent finders
# "5.3.2 Title", "E.1.5.2 Title", "2-1.1 TITLE.", "1603.2 - Title [Addition]", "4 Title"
HEADING = re.compile(
    r"^(?P<num>(?:[A-Z][.-])?\d{1,4}(?:[.-]\d{1,2}){0,5})\.?(?:\s+[-\u2013\u2014]\s+|\s+)"
    r"(?P<title>[A-Z\[][A-Za-z\[].{1,110})$"
)
CAPTION = re.compile(
    r"^(?P<kind>Table|TABLE|Figure|FIGURE|Fig\.|FIG\.)\s*"
    r"(?P<num>(?:[A-Z]\d?[.-]?)?\d{1,4}(?:[.-]\d{1,3}){0,3}[a-z]?(?:\([A-Z0-9]{1,2}\))?)"
    r"\s*(?:[:.\-\u2013\u2014|]\s*|\s+)(?P<title>[A-Z\[(].{2,})$"
)
REFERENCE_VERB = re.compile(
    r"^(shows|gives|presents|provides|lists|illustrates|summari[sz]es|contains|defines|applies|is|are|may|should)\b",
    re.I,
)
WORD = re.compile(r"[a-z]{3,}")
OCR_LETTERS = {"8": "B", "0": "D", "6": "G", "5": "S", "1": "I"}


def visual_lines(page: pymupdf.Page) -> list[tuple[str, list[float], bool]]:
    """(text, box, set apart) of each printed line: the text lines of the page, with the pieces that
    share a baseline and stand close together ("1.1" and its title) joined; set apart is bold or
    larger than the page's body text."""
    pieces, sizes = [], []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", []):
            if abs(line["dir"][1]) > 0.1:
                continue  # turned text: a figure's labels
            text = " ".join("".join(s["text"] for s in line["spans"]).split())
            if text:
                spans = [s for s in line["spans"] if s["text"].strip()]
                bold = all(s["flags"] & 16 or "Bold" in s["font"] for s in spans)
                size = max(s["size"] for s in spans)
                sizes += [size] * len(text)
                pieces.append((text, list(line["bbox"]), bold, size))
    body = sorted(sizes)[len(sizes) // 2] if sizes else 0
    marked = [(t, b, bool(bold or size > body + 0.9)) for t, b, bold, size in pieces]
    marked.sort(key=lambda p: (round(p[1][1] / 3), p[1][0]))
    out: list[tuple[str, list[float], bool]] = []
    for text, box, bold in marked:
        if out:
            ptext, pbox, pbold = out[-1]
            same_row = abs(pbox[1] - box[1]) < 3 and abs(pbox[3] - box[3]) < 3
            if same_row and 0 <= box[0] - pbox[2] < 40 and not CAPTION.match(text):
                out[-1] = (
                    f"{ptext} {text}",
                    [pbox[0], min(pbox[1], box[1]), box[2], max(pbox[3], box[3])],
                    pbold and bold,
                )
                continue
        out.append((text, box, bold))
    return out


def counted(lines: list[tuple[str, list[float], bool]], text: str) -> bool:
    """``text`` ("5 Total scour depth") is next to "4 ..." or "6 ..." on its page: a list."""
    m = re.match(r"^(\d{1,2})\s", text)
    if not m:
        return False
    n = int(m.group(1))
    i = next(k for k, (t, _, _) in enumerate(lines) if t == text)
    for t, _, _ in lines[max(0, i - 2) : i + 3]:
        k = re.match(r"^(\d{1,2})\s", t)
        if k and abs(int(k.group(1)) - n) == 1:
            return True
    return False


def text_inventory(pdf: Path) -> dict[str, Any]:
    """Numbered headings and captions in the page text, with their pages; banded lines per page."""
    headings: dict[str, tuple[int, str]] = {}
    candidates: list[tuple[str, int, str, bool, bool]] = []
    captions: dict[tuple[str, str], tuple[int, str]] = {}
    band_lines: dict[str, set[int]] = {}
    body_lines: dict[int, set[str]] = {}
    lone_numbers: dict[int, set[str]] = {}
    with pymupdf.open(pdf) as doc:
        for page in doc:
            height = page.rect.height
            lines = visual_lines(page)
            scanned = any(
                i["bbox"][2] - i["bbox"][0] > 0.8 * page.rect.width and i["bbox"][3] - i["bbox"][1] > 0.8 * height
                for i in page.get_image_info()
            )
            starts = sorted(round(b[0] / 4) * 4 for _, b, _ in lines if b[1] > 0.1 * height and b[3] < 0.9 * height)
            margin = max(set(starts), key=starts.count) if starts else 0  # where the body's lines start
            leaders = sum(1 for t, _, _ in lines if re.search(r"(\.\s?){5,}|…{2,}", t))
            ending_numbers = sum(1 for t, _, _ in lines if re.search(r"[A-Za-z)]\s*\.*\s+\d{1,3}$", t))
            ending_numbers += sum(1 for t, _, _ in lines if re.fullmatch(r"\d{1,3}", t))
            listing = any(
                re.fullmatch(r"(table of )?contents|list of (tables|figures)", t.strip(), re.I) for t, _, _ in lines[:8]
            )
            if leaders >= 4 or listing or ending_numbers >= 0.3 * max(1, len(lines)) and ending_numbers >= 6:
                continue  # a contents page or a list of figures
            for text, box, set_apart in lines:
                in_band = box[3] < 0.1 * height or box[1] > 0.9 * height
                if in_band:
                    band_lines.setdefault(re.sub(r"\d+", "#", text.lower()), set()).add(page.number + 1)
                    if re.fullmatch(r"\d{1,4}", text):
                        lone_numbers.setdefault(page.number + 1, set()).add(text)
                    continue
                body_lines.setdefault(page.number + 1, set()).add(re.sub(r"\d+", "#", text.lower()))
                m = CAPTION.match(text)
                if (
                    m
                    and not re.search(r"continued|\bcont\b|(\.\s?){5,}|…{2,}", text, re.I)
                    and not REFERENCE_VERB.match(m.group("title"))
                ):
                    kind = "table" if m.group("kind").lower() == "table" else "figure"
                    captions.setdefault((kind, m.group("num")), (page.number + 1, m.group("title")))
                    continue
                m = HEADING.match(text)
                if not m:
                    continue
                num, title = m.group("num"), m.group("title").strip()
                words = title.split()
                multi = bool(re.search(r"[.-]", num))
                if not multi and len(num) > 2:
                    continue  # "1918 ..." is a year, not a chapter
                if box[0] > margin + 12:
                    continue  # indented: a table's row or a list, not a heading
                first = int(re.sub(r"^[A-Z][.-]", "", num).split(".")[0].split("-")[0])
                if (not multi or first >= 100) and not (set_apart or scanned):
                    continue  # "6. Can work ..." in a form; a quoted code's "2002.17"
                if (
                    re.search(r"[,;:?]$", title)
                    or re.search(r"\s\d{1,3}$", title)  # a contents line
                    or len(words) > 12
                    or (not multi and (len(words) > 6 or title.endswith(".")))
                    or (title.endswith(".") and len(words) > 6)
                    or int(re.sub(r"^[A-Z][.-]", "", num).split(".")[0].split("-")[0]) == 0
                ):
                    continue
                if any(abs(b[1] - box[1]) < 3 and 0 < b[0] - box[2] < 150 for _, b, _ in lines):
                    continue  # a row of a table: another cell on its baseline
                if counted(lines, text):
                    continue  # an item of a numbered list or a figure's key
                candidates.append((num, page.number + 1, title, set_apart, scanned))
    # where the headings are set in bold or larger type, a plain numbered line is not one
    digital = [c for c in candidates if not c[4]]
    if digital and sum(1 for c in digital if c[3]) >= 0.6 * len(digital):
        candidates = [c for c in candidates if c[3] or c[4]]
    for num, page_no, title, _, _ in candidates:
        headings.setdefault(num, (page_no, title))
    return {
        "headings": headings,
        "captions": captions,
        "band_lines": band_lines,
        "body_lines": body_lines,
        "lone_numbers": lone_numbers,
    }


# ---------------------------------------------------------------- ingestion (extract + merge)
def read_pages(pdf: Path, cache: Path | None) -> list[dict[str, Any]]:
    code = hashlib.sha256(Path(extract_module.__file__).read_bytes()).hexdigest()[:12]
    key = hashlib.sha256(pdf.read_bytes()).hexdigest()[:16]
    cached = cache / f"{pdf.stem}-{key}-{code}.pkl" if cache else None
    if cached and cached.exists():
        return pickle.loads(cached.read_bytes())  # noqa: S301 (our own cache)
    with pymupdf.open(pdf) as doc:
        n = len(doc)
    with ThreadPoolExecutor(2) as pool:
        pages = list(pool.map(lambda i: read_page_pooled(str(pdf), i, crop=True, processes=2), range(n)))
    if cached:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(pickle.dumps(pages))
    return pages


def _flat(number: str) -> str:
    return re.sub(r"[\s.]", "", number).lower()


def _words_in(title: str, text: str) -> bool:
    have = set(WORD.findall(" ".join(text.lower().split())))
    want = set(WORD.findall(title.lower()))
    return not want or len(want & have) >= 0.8 * len(want)


def evaluate(pdf: Path, seed: int, cache: Path | None, verbose: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    pages = read_pages(pdf, cache)
    extract_s = time.perf_counter() - t0
    doc = DocId("BENCH", re.sub(r"[^A-Za-z0-9-]", "-", pdf.stem))
    sections = build_sections(doc, pdf.stem, pages)
    entries = list(sections.values())
    by_code: dict[str, dict[str, Any]] = {}
    for e in entries:
        code = e["key"].split("_", 2)[2]
        by_code.setdefault(code, e)
    objects_flat = {
        (e["kind"], _flat(str(e.get("number", "")))): e for e in entries if e["kind"] in ("table", "figure")
    }
    crops = {(p["page"], o["kind"], o["number"]) for p in pages for o in p["objects"] if o.get("png")}
    expr_crops = {(p["page"], x["number"]) for p in pages for x in p.get("expressions", []) if x.get("png")}
    kinds: dict[str, int] = {}
    for e in entries:
        kinds[e["kind"]] = kinds.get(e["kind"], 0) + 1
    inv = text_inventory(pdf)
    rng = random.Random(seed)
    heads = sorted(inv["headings"].items(), key=lambda kv: (kv[1][0], kv[0]))
    sample_h = rng.sample(heads, min(10, len(heads)))
    results = []
    for num, (page, title) in sample_h:
        hit = by_code.get(num)
        if hit is None and num[:1] in OCR_LETTERS:  # a scan's "8.9.3" in Annex B is B.9.3
            hit = by_code.get(OCR_LETTERS[num[0]] + num[1:])
        if hit is None or hit["kind"] not in ("clause", "annex"):
            results.append(("clause", num, page, False, False, False))
        else:
            words = _words_in(title, hit["title"] + " " + hit["text"])
            results.append(("clause", num, page, True, hit["pages"][0] == page, words))
    for kind in ("table", "figure"):
        caps = sorted(((n, v) for (k, n), v in inv["captions"].items() if k == kind), key=lambda kv: (kv[1][0], kv[0]))
        for num, (page, title) in rng.sample(caps, min(3, len(caps))):
            obj = objects_flat.get((kind, _flat(num)))
            if obj is None and num[:1] in OCR_LETTERS:  # a scan's "Table 81" is Table B1
                obj = objects_flat.get((kind, _flat(OCR_LETTERS[num[0]] + num[1:])))
            if obj is None:
                results.append((kind, num, page, False, False, False))
            else:
                results.append((kind, num, page, True, obj["pages"][0] == page, _words_in(title, obj["text"])))

    # every heading and caption the regexes found, not only the sample: found on its page
    def heading_ok(num: str, page: int) -> bool:
        e = by_code.get(num) or (by_code.get(OCR_LETTERS[num[0]] + num[1:]) if num[:1] in OCR_LETTERS else None)
        return e is not None and e["kind"] in ("clause", "annex") and e["pages"][0] == page

    def caption_ok(kind: str, num: str, page: int) -> bool:
        e = objects_flat.get((kind, _flat(num)))
        if e is None and num[:1] in OCR_LETTERS:
            e = objects_flat.get((kind, _flat(OCR_LETTERS[num[0]] + num[1:])))
        return e is not None and e["pages"][0] == page

    all_heads = [heading_ok(n, p) for n, (p, _) in inv["headings"].items()]
    all_caps = [caption_ok(k, n, p) for (k, n), (p, _) in inv["captions"].items()]
    # sections named after a printed page number or a running header/footer
    running = {k for k, v in inv["band_lines"].items() if len(v) >= 3}
    bad = []
    for e in entries:
        if e["kind"] in ("table", "figure", "expression"):
            continue
        code = e["key"].split("_", 2)[2]
        first = e["pages"][0] if e["pages"] else 0
        first_line = e["text"].split("\n", 1)[0].strip()
        norm_title = re.sub(r"\d+", "#", e["title"].lower()).strip()
        if re.fullmatch(r"\d{1,4}", code) and first_line == code and code in inv["lone_numbers"].get(first, set()):
            bad.append(f"{code} (page number)")
        elif norm_title in running and norm_title not in inv["body_lines"].get(first, set()):
            bad.append(f"{code} {e['title'][:40]!r} (running line)")
    ok = [r for r in results if r[3] and r[4] and r[5]]
    if verbose:
        for r in results:
            if not (r[3] and r[4] and r[5]):
                near = by_code.get(r[1]) if r[0] == "clause" else objects_flat.get((r[0], _flat(r[1])))
                where = f"entry pages {near['pages'][:3]} title {near['title'][:40]!r}" if near else "no entry"
                print(
                    f"  miss {pdf.name}: {r[0]} {r[1]} p{r[2]} found={r[3]} page={r[4]} words={r[5]} ({where})",
                    file=sys.stderr,
                )
        for b in bad:
            print(f"  bad title {pdf.name}: {b}", file=sys.stderr)

    def share(kind: str) -> str:
        mine = [r for r in results if r[0] == kind]
        return f"{sum(1 for r in mine if r[3] and r[4] and r[5])}/{len(mine)}"

    return {
        "file": pdf.name,
        "pages": len(pages),
        "extract_s": round(extract_s, 1),
        "sections": sum(kinds.get(k, 0) for k in ("clause", "annex", "front", "contents", "cover")),
        "clauses": kinds.get("clause", 0),
        "tables": kinds.get("table", 0),
        "figures": kinds.get("figure", 0),
        "objects_with_image": sum(
            1
            for e in entries
            if e["kind"] in ("table", "figure") and (e["pages"][0], e["kind"], e.get("raw_number")) in crops
        ),
        "expressions": kinds.get("expression", 0),
        "expressions_with_image": sum(
            1 for e in entries if e["kind"] == "expression" and (e["pages"][0], e["number"]) in expr_crops
        ),
        "columns_pages": sum(1 for p in pages if p.get("columns")),
        "sampled_clauses": share("clause"),
        "sampled_tables": share("table"),
        "sampled_figures": share("figure"),
        "found_right_page": round(len(ok) / len(results), 3) if results else None,
        "all_headings_right_page": f"{sum(all_heads)}/{len(all_heads)}",
        "all_captions_right_page": f"{sum(all_caps)}/{len(all_caps)}",
        "bad_titles": len(bad),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("pdfs", nargs="*", type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", type=Path, default=None, help="keep page results here (keyed by PDF and extract code)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("-v", "--verbose", action="store_true", help="print every miss and bad title")
    args = ap.parse_args()
    pdfs = args.pdfs or [p for corpus in CORPORA for p in sorted(corpus.glob("*.pdf"))]
    if not pdfs:
        sys.exit("no PDFs (../shared/corpus is absent)")
    rows = []
    for pdf in pdfs:
        rows.append(evaluate(pdf, args.seed, args.cache, args.verbose))
        print(f"done {pdf.name}", file=sys.stderr, flush=True)
    cols = list(rows[0])
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in cols) + " |")
    worst = min((r["found_right_page"] for r in rows if r["found_right_page"] is not None), default=None)
    print(json.dumps({"worst_found_right_page": worst, "seed": args.seed}))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
