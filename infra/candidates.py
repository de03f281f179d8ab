"""Which video a revival candidate is, read from the ``revival_candidates`` read model
(``services.application.ports.CandidateVideos``)."""

from __future__ import annotations

from uuid import UUID

import asyncpg

_VIDEO_OF = ("SELECT video_id FROM revival_candidates WHERE candidate_id = $1 AND workspace_id = $2 "
             "AND environment = $3 AND is_candidate")


class PostgresCandidateVideos:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def video_of(self, candidate_id: UUID, workspace_id: UUID, environment: str) -> int | None:
        async with self.pool.acquire() as conn:
            video_id: int | None = await conn.fetchval(_VIDEO_OF, candidate_id, workspace_id, environment)
        return video_id
