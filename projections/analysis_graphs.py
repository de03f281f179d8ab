"""The Content Graph of every analysis, by its job: GET /articles/{id}/graph and the article scores.

``content_graphs`` keeps a video's latest graph for the analysis reads; an article keeps the graph
it was written from even after its video is analysed again, so this read model keeps one row per
analysis job (``VideoGraphRecorded``), never replaced.
"""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="analysis_graphs",
    ddl=[
        """CREATE TABLE IF NOT EXISTS analysis_graphs (
            job_id          uuid PRIMARY KEY,
            video_stream_id uuid NOT NULL,
            workspace_id    uuid NOT NULL,
            graph           jsonb NOT NULL,
            recorded_at     timestamptz NOT NULL
        )""",
    ],
    tables=["analysis_graphs"],
    ordering="per_stream",
)


@projection.handles("VideoGraphRecorded")
def _recorded(ev) -> list[Statement]:
    return [("""INSERT INTO analysis_graphs (job_id, video_stream_id, workspace_id, graph, recorded_at)
                VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id) DO NOTHING""",
             (ev.data["job_id"], ev.stream_id, ev.workspace_id, ev.data["graph"], ev.recorded_at))]
