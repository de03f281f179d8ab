"""The reads of the ``revival_candidates`` read model: GET /production/revival/candidates (filters,
a text search) and one candidate."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from projections.reading import Pool, Row, row

_COLUMNS = """candidate_id, video_id, media_id, article_id, title, description, thumbnail_key, published_at,
              duration_ms, score, status, has_prose, prose_chars, has_chapters, has_summary, claims, answered,
              chapter_problem, updated_at"""
_ONE = f"""SELECT {_COLUMNS} FROM revival_candidates WHERE candidate_id = $1
             AND workspace_id = $2 AND environment = $3 AND is_candidate"""

SEARCH_WALK_ROWS = 600  # a query matching 5 % of the candidates fills a page of 30 within them


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


async def page(pool: Pool, workspace_id: UUID, environment: str, *, limit: int, media_id: int | None = None,
               status: str | None = None, min_score: float | None = None, min_duration_s: int | None = None,
               max_duration_s: int | None = None, text: str = "") -> list[Row]:
    """The environment's candidates that pass the filters, best score first; with ``text`` (folded:
    ``domain.analysis.text.fold``) only those whose search text holds it."""
    where, args = ["workspace_id = $1", "environment = $2", "is_candidate"], [workspace_id, environment]

    def add(condition: str, value: Any) -> None:
        args.append(value)
        where.append(condition.replace("?", f"${len(args)}"))

    if media_id is not None:
        add("media_id = ?", media_id)
    if status is not None:
        add("status = ?", status)
    if min_score is not None:
        add("score >= ?", min_score)
    # durations compared as they are shown: whole seconds (duration_seconds)
    if min_duration_s is not None:
        add("round(duration_ms / 1000.0) >= ?", min_duration_s)
    if max_duration_s is not None:
        add("round(duration_ms / 1000.0) <= ?", max_duration_s)
    filters = " AND ".join(where)
    if not text:
        args.append(limit)
        async with pool.acquire() as conn:
            return await conn.fetch(f"SELECT {_COLUMNS} FROM revival_candidates WHERE {filters} "
                                    f"ORDER BY score DESC, video_id LIMIT ${len(args)}", *args)
    args += [_like(text), limit]
    like, limited = f"search_text LIKE ${len(args) - 1}", f"LIMIT ${len(args)}"
    # A text search is answered in two steps (docs/revival.md). First the best SEARCH_WALK_ROWS
    # candidates in score order, as the score index gives them: if enough of them match, they are
    # the answer (a common word finds its page there at once, where the trigram index would fetch
    # and sort every match). Else the trigram index finds the few that match anywhere.
    # Either way the matches are ranked on their key, score and text alone (``page``), and only
    # the rows of the page are read whole.
    whole = f"SELECT {_COLUMNS} FROM page JOIN revival_candidates USING (video_id, score) ORDER BY score DESC, video_id"
    async with pool.acquire() as conn:
        found = await conn.fetch(
            f"WITH best AS (SELECT video_id, score, search_text FROM revival_candidates WHERE {filters} "
            f"ORDER BY score DESC, video_id LIMIT {SEARCH_WALK_ROWS}), "
            f"page AS (SELECT video_id, score FROM best WHERE {like} ORDER BY score DESC, video_id {limited}) {whole}",
            *args)
        if len(found) < limit:
            found = await conn.fetch(
                f"WITH page AS (SELECT video_id, score FROM revival_candidates WHERE {filters} AND {like} "
                f"ORDER BY score DESC, video_id {limited}) {whole}", *args)
    return found


async def one(pool: Pool, candidate_id: UUID, workspace_id: UUID, environment: str) -> Row | None:
    return await row(pool, _ONE, candidate_id, workspace_id, environment)
