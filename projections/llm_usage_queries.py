"""The reads of the ``llm_usage`` read model: GET /usage/llm."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, rows

_BY_OPERATION = """SELECT operation, calls, prompt_tokens, completion_tokens FROM llm_usage
                    WHERE workspace_id = $1 AND environment = $2 ORDER BY operation"""


async def by_operation(pool: Pool, workspace_id: UUID, environment: str) -> list[Row]:
    return await rows(pool, _BY_OPERATION, workspace_id, environment)
