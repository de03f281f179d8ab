"""The reads of the ``workspaces`` read model: GET /me and GET /usage."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row

_WORKSPACE = """SELECT id, name, plan, credits_total, credits_used, rate_limit_per_min
                  FROM workspaces WHERE id = $1"""


async def one(pool: Pool, workspace_id: UUID) -> Row | None:
    """The workspace's plan, credits and rate limit; None until the projector has applied its creation."""
    return await row(pool, _WORKSPACE, workspace_id)
