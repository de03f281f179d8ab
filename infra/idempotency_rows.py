"""The idempotency keys' table in PostgreSQL (``idempotency_keys``): the rows behind the
application's ``IdempotencyKeys`` (``services.application.idempotency`` holds the rules; this
module, the statements). An append's ``IdempotencyAnswer`` effect completes a key in the append's
own transaction (``infra.effects``), so the table is the event store's database's."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg
import orjson

LAPSED_SQLSTATE = "VA002"  # completing a claim one no longer holds (``vaeo_idempotency_complete``)

Scope = tuple[UUID, str, UUID, str, str]


def answer_json(body: dict[str, Any]) -> str:
    """The body as stored and replayed, as JSON text (ids and instants become strings): sent as
    text and made ``jsonb`` by PostgreSQL, so that it is serialised once."""
    return orjson.dumps(body, default=str).decode()


class PostgresKeyRows:
    """The keys of one PostgreSQL database (``services.application.ports.KeyRows``)."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def claim(self, scope: Scope, digest: str, owner: UUID, until: datetime, now: datetime) -> bool:
        async with self.pool.acquire() as conn:
            return await conn.fetchval(_CLAIM, *scope, digest, owner, until, now) is not None

    async def read(self, scope: Scope) -> Mapping[str, Any] | None:
        async with self.pool.acquire() as conn:
            row: Mapping[str, Any] | None = await conn.fetchrow(_READ, *scope)
        return row

    async def answer(self, scope: Scope, placeholder: dict[str, Any], status: int, body: dict[str, Any],
                     now: datetime) -> None:
        async with self.pool.acquire() as conn:
            await conn.execute(_ANSWER, *scope, answer_json(placeholder), status, answer_json(body), now)

    async def complete(self, scope: Scope, owner: UUID, status: int, body: dict[str, Any], now: datetime) -> None:
        async with self.pool.acquire() as conn:
            if await conn.fetchval(_DONE, *scope):
                return  # stored by the command's append (or by the request that took over a lapsed claim)
            try:
                await conn.execute(_COMPLETE, *scope, owner, status, answer_json(body), now)
            except asyncpg.PostgresError as exc:
                if exc.sqlstate != LAPSED_SQLSTATE:
                    raise

    async def release(self, scope: Scope, owner: UUID) -> None:
        try:
            async with self.pool.acquire() as conn:
                await conn.execute(_RELEASE, *scope, owner)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError):
            pass  # the claim lapses by itself

    async def purge(self, before: datetime, now: datetime) -> int:
        async with self.pool.acquire() as conn:
            status = await conn.execute(_PURGE, before, now)
        return int(status.split()[-1])


# $1-$5: the key's row (workspace, environment, API key, operation, key), as ``Claim.scope``.
_CLAIM = """
INSERT INTO idempotency_keys AS k (workspace_id, environment, api_key_id, operation, key, request_hash, state,
                                   owner, claimed_until, created_at)
VALUES ($1, $2, $3, $4, $5, $6, 'in_flight', $7, $8, $9)
ON CONFLICT (workspace_id, environment, api_key_id, operation, key) DO UPDATE
   SET request_hash = EXCLUDED.request_hash, owner = EXCLUDED.owner, claimed_until = EXCLUDED.claimed_until,
       created_at = EXCLUDED.created_at
 WHERE k.state = 'in_flight' AND k.claimed_until <= EXCLUDED.created_at
RETURNING owner
"""
_ROW = "workspace_id = $1 AND environment = $2 AND api_key_id = $3 AND operation = $4 AND key = $5"
_READ = f"SELECT request_hash, state, status, body FROM idempotency_keys WHERE {_ROW}"
_COMPLETE = "SELECT vaeo_idempotency_complete($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9)"
_ANSWER = (f"UPDATE idempotency_keys SET status = $7, body = $8::text::jsonb, completed_at = $9 "
           f"WHERE {_ROW} AND state = 'done' AND body = $6::text::jsonb")
_DONE = f"SELECT true FROM idempotency_keys WHERE {_ROW} AND state = 'done'"
_RELEASE = f"DELETE FROM idempotency_keys WHERE {_ROW} AND owner = $6 AND state = 'in_flight'"
_PURGE = "DELETE FROM idempotency_keys WHERE created_at < $1 AND (state = 'done' OR claimed_until <= $2)"
