"""Rate limit per workspace, in requests per minute, shared by every API process.

A fixed one-minute window per workspace in the UNLOGGED table ``api_rate_windows``: calls add
to it with ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING count``, an atomic increment in
PostgreSQL, so N API processes count against the same number and together admit at most the
limit per window. The API numbers the concurrent calls of a process together (one increment by
the group's size, see ``services.api.auth``): each call gets its own number in the window, and
a call numbered above the limit is refused. The window boundary is PostgreSQL's clock, so processes with skewed clocks
agree. A fixed window admits up to twice the limit across one boundary; that is the documented
price of one row per workspace instead of a log of calls.

The workspace's limit comes from its ``WorkspaceCreated`` event (the write side, no Kafka) and
is cached per process: no event changes it yet. An event that does must also clear the cache.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from uuid import UUID

import asyncpg

# The current window and the seconds left in it, by PostgreSQL's clock; shared with the
# authentication statement, which numbers a whole group of calls at once (services.api.auth).
WINDOW_NOW = "floor(extract(epoch FROM clock_timestamp()) / 60)::bigint"
COUNT_CONFLICT = "ON CONFLICT (workspace_id, window_start) DO UPDATE SET count = w.count + excluded.count"
COUNT_RETURNING = ("RETURNING workspace_id, window_start, count, "
                   "((window_start + 1) * 60 - extract(epoch FROM clock_timestamp()))::float8 AS reset_in")
_HIT = f"""INSERT INTO api_rate_windows AS w (workspace_id, window_start, count) VALUES ($1, {WINDOW_NOW}, 1)
          {COUNT_CONFLICT} {COUNT_RETURNING}"""

_LIMIT = """SELECT (data->>'rate_limit_per_min')::int FROM events
             WHERE stream_id = $1 AND version = 1 AND type = 'WorkspaceCreated'"""
_FORGET = """DELETE FROM api_rate_windows WHERE window_start < floor(extract(epoch FROM clock_timestamp()) / 60) - 1"""


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
    def __init__(self) -> None:
        self._limits: dict[UUID, int] = {}

    async def limit_of(self, conn: asyncpg.Connection, workspace_id: UUID) -> int:
        limit = self._limits.get(workspace_id)
        if limit is None:
            limit = await conn.fetchval(_LIMIT, workspace_id)
            if limit is None:
                limit = 60  # a key without a workspace stream cannot be issued; a floor just in case
            self._limits[workspace_id] = limit
        return limit

    async def hit(self, conn: asyncpg.Connection, workspace_id: UUID) -> Window:
        limit = await self.limit_of(conn, workspace_id)
        row = await conn.fetchrow(_HIT, workspace_id)
        return Window(limit=limit, count=row["count"], reset_in=max(1, math.ceil(row["reset_in"])))

    @staticmethod
    async def forget_old_windows(pool: asyncpg.Pool) -> None:
        async with pool.acquire() as conn:
            await conn.execute(_FORGET)
