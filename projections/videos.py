"""The videos read model: GET /videos and GET /videos/{id}.

``status``: ``uploaded`` -> ``analyzing`` (an analyze job queued) -> ``analyzed``; a failed or
cancelled analysis returns to ``uploaded`` (or stays ``analyzed`` when an earlier one succeeded).
Job events touch the row of the video whose last job they are, so this projection keeps the
log's order (``strict``). ``job_position`` is the log position of the last ``JobQueued`` applied
to the row: a ``JobQueued`` at or below it (a redelivery, an older job) changes nothing, so a
finished job's queueing can never put its video back to ``analyzing``.

``storage_key``, ``thumbnail_key`` and ``links_generation`` are what a GET needs of the write side to
show the video's files (a signed URL of its source, its public links in an export). Rows written
before these columns existed have a null ``storage_key`` until the read model is rebuilt
(``vaeo projections rebuild videos``); their readers then take the three from the video's stream.
"""

from __future__ import annotations

from domain.videos import ANALYZE_JOB
from projections.base import Projection, Statement

projection = Projection(
    name="videos",
    ddl=[
        """CREATE TABLE IF NOT EXISTS videos (
            id               integer PRIMARY KEY,
            stream_id        uuid NOT NULL UNIQUE,
            workspace_id     uuid NOT NULL,
            environment      text NOT NULL,
            media_id         integer,
            name             text NOT NULL,
            description      text,
            language         text NOT NULL,
            duration_ms      integer NOT NULL,
            width            integer,
            height           integer,
            frame_rate       double precision,
            size_bytes       bigint NOT NULL,
            video_codec      text,
            audio_codec      text,
            has_transcript   boolean NOT NULL,
            status           text NOT NULL,
            last_job_id      uuid,
            last_article_id  integer,
            analyzed_at      timestamptz,
            created_at       timestamptz NOT NULL,
            version          integer NOT NULL
        )""",
        # Added after the first release: tables created before get it here.
        "ALTER TABLE videos ADD COLUMN IF NOT EXISTS job_position bigint NOT NULL DEFAULT 0",
        "ALTER TABLE videos ADD COLUMN IF NOT EXISTS storage_key text",
        "ALTER TABLE videos ADD COLUMN IF NOT EXISTS thumbnail_key text",
        "ALTER TABLE videos ADD COLUMN IF NOT EXISTS links_generation integer NOT NULL DEFAULT 0",
        "CREATE INDEX IF NOT EXISTS videos_by_workspace ON videos (workspace_id, environment, id)",
        "CREATE INDEX IF NOT EXISTS videos_by_last_job ON videos (last_job_id)",
    ],
    tables=["videos"],
)


@projection.handles("VideoUploaded")
def _uploaded(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO videos (id, stream_id, workspace_id, environment, media_id, name, description, language,
                                    duration_ms, width, height, frame_rate, size_bytes, video_codec, audio_codec,
                                    has_transcript, status, created_at, version, storage_key, thumbnail_key)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'uploaded', $17, $18,
                        $19, $20)
                ON CONFLICT (id) DO NOTHING""",
             (d["video_id"], ev.stream_id, ev.workspace_id, d["environment"], d.get("media_id"), d["name"],
              d.get("description"), d["language"], d["duration_ms"], d.get("width"), d.get("height"),
              d.get("frame_rate"), d["size_bytes"], d.get("video_codec"), d.get("audio_codec"),
              bool(d.get("caption_cues") or d.get("subtitle_tracks")), ev.recorded_at, ev.version, d["storage_key"],
              d.get("thumbnail_key")))]


@projection.handles("JobQueued")
def _queued(ev) -> list[Statement]:
    d = ev.data
    if d.get("job_type") != ANALYZE_JOB or "video_id" not in (d.get("params") or {}):
        return []
    return [("""UPDATE videos SET status = 'analyzing', last_job_id = $2, job_position = $4
                 WHERE id = $1 AND workspace_id = $3 AND job_position < $4""",
             (d["params"]["video_id"], ev.stream_id, ev.workspace_id, ev.position))]


@projection.handles("VideoAnalyzed")
def _analyzed(ev) -> list[Statement]:
    return [("""UPDATE videos SET status = 'analyzed', analyzed_at = $3, last_article_id = $4, version = $2
                 WHERE stream_id = $1 AND version < $2""",
             (ev.stream_id, ev.version, ev.recorded_at, ev.data.get("article_id")))]


def _ended(ev) -> list[Statement]:
    return [("""UPDATE videos SET status = CASE WHEN analyzed_at IS NULL THEN 'uploaded' ELSE 'analyzed' END
                 WHERE last_job_id = $1 AND status = 'analyzing'""", (ev.stream_id,))]


projection.handles("JobFailed", "JobCancelled")(_ended)


@projection.handles("VideoDescriptionChanged")
def _description_changed(ev) -> list[Statement]:
    return [("UPDATE videos SET description = $2, version = $3 WHERE stream_id = $1 AND version < $3",
             (ev.stream_id, ev.data.get("description"), ev.version))]


@projection.handles("VideoPublicLinksRevoked")
def _public_links_revoked(ev) -> list[Statement]:
    """The links' generation, and the version: an export's cache key holds it, so no export of the earlier links is
    served again."""
    return [("UPDATE videos SET version = $2, links_generation = $3 WHERE stream_id = $1 AND version < $2",
             (ev.stream_id, ev.version, ev.data["generation"]))]


@projection.handles("VideoGraphRecorded")
def _graph_recorded(ev) -> list[Statement]:
    """A video uploaded without captions has a transcript once an analysis heard words in it (its
    graph's ``transcriptSource`` is speech with words); never unset, so a replay changes nothing."""
    source = (ev.data.get("graph") or {}).get("transcriptSource")
    if not (isinstance(source, dict) and source.get("kind") == "speech" and source.get("words")):
        return []
    return [("UPDATE videos SET has_transcript = true WHERE stream_id = $1 AND NOT has_transcript", (ev.stream_id,))]
