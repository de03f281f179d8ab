"""What every resource module of the API shares: the route declaration, the call context, errors.

A resource module declares its routes next to its handlers as a ``ROUTES`` list of ``Route``;
``services/api/routes.py`` gathers them into the one table that the app, the OpenAPI document
and the scope-matrix test read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import asyncpg
import orjson
from aiohttp import web
from pydantic import BaseModel

from infra.eventlog import key_of, partition_for
from infra.eventstore import EventStore
from infra.ratelimit import RateCounter, RateLimiter, Window
from infra.settings import Settings
from services.api.auth import Principal
from services.api.errors import ApiError, not_found  # noqa: F401  (re-exported for the resource modules)
from services.api.kafka import KafkaLink
from services.api.waits import ProgressWaiter
from services.application.context import Application, Context
from services.application.idempotency import IdempotencyKeys
from services.application.meta import request_meta

SETTINGS = web.AppKey("settings", Settings)
POOL = web.AppKey("pool", asyncpg.Pool)
STORE = web.AppKey("store", EventStore)
KAFKA = web.AppKey("kafka", KafkaLink)
WAITER = web.AppKey("waiter", ProgressWaiter)
LIMITER = web.AppKey("limiter", RateLimiter)
RATE_COUNTER = web.AppKey("rate_counter", RateCounter)  # requests other than HTTP calls (the assistant's actions)
APPLICATION = web.AppKey("application", Application)  # the write side's handler context, built at start-up
REQUEST_ID = web.RequestKey("request_id", str)
PRINCIPAL = web.RequestKey("principal", Principal)
# The workspace's rate-limit window as the call's own count left it (the answer's X-RateLimit-* headers).
WINDOW = web.RequestKey("rate_window", Window)
READ_YOUR_WRITES = web.RequestKey("read_your_writes", str)
# What a call adds to its telemetry record (``vaeo.telemetry.v1``), for the readers of that topic:
# the export route's ``first_exports``, which the exports watch records as ExportReady.
TELEMETRY = web.RequestKey("telemetry", dict)
STARTED = web.RequestKey("started", float)  # time.monotonic() when the request arrived


def json_default(obj: Any) -> Any:
    if isinstance(obj, UUID) or type(obj).__name__ == "UUID":  # asyncpg returns its own UUID type
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def json_body(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(body=orjson.dumps(payload, default=json_default), status=status,
                        content_type="application/json", headers=headers)


@dataclass
class Call:
    """One authorised call: the request, the caller, and the validated query and body."""

    request: web.Request
    principal: Principal
    query: Any = None
    body: Any = None
    # What a route's ``fingerprint`` read of the body for its handler (the staged upload), and what
    # to undo once the call is answered whether the handler ran or not.
    prepared: Any = None
    cleanups: list[Callable[[], None]] = field(default_factory=list)

    @property
    def app(self) -> web.Application:
        return self.request.app

    @property
    def workspace_id(self) -> UUID:
        return self.principal.workspace_id

    @property
    def environment(self) -> str:
        return self.principal.environment

    @property
    def pool(self) -> asyncpg.Pool:
        return self.app[POOL]

    @property
    def store(self) -> EventStore:
        return self.app[STORE]

    @property
    def context(self) -> Context:
        """The application for this call: commands run through it (``context.handle(command)``),
        and what they append carries this call's meta."""
        return self.app[APPLICATION].context(self.meta())

    @property
    def idempotency(self) -> IdempotencyKeys:
        """Idempotency keys: ``call.idempotency.run(call.workspace_id, operation, key, params, command,
        api_key_id=call.principal.key_id, environment=call.environment)`` runs a command once per
        key of the calling API key."""
        return self.app[APPLICATION].idempotency

    def path(self, name: str) -> str:
        return self.request.match_info[name]

    @property
    def method(self) -> str:
        """The operation's HTTP method (an assistant's action: its route's, not the assistant's POST)."""
        return self.request.method

    def header(self, name: str) -> str | None:
        """A header of the request that asked for this operation (an assistant's action has none)."""
        return self.request.headers.get(name)

    def meta(self) -> dict[str, str]:
        """What the events of this call carry in ``meta``: who, which request to quote, and the
        request as their chain and cause (``services.application.meta``)."""
        return request_meta(self.request[REQUEST_ID], self.principal.key_id)

    async def read_your_writes(self, projection: str, position: int) -> bool:
        """Wait (bounded) until ``projection`` has applied ``position`` on this workspace's partition."""
        partition = partition_for(key_of(self.workspace_id), self.app[KAFKA].partitions)
        reached = await self.app[WAITER].wait(projection, partition, position, since=self.request.get(STARTED))
        self.request[READ_YOUR_WRITES] = "applied" if reached else "timeout"
        return reached


Handler = Callable[[Call], Awaitable[Any]]


def integer_id(raw: str, what: str) -> int:
    """An integer id from a path: ASCII digits only, within PostgreSQL's integer; else the 404 of a
    missing ``what`` (``str.isdigit`` would also take ``²``, ``①`` or Arabic-Indic digits, and
    ``int()`` would read some of those as another id)."""
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 10 or int(raw) > 2_147_483_647:
        raise not_found(what, raw)
    return int(raw)


HEX_ID = "[0-9a-fA-F-]+"  # a uuid's characters: no brace, so aiohttp's route syntax takes it as is


@dataclass(frozen=True)
class Route:
    """One operation: where, who may call it, what it takes and what it answers.

    ``scope`` None means a public route (no key). ``writes`` marks commands: they are refused with
    503 while Kafka is unreachable, since what they write could not become readable. ``stream``
    marks a Server-Sent Events operation: its handler returns an async iterator of
    ``ServerSentEvent`` (``services/api/streams.py``) instead of a JSON payload; ``events`` names
    its events and ``response``, if given, describes their data.
    """

    method: str
    path: str  # below /v1, e.g. "/jobs/{id}"
    handler: Handler = field(compare=False)
    scope: str | None
    summary: str
    tag: str
    status: int = 200
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    response: type[BaseModel] | None = None
    writes: bool = False
    errors: tuple[int, ...] = ()  # statuses this operation answers beyond the common ones
    # Regexes of path parameters, e.g. (("id", HEX_ID),): a static sibling such as
    # /webhooks/job-secret then never matches /webhooks/{id} (nor its Allow header).
    patterns: tuple[tuple[str, str], ...] = ()
    stream: bool = False
    events: tuple[str, ...] = ()  # a stream's event names, for the OpenAPI document
    # Whether the operation takes an ``Idempotency-Key`` header (``services/api/once.py``): None
    # means every POST does (each creates something or charges); False for a POST that has its own
    # key in its body.
    idempotent: bool | None = None
    # For a body the route reads itself (an upload): reads it before the key is claimed and returns
    # what identifies it (digests), which the key is bound to besides the path and query.
    fingerprint: Callable[[Call], Awaitable[dict]] | None = field(default=None, compare=False)

    @property
    def takes_idempotency_key(self) -> bool:
        return self.method == "POST" if self.idempotent is None else self.idempotent

    @property
    def router_path(self) -> str:
        path = self.path
        for name, regex in self.patterns:
            path = path.replace("{" + name + "}", "{" + name + ":" + regex + "}")
        return path

    @property
    def operation_id(self) -> str:
        return self.handler.__name__.lstrip("_")
