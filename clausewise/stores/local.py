"""Local-directory backend: files, atomic renames, and an flock for compare-and-swap.

Named locks (:meth:`LocalBlobs.lock`, a document's guard) are flocks on files under ``.locks/``: the
kernel releases them when their holder dies. A write goes through ``.<name>.<pid>.<n>.tmp`` beside its
target; a process killed between the write and the rename leaves that file, which the next
``LocalBlobs`` over the store removes once no live process of that pid can still be writing it.
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import logging
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from clausewise.stores.base import LOCK_TIMEOUT_S, StoreError

log = logging.getLogger(__name__)

_TMP_NAME = re.compile(r"^\..+\.(\d+)\.\d+\.tmp$")
TMP_MAX_AGE_S = 3600.0  # no write takes this long: a temporary file this old is stale even if its pid lives
_write_ids = itertools.count()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class LocalBlobs:
    def __init__(self, root: Path | str, *, clean_temporary: bool = True):
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create store directory {self.root}: {exc.strerror}") from exc
        if clean_temporary:
            self.remove_stale_temporary_files()

    def remove_stale_temporary_files(self) -> list[Path]:
        """Remove the ``.*.<pid>.<n>.tmp`` files that killed writes left (their pid is gone, or they are
        older than any write takes); returns what was removed."""
        removed = []
        now = time.time()
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in (".locks",)]
            for name in filenames:
                match = _TMP_NAME.match(name)
                if not match:
                    continue
                path = Path(dirpath) / name
                try:
                    stale = not _pid_alive(int(match.group(1))) or now - path.stat().st_mtime > TMP_MAX_AGE_S
                    if stale and int(match.group(1)) != os.getpid():
                        path.unlink()
                        removed.append(path)
                except OSError:
                    continue  # gone already, or not ours to remove
        if removed:
            log.warning("removed %d temporary file(s) left by killed writes in %s", len(removed), self.root)
        return removed

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
        self._write(path, data)

    def _write(self, path: str, data: bytes) -> None:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{next(_write_ids)}.tmp")
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

    @contextmanager
    def lock(self, path: str, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """An flock on ``.locks/<path>``, waited for up to ``timeout_s`` (threads of one process exclude
        each other too: each acquisition opens the file anew)."""
        lock_path = self._path(".locks/" + path.replace("/", "%2F"))
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + timeout_s
        with open(lock_path, "a+") as fh:
            while True:
                try:
                    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise StoreError(
                            f"{path} in {self.root} is held by another writer (waited {timeout_s:.0f} s)"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def write_if(self, path: str, data: bytes, etag: str | None) -> bool:
        with self._locked():
            current = self.read(path)
            if (current is None) != (etag is None) or (current is not None and current[1] != etag):
                return False
            self._write(path, data)
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
        try:
            with os.scandir(base) as entries:
                return sorted(e.name for e in entries if _is_dir(e) and not e.name.startswith("."))
        except (FileNotFoundError, NotADirectoryError):
            return []

    def list(self, prefix: str) -> list[str]:
        """Every file under ``prefix``, hidden ones (temporary files, locks) left out. A folder removed
        while it is walked (a document deleted or replaced meanwhile) is left out, never an error."""
        base = self._path(prefix.rstrip("/")) if prefix else self.root
        if base.is_file():
            return [prefix]
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):  # os.walk skips folders that vanish
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel = Path(dirpath).relative_to(self.root).as_posix()
            out.extend(f"{rel}/{name}" if rel != "." else name for name in filenames if not name.startswith("."))
        return sorted(out)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False
