"""File storage: the ``Storage`` interface and its default, a local directory (``VAEO_STORAGE_DIR``,
default ``<stack dir>/<instance>/storage``).

Every stored file is named by a **key**, a relative POSIX path chosen by the service, never by a
client (``videos/<workspace>/<id>/source.mp4``). A workspace's files live under
``<kind>/<workspace id>/``, which lets a signed download URL check that the key it names belongs
to the workspace it was issued for. A key that is absolute, holds an empty, ``.`` or ``..``
segment, a backslash or a NUL, names the staging folder, or resolves outside the root is refused
(``StorageError``) before any file system call.

Nothing half-stored: an upload is written to a staging file under ``.staging/`` and moved into
place with one ``os.replace`` (atomic on one file system) only once it has been accepted; a
refused or failed upload deletes its staging file, and a command whose append fails deletes what
it had moved into place.

``Storage`` lists what the rest of the code uses. Two implementations, chosen by
``VAEO_STORAGE_BACKEND``: ``LocalStorage`` (``local``, the default) and ``S3Storage`` (``s3``,
``infra/storage_s3.py``: an S3-compatible object store shared by several machines; staging stays a
local file, ``commit`` uploads it, ``open`` streams ranges, ``path`` fetches the object into a
bounded local cache for ffmpeg).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import uuid
from pathlib import Path
from stat import S_ISREG
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from infra.settings import Settings
from infra.storage_types import (  # noqa: F401 (re-exported: the rest of the code imports them from here)
    MAX_KEY_LENGTH,
    STAGING,
    FileInfo,
    OpenedFile,
    StorageError,
    StorageUnavailable,
    check_key,
    remove_stale_files,
    workspace_of_key,
)

if TYPE_CHECKING:  # the object store's client (aiobotocore, botocore) is imported where one is made
    from infra.storage_s3 import S3Storage


@runtime_checkable
class Storage(Protocol):
    """The operations the service needs from a file storage (see the module docstring)."""

    def staging_path(self, label: str = "upload") -> Path:
        """A fresh local staging file name (not created) to write an incoming file to."""
        ...

    def commit(self, staged: Path, key: str) -> object:
        """Make the staged file the content of ``key``, all at once."""
        ...

    def discard(self, staged: Path) -> None:
        """Delete a staging file (no error when it is already gone)."""
        ...

    def write_bytes(self, key: str, data: bytes) -> object:
        """Store ``data`` as ``key``, all at once."""
        ...

    def exists(self, key: str) -> bool:
        ...

    def stat(self, key: str) -> FileInfo:
        """Size and version of ``key``; ``FileNotFoundError`` when there is none."""
        ...

    def size(self, key: str) -> int:
        ...

    def open(self, key: str) -> OpenedFile:
        """``key`` open for reading (seekable) with its ``FileInfo``; ``FileNotFoundError`` when there is none."""
        ...

    def read_range(self, key: str, start: int, length: int) -> bytes:
        """``length`` bytes of ``key`` from ``start`` (fewer at the end of the file)."""
        ...

    def path(self, key: str) -> Path:
        """A local file holding ``key`` (ffmpeg and ffprobe read files)."""
        ...

    def delete(self, key: str) -> None:
        """Delete ``key`` (no error when it is already gone)."""
        ...

    def sweep_staging(self, max_age_s: float, now: float | None = None) -> int:
        ...


def storage_root(settings: Settings) -> Path:
    return Path(settings.storage_dir) if settings.storage_dir else settings.instance_dir / "storage"


_OBJECT_STORES: dict[tuple, S3Storage] = {}
_OBJECT_STORES_LOCK = threading.Lock()


@atexit.register
def close_object_stores() -> None:
    """Close the object stores' clients (their connections) before the process ends."""
    with _OBJECT_STORES_LOCK:
        stores = list(_OBJECT_STORES.values())
        _OBJECT_STORES.clear()
    for store in stores:
        store.close()


def storage_for(settings: Settings) -> Storage:
    """The storage the settings name. An object store is made once per process and configuration
    (its client keeps a pool of connections), the local directory at each call (it holds nothing)."""
    if settings.storage_backend != "s3":
        return LocalStorage.from_settings(settings)
    ident = (settings.resolved_s3_endpoint(), settings.s3_bucket, settings.s3_region, settings.s3_access_key_id,
             settings.s3_secret_access_key.get_secret_value(), str(settings.media_cache_path),
             settings.media_cache_max_bytes, settings.media_cache_in_use_s, settings.s3_part_bytes,
             settings.s3_timeout_s, settings.s3_max_attempts, str(settings.instance_dir))
    with _OBJECT_STORES_LOCK:
        found = _OBJECT_STORES.get(ident)
        if found is None:
            # Here, not at the top: a process on the local disk never loads the S3 client (about
            # 30 MB of resident modules in every process that imports the storage).
            from infra.storage_s3 import S3Storage

            found = _OBJECT_STORES[ident] = S3Storage.from_settings(settings)
        return found


class LocalStorage:
    """``Storage`` on a local directory (the default)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalStorage:
        return cls(storage_root(settings))

    def path(self, key: str) -> Path:
        """The file of ``key`` under the root; ``StorageError`` for a malformed key or one that
        resolves outside the root (through a symbolic link, say)."""
        target = (self.root / check_key(key)).resolve()
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
        return remove_stale_files(self.root / STAGING, (time.time() if now is None else now) - max_age_s)

    def exists(self, key: str) -> bool:
        return self.path(key).is_file()

    def stat(self, key: str) -> FileInfo:
        st = self.path(key).stat()
        if not S_ISREG(st.st_mode):
            raise FileNotFoundError(key)
        return FileInfo(key, st.st_size, st.st_mtime_ns)

    def size(self, key: str) -> int:
        return self.stat(key).size

    def open(self, key: str) -> OpenedFile:
        reader = open(self.path(key), "rb")  # noqa: SIM115 (the caller closes it: OpenedFile.close)
        try:
            st = os.fstat(reader.fileno())
            if not S_ISREG(st.st_mode):
                raise FileNotFoundError(key)
            return OpenedFile(reader, FileInfo(key, st.st_size, st.st_mtime_ns))
        except BaseException:
            reader.close()
            raise

    def read_range(self, key: str, start: int, length: int) -> bytes:
        with open(self.path(key), "rb") as f:
            f.seek(start)
            return f.read(length)
