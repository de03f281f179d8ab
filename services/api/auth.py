"""Authentication: ``Authorization: Bearer <key>`` to a principal (key, workspace, scopes, environment).

It never waits for Kafka: the digest index ``api_key_digests`` is written in the append
transaction that issues a key, and the key's state (scopes, environment, expiry, revocation)
comes from the key's own stream in the events table, read in the same round trip. So a key
works on the request right after its creation, and a revoked key fails on the very next request,
whichever API process serves it. No cache: the one indexed query is the price of that promise.

**Group authentication** (``Authenticator``): the requests that arrive while one lookup is in
flight go together in the next one, a single statement that reads their keys and numbers them in
their workspaces' rate-limit windows (one increment per workspace by its number of calls; see
``infra.ratelimit``). A request never joins a statement that has already started, so its
snapshot is always later than the request: a key revoked before the request was sent is seen
revoked. Sharing the statement is what keeps the hot rate-limit row from becoming a lock queue
under load (one row update per group instead of per call) and saves a round trip per request.
An unknown, revoked or expired key is numbered nothing. The expiry is judged again in Python,
from the upcast event: a key the statement counted that expired in between is refused (its calls
stay counted in the window); one the statement found expired a moment before is numbered alone.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from infra import crypto
from infra.codec import EventRegistry
from infra.ratelimit import RateLimiter, Window, lookup_and_count
from infra.settings import wall_clock
from services.api.errors import ApiError

# A key is its prefix and URL-safe base64: anything else (other bytes, non-ASCII, bytes that are
# not UTF-8 at all) is no key of ours and is refused before it is hashed or looked up.
_KEY_SHAPE = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True, slots=True)
class Principal:
    key_id: UUID
    workspace_id: UUID
    scopes: frozenset[str]
    environment: str  # production or sandbox

    def has(self, scope: str) -> bool:
        return "*" in self.scopes or scope in self.scopes


def missing_key() -> ApiError:
    return ApiError(401, "missing_key", "no API key: send Authorization: Bearer <key>", {},
                    headers={"WWW-Authenticate": 'Bearer realm="vaeo"'})


def invalid_key(why: str) -> ApiError:
    return ApiError(401, "invalid_key", f"invalid API key: {why}", {},
                    headers={"WWW-Authenticate": 'Bearer realm="vaeo", error="invalid_token"'})


def bearer_token(header: str | None) -> str:
    if header is None:
        raise missing_key()
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise invalid_key("the Authorization header must be 'Bearer <key>'")
    if len(token) > 200 or not _KEY_SHAPE.fullmatch(token) or crypto.environment_of_key(token) is None:
        raise invalid_key("not a key of this service")
    return token


class Authenticator:
    """Authenticates and numbers the concurrent requests of one API process in groups."""

    def __init__(self, pool: asyncpg.Pool, registry: EventRegistry, limiter: RateLimiter, max_group: int = 256,
                 clock: Callable[[], datetime] = wall_clock) -> None:
        self.clock = clock
        self.pool = pool
        self.registry = registry
        self.limiter = limiter
        self.max_group = max_group
        self._queue: list[tuple[str, asyncio.Future]] = []
        self._runner: asyncio.Task | None = None

    async def authenticate(self, token: str) -> tuple[Principal, Window]:
        """The caller and this call's number in its workspace's rate-limit window."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append((crypto.key_digest(token), future))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run())
        return await future

    async def _run(self) -> None:
        while self._queue:
            group, self._queue = self._queue[:self.max_group], self._queue[self.max_group:]
            try:
                await self._answer(group)
            except Exception as exc:  # an outage: every caller of the group hears it (503)
                for _, future in group:
                    if not future.done():
                        future.set_exception(exc)

    async def _answer(self, group: list[tuple[str, asyncio.Future]]) -> None:
        calls: dict[str, int] = {}
        for digest, _ in group:
            calls[digest] = calls.get(digest, 0) + 1
        now = self.clock()  # one instant for the group: expiry, its window, and the key's checks
        rows = await lookup_and_count(self.pool, list(calls), list(calls.values()), now)
        by_digest: dict[str, list] = {}
        for row in rows:
            by_digest.setdefault(row["digest"], []).append(row)
        outcomes: dict[str, Principal | ApiError] = {}
        for digest in calls:
            try:
                outcomes[digest] = _principal(self.registry, by_digest.get(digest, []), now)
            except ApiError as exc:
                outcomes[digest] = exc
        # A workspace's calls in this group hold the last numbers of its window: count - n + 1 ..
        # count, n being its valid calls. Handed out in arrival order.
        valid_calls: dict[UUID, int] = {}
        for digest, n in calls.items():
            if isinstance(outcomes[digest], Principal) and by_digest[digest][0]["count"] is not None:
                ws = by_digest[digest][0]["workspace_id"]
                valid_calls[ws] = valid_calls.get(ws, 0) + n
        next_number: dict[UUID, int] = {}
        for digest, future in group:
            outcome = outcomes[digest]
            if isinstance(outcome, ApiError):
                future.set_exception(outcome)
                continue
            row = by_digest[digest][0]
            limit = await self.limiter.limit_of(self.pool, outcome.workspace_id)
            if row["count"] is None:  # the statement judged the key expired a moment before Python
                window = await self.limiter.hit(self.pool, outcome.workspace_id)
            else:
                ws = row["workspace_id"]
                number = next_number.get(ws, row["count"] - valid_calls[ws] + 1)
                next_number[ws] = number + 1
                window = Window(limit=limit, count=number, reset_in=max(1, math.ceil(row["reset_in"])))
            if not future.done():
                future.set_result((outcome, window))


def _principal(registry: EventRegistry, rows: list, now: datetime) -> Principal:
    if not rows:
        raise invalid_key("unknown key")
    issued = None
    revoked = False
    for row in rows:
        if row["type"] == "ApiKeyIssued":
            issued = registry.upcast(row["type"], row["schema"], row["data"])
        elif row["type"] == "ApiKeyRevoked":
            revoked = True
    if issued is None:
        raise invalid_key("unknown key")
    if revoked:
        raise invalid_key("the key was revoked")
    expires_at = issued.get("expires_at")
    if expires_at and datetime.fromisoformat(expires_at) <= now:
        raise invalid_key("the key has expired")
    # asyncpg's own UUID type is not one orjson (the event codec) serialises: plain uuid.UUID.
    return Principal(key_id=UUID(bytes=rows[0]["key_id"].bytes), workspace_id=UUID(bytes=rows[0]["workspace_id"].bytes),
                     scopes=frozenset(issued["scopes"]), environment=issued["environment"])
