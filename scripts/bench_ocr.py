"""OCR engine benchmark, offline: RapidOCR (onnxruntime) against Tesseract through PyMuPDF, side by side.

Born-digital pages have a correct text layer, so they are the ground truth: each sampled page is
rendered to a plain image (no text layer) at every --dpi, every engine OCRs the same image, and the
recognised words are scored against the page's own text layer.

Words: NFKC, lowercase, tokens are alphanumeric runs, with decimals / clause numbers kept whole
("1,5", "2.0", "1603.1.10").
  seq acc  = words matched by difflib.SequenceMatcher (order-aware) / reference words
  bag acc  = multiset overlap / reference words (order-free: pure recognition)
  prec     = seq-matched words / OCR words

Timing: each engine lives in its own worker process (so each has its own peak RSS and thread
settings); the main process renders a page once and hands the same pixels to the engines one at a
time, alternating which goes first, so both see the same machine load. s/page is the OCR call alone
(wall clock, median over pages); cpu is the worker's CPU seconds for it (cpu > wall means it used
more than one core). Rendering is timed separately.

Two-column test (--columns, default the MBIE guide's two-column pages): the lines each engine emits,
in its own order, are labelled left / right of the page's middle; the share of consecutive column
lines that jump column says whether the engine keeps the columns apart (0 = column by column,
about 0.5 or more = interleaved row by row). The text layer's own order is shown as a reference.

Engines:
  rapidocr   pip install rapidocr-onnxruntime   (models ship in the wheel)
  tesseract  PyMuPDF's built-in Tesseract (Pixmap.pdfocr_tobytes, the same path as
             page.get_textpage_ocr(full=True)); needs only eng.traineddata, e.g.
             apt-get install tesseract-ocr-eng  -> /usr/share/tesseract-ocr/5/tessdata.
             MuPDF leaves Tesseract at page segmentation mode 6 (one block of text).
  tess-auto  the same, with mode 3 (automatic layout: finds columns), set through a config entry
             written into a scratch copy of eng.traineddata (see tessdata_with_psm).
An engine that is not installed is skipped with a message; the others still run.

usage: python scripts/bench_ocr.py [PDF ...] [--pages-per-doc 8] [--seed 0] [--dpi 200 300]
           [--engines rapidocr tesseract tess-auto] [--min-words 150] [--columns PDF:2,3,5] [--no-columns]
           [--rapid-threads N] [--rapid-word-boxes] [--tessdata DIR] [--json OUT]
"""

from __future__ import annotations

import argparse
import difflib
import glob
import importlib.util
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import unicodedata
from collections import Counter
from pathlib import Path

from clausewise.ocr import with_page_segmentation

HERE = Path(__file__).resolve().parent
PUBLIC = HERE.parent.parent / "shared" / "corpus" / "public"
DEFAULT_COLUMNS = ("MBIE_Tolerances_Guide_2015.pdf", [5, 6, 7, 8, 12, 26])  # 1-based: two-column prose pages
ENGINES = ("rapidocr", "tesseract", "tess-auto")
TOKEN = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")


# ---------------------------------------------------------------- scoring


def tokens(text: str) -> list[str]:
    return TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def score(ref: list[str], hyp: list[str]) -> dict:
    sm = difflib.SequenceMatcher(None, ref, hyp, autojunk=False)
    seq = sum(b.size for b in sm.get_matching_blocks())
    bag = sum((Counter(ref) & Counter(hyp)).values())
    return {"ref": len(ref), "hyp": len(hyp), "seq": seq, "bag": bag}


def column_jumps(lines: list[tuple], mid: float) -> tuple[int, int]:
    """(jumps, column lines): lines wholly left or right of mid, in the given order."""
    sides = []
    for x0, _y0, x1, _y1, text in lines:
        if not tokens(text):
            continue
        if x1 <= mid:
            sides.append("L")
        elif x0 >= mid:
            sides.append("R")
    return sum(a != b for a, b in zip(sides, sides[1:], strict=False)), len(sides)


# ---------------------------------------------------------------- engine workers


def find_tessdata(explicit: str | None) -> str | None:
    candidates = [explicit, os.environ.get("TESSDATA_PREFIX")]
    candidates += sorted(glob.glob("/usr/share/tesseract-ocr/*/tessdata"), reverse=True)
    candidates += ["/usr/share/tessdata", "/usr/local/share/tessdata", "/opt/homebrew/share/tessdata"]
    for c in candidates:
        if c and (Path(c) / "eng.traineddata").is_file():
            return str(c)
    return None


def tessdata_with_psm(src: str, lang: str, psm: int, dest: Path) -> str:
    """A copy of <lang>.traineddata whose config component sets tessedit_pageseg_mode.

    MuPDF drives Tesseract through TessBaseAPI without setting a page segmentation mode, so it gets
    the API default 6 (one uniform block: two columns are read straight across). PyMuPDF has no
    parameter for it; a config entry inside the traineddata (component 0, as combine_tessdata -o
    writes it) is read at Init and is the one way in. File layout: int32 n, int64 offsets[n], data."""
    data = with_page_segmentation((Path(src) / f"{lang}.traineddata").read_bytes(), psm)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / f"{lang}.traineddata").write_bytes(data)
    return str(dest)


def engine_missing(name: str, args) -> str | None:
    """Why an engine cannot run here, or None."""
    if name == "rapidocr":
        if importlib.util.find_spec("rapidocr_onnxruntime") is None:
            return "rapidocr: skipped, package not installed (pip install rapidocr-onnxruntime)"
        return None
    if find_tessdata(args.tessdata) is None:
        return (
            f"{name}: skipped, no eng.traineddata found (apt-get install tesseract-ocr-eng, "
            "or pass --tessdata / set TESSDATA_PREFIX)"
        )
    return None


class RapidEngine:
    def __init__(self, opts: dict):
        from rapidocr_onnxruntime import RapidOCR

        kw = {}
        if opts["rapid_threads"]:
            kw["intra_op_num_threads"] = opts["rapid_threads"]
        self.ocr = RapidOCR(**kw)
        self.word_boxes = opts["rapid_word_boxes"]
        sess = self.ocr.text_rec.session.session.get_session_options()
        self.info = (
            f"rapidocr-onnxruntime, onnxruntime intra_op_num_threads="
            f"{sess.intra_op_num_threads or 'default (physical cores)'}, "
            f"max_side_len={self.ocr.max_side_len}, word boxes={'on' if self.word_boxes else 'off'}"
        )

    def __call__(self, w, h, n, samples, dpi):
        import numpy as np

        img = np.frombuffer(samples, np.uint8).reshape(h, w, n)[:, :, 2::-1]  # RGB -> BGR (cv2 order)
        img = np.ascontiguousarray(img)
        result, _ = self.ocr(img, return_word_box=self.word_boxes)
        k = 72.0 / dpi
        lines, words = [], []
        for item in result or []:
            quad, text = item[0], item[1]
            xs, ys = [p[0] * k for p in quad], [p[1] * k for p in quad]
            box = (min(xs), min(ys), max(xs), max(ys))
            lines.append((*box, text))
            # positions: RapidOCR gives a quad per line; words are placed along it by character offset
            # (with --rapid-word-boxes it also returns per-character boxes, not used here).
            step = (box[2] - box[0]) / max(len(text), 1)
            for m in re.finditer(r"\S+", text):
                words.append((box[0] + step * m.start(), box[1], box[0] + step * m.end(), box[3], m.group()))
        return lines, words


class TesseractEngine:
    def __init__(self, opts: dict, auto: bool):
        import pymupdf

        self.pymupdf = pymupdf
        self.tessdata = opts["tessdata_auto"] if auto else opts["tessdata"]
        self.lang = opts["lang"]
        self.info = (
            f"Tesseract built into PyMuPDF {pymupdf.VersionBind} (MuPDF {pymupdf.VersionFitz}), "
            + (
                "page segmentation 3 (auto, via a traineddata config), "
                if auto
                else "page segmentation 6 (MuPDF's default: one block), "
            )
            + f"tessdata={self.tessdata}, OMP_THREAD_LIMIT={os.environ.get('OMP_THREAD_LIMIT', 'unset')}"
        )

    def __call__(self, w, h, n, samples, dpi):
        pymupdf = self.pymupdf
        pix = pymupdf.Pixmap(pymupdf.csRGB if n == 3 else pymupdf.csGRAY, w, h, samples, 0)
        pix.set_dpi(dpi, dpi)  # the OCR PDF page then has the original page size in points
        doc = pymupdf.open("pdf", pix.pdfocr_tobytes(compress=False, language=self.lang, tessdata=self.tessdata))
        raw = doc[0].get_text("words")  # (x0, y0, x1, y1, word, block, line, word_no), Tesseract's order
        words = [(x0, y0, x1, y1, t) for x0, y0, x1, y1, t, *_ in raw]
        lines: dict[tuple, list] = {}
        for x0, y0, x1, y1, t, b, ln, _ in raw:
            lines.setdefault((b, ln), []).append((x0, y0, x1, y1, t))
        out = []
        for ws in lines.values():
            out.append(
                (
                    min(q[0] for q in ws),
                    min(q[1] for q in ws),
                    max(q[2] for q in ws),
                    max(q[3] for q in ws),
                    " ".join(q[4] for q in ws),
                )
            )
        doc.close()
        return out, words


def worker(name: str, conn, opts: dict) -> None:
    import resource

    if name != "rapidocr":
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # no effect on PyMuPDF's own (OpenMP-free) build
    try:
        engine = RapidEngine(opts) if name == "rapidocr" else TesseractEngine(opts, auto=name == "tess-auto")
    except Exception as exc:  # noqa: BLE001 - reported to the parent as a skip
        conn.send({"error": f"{name}: skipped, could not start: {exc!r}"})
        return
    conn.send({"info": engine.info})
    while True:
        msg = conn.recv()
        if msg is None:
            conn.send({"maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})
            return
        try:
            t, c = time.perf_counter(), time.process_time()
            lines, words = engine(*msg)
            conn.send({"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "lines": lines, "words": words})
        except Exception as exc:  # noqa: BLE001
            conn.send({"error": f"{name}: {exc!r}"})


class Worker:
    def __init__(self, name: str, opts: dict):
        ctx = mp.get_context("spawn")
        self.name = name
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=worker, args=(name, child, opts), daemon=True)
        self.proc.start()
        hello = self.conn.recv()
        self.error, self.info = hello.get("error"), hello.get("info")

    def ocr(self, pix, dpi) -> dict:
        self.conn.send((pix.width, pix.height, pix.n, bytes(pix.samples), dpi))
        return self.conn.recv()

    def close(self) -> float:
        if self.error:
            self.proc.join(5)
            return 0.0
        self.conn.send(None)
        rss = self.conn.recv()["maxrss_mb"]
        self.proc.join(5)
        return rss


# ---------------------------------------------------------------- sampling and running


def sample_pages(pdfs: list[Path], per_doc: int, min_words: int, seed: int, pymupdf) -> list[tuple]:
    rng = random.Random(seed)
    picked = []
    for path in pdfs:
        with pymupdf.open(path) as doc:
            ok = [i for i, page in enumerate(doc) if len(tokens(page.get_text())) >= min_words]
        chosen = sorted(rng.sample(ok, min(per_doc, len(ok))))
        print(
            f"  {path.name}: {len(ok)} pages with >= {min_words} words, sampled (1-based) {[i + 1 for i in chosen]}",
            flush=True,
        )
        picked += [(path, i) for i in chosen]
    return picked


def run_page(workers, doc, pno, dpi, flip, pymupdf, results, kind, counter):
    page = doc[pno]
    ref_text = page.get_text()
    ref = tokens(ref_text)
    t = time.perf_counter()
    pix = page.get_pixmap(dpi=dpi, alpha=False)
    render = time.perf_counter() - t
    order = list(reversed(workers)) if flip else list(workers)
    for w in order:
        out = w.ocr(pix, dpi)
        if "error" in out:
            print(f"    ! {out['error']}", flush=True)
            continue
        hyp = tokens(" ".join(x[4] for x in out["words"]))
        rec = {
            "engine": w.name,
            "kind": kind,
            "doc": Path(doc.name).name,
            "page": pno + 1,
            "dpi": dpi,
            "render": render,
            "wall": out["wall"],
            "cpu": out["cpu"],
            **score(ref, hyp),
        }
        if kind == "columns":
            mid = page.rect.width / 2
            rec["jumps"], rec["col_lines"] = column_jumps(out["lines"], mid)
            ref_lines = [
                (*ln["bbox"], " ".join(s["text"] for s in ln["spans"]))
                for b in page.get_text("dict")["blocks"]
                if b["type"] == 0
                for ln in b["lines"]
            ]
            rec["ref_jumps"], rec["ref_col_lines"] = column_jumps(ref_lines, mid)
            rec["first_lines"] = [x[4] for x in out["lines"][:12]]
        results.append(rec)
        counter[0] += 1
        print(
            f"    {rec['doc'][:28]:28} p{pno + 1:<4} {dpi}dpi {w.name:9} {out['wall']:6.2f}s "
            f"(cpu {out['cpu']:6.2f}) seq {rec['seq'] / max(rec['ref'], 1):6.1%} "
            f"bag {rec['bag'] / max(rec['ref'], 1):6.1%}"
            + (f" jumps {rec['jumps']}/{rec['col_lines']}" if kind == "columns" else ""),
            flush=True,
        )


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def summarise(results, engines, dpis, rss, render):
    rows = []
    print("\n=== OCR: s/page (median OCR call, wall / cpu) and word accuracy vs the text layer ===")
    hdr = (
        f"{'engine':10} {'dpi':>4} {'pages':>5} {'s/page':>7} {'p90':>6} {'cpu s':>6} {'render':>6} "
        f"{'seq acc':>8} {'bag acc':>8} {'prec':>7} {'med pg':>7} {'RSS MB':>7}"
    )
    print(hdr)
    for e in engines:
        for d in dpis:
            rs = [r for r in results if r["engine"] == e and r["dpi"] == d and r["kind"] == "sample"]
            if not rs:
                continue
            walls = sorted(r["wall"] for r in rs)
            ref, hyp = sum(r["ref"] for r in rs), sum(r["hyp"] for r in rs)
            row = {
                "engine": e,
                "dpi": d,
                "pages": len(rs),
                "s_page": median(walls),
                "p90": walls[min(len(walls) - 1, int(0.9 * len(walls)))],
                "cpu": median([r["cpu"] for r in rs]),
                "render": median(render.get(d, [])),
                "seq_acc": sum(r["seq"] for r in rs) / max(ref, 1),
                "bag_acc": sum(r["bag"] for r in rs) / max(ref, 1),
                "precision": sum(r["seq"] for r in rs) / max(hyp, 1),
                "median_page_acc": median([r["seq"] / max(r["ref"], 1) for r in rs]),
                "peak_rss_mb": rss.get(e, 0.0),
            }
            rows.append(row)
            print(
                f"{e:10} {d:>4} {row['pages']:>5} {row['s_page']:>7.2f} {row['p90']:>6.2f} {row['cpu']:>6.2f} "
                f"{row['render']:>6.2f} {row['seq_acc']:>8.1%} {row['bag_acc']:>8.1%} {row['precision']:>7.1%} "
                f"{row['median_page_acc']:>7.1%} {row['peak_rss_mb']:>7.0f}"
            )
    docs = sorted({r["doc"] for r in results if r["kind"] == "sample"})
    if docs:
        print("\n=== seq word accuracy per document ===")
        print(f"{'document':34} " + " ".join(f"{e[:9]:>9}@{d}" for e in engines for d in dpis))
        for doc in docs:
            cells = []
            for e in engines:
                for d in dpis:
                    rs = [
                        r
                        for r in results
                        if r["engine"] == e and r["dpi"] == d and r["doc"] == doc and r["kind"] == "sample"
                    ]
                    acc = sum(r["seq"] for r in rs) / max(sum(r["ref"] for r in rs), 1) if rs else float("nan")
                    cells.append(f"{acc:>13.1%}")
            print(f"{doc[:34]:34} " + " ".join(cells))
    cols = [r for r in results if r["kind"] == "columns"]
    col_rows = []
    if cols:
        print("\n=== two-column reading order: share of consecutive column lines that jump column ===")
        print(
            f"{'engine':10} {'dpi':>4} {'pages':>5} {'jump share':>10} {'text layer':>10} {'seq acc':>8} "
            f"{'bag acc':>8}  (0 = columns kept apart; ~0.5+ = interleaved)"
        )
        for e in engines:
            rs = [r for r in cols if r["engine"] == e]
            if not rs:
                continue
            row = {
                "engine": e,
                "dpi": rs[0]["dpi"],
                "pages": len(rs),
                "jump_share": sum(r["jumps"] for r in rs) / max(sum(r["col_lines"] - 1 for r in rs), 1),
                "ref_jump_share": sum(r["ref_jumps"] for r in rs) / max(sum(r["ref_col_lines"] - 1 for r in rs), 1),
                "seq_acc": sum(r["seq"] for r in rs) / max(sum(r["ref"] for r in rs), 1),
                "bag_acc": sum(r["bag"] for r in rs) / max(sum(r["ref"] for r in rs), 1),
            }
            col_rows.append(row)
            print(
                f"{e:10} {row['dpi']:>4} {row['pages']:>5} {row['jump_share']:>10.2f} {row['ref_jump_share']:>10.2f} "
                f"{row['seq_acc']:>8.1%} {row['bag_acc']:>8.1%}"
            )
    return rows, col_rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pdfs", nargs="*", type=Path, help=f"born-digital PDFs (default: {PUBLIC}/*.pdf)")
    ap.add_argument("--pages-per-doc", type=int, default=8)
    ap.add_argument("--min-words", type=int, default=150, help="skip pages with fewer text-layer words")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--dpi", type=int, nargs="+", default=[200, 300])
    ap.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    ap.add_argument(
        "--columns",
        default=None,
        help="two-column pages, PDF:1-based pages, e.g. MBIE.pdf:2,3,5 (default: the MBIE guide)",
    )
    ap.add_argument("--columns-dpi", type=int, default=None, help="dpi for the column test (default: lowest --dpi)")
    ap.add_argument("--no-columns", action="store_true")
    ap.add_argument("--rapid-threads", type=int, default=0, help="onnxruntime intra-op threads (0 = its default)")
    ap.add_argument("--rapid-word-boxes", action="store_true", help="ask RapidOCR for per-character boxes too")
    ap.add_argument("--tessdata", default=None, help="folder holding eng.traineddata")
    ap.add_argument("--lang", default="eng")
    ap.add_argument("--json", type=Path, default=None, help="write per-page results and the summary here")
    args = ap.parse_args(argv)

    try:
        import pymupdf
    except ImportError:
        print("PyMuPDF is needed to render pages: pip install pymupdf", file=sys.stderr)
        return 2
    pdfs = args.pdfs or sorted(PUBLIC.glob("*.pdf"))
    if not pdfs:
        print(f"no PDFs given and none in {PUBLIC}", file=sys.stderr)
        return 2

    opts = {
        "rapid_threads": args.rapid_threads,
        "rapid_word_boxes": args.rapid_word_boxes,
        "tessdata": find_tessdata(args.tessdata),
        "lang": args.lang,
        "tessdata_auto": None,
    }
    scratch = Path(tempfile.mkdtemp(prefix="bench_ocr_"))
    try:
        return run(args, pymupdf, pdfs, opts, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run(args, pymupdf, pdfs: list[Path], opts: dict, scratch: Path) -> int:
    if "tess-auto" in args.engines and opts["tessdata"]:
        opts["tessdata_auto"] = tessdata_with_psm(opts["tessdata"], args.lang, 3, scratch / "tessdata")
    workers, skipped = [], []
    for name in args.engines:
        why = engine_missing(name, args)
        if why is None:
            w = Worker(name, opts)
            why = w.error
            if why is None:
                workers.append(w)
                print(f"{name}: {w.info}", flush=True)
                continue
        skipped.append(why)
        print(why, flush=True)
    if not workers:
        print("no OCR engine available", file=sys.stderr)
        return 1
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; PyMuPDF {pymupdf.VersionBind}")

    print("sampling pages:", flush=True)
    pages = sample_pages(pdfs, args.pages_per_doc, args.min_words, args.seed, pymupdf)
    col_pages: list[tuple] = []
    if not args.no_columns:
        if args.columns:
            path, _, nums = args.columns.rpartition(":")
            col_pages = [(Path(path), int(n) - 1) for n in nums.split(",") if n.strip()]
        else:
            default = next((p for p in pdfs if p.name == DEFAULT_COLUMNS[0]), None)
            if default is not None:
                col_pages = [(default, n - 1) for n in DEFAULT_COLUMNS[1]]

    # warm-up: first call loads models / allocates arenas; not timed
    if pages:
        with pymupdf.open(pages[0][0]) as doc:
            pix = doc[pages[0][1]].get_pixmap(dpi=min(args.dpi), alpha=False)
            for w in workers:
                w.ocr(pix, min(args.dpi))

    results: list[dict] = []
    render: dict[int, list[float]] = {}
    counter = [0]
    t0 = time.perf_counter()
    step = 0
    for path, pno in pages:
        with pymupdf.open(path) as doc:
            for dpi in args.dpi:
                n_before = len(results)
                run_page(workers, doc, pno, dpi, step % 2 == 1, pymupdf, results, "sample", counter)
                if len(results) > n_before:
                    render.setdefault(dpi, []).append(results[-1]["render"])
                step += 1
    col_dpi = args.columns_dpi or min(args.dpi)
    if col_pages:
        print(f"two-column pages at {col_dpi} dpi:", flush=True)
    for path, pno in col_pages:
        with pymupdf.open(path) as doc:
            run_page(workers, doc, pno, col_dpi, step % 2 == 1, pymupdf, results, "columns", counter)
            step += 1
    rss = {w.name: w.close() for w in workers}
    print(f"\n{counter[0]} OCR calls in {time.perf_counter() - t0:.0f} s")
    for why in skipped:
        print(why)
    rows, col_rows = summarise(results, [w.name for w in workers], args.dpi, rss, render)
    print(
        "target: <= 2 s a page on 2 cores. Tesseract in PyMuPDF is single-threaded (cpu ~= wall), so two "
        "pages can run at once on 2 cores; onnxruntime uses both cores for one page by default."
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "summary": rows,
                    "columns": col_rows,
                    "skipped": skipped,
                    "engines": {w.name: w.info for w in workers},
                    "pages": results,
                },
                indent=1,
            )
        )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
