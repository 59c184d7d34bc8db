"""Two ingests of the same document at once never publish a partial document.

Each race runs two real `clausewise ingest X.pdf --store S` processes side by side. Their generation
writes are slowed (a short sleep per file, injected in the subprocess) so that one process is still
writing its generation while the other publishes and cleans up: without a per-document guard the
finisher deleted the other's half-written generation, which then published a manifest naming files
that no longer existed, and every later ingest said "skipped (same file)".
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clausewise.stores.base import Stores
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"
TABLES = ("sections", "references", "precedence", "formulae", "objects", "chunks")
RACES = int(os.environ.get("CLAUSEWISE_TEST_RACES", "5"))  # the measurement: CLAUSEWISE_TEST_RACES=20

SLOW_WRITES = """
import os, time
from clausewise.stores import local
delay = float(os.environ["CLAUSEWISE_TEST_SLOW_WRITE_S"])
real_write = local.LocalBlobs.write
def write(self, path, data):
    if path.startswith("docs/") and path.count("/") >= 3:  # a generation's file
        time.sleep(delay)
    return real_write(self, path, data)
local.LocalBlobs.write = write
from clausewise.cli import app
app()
"""


def missing_files(store: Path, doc_key: str = DOC) -> list[str]:
    """Every file the visible manifest's generation must hold that is not there (tables, vectors, PNGs),
    relative to the generation; read without the code under test."""
    stores = Stores(LocalBlobs(store))
    manifest = stores.manifest(doc_key)
    assert manifest is not None, "no manifest"
    prefix = f"docs/{doc_key}/{manifest['generation']}"
    missing = [f"{t}.json" for t in TABLES if stores.blobs.read(f"{prefix}/{t}.json") is None]
    if stores.blobs.read(f"{prefix}/vectors.npy") is None:
        missing.append("vectors.npy")
    got = stores.blobs.read(f"{prefix}/objects.json")
    objects = json.loads(got[0]) if got else {}
    images = [o["image"].removeprefix(prefix + "/") for o in objects.values() if o.get("image")]
    for name in images + (manifest.get("files") or []):
        if stores.blobs.read(f"{prefix}/{name}") is None and name not in missing:
            missing.append(name)
    return missing


def _ingest(python: str, pdf: Path, store: Path, env: dict[str, str], workdir: Path) -> subprocess.Popen[bytes]:
    workdir.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [python, "-c", SLOW_WRITES, "ingest", str(pdf), "--store", str(store), "--json"],
        env=env,
        cwd=workdir,
        stdout=open(workdir / "stdout.txt", "wb"),  # noqa: SIM115 - the child owns it
        stderr=open(workdir / "stderr.txt", "wb"),  # noqa: SIM115
    )


def test_same_document_ingest_races_leave_every_manifest_complete(
    tmp_path: Path, sample_pdf: Path, python_exe: str, subprocess_env: dict[str, str], cli: Callable[..., Any]
) -> None:
    env = {**subprocess_env, "CLAUSEWISE_TEST_SLOW_WRITE_S": "0.2"}
    broken: list[tuple[int, list[str]]] = []
    started = time.monotonic()
    for race in range(RACES):
        store = tmp_path / f"store{race}"
        procs = [_ingest(python_exe, sample_pdf, store, env, tmp_path / f"race{race}-{i}") for i in range(2)]
        try:
            codes = [p.wait(timeout=300) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        for i, code in enumerate(codes):
            assert code == 0, (tmp_path / f"race{race}-{i}" / "stderr.txt").read_text()[-3000:]
        missing = missing_files(store)
        if missing:
            broken.append((race, missing))
        if race == 0:  # and a third ingest of the same file finds it complete
            result = cli("ingest", sample_pdf, "--store", store, "--json")
            assert result.exit_code == 0, result.output
            assert json.loads(result.stdout)[0]["status"] == "skipped"
        stores = Stores(LocalBlobs(store))
        assert stores.documents()[DOC]["status"] == "ingested"
        generations = {p.split("/")[2] for p in stores.blobs.list(f"docs/{DOC}/") if p.count("/") > 2}
        assert generations == {stores.manifest(DOC)["generation"]}  # type: ignore[index]  # no orphan left
    print(f"{RACES} races in {time.monotonic() - started:.0f} s; incomplete manifests: {broken}")
    assert broken == []


def test_an_incomplete_document_is_ingested_again_not_skipped(
    ingest_pdf: Callable[..., Any], sample_pdf: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    stores, output = ingest_pdf(store, sample_pdf)
    assert output["status"] == "ingested" and missing_files(store) == []
    image = next(o["image"] for o in stores.doc_table(DOC, "objects").values() if o.get("image"))
    (store / image).unlink()  # what the race used to leave: a manifest naming a file that is gone
    assert missing_files(store) == [image.split("/", 3)[3]]
    assert stores.missing_files(DOC) == [image.split("/", 3)[3]]

    stores, output = ingest_pdf(store, sample_pdf)  # same file, no --overwrite
    assert output["status"] == "ingested", output.get("summary")
    assert missing_files(store) == []
    assert stores.missing_files(DOC) == []

    stores, output = ingest_pdf(store, sample_pdf)
    assert output["status"] == "skipped"  # complete now: the same file is skipped again


def test_every_file_the_manifest_names_is_listed_in_it(
    ingest_pdf: Callable[..., Any], sample_pdf: Path, tmp_path: Path
) -> None:
    stores, _ = ingest_pdf(tmp_path / "store", sample_pdf)
    manifest = stores.manifest(DOC)
    generation = manifest["generation"]  # type: ignore[index]
    on_disk = {p.split("/", 3)[3] for p in stores.blobs.list(f"docs/{DOC}/{generation}/")}
    assert sorted(manifest["files"]) == sorted(on_disk)  # type: ignore[index]
    assert {f"{t}.json" for t in TABLES} | {"vectors.npy"} <= on_disk
    assert any(name.startswith("objects/") and name.endswith(".png") for name in on_disk)


@pytest.fixture(autouse=True)
def _no_store_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("R2_BUCKET", "STORE_DIR"):
        monkeypatch.delenv(name, raising=False)
