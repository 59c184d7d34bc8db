"""Generator of a small, ORIGINAL and fictional code-of-practice PDF.

The document imitates the layout of a Eurocode part (running header, numbered
sections and clauses, "(1)P" paragraphs, NOTEs, symbols list, definitions,
numbered expression, ruled tables with captions above, a figure with caption
below and an informative annex) so that the ingestion pipeline can be tested
without shipping any copyrighted standard.  All wording is written for this
project (it lives in ``text.json``); the subject ("leaf loads on garden
structures") is invented.

Public API::

    write_sample_pdf(path, *, scanned=False, designation="EN 1991-9-9", year=2025)

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
from clausewise.sample.text import sample_title
from clausewise.sample.typeset import PAGE_HEIGHT, PAGE_WIDTH, typeset_sample

__all__ = ["write_sample_pdf", "SAMPLE_TITLE", "PAGE_WIDTH", "PAGE_HEIGHT"]

SAMPLE_TITLE = sample_title()

_FIXED_DATE = "D:20250101000000Z"


def write_sample_pdf(
    path: str | Path,
    *,
    scanned: bool = False,
    designation: str = "EN 1991-9-9",
    year: int = 2025,
) -> Path:
    """Write the fictional sample code of practice to ``path`` and return it as a Path.

    ``scanned=False`` gives a born-digital PDF (real text, vector tables and figure).
    ``scanned=True`` gives one 150 dpi grayscale image per page with an invisible
    OCR-like text layer (render mode 3) at the original text positions.
    """
    path = Path(path)
    doc = typeset_sample(designation, year)
    if scanned:
        born = doc
        doc = to_scanned(born)
        born.close()
    doc.subset_fonts()
    doc.set_metadata(
        {
            "title": f"{designation}:{year} - {SAMPLE_TITLE}",
            "author": "clausewise",
            "subject": "Fictional sample code of practice for tests (not a standard)",
            "keywords": "clausewise, sample, fictional",
            "creator": "clausewise.sample",
            "producer": "clausewise.sample",
            "creationDate": _FIXED_DATE,
            "modDate": _FIXED_DATE,
        }
    )
    # fixed file identifier derived from the parameters -> byte-identical output
    ident = hashlib.md5(f"{designation}|{year}|{scanned}".encode()).hexdigest()
    doc.xref_set_key(-1, "ID", f"[<{ident}><{ident}>]")
    path.parent.mkdir(parents=True, exist_ok=True)
    doc.save(path, garbage=3, deflate=True, no_new_id=True)
    doc.close()
    return path
