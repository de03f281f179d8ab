"""The reads of the ``content_graphs`` read model: a video's latest graph (its analysis reads)."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row

_GRAPH = """SELECT g.graph, g.job_id, g.analyzed_at FROM videos v
             JOIN content_graphs g ON g.video_stream_id = v.stream_id
             WHERE v.id = $1 AND v.workspace_id = $2 AND v.environment = $3"""


async def of_video(pool: Pool, video_id: int, workspace_id: UUID, environment: str) -> Row | None:
    """The graph of the video's latest analysis; None before one has completed (or without the video)."""
    return await row(pool, _GRAPH, video_id, workspace_id, environment)
