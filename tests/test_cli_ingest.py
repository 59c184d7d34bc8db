"""The CLI's ingestion side (clausewise/cli.py): ingest, re-ingest, --overwrite, identity overrides,
docs --json and show --json, run in-process through typer's CliRunner."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import DOC_TABLES

from clausewise.stores import LocalVectorIndex, Stores
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"
DOCS_FIELDS = {
    "key",
    "title",
    "publisher",
    "code",
    "edition",
    "status",
    "pages",
    "sha256",
    "referenced_by",
    "file",
    "ingested_at",
}
SHOW_FIELDS = {
    "key",
    "kind",
    "document",
    "section",
    "title",
    "pages",
    "parent",
    "previous",
    "next",
    "text",
    "references",
    "precedence",
    "image",
    "description",
}


def messages(stderr: str) -> list[str]:
    """What the user reads on stderr, progress bars left out."""
    return [ln for ln in stderr.splitlines() if ln.strip() and "\u2501" not in ln]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def cli_store(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any], sample_pdf: Path) -> SimpleNamespace:
    """The sample ingested with `clausewise ingest FILE --store DIR --json` (read-only for the tests)."""
    store = tmp_path_factory.mktemp("cli-store")
    result = cli("ingest", sample_pdf, "--store", store, "--json")
    return SimpleNamespace(dir=store, result=result, stores=Stores(LocalBlobs(store)))


# ---------------------------------------------------------------- ingest
def test_ingest_exits_0_with_a_summary(cli_store: SimpleNamespace, sample_pdf: Path) -> None:
    result = cli_store.result
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["file"] == sample_pdf.name
    assert entry["doc_key"] == DOC
    assert entry["status"] == "ingested"
    assert entry["warnings"] == []
    summary = entry["summary"]
    assert {k: summary[k] for k in ("pages", "clauses", "annexes", "tables", "figures", "images", "expressions")} == {
        "pages": 8,
        "clauses": 20,
        "annexes": 1,
        "tables": 2,
        "figures": 1,
        "images": 3,
        "expressions": 1,
    }
    assert summary["references_resolved"] > 0 and summary["precedence_rules"] > 0 and summary["kv_entries"] > 0
    assert summary["chunks"] == len(LocalVectorIndex(cli_store.stores))
    assert messages(result.stderr) == []


def test_ingested_store_layout(cli_store: SimpleNamespace, sample_pdf: Path) -> None:
    stores = cli_store.stores
    manifest = stores.manifest(DOC)
    assert manifest is not None and manifest["sha256"] == sha256(sample_pdf)
    gen = manifest["generation"]
    for table in DOC_TABLES:
        assert stores.blobs.read(f"docs/{DOC}/{gen}/{table}.json") is not None
    assert stores.blobs.read(f"docs/{DOC}/{gen}/vectors.npy") is not None
    assert {p.split("/")[2] for p in stores.blobs.list(f"docs/{DOC}/")} == {gen, "manifest.json"}


def test_human_summary_of_a_reingest_says_skipped(
    cli: Callable[..., Any],
    cli_store: SimpleNamespace,
    sample_pdf: Path,
    snapshot: Callable[[Path], dict[str, bytes | None]],
) -> None:
    before = snapshot(cli_store.dir)
    result = cli("ingest", sample_pdf, "--store", cli_store.dir)
    assert result.exit_code == 0, result.output
    assert "Ingested" in result.stdout
    row = next(ln for ln in result.stdout.splitlines() if DOC in ln)
    assert "skipped (same file)" in row
    assert snapshot(cli_store.dir) == before  # a skipped file writes nothing


def test_reingest_same_file_is_skipped(cli: Callable[..., Any], cli_store: SimpleNamespace, sample_pdf: Path) -> None:
    generation = cli_store.stores.manifest(DOC)["generation"]
    result = cli("ingest", sample_pdf, "--store", cli_store.dir, "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["status"] == "skipped" and entry["doc_key"] == DOC
    assert "--overwrite" in entry["summary"]["reason"]
    assert cli_store.stores.manifest(DOC)["generation"] == generation


def test_same_code_from_another_file_needs_overwrite(
    cli: Callable[..., Any],
    cli_store: SimpleNamespace,
    sample_2024_pdf: Path,
    snapshot: Callable[[Path], dict[str, bytes | None]],
) -> None:
    before = snapshot(cli_store.dir)
    result = cli("ingest", sample_2024_pdf, "--store", cli_store.dir, "--json")
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert line.startswith("error:") and sample_2024_pdf.name in line
    assert "already ingested" in line and "--overwrite" in line
    assert snapshot(cli_store.dir) == before


# ---------------------------------------------------------------- --overwrite
def test_overwrite_replaces_the_document_with_a_new_generation(
    cli: Callable[..., Any],
    cli_store: SimpleNamespace,
    copy_store: Callable[[Path], Path],
    sample_2024_pdf: Path,
) -> None:
    store = copy_store(cli_store.dir)
    stores = Stores(LocalBlobs(store))
    old = stores.manifest(DOC)
    assert old is not None
    result = cli("ingest", sample_2024_pdf, "--store", store, "--overwrite", "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["status"] == "ingested" and entry["doc_key"] == DOC

    new = stores.manifest(DOC)
    assert new is not None and new["generation"] != old["generation"]
    assert new["sha256"] == sha256(sample_2024_pdf)
    assert stores.blobs.list(f"docs/{DOC}/{old['generation']}/") == []
    assert {p.split("/")[2] for p in stores.blobs.list(f"docs/{DOC}/")} == {new["generation"], "manifest.json"}
    master = stores.documents()[DOC]
    assert (master["status"], master["edition"], master["file"], master["sha256"]) == (
        "ingested",
        "2024",
        sample_2024_pdf.name,
        new["sha256"],
    )
    # the new content is what readers get, complete
    header = stores.lookup("sections", f"{DOC}_foreword")
    assert header is not None and "EN 1991-9-9:2024" in header["text"]
    assert len(LocalVectorIndex(stores)) == entry["summary"]["chunks"]
    assert stores.object_image(f"{DOC}_figure_5.1") is not None


def test_overwrite_with_the_same_file_writes_a_new_generation(
    cli: Callable[..., Any],
    cli_store: SimpleNamespace,
    copy_store: Callable[[Path], Path],
    sample_pdf: Path,
) -> None:
    store = copy_store(cli_store.dir)
    stores = Stores(LocalBlobs(store))
    old = stores.manifest(DOC)["generation"]  # type: ignore[index]
    result = cli("ingest", sample_pdf, "--store", store, "--overwrite", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["status"] == "ingested"
    assert stores.manifest(DOC)["generation"] != old  # type: ignore[index]
    assert stores.blobs.list(f"docs/{DOC}/{old}/") == []
    # kv holds this document's terms once, not twice
    sources = [e["source"] for e in stores.kv()["ce"]["equivalents"]]
    assert sources.count(f"{DOC}_1.3") == 1


# ---------------------------------------------------------------- identity overrides
@pytest.fixture(scope="module")
def bsi_store(tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any], sample_pdf: Path) -> SimpleNamespace:
    store = tmp_path_factory.mktemp("bsi-store")
    result = cli("ingest", sample_pdf, "--store", store, "--publisher", "BSI", "--json")
    return SimpleNamespace(dir=store, result=result, stores=Stores(LocalBlobs(store)))


def test_publisher_override(bsi_store: SimpleNamespace) -> None:
    assert bsi_store.result.exit_code == 0, bsi_store.result.output
    [entry] = json.loads(bsi_store.result.stdout)
    assert entry["doc_key"] == "BSI_EN1991-9-9"
    docs = bsi_store.stores.documents()
    assert docs["BSI_EN1991-9-9"]["publisher"] == "BSI"
    assert docs["BSI_EN1991-9-9"]["edition"] == "2025"
    assert bsi_store.stores.lookup("sections", "BSI_EN1991-9-9_5.3.2") is not None
    assert bsi_store.stores.lookup("sections", f"{DOC}_5.3.2") is None


def test_publisher_override_does_not_list_the_document_as_referenced_by_itself(bsi_store: SimpleNamespace) -> None:
    assert bsi_store.result.exit_code == 0
    assert DOC not in bsi_store.stores.documents()


def test_code_override(cli: Callable[..., Any], tmp_path: Path, sample_pdf: Path) -> None:
    result = cli("ingest", sample_pdf, "--store", tmp_path, "--code", "EN 1991-9-7:2020", "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["doc_key"] == "CEN_EN1991-9-7"
    stores = Stores(LocalBlobs(tmp_path))
    master = stores.documents()["CEN_EN1991-9-7"]
    assert (master["code"], master["edition"], master["publisher"]) == ("EN 1991-9-7", "2020", "CEN")
    assert stores.lookup("sections", "CEN_EN1991-9-7_table_5.1") is not None
    assert stores.manifest(DOC) is None


@pytest.mark.parametrize(
    ("args", "needle"),
    [(["--publisher", "A_B"], "publisher"), (["--code", "../../etc"], "document code")],
)
def test_bad_override_is_a_clear_error(
    cli: Callable[..., Any],
    cli_store: SimpleNamespace,
    sample_pdf: Path,
    args: list[str],
    needle: str,
    snapshot: Callable[[Path], dict[str, bytes | None]],
) -> None:
    before = snapshot(cli_store.dir)
    result = cli("ingest", sample_pdf, "--store", cli_store.dir, *args, "--json")
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert line.startswith("error:") and needle in line
    assert snapshot(cli_store.dir) == before


def test_code_with_several_files_is_refused(
    cli: Callable[..., Any], tmp_path: Path, sample_pdf: Path, other_code_pdf: Path
) -> None:
    result = cli("ingest", sample_pdf, other_code_pdf, "--store", tmp_path / "s", "--code", "EN 1990")
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert "--code names one document" in line
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").rglob("*.json"))


# ---------------------------------------------------------------- docs / show
def test_docs_json(cli: Callable[..., Any], cli_store: SimpleNamespace, sample_pdf: Path) -> None:
    result = cli("docs", "--store", cli_store.dir, "--json")
    assert result.exit_code == 0, result.output
    docs = json.loads(result.stdout)
    entry = docs[DOC]
    assert DOCS_FIELDS <= set(entry)
    assert entry["key"] == DOC and entry["status"] == "ingested" and entry["pages"] == 8
    assert (entry["publisher"], entry["code"], entry["edition"]) == ("CEN", "EN 1991-9-9", "2025")
    assert entry["sha256"] == sha256(sample_pdf) and entry["file"] == sample_pdf.name
    assert entry["title"].startswith("EN 1991-9-9:2025 - Eurocode 1")
    for target in ("CEN_EN1990", "ISO_ISO4355"):
        assert docs[target]["status"] == "referenced-only"
        assert f"{DOC}_1.2" in docs[target]["referenced_by"]
    assert {d["status"] for d in docs.values()} == {"ingested", "referenced-only"}


def test_docs_table(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    result = cli("docs", "--store", cli_store.dir)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "Documents" in result.stdout
    ingested = next(ln for ln in lines if DOC in ln)
    assert "ingested" in ingested and "EN 1991-9-9" in ingested
    assert any("CEN_EN1990" in ln and "referenced-only" in ln for ln in lines)


def test_docs_of_an_empty_store(cli: Callable[..., Any], tmp_path: Path) -> None:
    result = cli("docs", "--store", tmp_path, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == {}


def test_show_json_of_a_clause(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    result = cli("show", f"{DOC}_4.1", "--store", cli_store.dir, "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert set(shown) == SHOW_FIELDS
    assert (shown["key"], shown["kind"], shown["document"], shown["section"]) == (
        f"{DOC}_4.1",
        "clause",
        "EN 1991-9-9",
        "4.1",
    )
    assert shown["title"] == "Characteristic values" and shown["pages"] == [5]
    assert (shown["parent"], shown["previous"], shown["next"]) == (f"{DOC}_4", f"{DOC}_4", f"{DOC}_4.2")
    assert shown["text"].startswith("4.1 Characteristic values")
    assert shown["image"] is None
    refs = {r["raw"]: r for r in shown["references"]}
    assert refs["Annex A"]["target"] == f"{DOC}_annex_A" and refs["Annex A"]["resolved"] is True
    assert all(set(r) == {"raw", "target", "resolved", "kind", "reason"} for r in shown["references"])
    assert {r["type"] for r in shown["precedence"]} >= {"ndp", "national-annex"}


def test_show_json_of_a_table_has_its_image(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    result = cli("show", f"{DOC}_table_5.1", "--store", cli_store.dir, "--json")
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["kind"] == "table" and shown["parent"] == f"{DOC}_5.2"
    image = Path(shown["image"])
    assert image.is_absolute() and image.is_file() and image.is_relative_to(cli_store.dir)
    assert image.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert shown["description"].startswith("Table 5.1")
    assert "| Sheltered: enclosed garden below trees | 1,2 |" in shown["text"]


def test_show_unresolved_reference_has_its_reason(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    shown = json.loads(cli("show", f"{DOC}_1.1", "--store", cli_store.dir, "--json").stdout)
    refs = {r["raw"]: r for r in shown["references"]}
    assert refs["ISO 4355"] == {
        "raw": "ISO 4355",
        "target": "ISO_ISO4355",
        "resolved": False,
        "kind": "document",
        "reason": "document not ingested",
    }


def test_show_human_output(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    result = cli("show", f"{DOC}_figure_5.1", "--store", cli_store.dir)
    assert result.exit_code == 0, result.output
    assert "Figure 5.1 \u2014 Shape coefficient for flat shed roofs" in result.stdout
    assert "image:" in result.stdout and "figure_5.1.png" in result.stdout


@pytest.mark.parametrize("key", [f"{DOC}_9.9.9", f"{DOC}_table_7.7", "CEN_EN1990_6.4.3.2"])
def test_show_unknown_key(cli: Callable[..., Any], cli_store: SimpleNamespace, key: str) -> None:
    result = cli("show", key, "--store", cli_store.dir, "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = messages(result.stderr)
    assert line.startswith("error:") and key in line and "no section" in line


@pytest.mark.parametrize("key", ["../x", "a/b", f"{DOC}_5.2;rm -rf x", f"{DOC}_5.2 x", "../../etc/passwd", ""])
def test_show_key_with_path_characters(cli: Callable[..., Any], cli_store: SimpleNamespace, key: str) -> None:
    result = cli("show", key, "--store", cli_store.dir, "--json")
    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = messages(result.stderr)
    assert line.startswith("error:") and "not a valid key" in line
    assert key.rstrip("'") in line


def test_show_key_that_is_not_a_store_key(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    result = cli("show", "NOPE", "--store", cli_store.dir, "--json")
    assert result.exit_code == 1
    [line] = messages(result.stderr)
    assert line.startswith("error:") and "NOPE" in line


def test_show_invalid_key_message_quotes_the_key_intact(cli: Callable[..., Any], cli_store: SimpleNamespace) -> None:
    result = cli("show", "../x", "--store", cli_store.dir)
    [line] = messages(result.stderr)
    assert line.endswith("'../x'")


def test_the_printed_summary_says_which_references_lead_to_documents_not_ingested(
    cli: Callable[..., Any], sample_pdf: Path, tmp_path: Path
) -> None:
    """The sample cites EN 1990 and ISO 4355: those references stay unresolved until they are ingested,
    and the summary says so rather than counting them as failures."""
    result = cli("ingest", sample_pdf, "--store", tmp_path / "store", width=80)  # one line per document
    assert result.exit_code == 0, result.output
    assert re.search(
        r"refs resolved/unresolved \d+/\d+ \(\d+ into documents not ingested\)", " ".join(result.stdout.split())
    )
