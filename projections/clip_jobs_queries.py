"""The reads of the ``clip_jobs`` read model: GET /production/clips/jobs/{jobId}."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row

_TRACKING = "SELECT * FROM clip_jobs WHERE job_id = $1 AND workspace_id = $2 AND environment = $3"


async def tracking(pool: Pool, job_id: UUID, workspace_id: UUID, environment: str) -> Row | None:
    """A clip job's tracking object (every column)."""
    return await row(pool, _TRACKING, job_id, workspace_id, environment)
