"""Ingestion benchmark over the real corpus (../shared/corpus/raw), offline.

Prints, per PDF and for the whole corpus: seconds to ingest with clausewise and, in the same run,
seconds for pymupdf4llm.to_markdown on the same file (each in a fresh subprocess, timed inside it),
their ratio, peak RSS, and the per-document counts; then caption recall (every numbered figure and
table caption verified in ../shared/eval/captions-dev.json, and every caption line found by a plain
regex over the PDF text of all documents) and the share of in-document references resolved.

usage: python scripts/bench_ingest.py [--corpus DIR] [--store DIR] [--skip-baseline] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pymupdf

from clausewise.keys import clean_number, parse_designation
from clausewise.system import System

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
# An independent, deliberately plain caption finder: "Table 5.2", "Figure B.1" opening a line.
CAPTION_LINE = re.compile(
    r"^\s*(Table|Figure)\s+([A-Z]?\s?\.?\s?[\dIl]{1,2}(?:\s?\.\s?[\dIl]{1,2})?)\s*(?:[:\-\u2013\u2014.]|$|\s+[A-Z])"
)

BASELINE = """
import sys, time, pymupdf4llm
t = time.perf_counter()
pymupdf4llm.to_markdown(sys.argv[1])
print(time.perf_counter() - t)
"""


class TreeRSS:
    """Peak resident memory of this process and its children (the page workers), sampled."""

    def __init__(self) -> None:
        import psutil

        self.proc, self.peak, self._stop = psutil.Process(), 0.0, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.1):
            total = 0
            for p in [self.proc, *self.proc.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except Exception:
                    pass
            self.peak = max(self.peak, total / 2**20)

    def stop(self) -> float:
        self._stop.set()
        self.thread.join()
        return max(self.peak, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def baseline_seconds(pdf: Path) -> float:
    proc = subprocess.run([sys.executable, "-c", BASELINE, str(pdf)], capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def text_captions(pdf: Path) -> set[tuple[str, str, int]]:
    found = set()
    with pymupdf.open(pdf) as doc:
        for page in doc:
            for line in page.get_text().split("\n"):
                m = CAPTION_LINE.match(line)
                if m and not re.search(r"\(continued\)", line, re.I):
                    found.add((m.group(1).lower(), clean_number(m.group(2)), page.number + 1))
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "raw")
    ap.add_argument("--store", type=Path, default=None)
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    pdfs = sorted(args.corpus.glob("*.pdf"))
    if not pdfs:
        sys.exit(f"no PDFs in {args.corpus}")
    store_dir = args.store or Path(tempfile.mkdtemp(prefix="cw-bench-"))
    if store_dir.exists() and args.store is None:
        shutil.rmtree(store_dir)
    from clausewise.cli import ingest_file

    rss = TreeRSS()
    t0 = time.perf_counter()
    system = System(store_dir=store_dir)
    system.embedder.embed_query("warm up")
    load_s = time.perf_counter() - t0
    stores = system.stores
    rows = []
    total = 0.0
    for pdf in pdfs:
        t = time.perf_counter()
        state = ingest_file(system, pdf, publisher=None, code=None, overwrite=True)
        seconds = time.perf_counter() - t
        total += seconds
        rows.append({"file": pdf.name, "doc_key": state["doc_key"], "seconds": round(seconds, 2), **state["summary"]})
        print(f"ingested {pdf.name} in {seconds:.1f}s", file=sys.stderr, flush=True)
    peak = rss.stop()
    if not args.skip_baseline:
        for row, pdf in zip(rows, pdfs, strict=True):
            row["pymupdf4llm_s"] = round(baseline_seconds(pdf), 2)
            row["ratio"] = round(row["pymupdf4llm_s"] / row["seconds"], 2)
            print(f"pymupdf4llm {pdf.name}: {row['pymupdf4llm_s']}s", file=sys.stderr, flush=True)

    # Caption recall: an entry for the caption's number, on its page, with a cropped image.
    def has_image(doc_key: str, kind: str, number: str, page: int) -> bool:
        entry = stores.lookup("objects", f"{doc_key}_{kind}_{number}")
        return bool(entry and entry.get("image") and abs(entry["page"] - page) <= 1)

    def whole_title(doc_key: str, kind: str, number: str, title: str) -> bool:
        """The stored caption carries every word of the verified title (an OCR misreading fails it)."""
        entry = stores.lookup("objects", f"{doc_key}_{kind}_{number}") or {}
        have = set(re.findall(r"[a-z]{2,}", (entry.get("caption") or "").lower()))
        return all(w in have for w in re.findall(r"[a-z]{2,}", title.lower()))

    verified = json.loads((SHARED / "eval" / "captions-dev.json").read_text())
    v_hits, v_titles = [], []
    for cap in verified:
        d = parse_designation(cap["doc"])
        assert d is not None
        hit = has_image(d.key, cap["kind"], clean_number(cap["number"]), cap["page"])
        v_hits.append(hit)
        if hit:
            v_titles.append(whole_title(d.key, cap["kind"], clean_number(cap["number"]), cap["title"]))
        if not hit:
            print(
                f"  missed verified caption: {cap['doc']} {cap['kind']} {cap['number']} p{cap['page']}", file=sys.stderr
            )
    t_hits, t_total = 0, 0
    for row, pdf in zip(rows, pdfs, strict=True):
        caps = text_captions(pdf)
        row["captions_in_text"] = len(caps)
        row["captions_cropped"] = sum(has_image(row["doc_key"], k, n, p) for k, n, p in caps)
        t_hits += row["captions_cropped"]
        t_total += len(caps)

    cols = [
        "file",
        "pages",
        "seconds",
        "pymupdf4llm_s",
        "ratio",
        "sections",
        "clauses",
        "tables",
        "figures",
        "images",
        "expressions",
        "references_resolved",
        "references_internal",
        "references_unresolved",
        "precedence_rules",
        "kv_entries",
        "captions_in_text",
        "captions_cropped",
    ]
    print("\t".join(cols))
    for row in rows:
        print("\t".join(str(row.get(c, "")) for c in cols))
    resolved = sum(r["references_resolved"] for r in rows)
    internal = sum(r["references_internal"] for r in rows)
    base_total = sum(r.get("pymupdf4llm_s", 0) for r in rows)
    summary = {
        "model_load_s": round(load_s, 2),
        "corpus_ingest_s": round(total, 2),
        "corpus_pymupdf4llm_s": round(base_total, 2) if base_total else None,
        "max_file_s": max(r["seconds"] for r in rows),
        "peak_rss_mb_with_page_workers": round(peak, 1),
        "verified_caption_recall": round(sum(v_hits) / len(v_hits), 3),
        "verified_captions": len(v_hits),
        "verified_titles_whole": f"{sum(v_titles)} of {len(v_titles)}",
        "text_caption_recall": round(t_hits / t_total, 3) if t_total else None,
        "text_captions": t_total,
        "internal_reference_resolution": round(resolved / internal, 3) if internal else None,
        "store": str(store_dir),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
