"""Identity benchmark: what check-document reads from each PDF of the corpus, without --code.

Opens every PDF under ../shared/corpus/raw and ../shared/corpus/public (or the directories given) and
prints one row per file: key, publisher, code (as printed), edition, title, seconds; or the error.

usage: python scripts/bench_identity.py [DIR ...] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pymupdf

from clausewise.nodes.ingest.check_document import IngestError, identify
from clausewise.pdf import MUPDF_LOCK

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=[CORPUS / "raw", CORPUS / "public"])
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args()
    files = sorted(p for d in args.dirs for p in d.glob("*.pdf"))
    if not files:
        print(f"no PDFs under {', '.join(str(d) for d in args.dirs)}", file=sys.stderr)
        return 1
    rows = []
    for path in files:
        started = time.perf_counter()
        with MUPDF_LOCK:
            doc = pymupdf.open(path)
        try:
            row = {"file": f"{path.parent.name}/{path.name}", **identify(doc, path, None, None)}
        except IngestError as exc:
            row = {"file": f"{path.parent.name}/{path.name}", "error": str(exc)}
        finally:
            with MUPDF_LOCK:
                doc.close()
        row["seconds"] = round(time.perf_counter() - started, 2)
        rows.append(row)
    print("| file | key | publisher | code | edition | title | s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['file']} | ERROR: {r['error']} | | | | | {r['seconds']} |")
        else:
            title = str(r["title"]).replace("|", "/")
            print(
                f"| {r['file']} | {r['key']} | {r['publisher']} | {r['display']} | {r['edition'] or ''} | "
                f"{title[:90]} | {r['seconds']} |"
            )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
