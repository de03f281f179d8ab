"""The reads of the ``videos`` read model: GET /videos, GET /videos/{id} and the rows a write answers with."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row, rows

_COLUMNS = """id, media_id, name, description, language, duration_ms, width, height, frame_rate, size_bytes,
              status, has_transcript, analyzed_at, created_at, last_job_id, last_article_id"""
_LIST = f"""SELECT {_COLUMNS} FROM videos WHERE workspace_id = $1 AND environment = $2
             ORDER BY id DESC LIMIT $3 OFFSET $4"""
_ONE = f"SELECT {_COLUMNS}, storage_key FROM videos WHERE id = $1 AND workspace_id = $2 AND environment = $3"


async def page(pool: Pool, workspace_id: UUID, environment: str, limit: int, offset: int) -> list[Row]:
    """The environment's videos, newest first."""
    return await rows(pool, _LIST, workspace_id, environment, limit, offset)


async def one(pool: Pool, video_id: int, workspace_id: UUID, environment: str) -> Row | None:
    """A video, with where its source is stored (``storage_key``: null on a row written before the
    column existed, until the read model is rebuilt)."""
    return await row(pool, _ONE, video_id, workspace_id, environment)
