"""The reads of the ``jobs`` read model: GET /jobs, GET /jobs/{id} and its progress stream."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row, rows

_COLUMNS = "id, type, status, progress, step, article_id, error_message, created_at"
_LIST = f"""SELECT {_COLUMNS} FROM jobs WHERE workspace_id = $1 AND environment = $2
             ORDER BY created_at DESC, id LIMIT $3 OFFSET $4"""
_ONE = f"SELECT {_COLUMNS}, result, version FROM jobs WHERE id = $1 AND workspace_id = $2 AND environment = $3"


async def page(pool: Pool, workspace_id: UUID, environment: str, limit: int, offset: int) -> list[Row]:
    """The environment's jobs, newest first."""
    return await rows(pool, _LIST, workspace_id, environment, limit, offset)


async def one(pool: Pool, job_id: UUID, workspace_id: UUID, environment: str) -> Row | None:
    """A job with its result and its version (which a progress stream sends as the event id)."""
    return await row(pool, _ONE, job_id, workspace_id, environment)
