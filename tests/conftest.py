"""Shared pytest fixtures: sample PDFs generated at test time (never checked in).

The PDF fixtures are session scoped: the files are built once per test run in a
temporary directory and must be treated as read-only by the tests (copy a file
to ``tmp_path`` first if a test needs to modify it).  The same holds for the
ingested stores (``sample_store``, ``scanned_store``): copy them with
``copy_store`` before changing anything.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

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


# ---------------------------------------------------------------------------
# Ingestion fixtures (shared by the ingestion-side suites)
#
# The MiniLM embedder is loaded once per session; stores that tests only read
# are ingested once per session into tmp_path_factory directories.  Tests that
# modify a store copy it first (``copy_store``).
# ---------------------------------------------------------------------------

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real all-MiniLM-L6-v2 embedder (the offline default), loaded once."""
    from clausewise.settings import Settings
    from clausewise.tools.models import build_embedder

    return build_embedder(Settings())


@pytest.fixture(scope="session")
def ingest_pdf(embedder: Any) -> Callable[..., tuple[Any, dict[str, Any]]]:
    """``ingest_pdf(store_dir, path, **inputs) -> (stores, output)`` through the ingestion graph."""
    from clausewise.graph.ingest import build_ingest_graph
    from clausewise.graph.state import IngestContext
    from clausewise.stores.base import Stores
    from clausewise.stores.local import LocalBlobs

    def run(store_dir: Path, path: Path, **inputs: Any) -> tuple[Any, dict[str, Any]]:
        stores = Stores(LocalBlobs(store_dir))
        graph = build_ingest_graph(stores=stores, embedder=embedder)
        output = graph.invoke({"path": str(path), **inputs}, context=IngestContext(store_dir=str(store_dir)))
        return stores, output

    return run


def _ingested(
    tmp_path_factory: pytest.TempPathFactory, ingest_pdf: Callable[..., Any], pdf: Path, name: str
) -> SimpleNamespace:
    store_dir = tmp_path_factory.mktemp(name)
    stores, output = ingest_pdf(store_dir, pdf)
    assert output["status"] == "ingested", output
    doc_key = output["doc_key"]
    return SimpleNamespace(
        dir=store_dir,
        stores=stores,
        output=output,
        doc_key=doc_key,
        pdf=pdf,
        sections=stores.doc_table(doc_key, "sections"),
    )


@pytest.fixture(scope="session")
def sample_store(
    tmp_path_factory: pytest.TempPathFactory, ingest_pdf: Callable[..., Any], sample_pdf: Path
) -> SimpleNamespace:
    """The born-digital sample ingested once (read-only: copy it with ``copy_store`` to modify)."""
    return _ingested(tmp_path_factory, ingest_pdf, sample_pdf, "sample-store")


@pytest.fixture(scope="session")
def scanned_store(
    tmp_path_factory: pytest.TempPathFactory, ingest_pdf: Callable[..., Any], scanned_pdf: Path
) -> SimpleNamespace:
    """The scanned-style sample ingested once (read-only)."""
    return _ingested(tmp_path_factory, ingest_pdf, scanned_pdf, "scanned-store")


@pytest.fixture(params=["sample", "scanned"])
def ingested(request: pytest.FixtureRequest) -> SimpleNamespace:
    """Each sample variant's ingested store in turn (born-digital, then scanned)."""
    return request.getfixturevalue(f"{request.param}_store")  # type: ignore[no-any-return]


@pytest.fixture(scope="session")
def other_code_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample under another designation (EN 1991-9-7): a different document."""
    return write_sample_pdf(tmp_path_factory.mktemp("other") / "EN_1991-9-7_2025.pdf", designation="EN 1991-9-7")


@pytest.fixture(scope="session")
def sample_2024_pdf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same designation as ``sample_pdf`` (EN 1991-9-9) in another edition: other bytes, same key."""
    return write_sample_pdf(tmp_path_factory.mktemp("edition") / "EN_1991-9-9_2024.pdf", year=2024)


@pytest.fixture
def copy_store(tmp_path: Path) -> Callable[[Path], Path]:
    """``copy_store(src) -> dst``: a private copy of a session store that a test may modify."""

    def copy(src: Path) -> Path:
        dst = tmp_path / f"store-copy-{len(list(tmp_path.glob('store-copy-*')))}"
        shutil.copytree(src, dst)
        return dst

    return copy


def snapshot_tree(root: Path) -> dict[str, bytes | None]:
    """Every file (dot files included) under ``root`` with its bytes; directories map to None."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        out[rel] = None if p.is_dir() else p.read_bytes()
    return out


@pytest.fixture(scope="session")
def snapshot() -> Callable[[Path], dict[str, bytes | None]]:
    return snapshot_tree


@pytest.fixture(scope="session")
def subprocess_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Environment for CLI subprocesses: offline, no stray settings, clausewise importable."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("R2_", "GEMINI_", "PINECONE_", "STORE_DIR", "MAX_FILE_MB", "MAX_PAGES"))
    }
    env["PYTHONPATH"] = str(REPO_ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["HF_HUB_OFFLINE"] = "1"
    env["TOKENIZERS_PARALLELISM"] = "false"
    env["COLUMNS"] = "200"
    return env


@pytest.fixture(scope="session")
def python_exe() -> str:
    return sys.executable


@pytest.fixture(scope="session")
def cli(embedder: Any) -> Iterator[Callable[..., Any]]:
    """``cli(*args, width=1000, env=None) -> click Result``: the typer app in-process.

    Rich wraps console output at the console width; tests pin it (a wide console by default, 80
    columns -- the width of a pipe or CI log -- where a test says so).
    """
    from typer.testing import CliRunner

    from clausewise import cli as cli_module

    runner = CliRunner()
    saved = (cli_module.console._width, cli_module.out._width)  # noqa: SLF001

    def invoke(*args: str, width: int = 1000, env: dict[str, str] | None = None) -> Any:
        cli_module.console.width = width
        cli_module.out.width = width
        return runner.invoke(cli_module.app, [str(a) for a in args], env=env, catch_exceptions=True)

    yield invoke
    cli_module.console._width, cli_module.out._width = saved  # noqa: SLF001
