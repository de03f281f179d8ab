"""The articles read model: GET /articles, GET /articles/{id} and what the other article routes read.

One row per article, whatever wrote it (an analysis, a regeneration, a translation), with its
origin, its source article, the analysis whose graph it came from and the rubric version of its
scores; renames and media attachments update the row (guarded by the stream version, so a replay
never goes back).
"""

from __future__ import annotations

from projections.base import Projection, Statement

_COLUMNS_SINCE_CREATION = [
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS origin text NOT NULL DEFAULT 'analysis'",
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS source_article_id integer",
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS source_language text",
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS graph_job_id uuid",
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS rubric_version integer NOT NULL DEFAULT 1",
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS updated_at timestamptz",
    "ALTER TABLE articles ADD COLUMN IF NOT EXISTS published_urls jsonb",
]

projection = Projection(
    name="articles",
    ddl=[
        """CREATE TABLE IF NOT EXISTS articles (
            id               integer PRIMARY KEY,
            stream_id        uuid NOT NULL UNIQUE,
            workspace_id     uuid NOT NULL,
            environment      text NOT NULL,
            job_id           uuid NOT NULL,
            video_id         integer,
            media_id         integer,
            title            text NOT NULL,
            custom_name      text,
            language         text NOT NULL,
            writing_style    text NOT NULL,
            aeo_score        integer NOT NULL,
            geo_score        integer NOT NULL,
            composite_score  double precision NOT NULL,
            keywords_primary jsonb NOT NULL,
            has_transcript   boolean NOT NULL,
            content          jsonb NOT NULL,
            markdown         text NOT NULL,
            created_at       timestamptz NOT NULL,
            version          integer NOT NULL
        )""",
        *_COLUMNS_SINCE_CREATION,
        "CREATE INDEX IF NOT EXISTS articles_by_workspace ON articles (workspace_id, environment, id)",
        "CREATE INDEX IF NOT EXISTS articles_by_job ON articles (job_id)",  # a translation job's article
    ],
    tables=["articles"],
    ordering="per_stream",
)

_INSERT = """INSERT INTO articles (id, stream_id, workspace_id, environment, job_id, video_id, media_id, title,
                                   language, writing_style, aeo_score, geo_score, composite_score, keywords_primary,
                                   has_transcript, content, markdown, created_at, version, origin, source_article_id,
                                   source_language, graph_job_id, rubric_version, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
                     $22, $23, $24, $18)
             ON CONFLICT (id) DO NOTHING"""


def _insert(ev, origin: str) -> list[Statement]:
    d = ev.data
    return [(_INSERT, (d["article_id"], ev.stream_id, ev.workspace_id, d["environment"], d["job_id"],
                       d.get("video_id"), d.get("media_id"), d["title"], d["language"], d["writing_style"],
                       d["aeo_score"], d["geo_score"], d["composite_score"], d["keywords_primary"],
                       d["has_transcript"], d["content"], d["markdown"], ev.recorded_at, ev.version, origin,
                       d.get("source_article_id"), d.get("source_language"), d.get("graph_job_id") or d["job_id"],
                       d.get("rubric_version", 1)))]


@projection.handles("ArticleGenerated")
def _generated(ev) -> list[Statement]:
    return _insert(ev, ev.data.get("origin") or "analysis")


@projection.handles("ArticleTranslated")
def _translated(ev) -> list[Statement]:
    return _insert(ev, "translation")


@projection.handles("ArticleRenamed")
def _renamed(ev) -> list[Statement]:
    return [("""UPDATE articles SET custom_name = $2, updated_at = $3, version = $4
                WHERE stream_id = $1 AND version < $4""",
             (ev.stream_id, ev.data["custom_name"], ev.recorded_at, ev.version))]


@projection.handles("ArticlePublishedUrlsSet")
def _published_urls_set(ev) -> list[Statement]:
    """The exports read them; the version moves (an export's cache key holds it), the content did not change."""
    return [("UPDATE articles SET published_urls = $2, version = $3 WHERE stream_id = $1 AND version < $3",
             (ev.stream_id, ev.data["published_urls"] or None, ev.version))]


@projection.handles("ArticleMediaAttached")
def _media_attached(ev) -> list[Statement]:
    return [("""UPDATE articles SET media_id = $2, updated_at = $3, version = $4
                WHERE stream_id = $1 AND version < $4""",
             (ev.stream_id, ev.data["media_id"], ev.recorded_at, ev.version))]
