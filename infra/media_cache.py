"""The object store's local read cache: ffmpeg and ffprobe read local files only (whitelisted
demuxers, the ``file`` protocol), so an object they need is first materialised here.

An entry is named by its storage key **and** the object's version (its ETag): a replaced object is
a new entry, never a stale read. A file is filled the safe way: downloaded to a temporary file of
the cache's ``tmp`` folder, flushed to disk (fsync), then renamed into place, so a reader never
sees half a file, and two processes filling the same entry each rename a whole one.

The cache is bounded by ``max_bytes``: after each fill the least recently used entries (their
modification time, touched at every use) are evicted until the total fits, except an entry in
use: handed out within the last ``in_use_s`` seconds, or open by any process of the machine
(``/proc/*/fd``: an ffmpeg still reading it). The newest entry may overflow the bound while it is
in use; it goes at the next eviction after that.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from infra.settings import wall_clock

log = logging.getLogger("vaeo.storage")


def open_files() -> set[str]:
    """The paths of the regular files any process of this machine has open (that we may see)."""
    found: set[str] = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                try:
                    found.add(os.readlink(fd))
                except OSError:
                    continue
        except OSError:
            continue
    return found


class MediaCache:
    """Local copies of objects, keyed by storage key and version, bounded in bytes (LRU)."""

    def __init__(self, root: Path, max_bytes: int, in_use_s: float) -> None:
        self.root = Path(root)
        self.max_bytes = max_bytes
        self.in_use_s = in_use_s
        self.objects = self.root / "objects"
        self.tmp = self.root / "tmp"
        for folder in (self.objects, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _key_digest(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    def entry(self, key: str, version: str) -> Path:
        digest = self._key_digest(key)
        tag = hashlib.sha256(version.encode()).hexdigest()[:16]
        return self.objects / digest[:2] / f"{digest}-{tag}"

    def lookup(self, key: str, version: str) -> Path | None:
        """The entry of this version, marked as just used; None when it is not cached."""
        path = self.entry(key, version)
        try:
            os.utime(path)
        except FileNotFoundError:
            return None
        return path

    def fill(self, key: str, version: str, write: Callable[[BinaryIO], None]) -> Path:
        """Materialise an entry: ``write`` fills a temporary file, which is fsynced and renamed in place."""
        target = self.entry(key, version)
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = self.tmp / f"{uuid.uuid4().hex}.part"
        try:
            with partial.open("wb") as f:
                write(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        self._settle(key, target)
        return target

    def adopt(self, key: str, version: str, staged: Path) -> Path | None:
        """Take a file just uploaded as ``key`` at ``version`` (its bytes are the object's) into the
        cache instead of downloading it again; None (and nothing taken) when it is larger than the cache."""
        try:
            size = staged.stat().st_size
        except FileNotFoundError:
            return None
        if size > self.max_bytes:
            return None
        target = self.entry(key, version)
        target.parent.mkdir(parents=True, exist_ok=True)
        with staged.open("rb+") as f:
            os.fsync(f.fileno())
        os.replace(staged, target)
        os.utime(target)
        self._settle(key, target)
        return target

    def forget(self, key: str) -> None:
        """Drop every cached version of ``key`` (it was deleted) that is not in use."""
        self._drop_versions(key, keep=None)

    def _settle(self, key: str, fresh: Path) -> None:
        self._drop_versions(key, keep=fresh)
        self.evict()

    def _drop_versions(self, key: str, keep: Path | None) -> None:
        digest = self._key_digest(key)
        folder = self.objects / digest[:2]
        if not folder.is_dir():
            return
        older = [p for p in folder.glob(f"{digest}-*") if p != keep]
        if not older:
            return
        busy = open_files()
        for path in older:
            if str(path) not in busy:
                path.unlink(missing_ok=True)

    def entries(self) -> list[tuple[float, int, Path]]:
        """Every entry as (last use, size, path)."""
        found = []
        for path in self.objects.glob("*/*"):
            try:
                st = path.stat()
            except FileNotFoundError:
                continue
            found.append((st.st_mtime, st.st_size, path))
        return found

    def total_bytes(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def evict(self, now: float | None = None) -> int:
        """Evict least recently used entries until the cache fits; returns the bytes freed."""
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        if total <= self.max_bytes:
            return 0
        now = wall_clock().timestamp() if now is None else now  # file ages: the mtimes are the machine clock
        busy = open_files()
        freed = 0
        for used, size, path in sorted(entries):
            if total - freed <= self.max_bytes:
                break
            if now - used < self.in_use_s or str(path) in busy:
                continue  # in use: never taken from under a reader
            path.unlink(missing_ok=True)
            freed += size
        if total - freed > self.max_bytes:
            log.info("the media cache holds %d bytes in use, above its bound of %d", total - freed, self.max_bytes)
        return freed
