"""Stored files: ``GET /v1/files/{token}`` (and ``HEAD``), the download behind every signed URL,
and ``GET /v1/public/{token}``, the download behind every public link (the exports' links).

Public (no API key): the sealed token is the credential (``infra/file_urls.py``). A tampered,
expired or unknown token, a revoked public link, a key outside its workspace and a file deleted
since are all the same 404 ``not_found``, so a client learns nothing about which (and a public
link's answer takes the same work whether its token is forged or was once genuine). The token is the
only input: the storage key comes from what it seals, and the storage refuses keys that leave its
root. A public link is good while its video's link generation (read from the video's stream, so a
revocation holds on the next request) is the one it seals, and only for that video's file and
poster.

The answer streams the file in chunks read off the event loop (never whole in memory), from the
version opened when the request arrived (a file replaced meanwhile does not mix two versions):

- ``Accept-Ranges: bytes``; one range per request: ``bytes=a-b``, ``bytes=a-`` and ``bytes=-n``
  answer 206 with ``Content-Range`` (an end past the file, of any number of digits, is clamped to
  its last byte); a range starting at or past the end (or ``bytes=-0``, or any
  range of an empty file) answers 416 with ``Content-Range: bytes */<size>`` and the error
  envelope; a header that is not one byte range (another unit, several ranges, bad syntax) is
  ignored, as HTTP allows, and the whole file is sent;
- ``ETag`` (strong), ``If-None-Match`` (304) and ``If-Range`` (a range only while the file is
  the one the client saw);
- ``Content-Type`` from the key's extension, ``Content-Length``, ``Content-Disposition: inline``
  with the stored file's name, ``Cache-Control: private`` until the token expires (a public link:
  ``public`` for an hour),
  ``X-Content-Type-Options: nosniff``, ``Referrer-Policy: no-referrer`` (the token stays out of
  the Referer of anything an HTML file links to) and, for HTML, ``Content-Security-Policy:
  sandbox`` (a stored page runs no script with the API's origin);
- a client that takes nothing of a chunk for ``file_send_timeout_s`` is disconnected, and one
  address has at most ``file_downloads_per_address`` bodies in flight (429 beyond): a client that
  opens downloads and reads none holds no more than that many chunks and socket buffers.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from aiohttp import hdrs, payload, web
from aiohttp.abc import AbstractStreamWriter

from domain.videos import video_stream_id
from infra.file_urls import InvalidFileToken, verify, verify_public_link
from infra.media.posters import poster_key
from infra.storage import OpenedFile, StorageError, StorageUnavailable, storage_for
from services.api.base import SETTINGS, ApiError, Call, Route
from services.api.errors import printable, unavailable

log = logging.getLogger("vaeo.api")

CHUNK = 256 * 1024  # per download in flight: memory stays bounded with many concurrent downloads

# Content types by the stored file's extension (the service names its files; no sniffing).
CONTENT_TYPES: dict[str, str] = {
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".mov": "video/quicktime", ".webm": "video/webm",
    ".mkv": "video/x-matroska", ".avi": "video/x-msvideo", ".flv": "video/x-flv", ".ts": "video/mp2t",
    ".mpg": "video/mpeg", ".asf": "video/x-ms-asf",
    ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".aac": "audio/aac", ".wav": "audio/wav", ".ogg": "audio/ogg",
    ".oga": "audio/ogg", ".opus": "audio/ogg", ".flac": "audio/flac", ".aiff": "audio/aiff",
    ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".webp": "image/webp", ".gif": "image/gif",
    ".svg": "image/svg+xml",
    ".json": "application/json", ".pdf": "application/pdf", ".zip": "application/zip",
    ".html": "text/html; charset=utf-8", ".htm": "text/html; charset=utf-8",
    ".md": "text/markdown; charset=utf-8", ".txt": "text/plain; charset=utf-8",
    ".vtt": "text/vtt; charset=utf-8", ".srt": "application/x-subrip", ".csv": "text/csv; charset=utf-8",
}
DEFAULT_CONTENT_TYPE = "application/octet-stream"
PUBLIC_MAX_AGE_S = 3600  # how long a shared cache may keep a public link's file (a revocation's delay there)
_SANDBOXED = ("text/html", "image/svg+xml")  # types a browser would run scripts of


def content_type_of(storage_key: str) -> str:
    return CONTENT_TYPES.get(PurePosixPath(storage_key).suffix.lower(), DEFAULT_CONTENT_TYPE)


# --------------------------------------------------------------------------------- ranges


@dataclass(frozen=True)
class ByteRange:
    start: int
    end: int  # inclusive, as in Content-Range

    @property
    def length(self) -> int:
        return self.end - self.start + 1


class Unsatisfiable(Exception):
    """A syntactically valid range that selects no byte of the file (416)."""


_RANGE = re.compile(r"bytes=(\d*)-(\d*)", re.ASCII)
_BEYOND_ANY_FILE = 10 ** 18  # a position of more than 18 digits (no file is that large)


def _position(digits: str) -> int:
    """A position of a range header, however many digits it has (the header's own length is bounded
    by the server): past any file once its value has more than 18."""
    significant = digits.lstrip("0") or "0"
    return int(significant) if len(significant) <= 18 else _BEYOND_ANY_FILE


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The one byte range ``header`` asks of a file of ``size`` bytes; None to send it whole (no
    header, or one that is not a single valid byte range, which HTTP lets a server ignore);
    ``Unsatisfiable`` when it selects no byte."""
    if header is None:
        return None
    match = _RANGE.fullmatch(header.strip().replace(" ", ""))
    if match is None:
        return None
    first, last = match.groups()
    if first == "" and last == "":
        return None
    if first == "":  # the last n bytes
        suffix = _position(last)
        if suffix == 0 or size == 0:
            raise Unsatisfiable
        return ByteRange(max(0, size - suffix), size - 1)
    start = _position(first)
    end = _position(last) if last else size - 1
    if last and end < start:
        return None  # invalid: ignored
    if start >= size:
        raise Unsatisfiable
    return ByteRange(start, min(end, size - 1))


def _etag_matches(header: str, etag: str) -> bool:
    """``If-None-Match``: ``*`` or a list holding our tag (weak comparison: ``W/`` ignored)."""
    tags = [t.strip().removeprefix("W/") for t in header.split(",")]
    return "*" in tags or etag in tags


# --------------------------------------------------------------------------------- the body


class DownloadSlots:
    """The downloads in flight per client address, at most ``limit`` each: a client that opens
    many downloads and reads none holds a chunk buffer and the kernel's buffers per connection, so
    one address cannot hold the process's memory. The address is the connection's peer (behind a
    proxy, every client is the proxy's address: set the limit for it)."""

    def __init__(self) -> None:
        self._held: dict[str, int] = {}

    def take(self, address: str, limit: int) -> Callable[[], None] | None:
        """A slot for ``address`` and the function that gives it back (once, however often it is
        called); None when the address has ``limit`` already."""
        if self._held.get(address, 0) >= limit:
            return None
        self._held[address] = self._held.get(address, 0) + 1
        given_back = False

        def give_back() -> None:
            nonlocal given_back
            if not given_back:
                given_back = True
                left = self._held[address] - 1
                if left:
                    self._held[address] = left
                else:
                    del self._held[address]

        return give_back


DOWNLOADS = web.AppKey("downloads", DownloadSlots)
RETRY_AFTER_S = 5  # when a download slot of the address frees is unknown: a few seconds is a polite retry


class FileSlice(payload.Payload):
    """``length`` bytes of an opened stored file from ``start``, read in chunks off the event loop;
    the file is closed and the download's slot given back once written, once the connection is gone,
    or once the client took nothing of a chunk for ``send_timeout`` seconds (the connection is then
    aborted: its buffered bytes are dropped, not flushed to a client that does not read)."""

    def __init__(self, opened: OpenedFile, start: int, length: int, content_type: str, *,
                 send_timeout: float, release: Callable[[], None]) -> None:
        super().__init__(opened, content_type=content_type)
        self._opened = opened
        self._start = start
        self._size = length
        self._send_timeout = send_timeout
        self._release = release
        weakref.finalize(self, release)  # a response dropped before its body was written

    async def write(self, writer: AbstractStreamWriter) -> None:
        await self.write_with_length(writer, None)

    async def write_with_length(self, writer: AbstractStreamWriter, content_length: int | None) -> None:
        reader = self._opened.reader
        remaining = self._size if content_length is None else min(self._size, content_length)
        try:
            await asyncio.to_thread(reader.seek, self._start)
            while remaining > 0:
                chunk = await asyncio.to_thread(reader.read, min(CHUNK, remaining))
                if not chunk:  # cannot happen with the version held open; never loop on it
                    raise ConnectionAbortedError("the stored file ended before its announced length")
                try:
                    await asyncio.wait_for(writer.write(chunk), self._send_timeout)
                except TimeoutError:
                    transport = getattr(writer, "transport", None)
                    if transport is not None:
                        transport.abort()
                    raise ConnectionAbortedError("the client took nothing within the send timeout") from None
                remaining -= len(chunk)
        finally:
            self._opened.close()
            self._release()

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        raise TypeError("a stored file is streamed, never decoded whole")

    async def close(self) -> None:
        self._opened.close()
        self._release()


# --------------------------------------------------------------------------------- the route


def file_not_found() -> ApiError:
    """The one answer to every token that grants nothing: no hint of the reason."""
    return ApiError(404, "not_found", "file not found (the link may have expired)", {})


async def _open(call: Call, storage_key: str) -> OpenedFile:
    storage = storage_for(call.app[SETTINGS])
    try:
        return await asyncio.to_thread(storage.open, storage_key)
    except StorageUnavailable:
        raise unavailable("the object store") from None
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, StorageError):
        raise file_not_found() from None
    except OSError as exc:
        log.warning("a stored file could not be opened: %s", type(exc).__name__)
        raise file_not_found() from None


async def download_file(call: Call) -> web.StreamResponse:
    settings = call.request.app[SETTINGS]
    try:
        grant = verify(settings, call.path("token"))
    except InvalidFileToken:
        raise file_not_found() from None
    remaining_s = max(0, math.floor(grant.expires_at.timestamp() - settings.now().timestamp()))
    return await serve_stored(call, grant.storage_key, f"private, max-age={remaining_s}")


# The stream a token that is no public link of this service looks up: no video has id 0, so it is
# always empty (``public_file``).
_NO_VIDEO = video_stream_id(0)


async def public_file(call: Call) -> web.StreamResponse:
    """A public link: no expiry, valid while its video's link generation is the link's (a revoked
    link, a link of another video's file or of a video gone, and a bad token are the same 404).

    Every token costs the same lookup of a video's stream, a forged or malformed one included (of
    a stream that is always empty): a revoked link, which names a real video, would otherwise be
    told from a forged one by the time of its answer, and so be known to have been genuine."""
    try:
        link = verify_public_link(call.request.app[SETTINGS], call.path("token"))
    except InvalidFileToken:
        link = None
    [video] = await call.store.fetch_latest(_NO_VIDEO if link is None else video_stream_id(link.video_id))
    if (link is None or video is None or video.workspace_id != link.workspace_id
            or video.public_links_generation != link.generation
            or link.storage_key not in (video.storage_key, poster_key(video.workspace_id, video.video_id,
                                                                      video.thumbnail_key))):
        raise file_not_found()
    # shared caches may keep it a while; a revocation reaches them within the hour
    return await serve_stored(call, link.storage_key, f"public, max-age={PUBLIC_MAX_AGE_S}")


async def serve_stored(call: Call, storage_key: str, cache_control: str) -> web.StreamResponse:
    """The stored file ``storage_key`` (granted by the caller), with ranges, ETag and the headers above."""
    request = call.request
    settings = request.app[SETTINGS]
    opened = await _open(call, storage_key)
    info = opened.info
    ctype = content_type_of(storage_key)
    headers: dict[str, Any] = {
        hdrs.CONTENT_TYPE: ctype,
        hdrs.ACCEPT_RANGES: "bytes",
        hdrs.ETAG: info.etag,
        hdrs.CACHE_CONTROL: cache_control,
        hdrs.CONTENT_DISPOSITION: f'inline; filename="{PurePosixPath(storage_key).name}"',
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
    }
    if ctype.startswith(_SANDBOXED):
        headers["Content-Security-Policy"] = "sandbox"
    try:
        if_none_match = request.headers.get(hdrs.IF_NONE_MATCH)
        if if_none_match is not None and _etag_matches(if_none_match, info.etag):
            opened.close()
            return web.Response(status=304, headers=headers)
        range_header = request.headers.get(hdrs.RANGE)
        if_range = request.headers.get(hdrs.IF_RANGE)
        if if_range is not None and if_range.strip() != info.etag:
            range_header = None  # the client's partial copy is of another version: send it whole
        try:
            wanted = parse_range(range_header, info.size)
        except Unsatisfiable:
            shown = printable(range_header.strip(), 60)
            raise ApiError(416, "range_not_satisfiable", f"the range {shown!r} selects no byte of this file "
                           f"({info.size} bytes)", {"size": info.size},
                           headers={hdrs.CONTENT_RANGE: f"bytes */{info.size}", hdrs.ACCEPT_RANGES: "bytes"}) from None
        status, start, length = 200, 0, info.size
        if wanted is not None:
            status, start, length = 206, wanted.start, wanted.length
            headers[hdrs.CONTENT_RANGE] = f"bytes {wanted.start}-{wanted.end}/{info.size}"
        if request.method == hdrs.METH_HEAD or length == 0:
            opened.close()
            headers[hdrs.CONTENT_LENGTH] = str(length)
            return web.Response(status=status, headers=headers)
    except BaseException:
        opened.close()
        raise
    release = request.app[DOWNLOADS].take(request.remote or "", settings.file_downloads_per_address)
    if release is None:
        opened.close()
        limit = settings.file_downloads_per_address
        raise ApiError(429, "too_many_downloads", f"this address has {limit} downloads in flight already; "
                       "retry when one has ended", {"limit": limit, "retry_after_s": RETRY_AFTER_S},
                       headers={"Retry-After": str(RETRY_AFTER_S)})
    body = FileSlice(opened, start, length, ctype, send_timeout=settings.file_send_timeout_s, release=release)
    return web.Response(status=status, headers=headers, body=body)


def describe_download(document: dict) -> dict:
    """Describe the file download in the generated document: binary content, 206 and the Range
    header (the route table knows JSON answers only)."""
    for path in ("/files/{token}", "/public/{token}"):
        op = document.get("paths", {}).get(path, {}).get("get")
        if op is not None and "206" not in op["responses"]:  # the document is cached: described once
            _describe_one_download(op)
    return document


def _describe_one_download(op: dict) -> None:
    op["description"] = ("No key: the token is the credential. A tampered, expired, revoked or unknown token, or a "
                         "file deleted since, answers 404. If-None-Match (304) and If-Range are honoured; HEAD "
                         "answers the headers alone.")
    op.setdefault("parameters", []).append(
        {"name": "Range", "in": "header", "required": False, "schema": {"type": "string"},
         "description": "one byte range: bytes=a-b, bytes=a- or bytes=-n"})
    # Every type the route answers (CONTENT_TYPES by the key's extension, else the default), the
    # default first: a client generator reading the first type it knows then takes bytes.
    kinds = dict.fromkeys([DEFAULT_CONTENT_TYPE, *(t.split(";")[0] for t in CONTENT_TYPES.values())])
    binary = {kind: {"schema": {"type": "string", "format": "binary"}} for kind in kinds}
    file_headers = {
        "Content-Length": {"schema": {"type": "integer"}}, "ETag": {"schema": {"type": "string"}},
        "Accept-Ranges": {"schema": {"type": "string"}},
    }
    responses = op["responses"]
    if "429" in responses:
        responses["429"] = {**responses["429"], "description": "Downloads in flight from this address at their "
                            "limit (`too_many_downloads`, `details.limit`); see Retry-After"}
    responses["200"] = {"description": "the whole file", "headers": {**responses["200"].get("headers", {}),
                                                                     **file_headers}, "content": binary}
    responses["206"] = {"description": "the requested byte range (Content-Range)",
                        "headers": {**file_headers, "Content-Range": {"schema": {"type": "string"}}},
                        "content": binary}


ROUTES = [
    Route("GET", "/files/{token}", download_file, scope=None, tag="Files", errors=(404, 416, 429),
          summary="Extension: download a stored file through a signed, expiring URL (no key; Range and HEAD)"),
    Route("GET", "/public/{token}", public_file, scope=None, tag="Files", errors=(404, 416, 429),
          summary="Extension: a video's file or poster through a public link that does not expire (no key; "
                  "revoked with DELETE /v1/videos/{id}/public-links; Range and HEAD)"),
]
