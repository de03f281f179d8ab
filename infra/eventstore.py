"""The event store on PostgreSQL (asyncpg): append with expected versions, load a stream.

Only the write side (commands, workers) loads streams here; every reader reads Kafka.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from uuid import UUID

import asyncpg

from infra.codec import EventRegistry, NewEvent, StoredEvent

NOTIFY_CHANNEL = "vaeo_events"
CONFLICT_SQLSTATE = "VA001"

SideEffect = Callable[[asyncpg.Connection], Awaitable[None]]


class ConcurrencyError(Exception):
    """The stream moved since it was loaded: reload, decide again, retry."""


class EventStore:
    def __init__(self, pool: asyncpg.Pool, registry: EventRegistry, *, notify: bool = True) -> None:
        self.pool = pool
        self.registry = registry
        self.notify = notify

    async def append(self, events: Sequence[NewEvent], *, before: Sequence[SideEffect] = ()) -> int:
        """Append events atomically; return the position of the last one.

        Each stream's first new version must follow its current version (optimistic
        concurrency), else ``ConcurrencyError`` and nothing is written. ``before`` runs in the
        same transaction ahead of the append (write-side indexes, id claims, idempotency
        records), so that the table lock is held only for the append and the commit.
        """
        if not events:
            raise ValueError("nothing to append")
        args = (
            [e.stream_id for e in events], [e.stream_type for e in events], [e.version for e in events],
            [e.workspace_id for e in events], [e.type for e in events], [e.schema for e in events],
            [e.data for e in events], [e.meta for e in events],
        )
        async with self.pool.acquire() as conn:
            try:
                if before:
                    async with conn.transaction():
                        for effect in before:
                            await effect(conn)
                        last = await conn.fetchval(_APPEND, *args)
                else:
                    last = await conn.fetchval(_APPEND, *args)  # one statement, its own transaction
            except asyncpg.PostgresError as exc:
                if exc.sqlstate == CONFLICT_SQLSTATE or isinstance(exc, asyncpg.UniqueViolationError) and \
                        getattr(exc, "constraint_name", "") == "events_stream_id_version_key":
                    raise ConcurrencyError(str(exc)) from exc
                raise
            if self.notify:
                # Outside the append transaction: NOTIFY inside it would add a second global
                # serialisation point at commit. A lost notification costs one polling interval.
                await conn.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL, str(last))
        return last

    async def load(self, stream_id: UUID) -> list[StoredEvent]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(_LOAD, stream_id)
        return [row_to_stored(r) for r in rows]

    async def load_aggregate(self, stream_id: UUID):
        """The aggregate rebuilt from its stream, or None when the stream is empty."""
        return self.registry.reconstruct(await self.load(stream_id))

    async def head(self) -> int:
        async with self.pool.acquire() as conn:
            return await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")


_APPEND = ("SELECT vaeo_append($1::uuid[], $2::text[], $3::int[], $4::uuid[], $5::text[], $6::int[], "
           "$7::jsonb[], $8::jsonb[])")
_COLUMNS = "position, stream_id, stream_type, version, workspace_id, type, schema, data, meta, recorded_at"
_LOAD = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version"
SELECT_FROM = f"SELECT {_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2"


def row_to_stored(r: asyncpg.Record) -> StoredEvent:
    return StoredEvent(
        position=r["position"], stream_id=r["stream_id"], stream_type=r["stream_type"], version=r["version"],
        workspace_id=r["workspace_id"], type=r["type"], schema=r["schema"], data=r["data"], meta=r["meta"],
        recorded_at=r["recorded_at"],
    )
