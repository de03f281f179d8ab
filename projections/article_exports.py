"""The first export of each article in each format (``ExportReady``): what the export route reads to
know whether an export is the first, which records it and so emits ``export.ready`` once."""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="article_exports",
    ddl=[
        """CREATE TABLE IF NOT EXISTS article_exports (
            article_id   integer NOT NULL,
            format       text NOT NULL,
            workspace_id uuid NOT NULL,
            etag         text NOT NULL,
            exported_at  timestamptz NOT NULL,
            PRIMARY KEY (article_id, format)
        )""",
    ],
    tables=["article_exports"],
    ordering="per_stream",
)


@projection.handles("ExportReady")
def _ready(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO article_exports (article_id, format, workspace_id, etag, exported_at)
                VALUES ($1, $2, $3, $4, $5) ON CONFLICT (article_id, format) DO NOTHING""",
             (d["article_id"], d["format"], ev.workspace_id, d["etag"], ev.recorded_at))]
