"""References between the corpus's documents, resolved whatever order the documents were ingested in.

Ingests every PDF of the corpus (../shared/corpus/raw) into two fresh local stores, one in alphabetical
order and one in the reverse order, offline. Then, for each store, counts every reference from each
document to each other ingested document, resolved as readers resolve them (references.Resolver: the
target exists in the document now) or not, and, beside it, the flag frozen at commit (what readers used
before: it depends on the order). The read-time counts of the two orders must be equal.

usage: python scripts/bench_cross_refs.py [--corpus DIR] [--work DIR] [--json OUT] [--count-only]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def ingest_all(store_dir: Path, pdfs: list[Path], embedder: Any) -> dict[str, str]:
    """Ingest ``pdfs`` in this order into a fresh store; file name -> document key."""
    from clausewise.graph.ingest import build_ingest_graph, run_ingest
    from clausewise.system import System

    system = System(store_dir=store_dir, embedder=embedder)
    graph = build_ingest_graph(system)
    keys = {}
    for pdf in pdfs:
        t = time.perf_counter()
        out = run_ingest(system, pdf, graph=graph)
        if out.get("status") != "ingested":
            sys.exit(f"{pdf.name}: {out.get('status')} {out.get('error')}")
        keys[pdf.name] = out["doc_key"]
        print(f"  {store_dir.name}: {pdf.name} -> {out['doc_key']} in {time.perf_counter() - t:.0f} s", flush=True)
    return keys


def count(store_dir: Path) -> dict[str, Any]:
    """Per (citing document, cited ingested document): references resolved now / not, and the commit flag."""
    from clausewise.references import Resolver
    from clausewise.stores import Stores
    from clausewise.stores.local import LocalBlobs

    stores = Stores(LocalBlobs(store_dir))
    resolver = Resolver(stores)
    ingested = sorted(stores.visible_documents())
    pairs: dict[str, Counter[str]] = {}
    reasons: Counter[str] = Counter()
    elsewhere = Counter[str]()
    for doc in ingested:
        for source, refs in stores.doc_table(doc, "references").items():
            for ref in refs:
                if ref["document"] == doc:
                    continue
                found = resolver.resolve(ref, source)
                cited = resolver.document(ref["document"])
                if cited is None:
                    elsewhere["resolved" if found.resolved else "unresolved"] += 1
                    continue
                c = pairs.setdefault(f"{doc} -> {cited}", Counter())
                c["resolved" if found.resolved else "unresolved"] += 1
                c["frozen_resolved"] += bool(ref.get("resolved"))
                c["to_object"] += ref.get("target") != ref["document"]
                if not found.resolved:
                    reasons[f"{found.reason}: {ref['target']}"] += 1
    total = Counter[str]()
    for c in pairs.values():
        total.update(c)
    return {
        "documents": ingested,
        "pairs": {k: dict(v) for k, v in sorted(pairs.items())},
        "total": dict(total),
        "to_documents_not_ingested": dict(elsewhere),
        "unresolved_targets": dict(reasons.most_common()),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", type=Path, default=SHARED / "corpus" / "raw")
    ap.add_argument("--work", type=Path, default=None, help="where the two stores go (default: a new temp dir)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--count-only", action="store_true", help="count again in the stores --work holds")
    args = ap.parse_args()
    pdfs = sorted(args.corpus.glob("*.pdf"))
    if len(pdfs) < 2:
        sys.exit(f"need at least two PDFs in {args.corpus}")
    work = args.work or Path(tempfile.mkdtemp(prefix="cw-xrefs-"))
    from clausewise.settings import Settings
    from clausewise.tools.models import build_embedder

    embedder = None if args.count_only else build_embedder(Settings())
    results = {}
    for name, order in (("alphabetical", pdfs), ("reversed", pdfs[::-1])):
        store_dir = work / name
        t = time.perf_counter()
        if not args.count_only:
            if store_dir.exists() and any(store_dir.iterdir()):
                sys.exit(f"{store_dir} is not empty: give a fresh --work")
            ingest_all(store_dir, order, embedder)
        results[name] = {
            "order": [p.name for p in order],
            "ingest_s": round(time.perf_counter() - t),
            **count(store_dir),
        }

    a, r = results["alphabetical"], results["reversed"]
    print(f"\n{'citing -> cited':42} {'alphabetical':>20} {'reversed':>20}   (resolved/unresolved now; at commit)")
    for pair in sorted(set(a["pairs"]) | set(r["pairs"])):
        cells = []
        for res in (a, r):
            c = res["pairs"].get(pair, {})
            cells.append(f"{c.get('resolved', 0)}/{c.get('unresolved', 0)}; {c.get('frozen_resolved', 0)}")
        print(f"{pair:42} {cells[0]:>20} {cells[1]:>20}")
    for name, res in results.items():
        t = res["total"]
        print(
            f"{name}: {t.get('resolved', 0)} resolved, {t.get('unresolved', 0)} unresolved of "
            f"{t.get('resolved', 0) + t.get('unresolved', 0)} references between ingested documents "
            f"({t.get('to_object', 0)} name a clause, table, annex ...; flag frozen at commit: "
            f"{t.get('frozen_resolved', 0)} resolved); {sum(res['to_documents_not_ingested'].values())} "
            f"references to documents not ingested; ingest {res['ingest_s']} s"
        )
    same = _now(a) == _now(r)
    print("read-time counts equal in both orders:", same)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    sys.exit(0 if same else 1)


def _now(res: dict[str, Any]) -> dict[str, tuple[int, int]]:
    return {k: (v.get("resolved", 0), v.get("unresolved", 0)) for k, v in res["pairs"].items()}


if __name__ == "__main__":
    main()
