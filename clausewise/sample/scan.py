"""Scanned-style conversion: each page becomes one grayscale image plus an invisible OCR-like text layer.

Tables and figures then exist only as pixels, as in old scanned standards, while the text stays
extractable at the original positions (``render_mode=3``, the way OCR tools add a text layer).
"""

from __future__ import annotations

import pymupdf

from clausewise.sample.typeset import font, text_width

SCAN_DPI = 150


def to_scanned(src: pymupdf.Document) -> pymupdf.Document:
    """A new document with one ``SCAN_DPI`` grayscale JPEG per page of ``src`` and its text layer."""
    out = pymupdf.open()
    plain_font = font(False)
    for page_no in range(src.page_count):
        page = src[page_no]
        pix = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY, alpha=False)
        new = out.new_page(width=page.rect.width, height=page.rect.height)
        new.insert_image(new.rect, stream=pix.tobytes("jpeg", jpg_quality=80))
        # OCR layers use one plain font and stretch each text run horizontally to the
        # width of what was recognised (PDF "Tz").  Emulate that: write every span of the
        # original page at its origin in plain Helvetica, scaled in x so that it covers
        # the original (possibly bold) span.  Consecutive spans with the same scale share
        # one TextWriter, so the content-stream (= extraction) order stays the original.
        runs: list[tuple[float, pymupdf.TextWriter]] = []
        for block in page.get_text("dict")["blocks"]:
            for line in block.get("lines", []):
                for span in line["spans"]:
                    text = span["text"]
                    if not text.strip():
                        continue
                    plain = text_width(text, span["size"])
                    scale = round((span["bbox"][2] - span["bbox"][0]) / plain, 3) if plain else 1.0
                    if abs(scale - 1.0) < 0.01:
                        scale = 1.0
                    if not runs or runs[-1][0] != scale:
                        runs.append((scale, pymupdf.TextWriter(new.rect)))
                    x, y = span["origin"]
                    runs[-1][1].append((x / scale, y), text, font=plain_font, fontsize=span["size"])
        for scale, tw in runs:
            tw.write_text(new, render_mode=3, matrix=pymupdf.Matrix(scale, 1.0))
    return out
