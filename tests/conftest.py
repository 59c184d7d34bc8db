"""Shared pytest fixtures: sample PDFs generated at test time (never checked in).

All fixtures are session scoped: the files are built once per test run in a
temporary directory and must be treated as read-only by the tests (copy a file
to ``tmp_path`` first if a test needs to modify it).
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pymupdf
import pytest

from clausewise.sample import write_sample_pdf

ENCRYPTED_USER_PW = "clausewise-user"
ENCRYPTED_OWNER_PW = "clausewise-owner"


def _zero_pages_pdf() -> bytes:
    """A syntactically valid PDF whose page tree has an empty /Kids array."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [] /Count 0 >>",
    ]
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for num, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % num + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n" % (len(objects) + 1)
    out += b"0000000000 65535 f \n"
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref_at)
    return bytes(out)


def _no_text_pdf(sample: Path) -> bytes:
    """One page whose only content is an image (a body page of the sample), no text layer."""
    with pymupdf.open(sample) as src:
        pix = src[2].get_pixmap(dpi=100, colorspace=pymupdf.csGRAY, alpha=False)
        rect = src[2].rect
    doc = pymupdf.open()
    page = doc.new_page(width=rect.width, height=rect.height)
    page.insert_image(page.rect, stream=pix.tobytes("png"))
    data = doc.tobytes(garbage=3, deflate=True)
    doc.close()
    return data


def _corrupt_pdf(sample_bytes: bytes) -> bytes:
    """A '%PDF' header followed by deterministic random bytes: nothing MuPDF can repair."""
    rng = random.Random(1991)
    body = rng.randbytes(len(sample_bytes) // 4)
    return b"%PDF-1.7\n" + body


@pytest.fixture(scope="session")
def sample_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Born-digital fictional sample code (real text, vector tables and figure)."""
    return write_sample_pdf(tmp_path_factory.mktemp("sample") / "EN_1991-9-9_2025.pdf")


@pytest.fixture(scope="session")
def scanned_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Same document as ``sample_pdf`` but one image per page plus an invisible OCR text layer."""
    return write_sample_pdf(tmp_path_factory.mktemp("scanned") / "EN_1991-9-9_2025_scan.pdf", scanned=True)


@pytest.fixture(scope="session")
def bad_pdfs(tmp_path_factory: pytest.TempPathFactory, sample_pdf: Path) -> dict[str, Path]:
    """Bad or hostile inputs, name -> path.

    - ``not_pdf``: plain text in a file named ``.pdf`` (pymupdf.open raises).
    - ``truncated``: first 60 % of the sample's bytes (MuPDF repairs it; some pages/content lost).
    - ``corrupt``: ``%PDF`` header + random bytes (pymupdf.open raises).
    - ``encrypted``: AES-256 encrypted sample (``needs_pass``; passwords in this module).
    - ``zero_pages``: valid PDF with an empty page tree (opens, ``page_count == 0``).
    - ``no_text``: one page holding only an image, no text layer (``get_text() == ""``).
    - ``path_chars``: a valid copy of the sample named ``evil;$(rm)name.pdf``.
    """
    d = tmp_path_factory.mktemp("bad")
    data = sample_pdf.read_bytes()
    out: dict[str, Path] = {}

    p = d / "not_pdf.pdf"
    p.write_text("This is not a PDF file.\nIt only holds plain text with a .pdf extension.\n")
    out["not_pdf"] = p

    p = d / "truncated.pdf"
    p.write_bytes(data[: int(len(data) * 0.6)])
    out["truncated"] = p

    p = d / "corrupt.pdf"
    p.write_bytes(_corrupt_pdf(data))
    out["corrupt"] = p

    p = d / "encrypted.pdf"
    with pymupdf.open(sample_pdf) as doc:
        doc.save(
            p,
            encryption=pymupdf.PDF_ENCRYPT_AES_256,  # type: ignore[attr-defined]
            owner_pw=ENCRYPTED_OWNER_PW,
            user_pw=ENCRYPTED_USER_PW,
            permissions=int(pymupdf.PDF_PERM_ACCESSIBILITY),  # type: ignore[attr-defined]
        )
    out["encrypted"] = p

    p = d / "zero_pages.pdf"
    p.write_bytes(_zero_pages_pdf())
    out["zero_pages"] = p

    p = d / "no_text.pdf"
    p.write_bytes(_no_text_pdf(sample_pdf))
    out["no_text"] = p

    p = d / "evil;$(rm)name.pdf"
    shutil.copyfile(sample_pdf, p)
    out["path_chars"] = p

    return out
