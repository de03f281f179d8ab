"""The reads of the ``webhooks`` read model (subscriptions, delivery history and attempts), and the
failing deliveries that monitoring counts, from the dispatcher's own ``webhook_deliveries``."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from projections.reading import Pool, Row, rows

_LIST = """SELECT id, url, events, status, reason, created_at FROM webhooks
            WHERE workspace_id = $1 AND environment = $2 AND status <> 'deleted'
            ORDER BY created_at, id"""
_OWNED = "SELECT 1 FROM webhooks WHERE id = $1 AND workspace_id = $2 AND environment = $3"
_DELIVERIES = """SELECT id, event, status, last_error, next_attempt_at, source_position, created_at
                   FROM webhook_delivery_log WHERE webhook_id = $1 ORDER BY created_at DESC, id LIMIT $2"""
_ATTEMPTS = """SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[])
                ORDER BY delivery_id, attempt"""
# Deliveries of the last 24 h per webhook of the workspace: failing = given up, or waiting for a
# retry after a failed attempt. The table is the dispatcher's (it may not exist yet on a new database).
_HAS_DELIVERIES = "SELECT to_regclass('webhook_deliveries') IS NOT NULL"
_FAILING = """SELECT webhook_id, count(*) AS total,
                     count(*) FILTER (WHERE status IN ('failed', 'exhausted')
                                       OR (status IN ('pending', 'sending') AND attempts > 0)) AS failing
                FROM webhook_deliveries
               WHERE workspace_id = $1 AND environment = $2 AND webhook_id IS NOT NULL AND created_at >= $3
               GROUP BY webhook_id"""


async def every(pool: Pool, workspace_id: UUID, environment: str) -> list[Row]:
    """The environment's webhooks but the deleted ones, oldest first."""
    return await rows(pool, _LIST, workspace_id, environment)


async def deliveries(pool: Pool, webhook_id: UUID, workspace_id: UUID, environment: str,
                     limit: int) -> tuple[list[Row], list[Row]] | None:
    """A webhook's latest deliveries, newest first, and their attempts in order; None when the
    webhook is not the caller's. A deleted webhook's deliveries stay readable (how its pending ones
    ended is part of the audit)."""
    async with pool.acquire() as conn:
        if not await conn.fetchval(_OWNED, webhook_id, workspace_id, environment):
            return None
        found = await conn.fetch(_DELIVERIES, webhook_id, limit)
        return found, await conn.fetch(_ATTEMPTS, [r["id"] for r in found])


async def failing(pool: Pool, workspace_id: UUID, environment: str, since: datetime) -> list[Row]:
    """Per webhook of the environment: its deliveries since ``since`` and how many of them are failing."""
    async with pool.acquire() as conn:
        if not await conn.fetchval(_HAS_DELIVERIES):
            return []
        return await conn.fetch(_FAILING, workspace_id, environment, since)
