"""The reads of the ``api_usage`` read model: GET /usage."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row

_USAGE = "SELECT calls, latency_ms_sum FROM api_usage WHERE workspace_id = $1 AND environment = $2"


async def of_environment(pool: Pool, workspace_id: UUID, environment: str) -> Row | None:
    """The environment's call count and summed latency; None before its first call is counted."""
    return await row(pool, _USAGE, workspace_id, environment)
