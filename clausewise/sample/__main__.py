"""``python -m clausewise.sample PATH [--scanned] [--designation D] [--year Y]``: write the sample PDF."""

from __future__ import annotations

import argparse

from clausewise.sample import write_sample_pdf


def main() -> None:
    ap = argparse.ArgumentParser(description="Write the clausewise fictional sample PDF.")
    ap.add_argument("path")
    ap.add_argument("--scanned", action="store_true")
    ap.add_argument("--designation", default="EN 1991-9-9")
    ap.add_argument("--year", type=int, default=2025)
    a = ap.parse_args()
    print(write_sample_pdf(a.path, scanned=a.scanned, designation=a.designation, year=a.year))


if __name__ == "__main__":  # pragma: no cover - manual helper
    main()
