"""Server-Sent Events: the answer of a route declared with ``stream=True``.

A streaming route's handler is a coroutine like any other: it checks what it needs (the resource
exists and is the caller's) and returns an async iterator of ``ServerSentEvent`` instead of a
JSON payload. By then everything that can refuse the call has run: the key and the rate limit
(``guard``), the scope and the query and body validation (``endpoint``), the handler's own checks;
a refusal is the ordinary JSON error envelope. Only then is the 200 sent, carrying the request id
and the rate-limit headers: a JSON answer gets them from the ``outer`` middleware after the
handler returns, but a stream's headers leave with its first byte, so they are given here.

Each event is written as a block of ``id:``, ``event:`` and ``data:`` lines (the data is one line
of JSON) followed by a blank line; when nothing was written for ``keepalive_s`` seconds, a comment
line ``: keep-alive`` is, so that proxies and clients do not take a quiet stream for a dead one.

A handler whose first event is known when it returns (the assistant's ``conversation``) returns
``Opening(first, rest)``: the 200's headers and that event leave together, at once, before the
rest is awaited. Events that are ready together may be sent as one ``EventBatch`` (one write).

The stream ends when the iterator ends, when the client goes away (the connection tells at once,
not at the next write), or when the API shuts down (the client may reconnect to another process).
A HEAD request gets the headers and
no event. In every case the iterator is closed, so its ``finally`` runs, and no task is left behind; a
client that leaves is no error and logs none. An exception of the iterator after the first byte
can no longer become an error answer: it is logged with the request id like any 500, and the
stream ends with an ``error`` event carrying the error envelope.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import web

from services.api.base import REQUEST_ID, json_default
from services.api.errors import to_api_error

log = logging.getLogger("vaeo.api.streams")

CONTENT_TYPE = "text/event-stream"
KEEP_ALIVE = b": keep-alive\n\n"
# When the stream's 200 left (time.perf_counter()): its telemetry latency is the time to open it,
# not how long the client kept listening.
OPENED = web.RequestKey("stream_opened", float)


@dataclass(frozen=True)
class ServerSentEvent:
    """One event: ``event`` (its name), ``data`` (anything orjson encodes) and ``id`` (what an
    ``EventSource`` sends back as ``Last-Event-ID``). Every event of a route has an id; only the
    ``error`` event that ends a failed stream has none (a client's last id stays the last good one)."""

    event: str
    data: Any
    id: int | str | None

    def __post_init__(self) -> None:
        for name in ("id", "event"):
            value = getattr(self, name)
            if value is None and name == "id":
                continue
            if not str(value) or any(c in str(value) for c in "\r\n\0"):
                raise ValueError(f"an event's {name} is one non-empty line: {value!r}")

    def encode(self) -> bytes:
        lines = b"" if self.id is None else b"id: %s\n" % str(self.id).encode()
        return lines + b"event: %s\ndata: %s\n\n" % (self.event.encode(), orjson.dumps(self.data, default=json_default))


@dataclass(frozen=True)
class EventBatch:
    """Events that are ready together, written in one piece (each keeps its own id and name)."""

    events: tuple[ServerSentEvent, ...]

    def encode(self) -> bytes:
        return b"".join(e.encode() for e in self.events)


class Opening:
    """An event stream whose first event is known before the stream starts: ``send_events`` writes
    it with the headers, then sends ``rest``; closing this closes ``rest``."""

    def __init__(self, first: ServerSentEvent, rest: AsyncIterator[ServerSentEvent | EventBatch]) -> None:
        self.first = first
        self.rest = rest

    def __aiter__(self) -> Opening:
        return self

    async def __anext__(self) -> ServerSentEvent | EventBatch:
        return await anext(self.rest)

    async def aclose(self) -> None:
        aclose = getattr(self.rest, "aclose", None)
        if aclose is not None:
            await aclose()


class _HeadersWithFirstEvent(web.StreamResponse):
    """A stream response whose headers wait for its first write (aiohttp then sends both in one
    piece); only for a stream that writes an event at once (``Opening``)."""

    _send_headers_immediately = False  # aiohttp's switch (3.12+); without it the headers leave in a write of their own


class OpenStreams:
    """The streams this API process is sending: their count (the ``vaeo_http_open_streams`` gauge)
    and the signal that ends them all when the process shuts down."""

    def __init__(self) -> None:
        self.count = 0
        self.closing = asyncio.Event()


STREAMS = web.AppKey("streams", OpenStreams)

_END = object()


async def _next(events: AsyncIterator[ServerSentEvent]) -> Any:
    try:
        return await anext(events)
    except StopAsyncIteration:
        return _END


def _when_lost(request: web.Request, callback: Callable[[], None]) -> Callable[[], None]:
    """Call ``callback`` when the client's connection closes; returns the function that forgets it.
    Under a server without that hook (aiohttp's own test server), the next write notices instead."""
    register = getattr(request.protocol, "when_lost", None)
    return register(callback) if register is not None else (lambda: None)


async def send_events(request: web.Request, events: AsyncIterator[ServerSentEvent], headers: Mapping[str, str],
                      keepalive_s: float) -> web.StreamResponse:
    """Send ``events`` as ``text/event-stream`` until one of the ends above; see the module's text."""
    streams = request.app[STREAMS]
    first = events.first if isinstance(events, Opening) else None
    response = (web.StreamResponse if first is None else _HeadersWithFirstEvent)(status=200, headers={
        "Content-Type": CONTENT_TYPE, "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",  # a proxy that buffers answers (nginx) would hold the events back
        **headers})
    gone = asyncio.Event()
    forget = _when_lost(request, gone.set)
    ends = [asyncio.ensure_future(gone.wait()), asyncio.ensure_future(streams.closing.wait())]
    pending: asyncio.Future | None = None
    streams.count += 1
    try:
        await response.prepare(request)
        if first is not None and request.method != "HEAD":
            await response.write(first.encode())
        request[OPENED] = time.perf_counter()
        while request.method != "HEAD" and not gone.is_set() and not streams.closing.is_set():
            if pending is None:
                pending = asyncio.ensure_future(_next(events))
            done, _ = await asyncio.wait([pending, *ends], timeout=keepalive_s, return_when=asyncio.FIRST_COMPLETED)
            if pending not in done:
                if not done:  # neither an event nor an end within the interval
                    await response.write(KEEP_ALIVE)
                continue
            finished, pending = pending, None
            try:
                event = finished.result()
            except Exception as exc:
                err = to_api_error(exc, request, request[REQUEST_ID])  # logs it as any failed request
                await response.write(ServerSentEvent("error", err.envelope(), id=None).encode())
                break
            if event is _END:
                break
            await response.write(event.encode())
        if not gone.is_set():
            await response.write_eof()
    except ConnectionError:  # the client left between the check and the write: nothing to report
        gone.set()
    finally:
        for end in ends:
            end.cancel()
        if pending is not None:  # the client left or the process stops while an event was awaited
            pending.cancel()
            await asyncio.wait([pending])
            with contextlib.suppress(asyncio.CancelledError, Exception):
                pending.result()  # retrieved: asyncio would otherwise log it as never retrieved
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            try:
                await aclose()
            except Exception:
                log.error("request %s: the event stream failed while closing", request[REQUEST_ID], exc_info=True,
                          extra={"request_id": request[REQUEST_ID]})
        forget()
        streams.count -= 1
    return response
