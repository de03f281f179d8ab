"""The HTTP API (aiohttp) under ``/v1``, built from the route table.

A call goes through, in order:

1. ``outer`` (every request): a request id, the error envelope for anything raised, the
   ``X-Request-Id`` and rate-limit headers (a stream gets them before its first byte, from the
   endpoint), and one telemetry record once the answer is known;
2. ``guard`` (every ``/v1`` request but the public ones, unknown routes included): the key
   (401), then the workspace's rate-limit window (429), in one PostgreSQL statement shared by the
   requests that arrived together (``Authenticator``);
3. the route's endpoint: scope (403), query and body validation (400, 413, 415), a 503 for a
   command while Kafka is unreachable, then the resource module's handler; a streaming route's
   handler returns its events, which ``services/api/streams.py`` sends as Server-Sent Events.

Resources live in ``cleanup_ctx`` under typed keys; nothing is wired at import time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import time
import types
import typing
import uuid
from typing import Any

import orjson
from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError
from pydantic import BaseModel, ValidationError

from infra.adapters import database_adapters
from infra.codec import EventRegistry
from infra.db import create_pool, ping
from infra.eventstore_postgres import PostgresEventStore
from infra.ratelimit import RateCounter, RateLimiter
from infra.settings import Settings
from infra.storage import storage_for
from infra.webhook_tests import HttpWebhookTests
from services.api.article_exports import EXPORTS, ExportCache
from services.api.assistant.actions import ASSISTANT_ACTIONS, Catalog
from services.api.auth import Authenticator, bearer_token
from services.api.base import (
    APPLICATION,
    KAFKA,
    LIMITER,
    POOL,
    PRINCIPAL,
    RATE_COUNTER,
    READ_YOUR_WRITES,
    REQUEST_ID,
    SETTINGS,
    STARTED,
    STORE,
    TELEMETRY,
    WAITER,
    WINDOW,
    Call,
    Route,
    json_body,
)
from services.api.destinations import check_body_webhook_url
from services.api.errors import (
    MAX_BODY,
    ApiError,
    body_timeout,
    error_response,
    printable,
    to_api_error,
    too_large,
    unavailable,
    validation_error,
)
from services.api.files import DOWNLOADS, DownloadSlots
from services.api.kafka import KafkaLink
from services.api.metrics import METRICS, ApiMetrics, get_metrics
from services.api.monitoring import END_OFFSETS
from services.api.once import answer_once, idempotency_key
from services.api.protocol import serve_app
from services.api.routes import ROUTES
from services.api.streams import OPENED, STREAMS, OpenStreams, send_events
from services.api.waits import ProgressWaiter
from services.application.bootstrap import bootstrap
from services.lib.common import freeze_startup_heap
from services.lib.status import EndOffsets, heartbeat

log = logging.getLogger("vaeo.api")

PREFIX = "/v1"
REGISTRY = web.AppKey("registry", EventRegistry)
AUTHENTICATOR = web.AppKey("authenticator", Authenticator)
_REQUEST_ID_OK = re.compile(r"^[A-Za-z0-9._-]{8,64}$")
_JSON_TYPES = ("application/json",)


def json_response(payload: dict, status: int = 200) -> web.Response:
    return json_body(payload, status)


def _route_of(request: web.Request) -> Route | None:
    return getattr(request.match_info.handler, "vaeo_route", None)


# ------------------------------------------------------------------------------- middlewares


@web.middleware
async def outer(request: web.Request, handler) -> web.StreamResponse:
    incoming = request.headers.get("X-Request-Id", "")
    request_id = incoming if _REQUEST_ID_OK.match(incoming) else uuid.uuid4().hex
    request[REQUEST_ID] = request_id
    request[STARTED] = time.monotonic()
    started = time.perf_counter()
    try:
        response = await handler(request)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        err = to_api_error(exc, request, request_id)
        response = error_response(err)
        if isinstance(exc, RequestPayloadError) or err.status in (408, 499) or err.close:
            # What is left of a body that cannot be decoded, that stalled or that was cut cannot
            # be drained either.
            response.force_close()
    if not response.prepared:  # a stream sent its headers with its first byte (answer_headers)
        response.headers.update(answer_headers(request))
    # A stream's latency is the time to open it, not how long its client kept listening.
    latency_s = request.get(OPENED, time.perf_counter()) - started
    route = request.match_info.route.resource
    request.app[METRICS].observe(request.method, route.canonical if route is not None else "unmatched",
                                 response.status, latency_s)
    principal = request.get(PRINCIPAL)
    if principal is not None:
        request.app[KAFKA].record(str(principal.workspace_id), {
            "kind": "api_call", "workspace_id": str(principal.workspace_id), "environment": principal.environment,
            "key_id": str(principal.key_id), "method": request.method,
            "route": route.canonical if route is not None else "unmatched", "status": response.status,
            "latency_ms": round(latency_s * 1000, 3),
            "ts": int(request.app[SETTINGS].now().timestamp() * 1000),
            "request_id": request_id,
            **request.get(TELEMETRY, {}),
        })
    return response


def answer_headers(request: web.Request) -> dict[str, str]:
    """What every answer carries: its request id, the workspace's rate-limit window once the key
    was checked, and the outcome of a read-your-writes wait."""
    headers = {"X-Request-Id": request[REQUEST_ID]}
    window = request.get(WINDOW)
    if window is not None:
        headers.update(window.headers())
    if READ_YOUR_WRITES in request:
        headers["X-Read-Your-Writes"] = request[READ_YOUR_WRITES]
    return headers


@web.middleware
async def guard(request: web.Request, handler) -> web.StreamResponse:
    route = _route_of(request)
    needs_key = (request.path == PREFIX or request.path.startswith(PREFIX + "/")) and (
        route is None or route.scope is not None)
    if needs_key:
        if len(request.headers.getall("Authorization", ())) > 1:
            raise ApiError(400, "invalid_request", "send one Authorization header, not several",
                           {"header": "Authorization"})
        token = bearer_token(request.headers.get("Authorization"))
        principal, window = await request.app[AUTHENTICATOR].authenticate(token)
        request[PRINCIPAL] = principal
        request[WINDOW] = window
        if window.exceeded:
            raise ApiError(429, "rate_limited",
                           f"rate limit of {window.limit} requests per minute reached; retry in {window.reset_in} s",
                           {"limit": window.limit, "retry_after_s": window.reset_in},
                           headers={"Retry-After": str(window.reset_in)})
    return await handler(request)


# ------------------------------------------------------------------------------ the endpoints


def _parse_query(route: Route, request: web.Request) -> BaseModel | None:
    names = list(request.query.keys())
    repeated = sorted({n for n in names if len(request.query.getall(n)) > 1})
    if repeated:
        raise ApiError(400, "validation_error", f"repeated query parameters: {', '.join(repeated)}",
                       {"fields": [{"field": f"query.{n}", "rule": "repeated", "message": "given more than once"}
                                   for n in repeated]})
    if route.query is None:
        if names:
            raise ApiError(400, "validation_error", f"unknown query parameters: {', '.join(sorted(names))}",
                           {"fields": [{"field": f"query.{n}", "rule": "extra_forbidden",
                                        "message": "this operation takes no query parameter"} for n in sorted(names)]})
        return None
    params = dict(request.query)
    _check_query_scalars(route.query, params)
    try:
        return route.query.model_validate(params)
    except ValidationError as exc:
        raise validation_error(exc, "query") from None


_QUERY_INTEGER = re.compile(r"-?[0-9]{1,19}")
_QUERY_BOOLEANS = ("true", "false")


def _scalar_type(annotation: Any) -> Any:
    """``int`` of ``int``, ``int | None`` or ``Optional[int]``; the annotation itself otherwise."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1
    return args[0] if optional else annotation


def _check_query_scalars(model: type[BaseModel], params: dict[str, str]) -> None:
    """Integers and booleans are written one way: ASCII digits with an optional minus, and
    ``true``/``false``. pydantic's lax parsing of strings would also take ``+5``, ``1_0``, `` 7 ``,
    ``1.0``, ``yes`` or ``on``: what the interface calls an integer or a boolean is not that."""
    fields = []
    for name, value in params.items():
        info = model.model_fields.get(name)
        kind = _scalar_type(info.annotation) if info is not None else None
        if kind is int and not _QUERY_INTEGER.fullmatch(value):
            fields.append({"field": f"query.{name}", "rule": "int_parsing",
                           "message": "Input should be an integer written with ASCII digits"})
        elif kind is bool and value not in _QUERY_BOOLEANS:
            fields.append({"field": f"query.{name}", "rule": "bool_parsing",
                           "message": "Input should be true or false"})
    if fields:
        raise ApiError(400, "validation_error", f"invalid request: {', '.join(f['field'] for f in fields)}",
                       {"fields": fields})


# What aiohttp decodes in a request body. An unknown coding it would pass through undecoded;
# br and zstd (without their optional packages) it refuses itself, in plain text, before the app.
_CONTENT_CODINGS = {"", "identity", "gzip", "x-gzip", "deflate"}


def _check_content_encoding(request: web.Request) -> None:
    coding = request.headers.get("Content-Encoding", "").strip().lower()
    if coding not in _CONTENT_CODINGS and request.body_exists:
        shown = printable(coding)
        raise ApiError(415, "unsupported_media_type", f"the body's Content-Encoding {shown!r} is not supported "
                       "(gzip, deflate or none)", {"content_encoding": shown, "supported": ["gzip", "deflate"]})


async def _read_body(request: web.Request) -> bytes:
    """The whole body, decoded, within the body limit (413) and the body timeout (408); a body that
    cannot be decoded raises aiohttp's ``RequestPayloadError`` (400 ``invalid_body``)."""
    limit = request.app[MAX_BODY]
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    try:  # aiohttp refuses more than client_max_size (chunked bodies too): 413
        return await asyncio.wait_for(request.read(), request.app[SETTINGS].api_body_timeout_s)
    except TimeoutError:
        raise body_timeout(request.app[SETTINGS].api_body_timeout_s) from None


async def _parse_body(route: Route, request: web.Request) -> BaseModel | None:
    if route.body is None:
        # A GET or a DELETE ignores a body, but a coded one is decoded all the same (aiohttp decodes
        # it while draining it after the answer): one that is not what it claims is refused here,
        # as on every operation that reads its body, rather than found after the answer. (Uploads
        # read their own body and refuse any coding.)
        coding = request.headers.get("Content-Encoding", "").strip().lower()
        if route.method in ("GET", "DELETE") and request.body_exists and coding not in ("", "identity"):
            await _read_body(request)
        return None
    raw = await _read_body(request)
    if raw.strip():
        ctype = request.content_type
        if ctype not in _JSON_TYPES and not ctype.endswith("+json"):
            raise ApiError(415, "unsupported_media_type", "the body must be JSON (Content-Type: application/json)",
                           {"content_type": ctype})
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ApiError(400, "invalid_json", f"the body is not valid JSON: {exc}", {}) from None
    else:
        data = {}
    if not isinstance(data, dict):
        raise ApiError(400, "validation_error", "the body must be a JSON object",
                       {"fields": [{"field": "body", "rule": "object_type", "message": "must be an object"}]})
    try:
        # Strict, from the JSON itself: "1" or true is no integer, "yes" no boolean; JSON's strings
        # still become the uuids and dates a model declares.
        # A number with no fraction (1426.0) is an integer, as JSON Schema says: written as one.
        return route.body.model_validate_json(orjson.dumps(_integral(data)), strict=True)
    except ValidationError as exc:
        raise validation_error(exc, "body") from None


# The integers a JSON body may hold (orjson reads a larger one as a float, and writes none).
_JSON_INTEGERS = range(-2**63, 2**64)


def _integral(value: Any) -> Any:
    """The parsed body with every float that has no fraction written as an integer, when it is one
    JSON can carry (64 bits); a larger one stays a float, which an integer field refuses (400
    naming the field, ``int_type``)."""
    if isinstance(value, float) and value.is_integer() and int(value) in _JSON_INTEGERS:
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


def endpoint(route: Route):
    async def handle(request: web.Request) -> web.StreamResponse:
        principal = request.get(PRINCIPAL)
        if route.scope is not None and (principal is None or not principal.has(route.scope)):
            raise ApiError(403, "insufficient_scope", f"this operation needs the scope {route.scope}",
                           {"required": route.scope, "granted": sorted(principal.scopes) if principal else []})
        query = _parse_query(route, request)
        _check_content_encoding(request)
        body = await _parse_body(route, request)
        await check_body_webhook_url(request.app[SETTINGS], principal.environment if principal else "production",
                                     body)
        if route.writes and not request.app[KAFKA].available:
            raise unavailable("Kafka")
        call = Call(request, principal, query, body)
        try:
            key = idempotency_key(request) if route.takes_idempotency_key else None
            result = await (route.handler(call) if key is None else answer_once(call, route, key))
        finally:
            for cleanup in call.cleanups:
                cleanup()
        if route.stream:
            return await send_events(request, result, answer_headers(request),
                                     request.app[SETTINGS].api_stream_keepalive_s)
        if isinstance(result, web.StreamResponse):  # a handler that answers other than JSON (a file)
            return result
        return json_body(result, route.status)

    handle.vaeo_route = route  # type: ignore[attr-defined]
    handle.__name__ = route.operation_id
    return handle


async def healthz(request: web.Request) -> web.Response:
    try:
        await ping(request.app[POOL])
    except Exception as exc:
        return json_response({"error": {"code": "unavailable", "message": str(exc), "details": {}}}, 503)
    # pid: which of several API processes sharing the port answered (``vaeo up --api N``).
    return json_response({"data": {"status": "ok", "kafka": request.app[KAFKA].available, "pid": os.getpid()}})


# ------------------------------------------------------------------------------- the app


def build_app(settings: Settings) -> web.Application:
    app = web.Application(middlewares=[outer, guard], client_max_size=settings.api_max_body_bytes)
    app[SETTINGS] = settings
    app[MAX_BODY] = settings.api_max_body_bytes
    app[REGISTRY] = EventRegistry()
    app[LIMITER] = RateLimiter(clock=settings.now)

    async def database(app: web.Application):
        # min_size=0: the API starts, and answers 503, while PostgreSQL is down.
        app[POOL] = await create_pool(settings.resolved_database_url(), min_size=0, max_size=settings.api_pool_size)
        app[STORE] = PostgresEventStore(app[POOL], app[REGISTRY], notify=settings.notify_on_append,
                                        group_commit=settings.api_group_commit, id_block=settings.api_id_block,
                                        clock=settings.now)
        app[AUTHENTICATOR] = Authenticator(app[POOL], app[REGISTRY], app[LIMITER], clock=settings.now)
        app[RATE_COUNTER] = RateCounter(app[POOL], app[LIMITER])
        app[APPLICATION] = bootstrap(settings, app[STORE], database_adapters(
            app[POOL], storage=storage_for(settings), webhook_tests=HttpWebhookTests(settings)))
        yield
        await app[POOL].close()

    async def background(app: web.Application):
        stop = asyncio.Event()
        link = KafkaLink(settings)
        await link.start(timeout_s=5.0)
        app[KAFKA] = link
        app[WAITER] = ProgressWaiter(settings.resolved_database_url(), app[POOL], settings.read_your_writes_timeout_s)
        tasks = [asyncio.create_task(link.run(stop)), asyncio.create_task(app[WAITER].run(stop)),
                 asyncio.create_task(_forget_windows(app, stop)), asyncio.create_task(_sweep_staging(app, stop))]
        yield
        stop.set()
        done, pending = await asyncio.wait(tasks, timeout=10)
        for task in pending:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    app[METRICS] = ApiMetrics()
    app[STREAMS] = OpenStreams()
    app[EXPORTS] = ExportCache()
    app[DOWNLOADS] = DownloadSlots()
    app[METRICS].open_streams.set_function(lambda: app[STREAMS].count)

    async def end_streams(app: web.Application) -> None:
        # Before the server waits for its handlers to finish: a stream would otherwise hold the
        # shutdown until its job ends.
        app[STREAMS].closing.set()

    app.on_shutdown.append(end_streams)

    async def monitoring(app: web.Application):
        app[END_OFFSETS] = EndOffsets(settings)
        stop = asyncio.Event()
        beat = asyncio.create_task(heartbeat(settings, "api", stop))
        yield
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(beat, 5)
        await app[END_OFFSETS].close()

    app.cleanup_ctx.append(database)
    app.cleanup_ctx.append(background)
    app.cleanup_ctx.append(monitoring)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", get_metrics)
    app[ASSISTANT_ACTIONS] = Catalog.of(ROUTES)  # built once, before the heap is frozen
    for route in ROUTES:
        if route.method == "GET":  # and HEAD, as HTTP asks of every GET: the same answer without its body
            app.router.add_get(PREFIX + route.router_path, endpoint(route))
        else:
            app.router.add_route(route.method, PREFIX + route.router_path, endpoint(route))
    return app


async def _sweep_staging(app: web.Application, stop: asyncio.Event) -> None:
    """At start, then hourly: staging files left by uploads whose API process died are deleted."""
    settings = app[SETTINGS]
    storage = storage_for(settings)
    while not stop.is_set():
        try:
            removed = await asyncio.to_thread(storage.sweep_staging, settings.api_staging_max_age_s)
            if removed:
                log.info("deleted %d abandoned staging file(s)", removed)
        except OSError as exc:
            log.warning("staging files not swept: %s", exc)
        try:
            await asyncio.wait_for(stop.wait(), 3600)
        except TimeoutError:
            pass


async def _forget_windows(app: web.Application, stop: asyncio.Event) -> None:
    """Every minute: the rate-limit windows that ended, and the idempotency keys past their retention."""
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), 60)
            return
        except TimeoutError:
            pass
        try:
            await app[LIMITER].forget_old_windows(app[POOL])
        except Exception as exc:
            log.debug("old rate windows not forgotten: %s", exc)
        try:
            await app[APPLICATION].idempotency.purge()
        except Exception as exc:
            log.debug("old idempotency keys not purged: %s", exc)


def serve(settings: Settings) -> None:
    app = build_app(settings)
    freeze_startup_heap()
    asyncio.run(serve_app(app, settings.api_host, settings.api_port, reuse_port=settings.api_reuse_port))
