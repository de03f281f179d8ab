"""Rate limit per workspace, in requests per minute, shared by every API process.

A fixed one-minute window per workspace in the UNLOGGED table ``api_rate_windows``: calls add
to it with ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING count``, an atomic increment in
PostgreSQL, so N API processes count against the same number and together admit at most the
limit per window. The API numbers the concurrent calls of a process together (one increment by
the group's size, see ``services.api.auth`` and ``lookup_and_count``): each call gets its own number in the window, and
a call numbered above the limit is refused. The window boundary is PostgreSQL's clock, so processes with skewed clocks
agree. A fixed window admits up to twice the limit across one boundary; that is the documented
price of one row per workspace instead of a log of calls.

Requests that are not HTTP calls (the assistant's actions, ``services.api.assistant.actions``) are counted
by ``RateCounter``: the counts asked while one statement is in flight go together in the next one
(one increment per workspace by the sum asked), and each asker gets its own consecutive numbers,
in the order it asked. A count can be given back (``RateCounter.give_back``) when the requests it
numbered were not made after all: the window then counts what was really done.

The workspace's limit comes from its ``WorkspaceCreated`` event (the write side, no Kafka) and
is cached per process: no event changes it yet. An event that does must also clear the cache.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg

from infra.settings import wall_clock


def window_now(now: str) -> str:
    """The current window, numbered from the instant in the statement's parameter ``now`` (the
    service's clock, ``Settings.now``: every API process counts on the clock the rest of the
    service reads); shared with the authentication statement, which numbers a whole group of
    calls at once (services.api.auth)."""
    return f"floor(extract(epoch FROM {now}::timestamptz) / 60)::bigint"


def count_returning(now: str) -> str:
    """The counted rows and the seconds left in their window at ``now``."""
    return ("RETURNING workspace_id, window_start, count, "
            f"((window_start + 1) * 60 - extract(epoch FROM {now}::timestamptz))::float8 AS reset_in")


COUNT_CONFLICT = "ON CONFLICT (workspace_id, window_start) DO UPDATE SET count = w.count + excluded.count"
_HIT = f"""INSERT INTO api_rate_windows AS w (workspace_id, window_start, count) VALUES ($1, {window_now("$2")}, 1)
          {COUNT_CONFLICT} {count_returning("$2")}"""

_COUNT_GROUP = f"""INSERT INTO api_rate_windows AS w (workspace_id, window_start, count)
SELECT workspace_id, {window_now("$3")}, sum(n) FROM unnest($1::uuid[], $2::int[]) AS a(workspace_id, n)
 GROUP BY workspace_id ORDER BY workspace_id
{COUNT_CONFLICT} {count_returning("$3")}"""
_GIVE_BACK = """UPDATE api_rate_windows SET count = greatest(0, count - $3)
                 WHERE workspace_id = $1 AND window_start = $2"""

_LIMIT = """SELECT (data->>'rate_limit_per_min')::int FROM events
             WHERE stream_id = $1 AND version = 1 AND type = 'WorkspaceCreated'"""
_FORGET = f"""DELETE FROM api_rate_windows WHERE window_start < {window_now("$1")} - 1"""

# The authentication of a group of calls and their count, in one statement: each key asked (by its
# digest) with its stream's events, and for the valid ones their workspace's numbers in its window
# (services.api.auth). Keys are read on the write side (their digest index and their stream), so a
# key works, and stops working, on the next request.
_LOOKUP_AND_COUNT = f"""
WITH asked AS (SELECT * FROM unnest($1::text[], $2::int[]) AS a(digest, calls)),
valid AS (  -- neither revoked nor expired (ApiKeyIssued schema 1 holds expires_at, ISO 8601 or null)
    SELECT a.digest, d.workspace_id, a.calls FROM asked a JOIN api_key_digests d ON d.digest = a.digest
     WHERE NOT EXISTS (SELECT 1 FROM events r WHERE r.stream_id = d.key_id AND r.type = 'ApiKeyRevoked')
       AND NOT EXISTS (SELECT 1 FROM events i WHERE i.stream_id = d.key_id AND i.type = 'ApiKeyIssued'
                                                AND (i.data->>'expires_at')::timestamptz <= $3)),
counted AS (
    INSERT INTO api_rate_windows AS w (workspace_id, window_start, count)
    SELECT workspace_id, {window_now("$3")}, sum(calls) FROM valid GROUP BY workspace_id ORDER BY workspace_id
    {COUNT_CONFLICT} {count_returning("$3")})
SELECT d.digest, d.key_id, d.workspace_id, e.type, e.schema, e.data,
       CASE WHEN v.digest IS NOT NULL THEN c.count END AS count, c.reset_in
  FROM asked a JOIN api_key_digests d ON d.digest = a.digest JOIN events e ON e.stream_id = d.key_id
  LEFT JOIN valid v ON v.digest = d.digest LEFT JOIN counted c ON c.workspace_id = d.workspace_id
 ORDER BY d.digest, e.version"""


async def lookup_and_count(pool: asyncpg.Pool, digests: list[str], calls: list[int], now: datetime) -> list:
    """The rows of each key asked (``digests``, each made ``calls`` times): its events in order, with
    ``count`` (the workspace's count in its window after this group, null for a key that is not
    valid at ``now``) and ``reset_in``."""
    async with pool.acquire() as conn:
        return await conn.fetch(_LOOKUP_AND_COUNT, digests, calls, now)


@dataclass(frozen=True, slots=True)
class Window:
    limit: int
    count: int
    reset_in: int  # seconds until the window ends

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    def headers(self) -> dict[str, str]:
        return {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(max(0, self.limit - self.count)),
                "X-RateLimit-Reset": str(self.reset_in)}


class RateLimiter:
    def __init__(self, clock: Callable[[], datetime] = wall_clock) -> None:
        self.clock = clock
        self._limits: dict[UUID, int] = {}

    async def limit_of(self, conn: asyncpg.Connection | asyncpg.Pool, workspace_id: UUID) -> int:
        limit = self._limits.get(workspace_id)
        if limit is None:
            limit = await conn.fetchval(_LIMIT, workspace_id)
            if limit is None:
                limit = 60  # a key without a workspace stream cannot be issued; a floor just in case
            self._limits[workspace_id] = limit
        return limit

    async def hit(self, conn: asyncpg.Connection | asyncpg.Pool, workspace_id: UUID) -> Window:
        limit = await self.limit_of(conn, workspace_id)
        row = await conn.fetchrow(_HIT, workspace_id, self.clock())
        return Window(limit=limit, count=row["count"], reset_in=max(1, math.ceil(row["reset_in"])))

    async def forget_old_windows(self, pool: asyncpg.Pool) -> None:
        await pool.execute(_FORGET, self.clock())


@dataclass(frozen=True, slots=True)
class Numbers:
    """Consecutive numbers of one workspace's window: ``first`` .. ``first + size - 1``."""

    workspace_id: UUID
    window_start: int
    first: int
    size: int
    limit: int
    ends_at: float  # time.monotonic() when the window ends

    def window(self, index: int) -> Window:
        """The window as the ``index``-th of these requests left it (0-based)."""
        return Window(limit=self.limit, count=self.first + index,
                      reset_in=max(1, math.ceil(self.ends_at - time.monotonic())))


class RateCounter:
    """Counts requests in their workspaces' windows, the concurrent counts of one process in one
    statement (see the module's text). The pool's connection is taken per statement."""

    def __init__(self, pool: asyncpg.Pool, limiter: RateLimiter, max_group: int = 256) -> None:
        self.pool = pool
        self.limiter = limiter
        self.max_group = max_group
        self._queue: list[tuple[UUID, int, asyncio.Future]] = []
        self._runner: asyncio.Task | None = None

    async def count(self, workspace_id: UUID, n: int = 1) -> Numbers:
        """``n`` (>= 1) requests of the workspace counted now; their numbers in its window."""
        if n < 1:
            raise ValueError("count at least one request")
        future = asyncio.get_running_loop().create_future()
        self._queue.append((workspace_id, n, future))
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run())
        return await future

    async def give_back(self, numbers: Numbers, n: int) -> None:
        """``n`` of ``numbers`` were not used: the window no longer counts them (a window that has
        ended since is left as it is)."""
        if n > 0:
            async with self.pool.acquire() as conn:
                await conn.execute(_GIVE_BACK, numbers.workspace_id, numbers.window_start, n)

    async def _run(self) -> None:
        while self._queue:
            group, self._queue = self._queue[:self.max_group], self._queue[self.max_group:]
            try:
                await self._answer(group)
            except Exception as exc:  # an outage: every asker of the group hears it
                for _, _, future in group:
                    if not future.done():
                        future.set_exception(exc)

    async def _answer(self, group: list[tuple[UUID, int, asyncio.Future]]) -> None:
        asked: dict[UUID, int] = {}
        for workspace_id, n, _ in group:
            asked[workspace_id] = asked.get(workspace_id, 0) + n
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(_COUNT_GROUP, list(asked), list(asked.values()), self.limiter.clock())
            now = time.monotonic()
            limits = {ws: await self.limiter.limit_of(conn, ws) for ws in asked}
        counted = {UUID(bytes=r["workspace_id"].bytes): r for r in rows}
        # A workspace's askers hold the last numbers of its window, handed out in the order they asked.
        next_number = {ws: counted[ws]["count"] - total + 1 for ws, total in asked.items()}
        for workspace_id, n, future in group:
            row = counted[workspace_id]
            first = next_number[workspace_id]
            next_number[workspace_id] = first + n
            if not future.done():
                future.set_result(Numbers(workspace_id, row["window_start"], first, n, limits[workspace_id],
                                          now + row["reset_in"]))
