"""The command contract's PostgreSQL backend: the real event store behind the contract suite."""

from __future__ import annotations

import asyncpg

from infra.codec import EventRegistry
from infra.eventstore_postgres import PostgresEventStore
from infra.idempotency_rows import PostgresKeyRows
from services.application.idempotency import IdempotencyKeys
from tests.command_contract import *  # noqa: F403
from tests.idempotency_support import KEY


class PostgresBackend:
    def __init__(self, pool: asyncpg.Pool, registry: EventRegistry, group_commit: bool) -> None:
        self.pool = pool
        self._store = PostgresEventStore(pool, registry, group_commit=group_commit)

    def store(self) -> PostgresEventStore:
        return self._store

    def other(self) -> PostgresEventStore:
        return PostgresEventStore(self.pool, EventRegistry())

    def keys(self, **kwargs) -> IdempotencyKeys:
        return IdempotencyKeys(PostgresKeyRows(self.pool), **kwargs)

    async def written(self, ws) -> dict[str, int]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch("SELECT type, count(*) AS n FROM events WHERE workspace_id = $1 GROUP BY type", ws)
        return {r["type"]: r["n"] for r in rows}

    async def stored_key(self, key: str = KEY, *, api_key_id=None) -> dict | None:
        async with self.pool.acquire() as conn:
            row = await conn.fetchrow("SELECT * FROM idempotency_keys WHERE key = $1 "
                                      "AND ($2::uuid IS NULL OR api_key_id = $2)", key, api_key_id)
        return dict(row) if row is not None else None

    async def ending(self, job_id) -> dict:
        """The job's final events and its refunds, each with the transaction that wrote it."""
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT position, type, data, xmin::text AS tx FROM events "
                "WHERE (stream_id = $1 AND type IN ('JobFailed', 'JobCancelled', 'JobCompleted')) "
                "   OR (type = 'CreditsRefunded' AND data->>'job_id' = $2) ORDER BY position", job_id, str(job_id))
            claims = await conn.fetch("SELECT amount FROM credit_refunds WHERE job_id = $1", job_id)
        positions = [r["position"] for r in rows]
        return {"types": [r["type"] for r in rows],
                "one_append": len({r["tx"] for r in rows}) == 1 and positions == list(range(positions[0],
                                                                                           positions[-1] + 1)),
                "refunds": [r["data"]["amount"] for r in rows if r["type"] == "CreditsRefunded"],
                "claims": [r["amount"] for r in claims]}

    async def claim_refund(self, job_id, ws, amount: int) -> None:
        async with self.pool.acquire() as conn:
            await conn.execute("INSERT INTO credit_refunds (job_id, workspace_id, amount) VALUES ($1, $2, $3)",
                               job_id, ws, amount)
