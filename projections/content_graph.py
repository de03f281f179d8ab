"""The content-graph read model: the analysis reads under /videos/{id}/ (claims, entities,
intents, moments, narrative, topics, visual and audio elements, graph).

One row per video, its latest graph (``VideoGraphRecorded``) as jsonb; each route reads one
member. A later analysis replaces the graph (the version guard keeps a replay from going back).
"""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="content_graphs",
    ddl=[
        """CREATE TABLE IF NOT EXISTS content_graphs (
            video_stream_id uuid PRIMARY KEY,
            workspace_id    uuid NOT NULL,
            job_id          uuid NOT NULL,
            graph           jsonb NOT NULL,
            analyzed_at     timestamptz NOT NULL,
            version         integer NOT NULL
        )""",
    ],
    tables=["content_graphs"],
    ordering="per_stream",
)


@projection.handles("VideoGraphRecorded")
def _recorded(ev) -> list[Statement]:
    return [("""INSERT INTO content_graphs (video_stream_id, workspace_id, job_id, graph, analyzed_at, version)
                VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (video_stream_id) DO UPDATE SET job_id = EXCLUDED.job_id, graph = EXCLUDED.graph,
                    analyzed_at = EXCLUDED.analyzed_at, version = EXCLUDED.version
                WHERE content_graphs.version < EXCLUDED.version""",
             (ev.stream_id, ev.workspace_id, ev.data["job_id"], ev.data["graph"], ev.recorded_at, ev.version))]
