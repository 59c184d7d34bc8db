"""The first hour of a new user, from the README: output that reads at 80 columns and in pipes (keys
never cut), a table of sections, every spelling of a section, hints on an empty store, a directory
argument, a non-PDF, and a file name carrying terminal escapes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

DOC = "CEN_EN1991-9-9"


@pytest.fixture
def store(sample_store: SimpleNamespace, copy_store: Any) -> Path:
    return copy_store(sample_store.dir)


def test_ingest_summary_and_docs_at_80_columns_keep_whole_keys(
    cli: Any, store: Path, sample_pdf: Path, other_code_pdf: Path
) -> None:
    result = cli("ingest", sample_pdf, other_code_pdf, "--store", store, width=80)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any(ln.startswith(f"{DOC}  skipped") for ln in lines)
    assert any(ln.startswith("CEN_EN1991-9-7  ingested:") and "sections" in ln for ln in lines)
    assert "…" not in result.stdout
    docs = cli("docs", "--store", store, width=80)
    assert docs.exit_code == 0 and "…" not in docs.stdout
    assert any(ln.startswith(f"{DOC}  ingested") for ln in docs.stdout.splitlines())
    titles = [ln.strip() for ln in docs.stdout.splitlines() if ln.startswith("    ")]
    assert any(len(t) > 60 for t in titles), "titles are not cut at 60 characters"


def test_toc_lists_the_keys_show_takes(cli: Any, store: Path) -> None:
    result = cli("toc", "EN 1991-9-9", "--store", store, width=80)
    assert result.exit_code == 0, result.output
    keys = [ln.split()[0] for ln in result.stdout.splitlines()]
    assert f"{DOC}_5.2" in keys and f"{DOC}_table_5.1" in keys
    assert keys.index(f"{DOC}_5.2") < keys.index(f"{DOC}_5.3")  # reading order
    as_json = json.loads(cli("toc", DOC, "--store", store, "--json").stdout)
    assert [r["key"] for r in as_json] == keys
    missing = cli("toc", "EN 1991-1-1", "--store", store)
    assert missing.exit_code == 1 and DOC in missing.output


def test_toc_lists_a_tables_number_as_printed_also_from_a_store_that_labelled_it_otherwise(
    cli: Any, store: Path
) -> None:
    """A store ingested before labels kept their printed case holds "Table 7.4A" for "Table 7.4a": the
    listing reads a table's number from its key, as answers do; other sections keep theirs."""
    (sections_file,) = store.glob(f"docs/{DOC}/*/sections.json")
    sections = json.loads(sections_file.read_text())
    sections[f"{DOC}_table_5.1"]["section"] = "TABLE 5.1"
    sections_file.write_text(json.dumps(sections))
    rows = {r["key"]: r["section"] for r in json.loads(cli("toc", DOC, "--store", store, "--json").stdout)}
    assert rows[f"{DOC}_table_5.1"] == "Table 5.1"
    assert rows[f"{DOC}_5.2"] == sections[f"{DOC}_5.2"]["section"]


@pytest.mark.parametrize(
    ("spelling", "key"),
    [
        ("EN 1991-9-9 5.2", f"{DOC}_5.2"),
        ("5.3", f"{DOC}_5.3"),
        (f"{DOC}_Table_5.1", f"{DOC}_table_5.1"),
        ("EN 1991-9-9 Table 5.1", f"{DOC}_table_5.1"),
        ("cen_en1991-9-9_4.1", f"{DOC}_4.1"),
    ],
)
def test_show_takes_every_spelling(cli: Any, store: Path, spelling: str, key: str) -> None:
    result = cli("show", spelling, "--store", store, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["key"] == key


def test_show_offers_near_keys_for_a_typo(cli: Any, store: Path) -> None:
    result = cli("show", f"{DOC}_5.22", "--store", store)
    assert result.exit_code == 1
    assert "did you mean" in result.output and f"{DOC}_5.2" in result.output


def test_empty_and_missing_stores_get_a_hint_and_leave_nothing(cli: Any, tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.chdir(tmp_path)
    asked = cli("ask", "What density for concrete?")
    assert asked.exit_code == 1 and "clausewise ingest" in asked.output
    assert not (tmp_path / "clausewise-data").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    docs = cli("docs", "--store", empty)
    assert docs.exit_code == 0 and "clausewise ingest" in docs.output
    asked = cli("ask", "What density for concrete?", "--store", empty)
    assert asked.exit_code == 1 and "no documents are ingested" in asked.output


def test_a_directory_stands_for_its_pdfs(cli: Any, tmp_path: Path, sample_pdf: Path) -> None:
    folder = tmp_path / "codes"
    folder.mkdir()
    shutil.copy(sample_pdf, folder / "code.pdf")
    (folder / "notes.txt").write_text("not a code")
    result = cli("ingest", folder, "--store", tmp_path / "s", "--json")
    assert result.exit_code == 0, result.output
    assert [r["doc_key"] for r in json.loads(result.stdout)] == [DOC]
    nothing = tmp_path / "nothing"
    nothing.mkdir()
    result = cli("ingest", nothing, "--store", tmp_path / "s")
    assert result.exit_code == 1 and "*.pdf" in result.output and "no .pdf file" in result.output


def test_a_non_pdf_gets_one_error_line_and_no_empty_table(cli: Any, tmp_path: Path, bad_pdfs: dict[str, Path]) -> None:
    result = cli("ingest", bad_pdfs["not_pdf"], "--store", tmp_path / "s")
    assert result.exit_code == 1
    assert "not a PDF" in result.output or "corrupt" in result.output
    assert "Ingested" not in result.output and "0/?" not in result.output


def test_escape_characters_in_a_file_name_are_shown_not_run(cli: Any, tmp_path: Path) -> None:
    name = tmp_path / "evil\x1b]8;;http:x\x07\x1b[31mred.pdf"
    name.write_text("not a pdf")
    result = cli("ingest", name, "--store", tmp_path / "s")
    assert result.exit_code == 1
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b" in result.output


def test_an_owner_password_only_pdf_is_read_and_ingested(cli: Any, tmp_path: Path, sample_pdf: Path) -> None:
    """No password is needed to read it, so its text is ingested (the README says so); one that needs a
    password to open is refused (tests/test_cli_bad_input.py)."""
    import pymupdf

    owner_only = tmp_path / "owner-only.pdf"
    with pymupdf.open(sample_pdf) as doc:
        doc.save(owner_only, encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="owner", user_pw="", permissions=0)
    result = cli("ingest", owner_only, "--store", tmp_path / "s", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["status"] == "ingested"
