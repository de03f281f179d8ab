"""The articles read model: GET /articles and GET /articles/{id} (other article routes: another issue)."""

from __future__ import annotations

from projections.base import Projection, Statement

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
        "CREATE INDEX IF NOT EXISTS articles_by_workspace ON articles (workspace_id, environment, id)",
    ],
    tables=["articles"],
    ordering="per_stream",
)


@projection.handles("ArticleGenerated")
def _generated(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO articles (id, stream_id, workspace_id, environment, job_id, video_id, media_id, title,
                                      language, writing_style, aeo_score, geo_score, composite_score,
                                      keywords_primary, has_transcript, content, markdown, created_at, version)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
                ON CONFLICT (id) DO NOTHING""",
             (d["article_id"], ev.stream_id, ev.workspace_id, d["environment"], d["job_id"], d.get("video_id"),
              d.get("media_id"), d["title"], d["language"], d["writing_style"], d["aeo_score"], d["geo_score"],
              d["composite_score"], d["keywords_primary"], d["has_transcript"], d["content"], d["markdown"],
              ev.recorded_at, ev.version))]
