"""Generator of a small, ORIGINAL and fictional code-of-practice PDF.

The document imitates the layout of a Eurocode part (running header, numbered
sections and clauses, "(1)P" paragraphs, NOTEs, symbols list, definitions,
numbered expression, ruled tables with captions above, a figure with caption
below and an informative annex) so that the ingestion pipeline can be tested
without shipping any copyrighted standard.  All wording is written for this
project (it lives in ``text.json``); the subject ("leaf loads on garden
structures") is invented.

A second fictional code, the companion part (``companion.json``, "Part 9-8: Wind gusts on small
garden structures", EN 1991-9-8 by default), is written with ``text="companion"``; it cites the main
sample (EN 1991-9-9) by clause, table and expression, so that two ingested documents reference each
other without carrying the same text.

Public API::

    write_sample_pdf(path, *, scanned=False, designation=None, year=2025, text="main")

``scanned=True`` produces a "scanned-style" file: every page is a single
150 dpi grayscale image of the born-digital page plus an invisible
(``render_mode=3``) OCR-like text layer placed at the original text positions.
Tables and the figure then exist only as pixels, as in old scanned standards.

The output is deterministic (fixed metadata, no timestamps, fixed file ID).

Modules: :mod:`~clausewise.sample.text` (the block model and the loader of ``text.json``),
:mod:`~clausewise.sample.typeset` (layout), :mod:`~clausewise.sample.figures` (vector figures),
:mod:`~clausewise.sample.scan` (scanned-style conversion).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from clausewise.sample.scan import to_scanned
from clausewise.sample.text import DEFAULT_DESIGNATIONS, TEXTS, sample_title
from clausewise.sample.typeset import PAGE_HEIGHT, PAGE_WIDTH, typeset_sample

__all__ = ["write_sample_pdf", "SAMPLE_TITLE", "COMPANION_TITLE", "TEXTS", "PAGE_WIDTH", "PAGE_HEIGHT"]

SAMPLE_TITLE = sample_title()
COMPANION_TITLE = sample_title("companion")

_FIXED_DATE = "D:20250101000000Z"


def write_sample_pdf(
    path: str | Path,
    *,
    scanned: bool = False,
    designation: str | None = None,
    year: int = 2025,
    text: str = "main",
) -> Path:
    """Write a fictional sample code of practice to ``path`` and return it as a Path.

    ``text`` picks the code: ``"main"`` (``text.json``, EN 1991-9-9 unless ``designation`` says
    otherwise) or ``"companion"`` (``companion.json``, EN 1991-9-8 by default, citing EN 1991-9-9).
    ``scanned=False`` gives a born-digital PDF (real text, vector tables and figure).
    ``scanned=True`` gives one 150 dpi grayscale image per page with an invisible
    OCR-like text layer (render mode 3) at the original text positions.
    """
    path = Path(path)
    if text not in TEXTS:
        raise ValueError(f"unknown sample text {text!r} (one of {', '.join(TEXTS)})")
    designation = designation or DEFAULT_DESIGNATIONS[text]
    doc = typeset_sample(designation, year, text)
    if scanned:
        born = doc
        doc = to_scanned(born)
        born.close()
    doc.subset_fonts()
    doc.set_metadata(
        {
            "title": f"{designation}:{year} - {sample_title(text)}",
            "author": "clausewise",
            "subject": "Fictional sample code of practice for tests (not a standard)",
            "keywords": "clausewise, sample, fictional",
            "creator": "clausewise.sample",
            "producer": "clausewise.sample",
            "creationDate": _FIXED_DATE,
            "modDate": _FIXED_DATE,
        }
    )
    # fixed file identifier derived from the parameters -> byte-identical output (the main text's
    # identifier is the one it had before there were two texts)
    params = f"{designation}|{year}|{scanned}" + ("" if text == "main" else f"|{text}")
    ident = hashlib.md5(params.encode()).hexdigest()
    doc.xref_set_key(-1, "ID", f"[<{ident}><{ident}>]")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=3, deflate=True, no_new_id=True)
    doc.close()
    return path
