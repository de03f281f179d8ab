"""The reads of the ``api_keys`` read model: GET /keys."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, rows

_LIST = """SELECT id, name, key_prefix, scopes, environment, expires_at, created_at, revoked_at
             FROM api_keys WHERE workspace_id = $1 AND ($2::text IS NULL OR environment = $2)
            ORDER BY created_at, id"""


async def every(pool: Pool, workspace_id: UUID, environment: str | None) -> list[Row]:
    """The workspace's keys of ``environment`` (every environment's with None), oldest first."""
    return await rows(pool, _LIST, workspace_id, environment)
