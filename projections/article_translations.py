"""The translations asked of each article: GET /articles/{id}/translations.

One row per ``translate_article`` job, from its ``JobQueued`` (the source article and the target
language are the job's parameters). The route joins the jobs read model for the status and dates
and the articles read model for the translated article (the one the job wrote: ``job_id``).
"""

from __future__ import annotations

from domain.articles import TRANSLATE_JOB
from projections.base import Projection, Statement

projection = Projection(
    name="article_translations",
    ddl=[
        """CREATE TABLE IF NOT EXISTS article_translations (
            job_id            uuid PRIMARY KEY,
            workspace_id      uuid NOT NULL,
            environment       text NOT NULL,
            source_article_id integer NOT NULL,
            target_language   text NOT NULL,
            requested_at      timestamptz NOT NULL
        )""",
        """CREATE INDEX IF NOT EXISTS article_translations_by_source
               ON article_translations (workspace_id, environment, source_article_id, requested_at)""",
    ],
    tables=["article_translations"],
    ordering="per_stream",
)


@projection.handles("JobQueued")
def _queued(ev) -> list[Statement]:
    d = ev.data
    if d.get("job_type") != TRANSLATE_JOB:
        return []
    params = d.get("params") or {}
    return [("""INSERT INTO article_translations (job_id, workspace_id, environment, source_article_id,
                                                  target_language, requested_at)
                VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], params["article_id"], params["target_language"],
              ev.recorded_at))]
