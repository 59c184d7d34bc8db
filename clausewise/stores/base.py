"""Store interfaces and the document-level stores built on them ("a bunch of dictionaries").

Every backend implements :class:`Blobs` (paths -> bytes with ETag-style compare-and-swap); the
logical stores of DESIGN.md (sections, references, precedence, formulae, objects, master list, kv)
are laid out on top of it by :class:`Stores`, identically for every backend:

    documents.json                     master list (shared, compare-and-swap)
    kv.json                            term -> equivalents / values (shared, compare-and-swap)
    docs/<DOCKEY>/manifest.json        written last: the document is visible only once it exists
    docs/<DOCKEY>/<generation>/*.json  sections, references, precedence, formulae, objects, chunks
    docs/<DOCKEY>/<generation>/vectors.npy, objects/<KEY>.png

A re-ingest writes a new generation and then swaps the manifest, so readers never see half a document.
"""

from __future__ import annotations

import builtins
import io
import json
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from clausewise.keys import is_safe_key, split_key
from clausewise.kv import remove_kv_sources


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

    @property
    def local_root(self) -> Path | None:
        """The directory the store lives in, when it is local (None for a bucket)."""


SHARED_RETRIES = 50


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

    # ---- shared stores (compare-and-swap) ----
    def read_json(self, path: str, default: Any) -> Any:
        got = self.blobs.read(path)
        return default if got is None else _loads(got[0], path)

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

    def kv(self) -> dict[str, Any]:
        """Terms, less those of a document whose ingest did not reach its manifest."""
        kv: dict[str, Any] = self.read_json("kv.json", {})
        hidden = [k for k, e in self.documents().items() if e.get("status") == "incomplete"]
        for doc_key in hidden:
            kv = remove_kv_sources(kv, doc_key)
        return kv

    def update_kv(self, change: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
        return self.update_json("kv.json", {}, change)

    # ---- per-document stores ----
    def manifest(self, doc_key: str) -> dict[str, Any] | None:
        got = self.blobs.read(f"docs/{doc_key}/manifest.json")
        return None if got is None else _loads(got[0], f"docs/{doc_key}/manifest.json")

    def visible_documents(self) -> dict[str, dict[str, Any]]:
        """doc key -> manifest, for every document whose manifest is written."""
        out = {}
        for path in self.blobs.list("docs/"):
            parts = path.split("/")
            if len(parts) == 3 and parts[2] == "manifest.json":
                manifest = self.manifest(parts[1])
                if manifest is not None:
                    out[parts[1]] = manifest
        return out

    def new_generation(self, doc_key: str) -> GenerationWriter:
        return GenerationWriter(self, doc_key, time.strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8])

    def doc_table(self, doc_key: str, table: str) -> dict[str, Any]:
        """One table of the visible generation. A re-ingest may publish (and remove the generation a
        reader just resolved) between the reader's two reads: the reader then resolves again."""
        for _ in range(5):
            manifest = self.manifest(doc_key)
            if manifest is None:
                return {}
            cache_key = (doc_key, manifest["generation"], table)
            if cache_key in self._doc_cache:
                return self._doc_cache[cache_key]  # type: ignore[no-any-return]
            path = f"docs/{doc_key}/{manifest['generation']}/{table}.json"
            got = self.blobs.read(path)
            if got is None and self.manifest(doc_key) != manifest:
                continue  # overtaken by a newer generation: read that one
            self._doc_cache[cache_key] = {} if got is None else _loads(got[0], path)
            return self._doc_cache[cache_key]  # type: ignore[no-any-return]
        raise StoreError(f"{doc_key} keeps changing under this reader; try again")

    def doc_vectors(self, doc_key: str) -> np.ndarray | None:
        manifest = self.manifest(doc_key)
        if manifest is None:
            return None
        got = self.blobs.read(f"docs/{doc_key}/{manifest['generation']}/vectors.npy")
        return None if got is None else np.load(io.BytesIO(got[0]))

    def object_image(self, key: str) -> bytes | None:
        entry = self.lookup("objects", key)
        if not entry or not entry.get("image"):
            return None
        got = self.blobs.read(entry["image"])
        return None if got is None else got[0]

    def lookup(self, table: str, key: str) -> dict[str, Any] | None:
        """One entry of a per-document table by its full key (``CEN_EN1991-1-3_5.3.2``)."""
        if not is_safe_key(key):
            raise KeyError(f"not a valid key: {key!r}")
        publisher, code, _ = split_key(key)
        entry = self.doc_table(f"{publisher}_{code}", table).get(key)
        return entry  # type: ignore[no-any-return]

    def iter_sections(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for doc_key in sorted(self.visible_documents()):
            yield from self.doc_table(doc_key, "sections").items()

    def delete_document(self, doc_key: str) -> bool:
        """Hide the document (manifest first), then remove its generations, entry and kv values."""
        existed = self.manifest(doc_key) is not None
        self.blobs.delete(f"docs/{doc_key}/manifest.json")
        self.blobs.delete_prefix(f"docs/{doc_key}/")

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

    def garbage_collect(self, doc_key: str) -> None:
        """Remove generations that no manifest points to (left by a killed ingest)."""
        manifest = self.manifest(doc_key)
        keep = manifest["generation"] if manifest else None
        generations = {p.split("/")[2] for p in self.blobs.list(f"docs/{doc_key}/") if p.count("/") > 2}
        generations |= set(self.blobs.list_dirs(f"docs/{doc_key}/"))
        for generation in generations - {keep}:
            self.blobs.delete_prefix(f"docs/{doc_key}/{generation}/")


class GenerationWriter:
    """Writes one generation of a document; :meth:`publish` writes the manifest last."""

    def __init__(self, stores: Stores, doc_key: str, generation: str):
        self.stores, self.doc_key, self.generation = stores, doc_key, generation
        self.prefix = f"docs/{doc_key}/{generation}"

    def put_json(self, table: str, value: Any) -> None:
        self.stores.blobs.write(f"{self.prefix}/{table}.json", _dumps(value))

    def put_vectors(self, vectors: np.ndarray) -> None:
        buf = io.BytesIO()
        np.save(buf, vectors.astype(np.float32), allow_pickle=False)
        self.stores.blobs.write(f"{self.prefix}/vectors.npy", buf.getvalue())

    def put_image(self, key: str, png: bytes) -> str:
        path = f"{self.prefix}/objects/{key}.png"
        self.stores.blobs.write(path, png)
        return path

    def publish(self, manifest: dict[str, Any]) -> None:
        old = self.stores.manifest(self.doc_key)
        self.stores.blobs.write(
            f"docs/{self.doc_key}/manifest.json", _dumps({**manifest, "generation": self.generation})
        )
        if old is not None and old.get("generation") != self.generation:
            self.stores.blobs.delete_prefix(f"docs/{self.doc_key}/{old['generation']}/")
