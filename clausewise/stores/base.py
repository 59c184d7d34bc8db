"""Store interfaces and the document-level stores built on them ("a bunch of dictionaries").

Every backend implements :class:`Blobs` (paths -> bytes with ETag-style compare-and-swap); the
logical stores of DESIGN.md (sections, references, precedence, formulae, objects, master list, kv)
are laid out on top of it by :class:`Stores`, identically for every backend:

    documents.json                     master list (shared, compare-and-swap)
    kv.json                            term -> equivalents / values (shared, compare-and-swap)
    docs/<DOCKEY>/manifest.json        written last: the document is visible only once it exists
    docs/<DOCKEY>/<generation>/*.json  sections, references, precedence, formulae, objects, chunks
    docs/<DOCKEY>/<generation>/vectors.npy, objects/<KEY>.png, tokens.npy (the soft match's token vectors)

A re-ingest writes a new generation and then swaps the manifest, so readers never see half a document.
Writing a generation, publishing it and removing other generations happen under the document's guard
(:meth:`Stores.document_lock`: a lock file on a local store, a lease object ``docs/<DOC>/lock.json`` in
a bucket), so two ingests of one document cannot remove each other's generation half-way.
"""

from __future__ import annotations

import builtins
import io
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from clausewise.keys import document_of, is_safe_key
from clausewise.kv import remove_kv_sources

_PINNED: ContextVar[dict[tuple[int, str], Any] | None] = ContextVar("clausewise_pinned_reads", default=None)


@contextmanager
def pinned_reads() -> Iterator[None]:
    """Within the block (and the threads it starts with its context), each document's manifest and
    the kv table are read from the store once and then remembered: the block reads one state of the
    store, not one per lookup (a query node looks up sections a thousand times; on a bucket each
    lookup was a request). A reader that finds the generation it resolved gone reads the manifest
    again (``fresh``). Inside a block already pinned, the outer pin holds."""
    if _PINNED.get() is not None:
        yield
        return
    token = _PINNED.set({})
    try:
        yield
    finally:
        _PINNED.reset(token)


DOC_TABLES = ("sections", "references", "precedence", "formulae", "objects", "chunks")  # one JSON file each


class StoreError(RuntimeError):
    """A store cannot be read or written (down, missing, bad credentials, corrupt entry)."""


class Blobs(Protocol):
    """Path -> bytes with conditional writes; paths use '/' and are relative to the store root."""

    def read(self, path: str) -> tuple[bytes, str] | None:
        """Content and ETag, or None when absent."""

    def write(self, path: str, data: bytes) -> None:
        """Unconditional, atomic write (a reader sees the old or the new content)."""

    def write_if(self, path: str, data: bytes, etag: str | None) -> bool:
        """Write only if the current ETag is ``etag`` (None: only if absent); False on a lost race."""

    def delete(self, path: str) -> None: ...

    def list(self, prefix: str) -> list[str]:
        """Every path under ``prefix`` (recursive), sorted."""

    def delete_prefix(self, prefix: str) -> None:
        """Remove everything under ``prefix``, leftovers of interrupted writes included."""

    def list_dirs(self, prefix: str) -> builtins.list[str]:  # "list" here is the method above
        """Names of the folders directly under ``prefix``."""

    def describe(self) -> str: ...

    def lock(self, path: str, timeout_s: float = ...) -> AbstractContextManager[None]:
        """Hold the lock named ``path`` (waiting up to ``timeout_s``, then :class:`StoreError`); a holder
        that dies releases it (at once for a lock file, when its lease expires for a bucket)."""

    @property
    def local_root(self) -> Path | None:
        """The directory the store lives in, when it is local (None for a bucket)."""


SHARED_RETRIES = 50
LOCK_TIMEOUT_S = 600.0  # longest wait for a document's guard (another ingest's commit, a delete)
LEASE_TTL_S = 120.0  # a lease not renewed for this long is taken over (its holder died)

log = logging.getLogger(__name__)


# numpy reads a .npy header with ast.literal_eval, and CPython 3.11.7's AST constructor is not safe
# across threads: two queries of the HTTP API loading a document's vectors at once raised "SystemError:
# AST constructor recursion depth mismatch" (a 500). One load at a time; the arrays are then cached.
_NPY_LOCK = threading.Lock()


def load_npy(source: Any, mmap_mode: Any = None) -> np.ndarray:
    """``np.load`` of one array (no pickles), one thread at a time."""
    with _NPY_LOCK:
        return np.load(source, mmap_mode=mmap_mode, allow_pickle=False)  # type: ignore[no-any-return]


def _lease_owner(data: bytes) -> str | None:
    try:
        owner = json.loads(data).get("owner")
    except (ValueError, AttributeError):
        return None
    return owner if isinstance(owner, str) else None


class Lease:
    """A lock over any :class:`Blobs` built from conditional writes: the holder creates ``path`` with
    If-None-Match (or replaces an expired lease with If-Match on its ETag), renews it
    every ``ttl_s / 3`` from a background thread, and releases it by renewing it once more on the ETag
    it reads (which fails if another writer took it over after ``ttl_s`` without renewal) and then
    deleting it. Expiry uses the
    clocks of the machines involved: keep ``ttl_s`` well above their skew."""

    def __init__(self, blobs: Blobs, path: str, ttl_s: float = LEASE_TTL_S, poll_s: float = 0.2):
        self.blobs, self.path, self.ttl_s, self.poll_s = blobs, path, ttl_s, poll_s
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._etag: str | None = None
        self._guard = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = False

    def _body(self) -> bytes:
        return _dumps({"owner": self.owner, "expires_at": time.time() + self.ttl_s})

    def try_acquire(self) -> bool:
        got = self.blobs.read(self.path)
        if got is None:
            ok = self.blobs.write_if(self.path, self._body(), None)
        else:
            try:
                free = float(json.loads(got[0]).get("expires_at", 0)) < time.time()
            except (ValueError, TypeError, AttributeError):
                free = True  # a torn or foreign lease object: take it over
            ok = free and self.blobs.write_if(self.path, self._body(), got[1])
        if ok:
            got = self.blobs.read(self.path)
            if got is None or _lease_owner(got[0]) != self.owner:
                return False
            self._etag = got[1]
        return ok

    def acquire(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while not self.try_acquire():
            if time.monotonic() >= deadline:
                raise StoreError(f"{self.path} is held by another writer (waited {timeout_s:.0f} s); try again later")
            time.sleep(self.poll_s)
        self._stop.clear()
        self._renewer = threading.Thread(target=self._renew_loop, name=f"lease {self.path}", daemon=True)
        self._renewer.start()

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            if not self.renew():
                return

    def renew(self) -> bool:
        with self._guard:
            if self._etag is None or self.lost:
                return False
            try:
                ok = self.blobs.write_if(self.path, self._body(), self._etag)
                got = self.blobs.read(self.path) if ok else None
            except StoreError as exc:  # a blip: the lease has ttl_s to be renewed by the next try
                log.warning("cannot renew %s: %s", self.path, exc)
                return True
            if got is None or _lease_owner(got[0]) != self.owner:
                self.lost = True
                log.error("lease %s was taken over by another writer", self.path)
                return False
            self._etag = got[1]
            return True

    def release(self) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=30)
        with self._guard:
            if self._etag is not None and not self.lost:
                try:
                    got = self.blobs.read(self.path)
                    # renewed first, on the ETag just read: if another writer took it over since the
                    # read, the write fails and its lease stays; if it succeeds, nobody can take it over
                    # for ttl_s, so the delete removes this holder's own lease
                    if (
                        got is not None
                        and _lease_owner(got[0]) == self.owner
                        and self.blobs.write_if(self.path, self._body(), got[1])
                    ):
                        self.blobs.delete(self.path)
                except StoreError as exc:  # it expires by itself
                    log.warning("cannot release %s: %s", self.path, exc)
            self._etag = None

    @contextmanager
    def held(self, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        self.acquire(timeout_s)
        try:
            yield
        finally:
            self.release()


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, indent=1).encode()


def _loads(data: bytes, path: str) -> Any:
    try:
        return json.loads(data)
    except json.JSONDecodeError as exc:
        raise StoreError(f"store entry {path} is corrupt: {exc}") from exc


class Stores:
    """The logical stores of DESIGN.md over one :class:`Blobs` backend."""

    def __init__(self, blobs: Blobs):
        self.blobs = blobs
        self._doc_cache: dict[tuple[str, str, str], Any] = {}
        self._shared_cache: dict[Any, tuple[str | None, Any]] = {}  # path or ("kv", hidden) -> (ETag read, value)

    # ---- shared stores (compare-and-swap) ----
    def read_json(self, path: str, default: Any) -> Any:
        got = self.blobs.read(path)
        return default if got is None else _loads(got[0], path)

    def _read_shared(self, path: str, default: Any) -> tuple[str | None, Any]:
        """A shared JSON file and its ETag, parsed again only when the ETag changes (for readers that
        do not change it: the master list and the kv table are read at every lookup of terms)."""
        got = self.blobs.read(path)
        if got is None:
            return None, default
        cached = self._shared_cache.get(path)
        if cached is None or cached[0] != got[1]:
            cached = (got[1], _loads(got[0], path))
            self._shared_cache[path] = cached
        return cached

    def update_json(self, path: str, default: Any, change: Callable[[Any], Any]) -> Any:
        """Read-modify-write with compare-and-swap; retried on a lost race, so nothing is lost."""
        for attempt in range(SHARED_RETRIES):
            got = self.blobs.read(path)
            current = default if got is None else _loads(got[0], path)
            updated = change(current)
            if self.blobs.write_if(path, _dumps(updated), None if got is None else got[1]):
                return updated
            time.sleep(min(0.01 * (attempt + 1), 0.2))
        raise StoreError(f"could not update {path}: too many concurrent writers")

    def documents(self) -> dict[str, dict[str, Any]]:
        """The master list as readers must see it: an entry is "ingested" only while its manifest
        exists, and then describes the generation that manifest serves (a crash between the shared
        writes and the manifest cannot make it describe a file that is not visible)."""
        docs: dict[str, dict[str, Any]] = self.read_json("documents.json", {})
        for key, entry in docs.items():
            if entry.get("status") != "ingested":
                continue
            manifest = self.manifest(key)
            if manifest is None:
                entry["status"] = "incomplete"
            else:
                entry.update(manifest.get("entry") or {}, sha256=manifest.get("sha256"))
        return docs

    def update_documents(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        return self.update_json("documents.json", {}, change)

    def list_as_ingested(self, doc_key: str) -> None:
        """Make sure the master list has ``doc_key`` as ingested (a commit wrote its full entry already;
        this only writes for a generation published on its own)."""
        if self.read_json("documents.json", {}).get(doc_key, {}).get("status") == "ingested":
            return

        def mark(docs: dict[str, Any]) -> dict[str, Any]:
            entry = docs.setdefault(doc_key, {"key": doc_key, "referenced_by": []})
            entry["status"] = "ingested"
            return docs

        self.update_documents(mark)

    def kv(self) -> dict[str, Any]:
        """Terms, less those of a document whose ingest did not reach its manifest (read once within
        :func:`pinned_reads`; not to be changed by the caller)."""
        pins = _PINNED.get()
        if pins is not None and (id(self), "kv.json") in pins:
            return pins[(id(self), "kv.json")]  # type: ignore[no-any-return]
        hidden = tuple(k for k, e in self.documents().items() if e.get("status") == "incomplete")
        etag, kv = self._read_shared("kv.json", {})
        cached = self._shared_cache.get(("kv", hidden))
        if cached is not None and cached[0] == etag:
            kv = cached[1]
        else:
            for doc_key in hidden:
                kv = remove_kv_sources(kv, doc_key)
            self._shared_cache[("kv", hidden)] = (etag, kv)
        if pins is not None:
            pins[(id(self), "kv.json")] = kv
        return kv

    def update_kv(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        return self.update_json("kv.json", {}, change)

    # ---- per-document stores ----
    def manifest(self, doc_key: str, fresh: bool = False) -> dict[str, Any] | None:
        """The document's manifest (None: not visible); within :func:`pinned_reads` read once, unless
        ``fresh`` (which reads it again and remembers that); not to be changed by the caller."""
        path = f"docs/{doc_key}/manifest.json"
        pins = _PINNED.get()
        if pins is not None and not fresh and (id(self), path) in pins:
            return pins[(id(self), path)]  # type: ignore[no-any-return]
        got = self.blobs.read(path)
        manifest = None if got is None else _loads(got[0], path)
        if pins is not None:
            pins[(id(self), path)] = manifest
        return manifest

    def visible_documents(self) -> dict[str, dict[str, Any]]:
        """doc key -> manifest, for every document whose manifest is written.

        Read from the master list and the manifests it names (no listing of the store): a commit writes
        the master list's entry before the manifest, a delete removes the manifest first, so every
        manifest has its entry; a document deleted or overwritten meanwhile is seen in its old or its
        new state."""
        out = {}
        for doc_key, entry in self._read_shared("documents.json", {})[1].items():
            if entry.get("status") != "ingested" or not is_safe_key(doc_key):
                continue
            manifest = self.manifest(doc_key)
            if manifest is not None:
                out[doc_key] = manifest
        return out

    def missing_files(self, doc_key: str, manifest: dict[str, Any] | None = None) -> list[str]:
        """The files of the visible generation (as the manifest names them, relative to the generation)
        that are not in the store; [] for a complete document (or none). A manifest written before
        manifests listed their files names the tables, the vectors and the objects' images."""
        manifest = manifest if manifest is not None else self.manifest(doc_key)
        if manifest is None:
            return []
        prefix = f"docs/{doc_key}/{manifest['generation']}/"
        names = manifest.get("files")
        if names is None:
            names = [f"{t}.json" for t in DOC_TABLES] + ["vectors.npy"]
            got = self.blobs.read(prefix + "objects.json")
            objects = _loads(got[0], prefix + "objects.json") if got else {}
            names += [o["image"][len(prefix) :] for o in objects.values() if (o.get("image") or "").startswith(prefix)]
        present = {p[len(prefix) :] for p in self.blobs.list(prefix)}
        return [name for name in names if name not in present]

    def document_lock(self, doc_key: str, timeout_s: float = LOCK_TIMEOUT_S) -> AbstractContextManager[None]:
        """The document's guard: held while a generation is written and published, while generations
        are cleaned up and while the document is deleted."""
        return self.blobs.lock(f"docs/{doc_key}/lock.json", timeout_s)

    def new_generation(self, doc_key: str) -> GenerationWriter:
        return GenerationWriter(self, doc_key, time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8])

    def doc_table(self, doc_key: str, table: str) -> dict[str, Any]:
        """One table of the visible generation. A re-ingest may publish (and remove the generation a
        reader just resolved) between the reader's two reads: the reader then resolves again."""
        for attempt in range(5):
            manifest = self.manifest(doc_key, fresh=attempt > 0)
            if manifest is None:
                return {}
            cache_key = (doc_key, manifest["generation"], table)
            if cache_key in self._doc_cache:
                return self._doc_cache[cache_key]  # type: ignore[no-any-return]
            path = f"docs/{doc_key}/{manifest['generation']}/{table}.json"
            got = self.blobs.read(path)
            if got is None and self.manifest(doc_key, fresh=True) != manifest:
                continue  # overtaken by a newer generation: read that one
            for stale in [k for k in self._doc_cache if k[0] == doc_key and k[1] != manifest["generation"]]:
                self._doc_cache.pop(stale, None)  # a replaced generation is never read again
            self._doc_cache[cache_key] = {} if got is None else _loads(got[0], path)
            return self._doc_cache[cache_key]  # type: ignore[no-any-return]
        raise StoreError(f"{doc_key} keeps changing under this reader; try again")

    def doc_vectors(self, doc_key: str, generation: str | None = None) -> np.ndarray | None:
        """The vectors of the visible generation (or of ``generation``); None when absent."""
        if generation is not None:
            got = self.blobs.read(f"docs/{doc_key}/{generation}/vectors.npy")
            return None if got is None else load_npy(io.BytesIO(got[0]))
        for fresh in (False, True):  # a remembered generation may have been replaced meanwhile
            manifest = self.manifest(doc_key, fresh=fresh)
            if manifest is None:
                return None
            got = self.blobs.read(f"docs/{doc_key}/{manifest['generation']}/vectors.npy")
            if got is not None:
                return load_npy(io.BytesIO(got[0]))
        return None

    def token_vectors(self, keys: list[str]) -> dict[str, np.ndarray]:
        """The soft match's token vectors that ingest kept for these sections, by digest (see
        ``Embedder.token_vectors``); a section without them (an older store, an embedder without token
        vectors) is left out, and the soft match runs the model on it. A local store's file is mapped,
        not read whole."""
        by_doc: dict[str, list[str]] = {}
        for key in keys:
            by_doc.setdefault(document_of(key), []).append(key)
        out = {}
        for doc_key, doc_keys in by_doc.items():
            index = self.doc_table(doc_key, "tokens")
            array = self._token_array(doc_key) if index else None
            if array is None:
                continue
            for key in doc_keys:
                match index.get(key):
                    case [int(start), int(end), str(digest)] if 0 <= start <= end <= len(array):
                        out[digest] = array[start:end]
                    case _:  # absent, or a damaged entry: the model reads that text
                        continue
        return out

    def _token_array(self, doc_key: str) -> np.ndarray | None:
        manifest = self.manifest(doc_key)
        if manifest is None or "tokens.npy" not in manifest.get("files", []):
            return None
        cache_key = (doc_key, manifest["generation"], "tokens.npy")
        if cache_key not in self._doc_cache:
            path = f"docs/{doc_key}/{manifest['generation']}/tokens.npy"
            root = self.blobs.local_root
            try:
                if root is not None:
                    self._doc_cache[cache_key] = load_npy(root / path, mmap_mode="r")
                else:
                    got = self.blobs.read(path)
                    if got is None:
                        return None
                    self._doc_cache[cache_key] = load_npy(io.BytesIO(got[0]))
            except (OSError, ValueError):  # replaced meanwhile, or unreadable: the model reads the texts
                return None
        return self._doc_cache[cache_key]  # type: ignore[no-any-return]

    def generation_json(self, doc_key: str, generation: str, table: str) -> Any:
        """One table of one generation, uncached; None when absent (e.g. the generation was replaced)."""
        path = f"docs/{doc_key}/{generation}/{table}.json"
        got = self.blobs.read(path)
        return None if got is None else _loads(got[0], path)

    def object_image(self, key: str) -> bytes | None:
        entry = self.lookup("objects", key)
        if not entry or not entry.get("image"):
            return None
        got = self.blobs.read(entry["image"])
        return None if got is None else got[0]

    def lookup(self, table: str, key: str) -> Any:
        """One entry of a per-document table by its full key (``CEN_EN1991-1-3_5.3.2``): a dict
        (sections, objects, formulae), a list (references, precedence), None when absent."""
        return self.doc_table(document_of(key), table).get(key)

    def iter_sections(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for doc_key in sorted(self.visible_documents()):
            yield from self.doc_table(doc_key, "sections").items()

    def delete_document(self, doc_key: str) -> bool:
        """Hide the document (manifest first), then remove its generations, entry and kv values; under
        the document's guard, so an ingest of it commits wholly before or after."""
        with self.document_lock(doc_key):
            return self._delete_document(doc_key)

    def _delete_document(self, doc_key: str) -> bool:
        existed = self.manifest(doc_key, fresh=True) is not None
        self.blobs.delete(f"docs/{doc_key}/manifest.json")
        for generation in self._generations(doc_key):
            self.blobs.delete_prefix(f"docs/{doc_key}/{generation}/")
        for path in self.blobs.list(f"docs/{doc_key}/"):  # anything else, but not the guard being held
            if path != f"docs/{doc_key}/lock.json":
                self.blobs.delete(path)

        def drop(docs: dict[str, Any]) -> dict[str, Any]:
            for other in docs.values():  # its sections no longer refer to anything
                other["referenced_by"] = [r for r in other.get("referenced_by", []) if not r.startswith(doc_key + "_")]
            entry = docs.get(doc_key)
            if entry is not None:
                entry.update(status="referenced-only", pages=None, sha256=None)
            return {k: v for k, v in docs.items() if v.get("status") == "ingested" or v.get("referenced_by")}

        self.update_documents(drop)
        self.update_kv(lambda kv: remove_kv_sources(kv, doc_key))
        return existed

    def _generations(self, doc_key: str) -> set[str]:
        generations = {p.split("/")[2] for p in self.blobs.list(f"docs/{doc_key}/") if p.count("/") > 2}
        return generations | set(self.blobs.list_dirs(f"docs/{doc_key}/"))

    def garbage_collect(self, doc_key: str) -> None:
        """Remove generations that no manifest points to (left by a killed ingest). Call it holding
        :meth:`document_lock`: unguarded, it would remove a generation another ingest is writing."""
        manifest = self.manifest(doc_key, fresh=True)  # writers never act on a remembered manifest
        keep = manifest["generation"] if manifest else None
        for generation in self._generations(doc_key) - {keep}:
            self.blobs.delete_prefix(f"docs/{doc_key}/{generation}/")


class GenerationWriter:
    """Writes one generation of a document; :meth:`publish` writes the manifest last, naming every
    file written (``files``, relative to the generation), so a reader can tell a complete document.
    Write and publish holding the document's guard (:meth:`Stores.document_lock`)."""

    def __init__(self, stores: Stores, doc_key: str, generation: str):
        self.stores, self.doc_key, self.generation = stores, doc_key, generation
        self.prefix = f"docs/{doc_key}/{generation}"
        self.files: list[str] = []

    def _put(self, name: str, data: bytes) -> str:
        path = f"{self.prefix}/{name}"
        self.stores.blobs.write(path, data)
        if name not in self.files:
            self.files.append(name)
        return path

    def put_json(self, table: str, value: Any) -> None:
        self._put(f"{table}.json", _dumps(value))

    def put_vectors(self, vectors: np.ndarray) -> None:
        buf = io.BytesIO()
        np.save(buf, vectors.astype(np.float32), allow_pickle=False)
        self._put("vectors.npy", buf.getvalue())

    def put_token_vectors(self, vectors: dict[str, tuple[str, np.ndarray]]) -> None:
        """Each section's token vectors for the soft match (key -> digest, float16 vectors): one array
        of them all, ``tokens.npy``, and where each section's rows lie, ``tokens.json``."""
        index, parts, at = {}, [], 0
        for key, (digest, rows) in vectors.items():
            index[key] = [at, at + len(rows), digest]
            parts.append(rows.astype(np.float16))
            at += len(rows)
        if not parts:
            return
        buf = io.BytesIO()
        np.save(buf, np.concatenate(parts), allow_pickle=False)
        self._put("tokens.npy", buf.getvalue())
        self.put_json("tokens", index)

    def put_image(self, key: str, png: bytes) -> str:
        return self._put(f"objects/{key}.png", png)

    def publish(self, manifest: dict[str, Any]) -> None:
        old = self.stores.manifest(self.doc_key, fresh=True)
        self.stores.list_as_ingested(self.doc_key)  # readers find manifests through the master list
        self.stores.blobs.write(
            f"docs/{self.doc_key}/manifest.json",
            _dumps({**manifest, "generation": self.generation, "files": sorted(self.files)}),
        )
        if old is not None and old.get("generation") != self.generation:
            self.stores.blobs.delete_prefix(f"docs/{self.doc_key}/{old['generation']}/")
