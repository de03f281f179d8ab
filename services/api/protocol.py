"""The HTTP server around the app: what answers a request that never reaches it.

aiohttp answers a request it cannot parse (a NUL or another forbidden byte in a header, a header
line over 8 KiB, a malformed request line) itself, before any middleware, in plain text that
quotes the offending header line, and logs that line with its traceback. When the line is
``Authorization: Bearer <key>`` that echoes the whole credential to the client and writes it to
the log. ``SafeRequestHandler`` answers these with the error envelope and an ``X-Request-Id``,
quotes only the parser's reason (the words before its first colon, never the bytes), and logs
the same; a failure outside the application (500) is logged with its frames but without the
exception's message, which may hold request data.
"""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import traceback
import uuid
from collections.abc import Callable
from http import HTTPStatus

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestHandler, RequestPayloadError

log = logging.getLogger("vaeo.api")

_CODES = {400: "invalid_request", 408: "request_timeout", 413: "payload_too_large", 414: "uri_too_long",
          431: "headers_too_large"}
LINGERING_S = 2.0
_QUOTED = re.compile(r"""(b?'[^']*'|b?"[^"]*")""")


def parser_reason(exc: BaseException | None, message: str | None) -> str:
    """The parser's reason without anything the client sent: its first line, cut at the first colon."""
    text = getattr(exc, "message", None) or message or ""
    first = str(text).strip().splitlines()[0] if str(text).strip() else ""
    first = _QUOTED.sub("", first.split(":", 1)[0]).strip()
    return first.encode("ascii", "replace").decode()[:120] or "malformed request"


class SafeRequestHandler(RequestHandler):
    def when_lost(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` once the client's connection is closed (at once if it is already);
        returns the function that forgets it. A Server-Sent Events stream ends on it: aiohttp does
        not cancel a handler whose client left, and a quiet stream would notice only at its next
        write."""
        if self.transport is None:
            callback()
            return lambda: None
        callbacks = self.__dict__.setdefault("_lost_callbacks", [])
        callbacks.append(callback)

        def forget() -> None:
            if callback in callbacks:
                callbacks.remove(callback)

        return forget

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        for callback in self.__dict__.pop("_lost_callbacks", []):
            callback()

    def log_exception(self, *args, **kw) -> None:
        """A body that cannot be decoded (a ``Content-Encoding`` it does not have, a malformed chunk)
        is the client's error: it was answered 400 and logged once at info level when the
        application read it, or the answer came before the body was needed (a 401). aiohttp finds it
        again while it drains what is left of the body after the answer, and would log it as an
        unhandled exception with its traceback: anyone could fill the error log with it."""
        exc = kw.get("exc_info")
        if isinstance(exc, RequestPayloadError):
            log.debug("an unread request body could not be decoded: %s", exc)
            return
        super().log_exception(*args, **kw)

    def handle_error(self, request, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        request_id = uuid.uuid4().hex
        if status >= 500:
            frames = "".join(traceback.format_tb(exc.__traceback__)) if exc is not None else ""
            log.error("request %s failed outside the application: %s\n%s", request_id,
                      type(exc).__name__ if exc else "unknown", frames, extra={"request_id": request_id})
            text = f"internal error; quote request id {request_id}"
        else:
            text = f"the request is not valid HTTP: {parser_reason(exc, message)}"
            log.info("request %s refused by the HTTP parser (%s): %s", request_id, status, text,
                     extra={"request_id": request_id})
        if request.writer.output_size > 0:
            raise ConnectionError("the response has started; no error answer can follow")
        code = _CODES.get(status) or ("internal_error" if status >= 500 else
                                      HTTPStatus(status).phrase.lower().replace(" ", "_"))
        details = {"request_id": request_id} if status >= 500 else {}
        response = web.Response(status=status, content_type="application/json",
                                body=orjson.dumps({"error": {"code": code, "message": text, "details": details}}),
                                headers={"X-Request-Id": request_id})
        response.force_close()
        return response


class SafeServer(web.Server):
    def __call__(self) -> RequestHandler:
        return SafeRequestHandler(self, loop=self._loop, **self._kwargs)


class SafeAppRunner(web.AppRunner):
    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()
        return SafeServer(plain.request_handler, request_factory=plain.request_factory,
                          handler_cancellation=plain.handler_cancellation, loop=plain._loop, **plain._kwargs)


async def serve_app(app: web.Application, host: str, port: int, *, reuse_port: bool = False) -> None:
    """Serve ``app`` until SIGINT or SIGTERM, then shut it down cleanly (cleanup contexts included)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    # lingering_time: after answering a request whose body was left unread (a 408, a 413), aiohttp
    # keeps reading it, so that the client is not reset before it reads the answer; 10 s by
    # default, which a stalled body holds to the end. Two seconds is enough for the answer.
    runner = SafeAppRunner(app, handle_signals=False, access_log=None, lingering_time=LINGERING_S)
    await runner.setup()
    try:
        # reuse_port: several API processes (``vaeo up --api N``) listen on the one port, and the
        # kernel spreads the incoming connections across them.
        await web.TCPSite(runner, host, port, reuse_port=reuse_port or None).start()
        await stop.wait()
    finally:
        await runner.cleanup()
