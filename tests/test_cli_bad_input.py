"""Bad input to `clausewise ingest`: each file fails with a non-zero exit and ONE clear line naming the
file and the reason, and leaves a non-empty store byte-for-byte unchanged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pymupdf
import pytest

from clausewise.ocr import find_tessdata
from clausewise.settings import Settings
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs

OCR_READY = find_tessdata(Settings().tessdata_prefix) is not None

# case -> words the one error line must contain (besides the file name)
REASONS = {
    "not_pdf": ["not a PDF"],
    "truncated": ["truncated"],
    "corrupt": ["corrupt PDF"],
    "encrypted": ["encrypted", "password"],
    "zero_pages": ["no pages"],
    "huge": ["larger than", "200 MB limit"],
    "missing": ["no such file"],
    "directory": ["a directory with no .pdf file", "*.pdf"],
    "empty": ["empty file"],
    "no_designation": ["cannot tell which code", "--code"],
}


if not OCR_READY:  # an image-only page is read by OCR (test_image_only_page_ingests_through_ocr) unless it cannot run
    REASONS["no_text"] = ["no page has a text layer and OCR cannot run", "tesseract-ocr-eng"]


def messages(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.strip() and "\u2501" not in ln]


@pytest.fixture(scope="module")
def bad_inputs(bad_pdfs: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("more-bad")
    huge = d / "huge.pdf"
    with open(huge, "wb") as fh:  # sparse: 201 MB on paper, a few bytes on disk
        fh.write(b"%PDF-1.7\n")
        fh.truncate(201 * 1024 * 1024)
    folder = d / "folder.pdf"
    folder.mkdir()
    empty = d / "empty.pdf"
    empty.write_bytes(b"")
    return {
        **bad_pdfs,
        "huge": huge,
        "missing": d / "missing.pdf",
        "directory": folder,
        "empty": empty,
        "no_designation": _code_without_designation(d / "no_designation.pdf"),
    }


def _code_without_designation(path: Path) -> Path:
    """A readable, numbered code that never names itself (no designation in header, metadata or text)."""
    doc = pymupdf.open()
    page = doc.new_page()
    y = 80.0
    for line in [
        "A garden code without a number",
        "1 Scope",
        "(1) This text names no designation at all.",
        "1.1 General",
        "(1) Loads shall be considered.",
        "2 Loads",
        "2.1 Leaves",
        "(1) Leaves are light.",
    ]:
        page.insert_text((72, y), line, fontsize=11)
        y += 16
    doc.save(path)
    doc.close()
    return path


@pytest.fixture
def good_store(sample_store: SimpleNamespace, copy_store: Callable[[Path], Path]) -> Path:
    """A non-empty store: the good sample already ingested."""
    store = copy_store(sample_store.dir)
    assert Stores(LocalBlobs(store)).manifest(sample_store.doc_key) is not None
    return store


def _ingest_bad(cli: Callable[..., Any], path: Path, store: Path, width: int = 1000) -> Any:
    return cli("ingest", path, "--store", store, "--json", width=width)


@pytest.mark.parametrize("case", sorted(REASONS))
def test_bad_input_one_clear_line_and_store_unchanged(
    cli: Callable[..., Any],
    bad_inputs: dict[str, Path],
    good_store: Path,
    case: str,
    snapshot: Callable[[Path], dict[str, bytes | None]],
) -> None:
    path = bad_inputs[case]
    before = snapshot(good_store)
    result = _ingest_bad(cli, path, good_store)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)  # no traceback
    assert json.loads(result.stdout) == []
    [line] = messages(result.stderr)
    assert line.startswith("error: ")
    assert path.name in line
    for word in REASONS[case]:
        assert word in line, line
    assert "Traceback" not in result.output
    assert snapshot(good_store) == before


@pytest.mark.parametrize("case", sorted(set(REASONS) - {"corrupt"}))
def test_bad_input_message_fits_one_80_column_line(
    cli: Callable[..., Any], bad_inputs: dict[str, Path], good_store: Path, case: str
) -> None:
    """80 columns: what rich uses when stderr is a pipe or a CI log."""
    result = _ingest_bad(cli, bad_inputs[case], good_store, width=80)
    assert result.exit_code == 1
    assert len(messages(result.stderr)) == 1, result.stderr


def test_corrupt_message_fits_one_80_column_line(
    cli: Callable[..., Any], bad_inputs: dict[str, Path], good_store: Path
) -> None:
    result = _ingest_bad(cli, bad_inputs["corrupt"], good_store, width=80)
    assert result.exit_code == 1
    assert len(messages(result.stderr)) == 1, result.stderr


def test_show_unknown_key_message_fits_one_80_column_line(cli: Callable[..., Any], good_store: Path) -> None:
    result = cli("show", "CEN_EN1991-9-9_9.9.9", "--store", good_store, width=80)
    assert result.exit_code == 1
    assert len(messages(result.stderr)) == 1, result.stderr


def test_max_file_mb_setting_is_honoured(cli: Callable[..., Any], tmp_path: Path, good_store: Path) -> None:
    big = tmp_path / "two_mb.pdf"
    with open(big, "wb") as fh:
        fh.write(b"%PDF-1.7\n")
        fh.truncate(2 * 1024 * 1024)
    result = cli("ingest", big, "--store", good_store, "--json", env={"MAX_FILE_MB": "1"})
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert "1 MB limit" in line


def test_max_pages_setting_is_honoured(
    cli: Callable[..., Any], sample_pdf: Path, good_store: Path, snapshot: Callable[[Path], dict[str, bytes | None]]
) -> None:
    before = snapshot(good_store)
    result = cli("ingest", sample_pdf, "--store", good_store, "--overwrite", "--json", env={"MAX_PAGES": "3"})
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert sample_pdf.name in line and "8 pages is more than the 3-page limit" in line
    assert snapshot(good_store) == before


def test_code_override_makes_an_unidentified_code_ingestible(
    cli: Callable[..., Any], bad_inputs: dict[str, Path], tmp_path: Path
) -> None:
    result = cli("ingest", bad_inputs["no_designation"], "--store", tmp_path, "--code", "GC 1", "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["doc_key"] == "LOCAL_GC1" and entry["status"] == "ingested"
    assert Stores(LocalBlobs(tmp_path)).lookup("sections", "LOCAL_GC1_2.1") is not None


@pytest.mark.skipif(
    not OCR_READY, reason="Tesseract's English data is not installed (apt-get install tesseract-ocr-eng)"
)
def test_image_only_page_ingests_through_ocr(
    cli: Callable[..., Any], bad_pdfs: dict[str, Path], tmp_path: Path
) -> None:
    result = cli("ingest", bad_pdfs["no_text"], "--store", tmp_path, "--code", "EN 1991-9-9", "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["status"] == "ingested" and entry["doc_key"] == "CEN_EN1991-9-9"
    assert "1 page(s) read by OCR" in " ".join(entry["warnings"])
    scope = Stores(LocalBlobs(tmp_path)).lookup("sections", "CEN_EN1991-9-9_1.1")
    assert scope is not None and scope["pages"] == [1] and "leaf load" in scope["text"]


def test_store_that_is_a_file_is_one_clear_error(cli: Callable[..., Any], sample_pdf: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "store"
    not_a_dir.write_text("a file")
    for args in (["ingest", sample_pdf], ["docs"], ["show", "CEN_EN1991-9-9_1"]):
        result = cli(*args, "--store", not_a_dir, "--json")
        assert result.exit_code == 1
        [line] = messages(result.stderr)
        assert line.startswith("error:") and "cannot create store directory" in line
    assert not_a_dir.read_text() == "a file"


def test_file_name_with_path_characters_ingests(
    cli: Callable[..., Any], bad_pdfs: dict[str, Path], tmp_path: Path
) -> None:
    path = bad_pdfs["path_chars"]
    store = tmp_path / "store"
    result = cli("ingest", path, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["status"] == "ingested" and entry["doc_key"] == "CEN_EN1991-9-9"
    stores = Stores(LocalBlobs(store))
    assert stores.documents()["CEN_EN1991-9-9"]["file"] == path.name == "evil;$(rm)name.pdf"
    # the name went nowhere near a shell or a path: only the store's own layout exists
    assert sorted(p.name for p in store.iterdir()) == sorted(
        [".lock", ".locks", "documents.json", "docs", "index.json", "kv.json"]
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store"]


def test_one_bad_file_among_good_ones(
    cli: Callable[..., Any], bad_inputs: dict[str, Path], other_code_pdf: Path, good_store: Path
) -> None:
    result = cli("ingest", bad_inputs["encrypted"], other_code_pdf, "--store", good_store, "--json")
    assert result.exit_code == 1  # a failure is reported in the exit status ...
    [entry] = json.loads(result.stdout)  # ... but the good file is still ingested
    assert entry["doc_key"] == "CEN_EN1991-9-7" and entry["status"] == "ingested"
    [line] = messages(result.stderr)
    assert "encrypted.pdf" in line
    assert set(Stores(LocalBlobs(good_store)).visible_documents()) == {"CEN_EN1991-9-9", "CEN_EN1991-9-7"}


@pytest.mark.parametrize("name", ["spec[draft].pdf", "EN 1991-1-3 [bold] copy.pdf"])
def test_error_line_names_a_bracketed_file_exactly(
    cli: Callable[..., Any], tmp_path: Path, good_store: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_text("not a pdf at all")
    result = cli("ingest", path, "--store", good_store, "--json")
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert name in line, line


def test_bracketed_file_name_that_is_a_good_pdf_ingests(
    cli: Callable[..., Any], sample_pdf: Path, tmp_path: Path
) -> None:
    path = tmp_path / "EN 1991-9-9 [final] \u00e9dition.pdf"
    path.write_bytes(sample_pdf.read_bytes())
    result = cli("ingest", path, "--store", tmp_path / "store", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["status"] == "ingested"
    assert Stores(LocalBlobs(tmp_path / "store")).documents()["CEN_EN1991-9-9"]["file"] == path.name
