"""Reading an upload's multipart body (``POST /videos``): the media streamed to a staging file
under a pace (``UploadClock``), the captions and the form fields kept, each bounded, anything else
refused; and what the request's headers alone refuse. What the upload then is (probe, storage, the
video) is the write side's (``services.application.videos.IngestVideo``).
"""

from __future__ import annotations

import asyncio
import time
import unicodedata
from dataclasses import dataclass, field

from aiohttp import BodyPartReader, web
from aiohttp.http_exceptions import BadHttpMessage, LineTooLong

from domain.videos import MediaTooLarge
from services.api.errors import ApiError, body_timeout, printable
from services.api.models import is_visible
from services.api.protocol import parser_reason

CHUNK = 256 * 1024


class UploadClock:
    """The pace an upload's body must keep: no silence longer than ``idle_s``, and once the grace
    has passed, an average of at least ``min_rate`` bytes per second. A body trickled to hold a
    connection, a file descriptor and a staging file is answered 408 and closed."""

    GRACE_S = 60.0

    def __init__(self, idle_s: float, min_rate: int, now=time.monotonic) -> None:
        self.idle_s = idle_s
        self.min_rate = min_rate
        self.now = now
        self.started = now()
        self.received = 0

    async def next(self, awaitable):
        try:
            return await asyncio.wait_for(awaitable, self.idle_s)
        except TimeoutError:
            raise body_timeout(self.idle_s) from None

    def count(self, size: int) -> None:
        self.received += size
        elapsed = self.now() - self.started
        if elapsed > self.GRACE_S and self.received < self.min_rate * elapsed:
            raise body_timeout(self.idle_s)


async def _read_part(part: BodyPartReader, sink, limit: int, what: str, clock: UploadClock) -> int:
    size = 0
    while True:
        chunk = await clock.next(part.read_chunk(CHUNK))
        if not chunk:
            return size
        size += len(chunk)
        clock.count(len(chunk))
        if size > limit:
            raise MediaTooLarge(f"the {what} is larger than {limit} bytes", limit_bytes=limit, field=what)
        await sink(chunk)


MAX_FILENAME = 255  # what a file system holds; the video's default name is this name's stem


def client_filename(raw: str | None) -> str:
    """The upload's file name as a client sent it, made harmless: its last path component, no
    control or invisible-only content, at most 255 characters (the default name of the video)."""
    name = (raw or "").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if unicodedata.category(ch) != "Cc").strip()
    return name[:MAX_FILENAME] if any(is_visible(ch) for ch in name) else ""


def check_upload_request(request: web.Request, settings) -> None:
    """What the request's headers alone refuse: another body type, a coded body, a declared size past the bounds."""
    if request.content_type != "multipart/form-data":
        raise ApiError(415, "unsupported_media_type",
                       "upload the video as multipart/form-data with a `file` part (and optional `captions`)",
                       {"content_type": request.content_type})
    if request.headers.get("Content-Encoding", "identity").strip().lower() not in ("", "identity"):
        # Media is compressed already; a coded body would only let a small request write a large
        # staging file (a 300 KB gzip body decodes to 300 MB of zeros).
        raise ApiError(415, "unsupported_media_type", "upload media without a Content-Encoding (the file itself "
                       "is compressed media)", {"content_encoding": printable(request.headers["Content-Encoding"])})
    limit = settings.video_max_bytes
    if request.content_length is not None and request.content_length > limit + settings.captions_max_bytes + 65536:
        raise MediaTooLarge(f"the upload is larger than {limit} bytes", limit_bytes=limit, field="file")


@dataclass
class Upload:
    """What the multipart body held besides the media, which went to the staging file."""

    filename: str = ""
    captions: bytes | None = None
    fields: dict[str, str] = field(default_factory=dict)


async def read_upload(request: web.Request, settings, staged, digest) -> Upload:
    """The multipart body read part by part under the upload clock: the media streamed to
    ``staged`` (and into ``digest``), the captions and the form fields kept, each bounded; anything
    else refused."""
    upload = Upload()
    got_file = False
    clock = UploadClock(settings.api_upload_idle_timeout_s, settings.api_upload_min_rate_bytes_s)
    try:
        reader = await request.multipart()
        while (part := await clock.next(reader.next())) is not None:
            if not isinstance(part, BodyPartReader):
                raise ApiError(400, "invalid_request", "nested multipart bodies are not accepted", {})
            if part.name == "file":
                if got_file:
                    raise ApiError(400, "validation_error", "only one `file` part is accepted",
                                   {"fields": [{"field": "body.file", "rule": "repeated",
                                                "message": "given more than once"}]})
                got_file = True
                upload.filename = client_filename(part.filename)
                handle = await asyncio.to_thread(open, staged, "wb")

                def keep(chunk: bytes, handle=handle) -> None:  # sha256 lets go of the GIL
                    digest.update(chunk)
                    handle.write(chunk)

                async def write(chunk: bytes, keep=keep) -> None:
                    await asyncio.to_thread(keep, chunk)

                try:
                    await _read_part(part, write, settings.video_max_bytes, "file", clock)
                finally:
                    await asyncio.to_thread(handle.close)
            elif part.name == "captions":
                buf = bytearray()

                async def keep(chunk: bytes, buf=buf) -> None:
                    buf.extend(chunk)

                await _read_part(part, keep, settings.captions_max_bytes, "captions", clock)
                upload.captions = bytes(buf)
            elif part.name in ("name", "description", "language", "media_id", "published_at"):
                value = await clock.next(part.read(decode=True))
                if len(value) > 10_000:
                    raise ApiError(400, "validation_error", f"the field {part.name} is too long", {})
                upload.fields[part.name] = value.decode("utf-8", "replace")
            else:
                shown = printable(part.name) if part.name else "(a part without a name)"
                raise ApiError(400, "validation_error", f"unknown form field {shown!r}",
                               {"fields": [{"field": f"body.{shown}", "rule": "extra_forbidden",
                                            "message": "not a field of this upload"}]}, close=True)
    except (ValueError, AssertionError, LineTooLong, BadHttpMessage) as exc:  # a malformed multipart body
        reason = parser_reason(exc, None) if isinstance(exc, BadHttpMessage) else printable(str(exc), 200)
        raise ApiError(400, "invalid_request", f"the multipart body is malformed: {reason}", {},
                       close=True) from None
    if not got_file:
        raise ApiError(400, "validation_error", "the `file` part (the media) is required",
                       {"fields": [{"field": "body.file", "rule": "missing", "message": "Field required"}]})
    return upload
