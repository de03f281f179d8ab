"""The Server-Sent Events sender (``services/api/streams.py``) on a real HTTP server.

An app of one streaming handler, served by the API's own server (``SafeAppRunner``), read over a
real connection: what no route of the service can show on demand. With a keep-alive of a minute,
a client that leaves is noticed at once (the connection's closing, not a failed write), and the
event generator's ``finally`` runs; an exception after the first byte ends the stream with an
``error`` event. The e2e tests (tests/e2e/test_streams.py) cover a real route on the real processes.
"""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
from aiohttp import web

from services.api.base import REQUEST_ID
from services.api.protocol import SafeAppRunner
from services.api.streams import STREAMS, OpenStreams, ServerSentEvent, send_events
from tests.support.service import free_port


async def _serve(events_factory, keepalive_s: float):
    closed = asyncio.Event()

    async def handler(request: web.Request) -> web.StreamResponse:
        request[REQUEST_ID] = "test-request-0001"
        return await send_events(request, events_factory(closed), {"X-Request-Id": "test-request-0001"},
                                 keepalive_s)

    app = web.Application()
    app[STREAMS] = OpenStreams()
    app.router.add_get("/stream", handler)

    async def end_streams(app: web.Application) -> None:  # as the API's app does on shutdown
        app[STREAMS].closing.set()

    app.on_shutdown.append(end_streams)
    runner = SafeAppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, app, f"http://127.0.0.1:{port}/stream", closed


async def test_a_client_that_leaves_a_quiet_stream_is_noticed_at_once_and_the_generator_closed():
    async def quiet(closed: asyncio.Event):
        try:
            yield ServerSentEvent("hello", {"n": 1}, id=1)
            await asyncio.sleep(3600)  # nothing more to say for an hour
            yield ServerSentEvent("never", {}, id=2)
        finally:
            closed.set()

    runner, app, url, closed = await _serve(quiet, keepalive_s=60)
    try:
        async with aiohttp.ClientSession() as http:
            resp = await http.get(url)
            assert resp.headers["Content-Type"] == "text/event-stream"
            assert resp.headers["X-Request-Id"] == "test-request-0001"
            assert await resp.content.readuntil(b"\n\n") == b'id: 1\nevent: hello\ndata: {"n":1}\n\n'
            assert app[STREAMS].count == 1
            left = time.monotonic()
            resp.close()  # drop the connection
        await asyncio.wait_for(closed.wait(), 5)
        assert time.monotonic() - left < 5  # long before the next keep-alive write (60 s)
        for _ in range(100):
            if app[STREAMS].count == 0:
                break
            await asyncio.sleep(0.01)
        assert app[STREAMS].count == 0
    finally:
        await runner.cleanup()


async def test_keep_alive_comments_fill_the_silence_between_events():
    async def slow(closed: asyncio.Event):
        yield ServerSentEvent("first", [1], id="a")
        await asyncio.sleep(0.35)
        yield ServerSentEvent("second", "two\nlines", id="b")

    runner, app, url, _ = await _serve(slow, keepalive_s=0.1)
    try:
        async with aiohttp.ClientSession() as http, http.get(url) as resp:
            body = await resp.read()  # the server ends the stream after the second event
        first, rest = body.split(b"\n\n", 1)
        assert first == b'id: a\nevent: first\ndata: [1]'
        assert rest.count(b": keep-alive\n\n") >= 2
        assert rest.endswith(b'id: b\nevent: second\ndata: "two\\nlines"\n\n')  # one data line: JSON escapes
    finally:
        await runner.cleanup()


async def test_an_error_after_the_first_byte_ends_the_stream_with_an_error_event(caplog):
    async def failing(closed: asyncio.Event):
        yield ServerSentEvent("first", {}, id=1)
        raise RuntimeError("the read model vanished")

    runner, app, url, _ = await _serve(failing, keepalive_s=60)
    try:
        with caplog.at_level(logging.ERROR, logger="vaeo.api"):
            async with aiohttp.ClientSession() as http, http.get(url) as resp:
                assert resp.status == 200
                body = await resp.read()
        assert body.startswith(b"id: 1\nevent: first\ndata: {}\n\n")
        error = body.split(b"\n\n")[1]
        assert error.startswith(b"event: error\ndata: ")  # no id: the last good id stays the client's
        assert b'"code":"internal_error"' in error and b"test-request-0001" in error
        assert b"vanished" not in error  # the message of the exception stays in the log
        assert any("test-request-0001" in r.getMessage() for r in caplog.records)
        assert app[STREAMS].count == 0
    finally:
        await runner.cleanup()
