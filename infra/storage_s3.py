"""``S3Storage``: the ``Storage`` interface on an S3-compatible object store (``VAEO_STORAGE_BACKEND=s3``),
so that several machines share every stored file. The bucket is ``VAEO_S3_BUCKET`` (created when
absent); an object's name is its storage key, as on the local disk.

One client per process and per store: an ``aiobotocore`` client living on an event loop of its own
(a daemon thread), with its pool of connections. The interface is synchronous (the callers run it
in threads, as they do the local disk's calls); each call hands a coroutine to that loop and waits.

- **Uploads** (``commit``): the staged local file is sent in parts of ``VAEO_S3_PART_BYTES``
  (8 MiB) with a multipart upload, one part in memory at a time; any failure, or the caller's
  cancellation, aborts the multipart upload (nothing half-stored). The staged file then becomes
  the object's entry in the local read cache (no download for the thumbnail made right after).
- **Reads**: ``open`` returns a reader that streams ranged GETs of the version it opened (``If-Match``
  its ETag), so the API's downloads, ranges, ETags, 206 and 416 are those of the local disk;
  ``path`` materialises the object into the local cache (``infra/media_cache.py``) for ffmpeg.
- **Deletes** are idempotent (S3 answers a missing key like a present one).
- **Errors**: a missing object is ``FileNotFoundError``; an unreachable store, a 5xx, throttling or
  refused credentials are ``StorageUnavailable`` (the API answers 503), whose message names neither
  the endpoint nor any key; the store's own message is never passed on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp
from aiobotocore.session import get_session
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from infra.media_cache import MediaCache
from infra.settings import Settings, wall_clock
from infra.stack import seaweedfs_credentials
from infra.storage_types import (
    FileInfo,
    OpenedFile,
    StorageError,
    StorageUnavailable,
    check_key,
    remove_stale_files,
)

log = logging.getLogger("vaeo.storage")

READ_CHUNK = 1024 * 1024  # bytes per read of a download into the cache
_MISSING = {"NoSuchKey", "404", "NotFound", "NoSuchUpload"}
_CHANGED = {"PreconditionFailed", "412"}
_BUSY = {"SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "ServiceUnavailable",
         "InternalError", "RequestTimeout", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch"}


def _classify(exc: BaseException, key: str | None) -> BaseException:
    """The storage's own error for what the client raised (the client's message stays out of it)."""
    if isinstance(exc, ClientError):
        code = str(exc.response.get("Error", {}).get("Code", ""))
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
        if code in _MISSING or status == 404 or code in _CHANGED or status == 412:
            return FileNotFoundError(key or "object")
        if code in _BUSY or status >= 500 or status in (403, 429):
            log.warning("the object store refused a request: %s (HTTP %s)", code, status)
            return StorageUnavailable()
        return StorageError(f"the object store refused the request ({code or status})")
    log.warning("the object store is unreachable: %s", type(exc).__name__)
    return StorageUnavailable()


_CLIENT_ERRORS = (ClientError, BotoCoreError, aiohttp.ClientError, ConnectionError, TimeoutError)


class S3Storage:
    """``Storage`` on an S3 bucket, with a bounded local read cache (see the module docstring)."""

    def __init__(self, *, endpoint_url: str, bucket: str, region: str, access_key_id: str,
                 secret_access_key: str, cache: MediaCache, part_bytes: int = 8 * 1024 ** 2,
                 timeout_s: float = 30.0, max_attempts: int = 3) -> None:
        self.bucket = bucket
        self.cache = cache
        self.part_bytes = part_bytes
        self.staging = cache.root / "staging"
        self.staging.mkdir(parents=True, exist_ok=True)
        self._config = Config(s3={"addressing_style": "path"}, connect_timeout=min(timeout_s, 5.0),
                              read_timeout=timeout_s, retries={"max_attempts": max_attempts, "mode": "standard"},
                              max_pool_connections=32)
        self._client_args = {"endpoint_url": endpoint_url, "region_name": region,
                             "aws_access_key_id": access_key_id, "aws_secret_access_key": secret_access_key}
        self._loop = asyncio.new_event_loop()
        threading.Thread(target=self._loop.run_forever, name="vaeo-s3", daemon=True).start()
        self._client: Any = None
        self._client_lock = asyncio.Lock()
        self._bucket_ready = False

    def __repr__(self) -> str:  # never the credentials
        return f"S3Storage(bucket={self.bucket!r})"

    @classmethod
    def from_settings(cls, settings: Settings) -> S3Storage:
        access, secret = settings.s3_access_key_id, settings.s3_secret_access_key.get_secret_value()
        if settings.uses_local_object_store and not access:
            access, secret = seaweedfs_credentials(settings)
        cache = MediaCache(settings.media_cache_path, settings.media_cache_max_bytes, settings.media_cache_in_use_s)
        return cls(endpoint_url=settings.resolved_s3_endpoint(), bucket=settings.s3_bucket, region=settings.s3_region,
                   access_key_id=access, secret_access_key=secret, cache=cache, part_bytes=settings.s3_part_bytes,
                   timeout_s=settings.s3_timeout_s, max_attempts=settings.s3_max_attempts)

    # ---- the client and its loop

    async def client(self) -> Any:
        """The one client (made on first use, on the store's loop), with its bucket present."""
        async with self._client_lock:
            if self._client is None:
                made = get_session().create_client("s3", config=self._config, **self._client_args)
                self._client = await made.__aenter__()
                self._client_exit = made
            if not self._bucket_ready:
                try:
                    await self._client.head_bucket(Bucket=self.bucket)
                except ClientError as exc:
                    if exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") != 404:
                        raise
                    try:
                        await self._client.create_bucket(Bucket=self.bucket)
                    except ClientError as again:
                        if again.response.get("Error", {}).get("Code") not in ("BucketAlreadyOwnedByYou",
                                                                               "BucketAlreadyExists"):
                            raise
                self._bucket_ready = True
            return self._client

    def _call(self, coro: Coroutine, key: str | None = None) -> Any:
        """Run ``coro`` on the store's loop and wait for it (from any other thread); the store's
        errors become the storage's own."""
        future = asyncio.run_coroutine_threadsafe(self._guarded(coro, key), self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # an interrupted caller: the coroutine is cancelled (a multipart upload aborts)
            raise

    async def acall(self, coro: Coroutine, key: str | None = None) -> Any:
        """``_call`` from another event loop, without blocking it (cancelling the caller cancels ``coro``)."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._guarded(coro, key), self._loop))

    async def _guarded(self, coro: Coroutine, key: str | None) -> Any:
        try:
            return await coro
        except _CLIENT_ERRORS as exc:
            raise _classify(exc, key) from None

    def close(self) -> None:
        async def shut() -> None:
            if self._client is not None:
                await self._client_exit.__aexit__(None, None, None)
                self._client = None

        try:
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(timeout=5)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        self._loop.call_soon_threadsafe(self._loop.stop)

    # ---- staging and uploads

    def staging_path(self, label: str = "upload") -> Path:
        self.staging.mkdir(parents=True, exist_ok=True)
        return self.staging / f"{label}-{uuid.uuid4().hex}.part"

    def discard(self, staged: Path) -> None:
        staged.unlink(missing_ok=True)

    def commit(self, staged: Path, key: str) -> str:
        """Upload the staged file as ``key`` (multipart beyond one part), then keep it as the
        object's cached copy. Returns the key."""
        check_key(key)
        version = self._call(self._upload(staged, key), key)
        if self.cache.adopt(key, version, staged) is None:
            staged.unlink(missing_ok=True)
        return key

    async def _upload(self, staged: Path, key: str) -> str:
        client = await self.client()
        size = staged.stat().st_size
        if size <= self.part_bytes:
            body = await asyncio.to_thread(staged.read_bytes)
            return (await client.put_object(Bucket=self.bucket, Key=key, Body=body))["ETag"]
        upload_id = (await client.create_multipart_upload(Bucket=self.bucket, Key=key))["UploadId"]
        try:
            parts = []
            with staged.open("rb") as f:
                while chunk := await asyncio.to_thread(f.read, self.part_bytes):
                    number = len(parts) + 1
                    sent = await client.upload_part(Bucket=self.bucket, Key=key, UploadId=upload_id,
                                                    PartNumber=number, Body=chunk)
                    parts.append({"PartNumber": number, "ETag": sent["ETag"]})
                    del chunk
            done = await client.complete_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id,
                                                          MultipartUpload={"Parts": parts})
            return done["ETag"]
        except BaseException:
            await asyncio.shield(self._abort(key, upload_id))
            raise

    async def _abort(self, key: str, upload_id: str) -> None:
        try:
            await self._client.abort_multipart_upload(Bucket=self.bucket, Key=key, UploadId=upload_id)
        except _CLIENT_ERRORS as exc:  # the sweep aborts it later
            log.warning("a multipart upload could not be aborted now: %s", type(exc).__name__)

    def write_bytes(self, key: str, data: bytes) -> str:
        check_key(key)

        async def put() -> None:
            await (await self.client()).put_object(Bucket=self.bucket, Key=key, Body=data)

        self._call(put(), key)
        return key

    def sweep_staging(self, max_age_s: float, now: float | None = None) -> int:
        """Delete staging files untouched for ``max_age_s`` and abort multipart uploads begun that
        long ago (a process that died mid-upload); returns the staging files deleted."""
        limit = (wall_clock().timestamp() if now is None else now) - max_age_s
        removed = remove_stale_files(self.staging, limit)
        try:
            self._call(self._abort_stale(limit))
        except StorageError as exc:  # the store is away: its stale uploads wait for the next sweep
            log.warning("stale multipart uploads not swept: %s", exc)
        return removed

    async def _abort_stale(self, limit: float) -> None:
        client = await self.client()
        listing = await client.list_multipart_uploads(Bucket=self.bucket)
        for upload in listing.get("Uploads", []):
            if upload["Initiated"].timestamp() < limit:
                await self._abort(upload["Key"], upload["UploadId"])

    # ---- reads

    def stat(self, key: str) -> FileInfo:
        check_key(key)

        async def head() -> dict:
            return await (await self.client()).head_object(Bucket=self.bucket, Key=key)

        found = self._call(head(), key)
        modified_ns = int(found["LastModified"].timestamp() * 1_000_000_000)
        return FileInfo(key, int(found["ContentLength"]), modified_ns, version=found["ETag"])

    def exists(self, key: str) -> bool:
        try:
            self.stat(key)
        except FileNotFoundError:
            return False
        return True

    def size(self, key: str) -> int:
        return self.stat(key).size

    async def get_body(self, key: str, start: int, end: int | None, version: str | None = None) -> Any:
        """The streaming body of bytes ``start`` to ``end`` (inclusive; None: to the end) of ``key``."""
        last = "" if end is None else str(end)
        args: dict[str, Any] = {"Bucket": self.bucket, "Key": key, "Range": f"bytes={start}-{last}"}
        if version is not None:
            args["IfMatch"] = version
        return (await (await self.client()).get_object(**args))["Body"]

    @staticmethod
    async def read_body(body: Any, amount: int) -> bytes:
        """Up to ``amount`` bytes of a streaming body (fewer only at its end)."""
        pieces, wanted = [], amount
        while wanted > 0:
            piece = await body.read(min(wanted, READ_CHUNK))
            if not piece:
                break
            pieces.append(piece)
            wanted -= len(piece)
        return b"".join(pieces)

    def read_range(self, key: str, start: int, length: int) -> bytes:
        check_key(key)
        if length <= 0:
            return b""

        async def ranged() -> bytes:
            try:
                body = await self.get_body(key, start, start + length - 1)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") == "InvalidRange":
                    return b""  # from past the end: nothing, as a local file reads
                raise
            async with body:
                return await self.read_body(body, length)

        return self._call(ranged(), key)

    def open(self, key: str) -> OpenedFile:
        info = self.stat(key)
        return OpenedFile(ObjectReader(self, info), info)  # type: ignore[arg-type]

    def path(self, key: str) -> Path:
        """A local file holding ``key``'s current version: from the cache, else downloaded into it."""
        info = self.stat(key)
        found = self.cache.lookup(key, info.version or "")
        if found is not None:
            return found
        return self.cache.fill(key, info.version or "", lambda f: self._call(self._download(info, f), key))

    async def _download(self, info: FileInfo, out: BinaryIO) -> None:
        if info.size == 0:
            return
        body = await self.get_body(info.key, 0, None, info.version)
        async with body:
            while chunk := await body.read(READ_CHUNK):
                await asyncio.to_thread(out.write, chunk)

    def delete(self, key: str) -> None:
        check_key(key)

        async def remove() -> None:
            await (await self.client()).delete_object(Bucket=self.bucket, Key=key)

        self._call(remove(), key)
        self.cache.forget(key)

    def list_keys(self, prefix: str = "") -> list[str]:
        """Every key under ``prefix`` (operations and tests)."""

        async def listing() -> list[str]:
            client = await self.client()
            keys: list[str] = []
            async for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
                keys.extend(item["Key"] for item in page.get("Contents", []))
            return keys

        return self._call(listing())


class ObjectReader:
    """A seekable reader of one version of an object: each read continues one ranged GET (``If-Match``
    the version opened), a seek elsewhere starts another. Reading a version replaced since ends
    with ``FileNotFoundError``, never with a mix of two versions."""

    def __init__(self, store: S3Storage, info: FileInfo) -> None:
        self._store = store
        self._info = info
        self._pos = 0
        self._body: Any = None
        self.closed = False

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = 0) -> int:
        target = {0: offset, 1: self._pos + offset, 2: self._info.size + offset}[whence]
        if target < 0:
            raise ValueError("negative seek position")
        if target != self._pos:
            self._drop()
            self._pos = target
        return target

    def read(self, amount: int = -1) -> bytes:
        if self.closed:
            raise ValueError("read of a closed stored file")
        left = self._info.size - self._pos
        if left <= 0:
            return b""
        amount = left if amount is None or amount < 0 else min(amount, left)
        info = self._info
        if self._body is None:
            self._body = self._store._call(self._store.get_body(info.key, self._pos, None, info.version), info.key)
        data = self._store._call(self._store.read_body(self._body, amount), info.key)
        if not data:
            self._drop()
        self._pos += len(data)
        return data

    def _drop(self) -> None:
        body, self._body = self._body, None
        if body is not None:
            self._store._loop.call_soon_threadsafe(body.close)

    def close(self) -> None:
        self._drop()
        self.closed = True

    def __enter__(self) -> ObjectReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
