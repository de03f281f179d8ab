"""The reads of the ``medias`` read model: GET /medias."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, rows

_LIST = """SELECT id, name, description, category, language, created_at FROM medias
            WHERE workspace_id = $1 AND environment = $2 ORDER BY id"""


async def every(pool: Pool, workspace_id: UUID, environment: str) -> list[Row]:
    """The environment's medias, oldest first."""
    return await rows(pool, _LIST, workspace_id, environment)
