"""Crash safety of ingestion: a document is fully visible or not visible at all, whatever point the
ingest dies at (an exception in publish, SIGKILL of a real `clausewise ingest` process), a re-run
finishes it, and parallel ingests of different documents into one store lose nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from helpers import DOC_TABLES

from clausewise.stores import KeywordIndex, LocalVectorIndex, Stores
from clausewise.stores.base import GenerationWriter
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"


class PublishCrash(RuntimeError):
    pass


def assert_all_or_nothing(store: Path, doc_key: str, tmp: Path) -> str:
    """The invariant: the document is complete and readable, or absent from every reader's view.

    Returns "visible" or "invisible".
    """
    stores = Stores(LocalBlobs(store))
    manifest = stores.manifest(doc_key)
    docs = stores.documents()
    keyword = KeywordIndex(stores, tmp / f"kw-{time.monotonic_ns()}.sqlite")
    if manifest is None:
        assert doc_key not in stores.visible_documents()
        assert docs.get(doc_key, {}).get("status") != "ingested"
        assert stores.lookup("sections", f"{doc_key}_5.3.2") is None
        assert stores.doc_vectors(doc_key) is None
        assert not any(k.startswith(doc_key + "_") for k, _ in keyword.search(["leaf load"]))
        assert all(h.key.split("_")[:2] != doc_key.split("_") for h in _all_hits(stores))
        return "invisible"
    generation = manifest["generation"]
    for table in DOC_TABLES:
        got = stores.blobs.read(f"docs/{doc_key}/{generation}/{table}.json")
        assert got is not None, f"visible document lacks its {table} table"
        json.loads(got[0])
    sections = stores.doc_table(doc_key, "sections")
    chunks = stores.doc_table(doc_key, "chunks")["chunks"]
    vectors = stores.doc_vectors(doc_key)
    assert vectors is not None and vectors.shape[0] == len(chunks) > 0
    assert np.isfinite(vectors).all()
    assert f"{doc_key}_5.3.2" in sections and f"{doc_key}_annex_A" in sections
    for key, obj in stores.doc_table(doc_key, "objects").items():
        assert obj["image"] and stores.object_image(key), f"image of {key} missing"
    assert docs[doc_key]["status"] == "ingested"
    assert docs[doc_key]["sha256"] == manifest["sha256"]
    assert any(k.startswith(doc_key + "_") for k, _ in keyword.search(["leaf load"]))
    assert len(LocalVectorIndex(stores)) >= len(chunks)
    return "visible"


def _all_hits(stores: Stores) -> list[Any]:
    index = LocalVectorIndex(stores)
    n = len(index)
    return index.search(np.ones(384, dtype=np.float32) / np.sqrt(384), k=n) if n else []


def generations_with_files(store: Path, doc_key: str) -> set[str]:
    return {p.split("/")[2] for p in LocalBlobs(store).list(f"docs/{doc_key}/") if p.count("/") > 2}


# ---------------------------------------------------------------- (a) publish raises, in-process
@pytest.fixture
def crash_publish(monkeypatch: pytest.MonkeyPatch) -> None:
    def publish(self: GenerationWriter, manifest: dict[str, Any]) -> None:
        raise PublishCrash("disk gone at the last moment")

    monkeypatch.setattr(GenerationWriter, "publish", publish)


def test_crash_before_the_manifest_leaves_nothing_visible_and_a_rerun_completes_it(
    ingest_pdf: Callable[..., Any],
    sample_pdf: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = tmp_path / "store"
    with monkeypatch.context() as m:
        m.setattr(GenerationWriter, "publish", lambda self, manifest: (_ for _ in ()).throw(PublishCrash("boom")))
        with pytest.raises(PublishCrash):
            ingest_pdf(store, sample_pdf)
    stores = Stores(LocalBlobs(store))
    assert stores.blobs.read(f"docs/{DOC}/manifest.json") is None
    assert stores.documents()[DOC]["status"] == "incomplete"  # not "ingested"
    assert generations_with_files(store, DOC)  # the data was written, just not published
    assert assert_all_or_nothing(store, DOC, tmp_path) == "invisible"

    stores, output = ingest_pdf(store, sample_pdf)  # the same command again
    assert output["status"] == "ingested"
    assert assert_all_or_nothing(store, DOC, tmp_path) == "visible"
    assert generations_with_files(store, DOC) == {stores.manifest(DOC)["generation"]}  # orphan collected


def test_crash_before_the_manifest_leaves_no_kv_terms_of_the_invisible_document(
    ingest_pdf: Callable[..., Any],
    sample_pdf: Path,
    tmp_path: Path,
    crash_publish: None,
) -> None:
    store = tmp_path / "store"
    with pytest.raises(PublishCrash):
        ingest_pdf(store, sample_pdf)
    kv = Stores(LocalBlobs(store)).kv()
    leaked = [t for t, e in kv.items() for x in e["equivalents"] + e["values"] if x["source"].startswith(DOC + "_")]
    assert leaked == []


@pytest.fixture
def store_with_sample(sample_store: SimpleNamespace, copy_store: Callable[[Path], Path]) -> Path:
    return copy_store(sample_store.dir)


def test_crash_during_overwrite_keeps_the_old_version_complete(
    ingest_pdf: Callable[..., Any],
    sample_2024_pdf: Path,
    store_with_sample: Path,
    tmp_path: Path,
    crash_publish: None,
) -> None:
    old = Stores(LocalBlobs(store_with_sample)).manifest(DOC)
    with pytest.raises(PublishCrash):
        ingest_pdf(store_with_sample, sample_2024_pdf, overwrite=True)
    stores = Stores(LocalBlobs(store_with_sample))
    assert stores.manifest(DOC) == old
    foreword = stores.lookup("sections", f"{DOC}_foreword")
    assert foreword is not None and "EN 1991-9-9:2025" in foreword["text"]  # still the old edition
    assert len(LocalVectorIndex(stores)) == len(stores.doc_table(DOC, "chunks")["chunks"])


def test_crash_during_overwrite_master_list_agrees_with_what_is_visible(
    ingest_pdf: Callable[..., Any],
    sample_2024_pdf: Path,
    store_with_sample: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as m:
        m.setattr(GenerationWriter, "publish", lambda self, manifest: (_ for _ in ()).throw(PublishCrash("boom")))
        with pytest.raises(PublishCrash):
            ingest_pdf(store_with_sample, sample_2024_pdf, overwrite=True)
    stores, output = ingest_pdf(store_with_sample, sample_2024_pdf)  # re-run the file that did not make it
    assert output["status"] == "ingested"
    assert stores.documents()[DOC]["sha256"] == stores.manifest(DOC)["sha256"]


# ---------------------------------------------------------------- (b) SIGKILL of a real process
KILL_AT = """
import os, signal, sys
from clausewise.stores import base
point = os.environ["CLAUSEWISE_TEST_KILL_AT"]
def die(self, *args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
setattr(base.GenerationWriter, point, die)
from clausewise.cli import app
app()
"""


def _command(python: str, pdf: Path, store: Path, kill_at: str | None) -> list[str]:
    head = [python, "-c", KILL_AT] if kill_at else [python, "-m", "clausewise.cli"]
    return [*head, "ingest", str(pdf), "--store", str(store), "--json"]


def _children(pid: int) -> set[int]:
    """Direct children of ``pid`` (the page workers and resource tracker an ingest spawns)."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _kill_leftovers(pids: set[int]) -> None:
    """End what a killed ingest left running (only processes this test started, checked by command line)."""
    for pid in pids:
        try:
            cmdline = (Path("/proc") / str(pid) / "cmdline").read_bytes()
        except OSError:
            continue
        if b"multiprocessing" in cmdline and _alive(pid):
            os.kill(pid, signal.SIGKILL)


class Run(SimpleNamespace):
    """One `clausewise ingest` subprocess; output goes to files (a killed process's orphaned workers
    would otherwise hold a pipe open and block the reader)."""

    @classmethod
    def start(cls, cmd: list[str], env: dict[str, str], workdir: Path, store: Path) -> Run:
        out, err = workdir / "stdout.txt", workdir / "stderr.txt"
        with open(out, "wb") as o, open(err, "wb") as e:
            proc = subprocess.Popen(cmd, env=env, cwd=workdir, stdout=o, stderr=e)
        return cls(
            proc=proc,
            store=store,
            out=out,
            err=err,
            started=time.monotonic(),
            children=set(),
            orphans=set(),
            returncode=None,
        )

    def poll(self) -> int | None:
        if self.proc.poll() is None:
            self.children |= _children(self.proc.pid)
        return self.proc.poll()

    def kill(self) -> None:
        self.children |= _children(self.proc.pid)
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    @property
    def stderr(self) -> str:
        return self.err.read_text(errors="replace")[-3000:]

    @property
    def stdout(self) -> str:
        return self.out.read_text(errors="replace")


def _has_generation_file(store: Path) -> bool:
    docs = store / "docs" / DOC
    return docs.is_dir() and any(p.is_file() and not p.name.startswith(".") for p in docs.glob("*/*"))


# name -> (kill point injected in the process, or None; when the test kills it: seconds, or a store event)
KILLS: dict[str, tuple[str | None, float | Callable[[Path], bool] | None]] = {
    "after 0.5 s (imports)": (None, 0.5),
    "after 1.5 s": (None, 1.5),
    "after 3 s (model load)": (None, 3.0),
    "on the first generation file": (None, _has_generation_file),
    "inside put_vectors (tables written, vectors not)": ("put_vectors", None),
    "inside publish (master list and kv written, manifest not)": ("publish", None),
}
ORPHAN_GRACE_S = 3.0


@pytest.fixture(scope="module")
def killed(
    tmp_path_factory: pytest.TempPathFactory,
    sample_pdf: Path,
    python_exe: str,
    subprocess_env: dict[str, str],
) -> Iterator[dict[str, Run]]:
    """Every kill scenario run at once, each in its own store (they are independent; this keeps the
    wall time near that of one), then waited for. Orphaned worker processes are recorded, then ended."""
    runs: dict[str, Run] = {}
    for name, (point, _) in KILLS.items():
        workdir = tmp_path_factory.mktemp("killed")
        env = {**subprocess_env, **({"CLAUSEWISE_TEST_KILL_AT": point} if point else {})}
        runs[name] = Run.start(
            _command(python_exe, sample_pdf, workdir / "store", point), env, workdir, workdir / "store"
        )
    try:
        pending = dict(runs)
        deadline = time.monotonic() + 300
        while pending and time.monotonic() < deadline:
            for name, run in list(pending.items()):
                when = KILLS[name][1]
                if run.poll() is not None:
                    pending.pop(name)
                elif when is not None and (
                    (isinstance(when, float) and time.monotonic() - run.started >= when)
                    or (callable(when) and when(run.store))
                ):
                    run.kill()
                    pending.pop(name)
            time.sleep(0.002)
        for run in runs.values():
            if run.proc.poll() is None:
                run.kill()
            run.returncode = run.proc.returncode
        grace = time.monotonic() + ORPHAN_GRACE_S
        while time.monotonic() < grace and any(_alive(c) for r in runs.values() for c in r.children):
            time.sleep(0.05)
        for run in runs.values():
            run.orphans = {c for c in run.children if _alive(c)}
        yield runs
    finally:
        for run in runs.values():
            if run.proc.poll() is None:
                run.proc.kill()
                run.proc.wait()
            _kill_leftovers(run.children)


@pytest.mark.parametrize("scenario", list(KILLS))
def test_sigkill_leaves_all_or_nothing_and_a_rerun_finishes(
    killed: dict[str, Run],
    scenario: str,
    cli: Callable[..., Any],
    sample_pdf: Path,
    tmp_path: Path,
) -> None:
    run = killed[scenario]
    point, when = KILLS[scenario]
    if point is not None or when == 0.5:
        # deterministic points always die, and nothing finishes within 0.5 s (imports alone take longer)
        assert run.returncode == -signal.SIGKILL, run.stderr
    else:
        # a later kill may come after a fast machine has finished: the invariant holds either way
        assert run.returncode in (-signal.SIGKILL, 0), run.stderr
    state = assert_all_or_nothing(run.store, DOC, tmp_path)
    if point is not None:
        assert state == "invisible"
        assert generations_with_files(run.store, DOC)  # something was written before the kill
    if point == "publish":
        assert Stores(LocalBlobs(run.store)).documents()[DOC]["status"] == "incomplete"

    result = cli("ingest", sample_pdf, "--store", run.store, "--json")
    assert result.exit_code == 0, result.output
    [entry] = json.loads(result.stdout)
    assert entry["status"] == ("skipped" if state == "visible" else "ingested")
    assert assert_all_or_nothing(run.store, DOC, tmp_path) == "visible"
    manifest = Stores(LocalBlobs(run.store)).manifest(DOC)
    assert generations_with_files(run.store, DOC) == {manifest["generation"]}  # type: ignore[index]


@pytest.mark.parametrize("scenario", ["inside publish (master list and kv written, manifest not)"])
def test_sigkill_leaves_no_orphan_worker_processes(killed: dict[str, Run], scenario: str) -> None:
    run = killed[scenario]
    assert run.returncode == -signal.SIGKILL
    assert run.children, "the ingest started no page workers"
    assert run.orphans == set(), f"{len(run.orphans)} processes still running {ORPHAN_GRACE_S} s after the kill"


# ---------------------------------------------------------------- (c) parallel ingests of different documents
def test_two_processes_ingest_different_documents_into_one_store(
    tmp_path: Path,
    sample_pdf: Path,
    other_code_pdf: Path,
    python_exe: str,
    subprocess_env: dict[str, str],
) -> None:
    store = tmp_path / "store"
    runs = []
    for i, pdf in enumerate((sample_pdf, other_code_pdf)):
        workdir = tmp_path / f"run{i}"
        workdir.mkdir()
        runs.append(Run.start(_command(python_exe, pdf, store, None), subprocess_env, workdir, store))
    try:
        deadline = time.monotonic() + 300
        while any(r.poll() is None for r in runs) and time.monotonic() < deadline:
            time.sleep(0.01)
        for run in runs:
            assert run.proc.poll() == 0, run.stderr
            assert json.loads(run.stdout)[0]["status"] == "ingested"
    finally:
        for run in runs:
            if run.proc.poll() is None:
                run.kill()
            _kill_leftovers(run.children)

    stores = Stores(LocalBlobs(store))
    docs = stores.documents()
    keys = ("CEN_EN1991-9-9", "CEN_EN1991-9-7")
    for key in keys:
        assert docs[key]["status"] == "ingested"
        assert assert_all_or_nothing(store, key, tmp_path) == "visible"
    # references from both documents were merged into the shared entries, none lost
    referenced_by = docs["CEN_EN1990"]["referenced_by"]
    for key in keys:
        assert f"{key}_1.2" in referenced_by and f"{key}_foreword" in referenced_by
    # kv holds both documents' terms
    kv = stores.kv()
    for term, code in (("ce", "1.3"), ("sk", "1.3"), ("garden structure", "1.4.3")):
        sources = {e["source"] for e in kv[term]["equivalents"]}
        assert {f"{k}_{code}" for k in keys} <= sources, (term, sources)
    assert any(e["source"] == "builtin_thesaurus" for e in kv["dead load"]["equivalents"])
    assert stores.read_json("index.json", None)["embedding_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    chunks = sum(len(stores.doc_table(k, "chunks")["chunks"]) for k in keys)
    assert len(LocalVectorIndex(stores)) == chunks
