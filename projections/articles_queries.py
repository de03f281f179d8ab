"""The reads of the ``articles`` read model (with the graphs, videos, exports and translations it is
shown with): the article routes' list, detail, scores, graph, export and translations."""

from __future__ import annotations

from uuid import UUID

from projections.reading import Pool, Row, row, rows, value

_ITEM = """a.id, a.title, a.custom_name, a.language, a.writing_style, a.aeo_score, a.geo_score, a.media_id,
           a.video_id, a.created_at, a.origin, a.source_article_id"""
_LIST = f"""SELECT {_ITEM} FROM articles a WHERE a.workspace_id = $1 AND a.environment = $2
             ORDER BY a.id DESC LIMIT $3 OFFSET $4"""
_ONE = f"""SELECT {_ITEM}, a.keywords_primary, a.has_transcript, a.composite_score, a.content, a.markdown,
                  a.source_language, a.rubric_version, coalesce(a.updated_at, a.created_at) AS updated_at,
                  EXISTS (SELECT 1 FROM analysis_graphs g
                           WHERE g.job_id = coalesce(a.graph_job_id, a.job_id)) AS has_content_graph
             FROM articles a WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
_EXISTS = "SELECT 1 FROM articles WHERE id = $1 AND workspace_id = $2 AND environment = $3"
_GRAPH = """SELECT a.video_id, g.graph FROM articles a
              LEFT JOIN analysis_graphs g ON g.job_id = coalesce(a.graph_job_id, a.job_id)
             WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
# What the rubric reads of a graph (the speakers' turns and the media elements are not read).
_SCORES = """SELECT a.aeo_score, a.geo_score, a.content, a.rubric_version, g.job_id IS NOT NULL AS has_graph,
                    jsonb_build_object('claims', g.graph->'claims', 'entities', g.graph->'entities',
                                       'topics', g.graph->'topics', 'searchIntents', g.graph->'searchIntents',
                                       'chapters', g.graph->'chapters',
                                       'speakers', jsonb_build_object('diarised', g.graph->'speakers'->'diarised'))
                      AS graph
               FROM articles a LEFT JOIN analysis_graphs g ON g.job_id = coalesce(a.graph_job_id, a.job_id)
              WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
# What an export is a function of (with the format, the canonical URL and the hour): the article's
# version and its video's (a changed description or name moves it), read first, so that a rendered
# export this process has already made is answered without the article's content.
_EXPORT_VERSION = """SELECT a.version, v.version AS video_version, a.title, a.custom_name,
                            EXISTS (SELECT 1 FROM article_exports e WHERE e.article_id = a.id AND e.format = $4)
                              AS exported
                       FROM articles a LEFT JOIN videos v ON v.id = a.video_id AND v.workspace_id = a.workspace_id
                      WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
_EXPORT = """SELECT a.id, a.version, a.title, a.custom_name, a.language, a.writing_style, a.content, a.keywords_primary,
                    a.aeo_score, a.geo_score, a.composite_score, a.created_at,
                    coalesce(a.updated_at, a.created_at) AS updated_at, a.origin, a.source_article_id, a.video_id,
                    v.name AS video_name, v.description AS video_description, v.duration_ms, v.width, v.height,
                    v.size_bytes, v.created_at AS uploaded_at, v.stream_id AS video_stream_id,
                    v.version AS video_version, a.published_urls, v.storage_key AS video_storage_key,
                    v.thumbnail_key AS video_thumbnail_key, v.links_generation AS video_links_generation
               FROM articles a LEFT JOIN videos v ON v.id = a.video_id AND v.workspace_id = a.workspace_id
              WHERE a.id = $1 AND a.workspace_id = $2 AND a.environment = $3"""
_TRANSLATIONS = """
SELECT t.job_id, t.target_language, t.requested_at, j.status, j.updated_at, j.finished_at, j.error_message,
       a.id AS article_id, coalesce(a.custom_name, a.title) AS title, a.created_at AS article_created_at
  FROM article_translations t
  LEFT JOIN jobs j ON j.id = t.job_id
  LEFT JOIN articles a ON a.job_id = t.job_id AND a.workspace_id = t.workspace_id
 WHERE t.workspace_id = $1 AND t.environment = $2 AND t.source_article_id = $3
 ORDER BY t.requested_at DESC, t.job_id
 LIMIT $4 OFFSET $5"""


async def page(pool: Pool, workspace_id: UUID, environment: str, limit: int, offset: int) -> list[Row]:
    """The environment's articles, newest first (list items)."""
    return await rows(pool, _LIST, workspace_id, environment, limit, offset)


async def one(pool: Pool, article_id: int, workspace_id: UUID, environment: str) -> Row | None:
    """An article's detail, and whether its analysis' graph is stored."""
    return await row(pool, _ONE, article_id, workspace_id, environment)


async def exists(pool: Pool, article_id: int, workspace_id: UUID, environment: str) -> bool:
    return await value(pool, _EXISTS, article_id, workspace_id, environment) is not None


async def graph(pool: Pool, article_id: int, workspace_id: UUID, environment: str) -> Row | None:
    """The article's video and its analysis' graph (None when that graph is not stored)."""
    return await row(pool, _GRAPH, article_id, workspace_id, environment)


async def scores(pool: Pool, article_id: int, workspace_id: UUID, environment: str) -> Row | None:
    """The recorded scores, the content, and the part of the graph the rubric reads."""
    return await row(pool, _SCORES, article_id, workspace_id, environment)


async def export_version(pool: Pool, article_id: int, workspace_id: UUID, environment: str,
                         export_format: str) -> Row | None:
    """The versions an export is a function of, the title it is named by, and whether the format's
    first export is recorded (``exported``)."""
    return await row(pool, _EXPORT_VERSION, article_id, workspace_id, environment, export_format)


async def export_source(pool: Pool, article_id: int, workspace_id: UUID, environment: str) -> Row | None:
    """What an export renders: the article and the video it came from, with where the video's
    files are stored and its public links' generation (``video_storage_key`` null: a row written
    before the videos read model had them, ``projections.videos``)."""
    return await row(pool, _EXPORT, article_id, workspace_id, environment)


async def translations(pool: Pool, workspace_id: UUID, environment: str, article_id: int, limit: int,
                       offset: int) -> list[Row]:
    """The translations asked of an article, newest first, with their job and translated article."""
    return await rows(pool, _TRANSLATIONS, workspace_id, environment, article_id, limit, offset)
