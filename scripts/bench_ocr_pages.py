"""OCR as ingestion runs it (clausewise.ocr: run_ocr + write_copy), on born-digital pages turned into a scan.

  make   render chosen pages of the public corpus to an image-only PDF (150 dpi grayscale, no text
         layer) and keep each page's own text as the reference
  run    OCR every page of that PDF with N worker processes, write the OCR'd copy, print seconds per
         page (wall, OCR phase only) and word accuracy of the copy's text against the reference

Word accuracy as scripts/bench_ocr.py scores it: NFKC, lowercase, alphanumeric tokens (decimals and
clause numbers whole); words matched in order (difflib) / reference words.

usage: python scripts/bench_ocr_pages.py make OUT.pdf [--dpi 150]
       python scripts/bench_ocr_pages.py run OUT.pdf --processes 2 [--engine auto|tesseract|pymupdf]
                                          [--dpi N] [--json RESULT]
(run: --engine tesseract is the system's libtesseract, pymupdf the copy inside PyMuPDF, auto the first
that loads, as ingestion does; --dpi: every page at N, else each page at its scan's own resolution)
Timing two settings side by side: run '... run OUT.pdf --processes 1' and '... --processes 2' in turn,
several times each
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

import pymupdf

HERE = Path(__file__).resolve().parent
PUBLIC = HERE.parent.parent / "shared" / "corpus" / "public"
# 1-based pages with >= 150 words of text (from the engine comparison's sample, seed 0)
PAGES = {
    "FEMA_P-58-6_2018.pdf": [10, 42, 47],
    "HSE_HSG150_2006.pdf": [25, 36, 58],
    "MBIE_Tolerances_Guide_2015.pdf": [6, 8],  # two columns
    "UFC_3-301-01_2023_C4.pdf": [33, 91],
}
TOKEN = re.compile(r"\d+(?:[.,]\d+)+|[^\W_]+")


def tokens(text: str) -> list[str]:
    return TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def make(out: Path, dpi: int) -> None:
    doc = pymupdf.open()
    refs = []
    for name, pages in PAGES.items():
        with pymupdf.open(PUBLIC / name) as src:
            for pno in pages:
                page = src[pno - 1]
                pix = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
                new = doc.new_page(width=page.rect.width, height=page.rect.height)
                new.insert_image(new.rect, stream=pix.tobytes("png"))
                refs.append({"doc": name, "page": pno, "text": page.get_text()})
    doc.save(out)
    out.with_suffix(".ref.json").write_text(json.dumps(refs))
    print(f"wrote {out} ({len(refs)} image-only pages) and {out.with_suffix('.ref.json')}")


def run(path: Path, processes: int, out_json: Path | None, engine: str = "auto", dpi: int | None = None) -> None:
    from clausewise import ocr
    from clausewise.settings import Settings

    settings = Settings()
    tessdata = ocr.prepared_tessdata(settings.tessdata_prefix, settings.clausewise_cache_dir)
    refs = json.loads(path.with_suffix(".ref.json").read_text())
    with pymupdf.open(path) as doc:
        pages = list(range(doc.page_count))
    done_at: dict[int, float] = {}
    t0 = time.perf_counter()
    results = ocr.run_ocr(
        str(path),
        pages,
        tessdata,
        processes=processes,
        engine=engine,
        dpi=dpi,
        on_page=lambda r: done_at.setdefault(r.pno, time.perf_counter()),
    )
    ocr_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ocr.pdf"
        ocr.write_copy(str(path), {p: (r.data, r.replace) for p, r in results.items() if r.data}, copy)
        with pymupdf.open(copy) as doc:
            read = [doc[p].get_text() for p in pages]
    rows = []
    total_ref = total_seq = 0
    for p, ref in enumerate(refs):
        r, h = tokens(ref["text"]), tokens(read[p])
        seq = sum(b.size for b in difflib.SequenceMatcher(None, r, h, autojunk=False).get_matching_blocks())
        total_ref, total_seq = total_ref + len(r), total_seq + seq
        rows.append(
            {
                **{k: ref[k] for k in ("doc", "page")},
                "words": len(r),
                "acc": seq / max(len(r), 1),
                "cpu_s": results[p].cpu_s,
                "error": results[p].error,
            }
        )
    for row in rows:
        print(
            f"  {row['doc'][:28]:28} p{row['page']:<4} words {row['words']:4}  acc {row['acc']:6.1%}  "
            f"cpu {row['cpu_s']:5.2f}s {row['error']}"
        )
    summary = {
        "processes": processes,
        "engine": engine,
        "dpi": dpi or "page",
        "pages": len(pages),
        "ocr_wall_s": round(ocr_s, 2),
        "s_per_page": round(ocr_s / len(pages), 2),
        "cpu_s_per_page": round(sum(r.cpu_s for r in results.values()) / len(pages), 2),
        "word_accuracy": round(total_seq / max(total_ref, 1), 4),
    }
    print(json.dumps(summary))
    if out_json:
        with open(out_json, "a") as fh:
            fh.write(json.dumps({**summary, "rows": rows}) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    mk = sub.add_parser("make")
    mk.add_argument("out", type=Path)
    mk.add_argument("--dpi", type=int, default=150)
    rn = sub.add_parser("run")
    rn.add_argument("pdf", type=Path)
    rn.add_argument("--processes", type=int, default=2)
    rn.add_argument("--engine", choices=("auto", "tesseract", "pymupdf"), default="auto")
    rn.add_argument("--dpi", type=int, default=None, help="render every page at this resolution")
    rn.add_argument("--json", type=Path, default=None, help="append the result here (one JSON line a run)")
    args = ap.parse_args(argv)
    if args.cmd == "make":
        make(args.out, args.dpi)
    else:
        run(args.pdf, args.processes, args.json, args.engine, args.dpi)
    return 0


if __name__ == "__main__":
    sys.exit(main())
