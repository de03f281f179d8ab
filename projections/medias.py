"""The medias read model: GET /medias."""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="medias",
    ddl=[
        """CREATE TABLE IF NOT EXISTS medias (
            id           integer PRIMARY KEY,
            stream_id    uuid NOT NULL UNIQUE,
            workspace_id uuid NOT NULL,
            environment  text NOT NULL,
            name         text NOT NULL,
            description  text,
            category     text,
            language     text NOT NULL,
            created_at   timestamptz NOT NULL,
            version      integer NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS medias_by_workspace ON medias (workspace_id, environment, id)",
    ],
    tables=["medias"],
    ordering="per_stream",
)


@projection.handles("MediaCreated")
def _created(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO medias (id, stream_id, workspace_id, environment, name, description, category, language,
                                    created_at, version)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING""",
             (d["media_id"], ev.stream_id, ev.workspace_id, d["environment"], d["name"], d.get("description"),
              d.get("category"), d["language"], ev.recorded_at, ev.version))]
