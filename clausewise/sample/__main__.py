"""``python -m clausewise.sample PATH [--scanned] [--designation D] [--year Y] [--text main|companion]``:
write a sample PDF."""

from __future__ import annotations

import argparse

from clausewise.sample import TEXTS, write_sample_pdf


def main() -> None:
    ap = argparse.ArgumentParser(description="Write the clausewise fictional sample PDF.")
    ap.add_argument("path")
    ap.add_argument("--scanned", action="store_true")
    ap.add_argument("--designation", default=None, help="default: EN 1991-9-9 (main), EN 1991-9-8 (companion)")
    ap.add_argument("--year", type=int, default=2025)
    ap.add_argument("--text", choices=list(TEXTS), default="main")
    a = ap.parse_args()
    print(write_sample_pdf(a.path, scanned=a.scanned, designation=a.designation, year=a.year, text=a.text))


if __name__ == "__main__":  # pragma: no cover - manual helper
    main()
