"""What every storage shares: keys and their rules, ``FileInfo``, ``OpenedFile`` and the errors
(``infra/storage.py`` describes the storage; this module has no storage of its own, so that each
implementation can import it)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import BinaryIO

STAGING = ".staging"
MAX_KEY_LENGTH = 1024


class StorageError(Exception):
    """A key the storage refuses (it would leave the root, or is not a key at all)."""


class StorageUnavailable(StorageError):
    """The object store did not answer, or answered that it cannot serve now (5xx, throttling):
    the API answers 503. The message names neither the endpoint nor any credential."""

    def __init__(self, message: str = "the object store is unavailable") -> None:
        super().__init__(message)


@dataclass(frozen=True)
class FileInfo:
    """What the storage knows of one stored file."""

    key: str
    size: int
    modified_ns: int
    version: str | None = None  # the object store's ETag of this version (None on the local disk)

    @property
    def etag(self) -> str:
        """A strong entity tag: changes whenever the file is replaced (new size or modification
        time, or new object store version); says nothing of the key or the time (a digest, not the values)."""
        seed = f"{self.key}\0{self.size}\0{self.modified_ns}"
        if self.version is not None:
            seed += f"\0{self.version}"
        digest = hashlib.sha256(seed.encode()).hexdigest()
        return f'"{digest[:32]}"'


@dataclass
class OpenedFile:
    """A stored file open for reading, with what it was when opened (a file replaced or deleted
    afterwards is still read whole: the reader holds the version it opened)."""

    reader: BinaryIO
    info: FileInfo

    def close(self) -> None:
        self.reader.close()


def check_key(key: str) -> str:
    """``key`` when it is a well-formed storage key; ``StorageError`` otherwise. Pure: no file
    system call, so a hostile key is refused before anything is touched."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
        raise StorageError("a storage key is a non-empty relative path")
    if "\\" in key or "\0" in key or key.startswith("/"):
        raise StorageError(f"storage key {key!r} is not a relative POSIX path")
    parts = key.split("/")
    if any(part in ("", ".", "..") for part in parts) or parts[0] == STAGING:
        raise StorageError(f"storage key {key!r} leaves the storage root")
    return key


def workspace_of_key(key: str) -> str | None:
    """The workspace folder of a key (``<kind>/<workspace id>/...``), or None for a shorter key."""
    parts = PurePosixPath(key).parts
    return parts[1] if len(parts) >= 3 else None


def remove_stale_files(folder: Path, limit: float) -> int:
    """Delete the files of ``folder`` last modified before ``limit`` (seconds since the epoch): the
    staging files of uploads whose process died before it could discard them. A file being written
    is touched at every chunk, so it is never taken. Returns how many were deleted."""
    removed = 0
    for entry in folder.iterdir() if folder.is_dir() else ():
        try:
            if entry.is_file() and entry.stat().st_mtime < limit:
                entry.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed
