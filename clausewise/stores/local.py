"""Local-directory backend: files, atomic renames, and an flock for compare-and-swap."""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from clausewise.stores.base import StoreError


class LocalBlobs:
    def __init__(self, root: Path | str):
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create store directory {self.root}: {exc.strerror}") from exc

    @property
    def local_root(self) -> Path:
        return self.root

    def describe(self) -> str:
        return f"local directory {self.root}"

    def _path(self, path: str) -> Path:
        if path.startswith("/") or ".." in path.split("/"):
            raise StoreError(f"refusing store path {path!r}")
        return self.root / path

    @staticmethod
    def _etag(data: bytes) -> str:
        return hashlib.sha1(data).hexdigest()

    def read(self, path: str) -> tuple[bytes, str] | None:
        try:
            data = self._path(path).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise StoreError(f"cannot read {path} from {self.root}: {exc.strerror}") from exc
        return data, self._etag(data)

    def write(self, path: str, data: bytes) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{id(data)}.tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise StoreError(f"cannot write {path} to {self.root}: {exc.strerror}") from exc

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with open(self.root / ".lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def write_if(self, path: str, data: bytes, etag: str | None) -> bool:
        with self._locked():
            current = self.read(path)
            if (current is None) != (etag is None) or (current is not None and current[1] != etag):
                return False
            self.write(path, data)
            return True

    def delete(self, path: str) -> None:
        try:
            self._path(path).unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot delete {path} from {self.root}: {exc.strerror}") from exc

    def delete_prefix(self, prefix: str) -> None:
        import shutil

        target = self._path(prefix.rstrip("/"))
        try:
            if target.is_dir():
                shutil.rmtree(target)
            else:
                target.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot delete {prefix} from {self.root}: {exc.strerror}") from exc

    def list_dirs(self, prefix: str) -> list[str]:
        """Names of the folders directly under ``prefix`` (a killed write may leave one with no file)."""
        base = self._path(prefix.rstrip("/"))
        return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []

    def list(self, prefix: str) -> list[str]:
        base = self._path(prefix.rstrip("/")) if prefix else self.root
        if not base.exists():
            return []
        if base.is_file():
            return [prefix]
        return sorted(
            p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file() and not p.name.startswith(".")
        )
