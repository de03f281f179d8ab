"""File storage for uploaded media: a local directory (``VAEO_STORAGE_DIR``, default
``<stack dir>/<instance>/storage``).

Nothing half-stored: an upload is written to a staging file under ``.staging/`` and moved into
place with one ``os.replace`` (atomic on one file system) only once it has been accepted; a
refused or failed upload deletes its staging file, and a command whose append fails deletes what
it had moved into place. Keys are relative POSIX paths (``videos/<workspace>/<id>/source.mp4``);
a key that would leave the root is refused.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

from infra.settings import Settings

STAGING = ".staging"


class StorageError(Exception):
    pass


def storage_root(settings: Settings) -> Path:
    return Path(settings.storage_dir) if settings.storage_dir else settings.instance_dir / "storage"


class LocalStorage:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalStorage:
        return cls(storage_root(settings))

    def path(self, key: str) -> Path:
        target = (self.root / key).resolve()
        if self.root.resolve() not in target.parents:
            raise StorageError(f"storage key {key!r} leaves the storage root")
        return target

    def staging_path(self, label: str = "upload") -> Path:
        """A fresh staging file name (not created); the caller writes it, then ``commit`` or ``discard``."""
        folder = self.root / STAGING
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{label}-{uuid.uuid4().hex}.part"

    def commit(self, staged: Path, key: str) -> Path:
        """Flush the staged file to disk and move it to ``key`` in one rename."""
        target = self.path(key)
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(staged, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(staged, target)
        return target

    def write_bytes(self, key: str, data: bytes) -> Path:
        staged = self.staging_path("bytes")
        try:
            staged.write_bytes(data)
            return self.commit(staged, key)
        finally:
            self.discard(staged)

    def discard(self, staged: Path) -> None:
        staged.unlink(missing_ok=True)

    def delete(self, key: str) -> None:
        target = self.path(key)
        target.unlink(missing_ok=True)
        parent = target.parent
        while parent != self.root.resolve() and parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
            parent = parent.parent

    def sweep_staging(self, max_age_s: float, now: float | None = None) -> int:
        """Delete staging files untouched for ``max_age_s``: uploads whose process died before it
        could discard them. A file being written is touched at every chunk, so it is never taken."""
        folder = self.root / STAGING
        if not folder.is_dir():
            return 0
        limit = (time.time() if now is None else now) - max_age_s
        removed = 0
        for entry in folder.iterdir():
            try:
                if entry.is_file() and entry.stat().st_mtime < limit:
                    entry.unlink()
                    removed += 1
            except FileNotFoundError:
                continue
        return removed

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()
