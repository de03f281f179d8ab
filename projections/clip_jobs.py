"""The clip jobs read model: GET /production/clips/jobs/{jobId} (the tracking object).

One row per clip job (``video_clip``, ``clip_detection``, ``clip_render``), built from two
streams: the job's (queue, start, progress, retries, end) and the clip flow's own
(``ClipDetectionQueued``/``ClipsDetected`` or ``ClipRenderQueued``/``ClipRendered``/
``ClipRenderFailed``), plus the refund of the workspace's ``CreditsRefunded``. Each stream has its
own version column guarding its updates, so a replayed event changes nothing; the statements of
one event touch the job's row, which two streams share: the runner applies them in log order
(``ordering`` strict).

``rendered_clips`` keeps each rendered clip once (file keys, not URLs: URLs are signed when read);
``failed_clips`` holds the clips whose last attempt failed, and a clip leaves it when rendered.

Status (``status``, the tracking object's): ``queued`` (waiting for a worker: first, or for a
retry at ``next_attempt_at``), ``detecting`` or ``rendering`` (a worker runs it), ``completed``,
``failed``, ``cancelled``.
"""

from __future__ import annotations

from datetime import datetime

from domain.clips import CLIP_JOB_TYPES, DETECTION_JOB
from projections.base import Projection, Statement

projection = Projection(
    name="clip_jobs",
    ddl=[
        """CREATE TABLE IF NOT EXISTS clip_jobs (
            job_id                  uuid PRIMARY KEY,
            workspace_id            uuid NOT NULL,
            environment             text NOT NULL,
            type                    text NOT NULL,
            status                  text NOT NULL,
            progress                integer NOT NULL DEFAULT 0,
            stage                   text NOT NULL,
            video_id                integer,
            article_id              integer,
            template_id             integer,
            target_duration_seconds integer,
            format                  text,
            options                 jsonb,
            clips                   jsonb NOT NULL DEFAULT '[]',
            rendered_clips          jsonb NOT NULL DEFAULT '[]',
            failed_clips            jsonb NOT NULL DEFAULT '[]',
            shortfall_reason        text,
            attempts                integer NOT NULL DEFAULT 0,
            max_attempts            integer NOT NULL,
            next_attempt_at         timestamptz,
            error                   jsonb,
            credits_charged         integer NOT NULL DEFAULT 0,
            credits_refunded        integer NOT NULL DEFAULT 0,
            started_at              timestamptz NOT NULL,
            completed_at            timestamptz,
            updated_at              timestamptz NOT NULL,
            job_version             integer NOT NULL DEFAULT 0,
            clip_version            integer NOT NULL DEFAULT 0
        )""",
    ],
    tables=["clip_jobs"],
)

RUNNING_STATUS = f"CASE WHEN type = '{DETECTION_JOB}' THEN 'detecting' ELSE 'rendering' END"


def _job_update(ev, sets: str, *args) -> list[Statement]:
    """A change from the job's stream: ``sets`` use $4..; $1 job, $2 version, $3 time."""
    return [(f"UPDATE clip_jobs SET {sets}, updated_at = $3, job_version = $2 WHERE job_id = $1 AND job_version < $2",
             (ev.stream_id, ev.version, ev.recorded_at, *args))]


def _clip_update(ev, sets: str, *args) -> list[Statement]:
    """A change from the clip flow's stream: ``sets`` use $4..; $1 job, $2 version, $3 time."""
    return [(f"UPDATE clip_jobs SET {sets}, updated_at = $3, clip_version = $2 "
             f"WHERE job_id = $1 AND clip_version < $2",
             (ev.data["job_id"], ev.version, ev.recorded_at, *args))]


@projection.handles("JobQueued")
def _queued(ev) -> list[Statement]:
    d = ev.data
    if d["job_type"] not in CLIP_JOB_TYPES:
        return []
    return [("""INSERT INTO clip_jobs (job_id, workspace_id, environment, type, status, stage, max_attempts,
                                       credits_charged, started_at, updated_at, job_version)
                VALUES ($1, $2, $3, $4, 'queued', 'queued', $5, $6, $7, $7, $8) ON CONFLICT (job_id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], d["job_type"], d["max_attempts"],
              int((d.get("params") or {}).get("credits") or 0), ev.recorded_at, ev.version))]


@projection.handles("JobStarted")
def _started(ev) -> list[Statement]:
    return _job_update(ev, f"status = {RUNNING_STATUS}, stage = 'started', attempts = greatest(attempts, $4), "
                           "next_attempt_at = NULL", ev.data["attempt"])


@projection.handles("JobProgressed")
def _progressed(ev) -> list[Statement]:
    return _job_update(ev, "progress = $4, stage = $5", ev.data["progress"], ev.data["step"])


@projection.handles("JobItemCompleted")
def _item_completed(ev) -> list[Statement]:
    return _job_update(ev, "progress = $4", ev.data["progress"])


@projection.handles("JobAttemptFailed")
def _attempt_failed(ev) -> list[Statement]:
    d = ev.data
    return _job_update(ev, "status = 'queued', stage = $4, next_attempt_at = $5, error = $6",
                       f"waiting to retry after attempt {d['attempt']} failed", datetime.fromisoformat(d["retry_at"]),
                       {"message": d["error_message"], "attempt": d["attempt"], "final": False})


@projection.handles("JobCompleted")
def _completed(ev) -> list[Statement]:
    return _job_update(ev, "status = 'completed', progress = 100, stage = 'completed', error = NULL, "
                           "next_attempt_at = NULL, completed_at = $3")


@projection.handles("JobFailed")
def _failed(ev) -> list[Statement]:
    d = ev.data
    return _job_update(ev, "status = 'failed', stage = 'failed', error = $4, next_attempt_at = NULL, "
                           "completed_at = $3", {"message": d["error_message"], "attempt": d["attempts"],
                                                 "final": True})


@projection.handles("JobCancelled")
def _cancelled(ev) -> list[Statement]:
    return _job_update(ev, "status = 'cancelled', stage = 'cancelled', next_attempt_at = NULL, completed_at = $3")


@projection.handles("JobItemFailed")
def _item_failed(ev) -> list[Statement]:
    return _job_update(ev, "progress = progress")  # the clip's failure is ClipRenderFailed's to show


@projection.handles("ClipDetectionQueued")
def _detection_queued(ev) -> list[Statement]:
    d = ev.data
    return _clip_update(ev, "video_id = $4, article_id = $5, template_id = $6, target_duration_seconds = $7, "
                            "options = $8", d["video_id"], d["article_id"], d["template_id"],
                        d["target_duration_seconds"], d["options"])


@projection.handles("ClipsDetected")
def _detected(ev) -> list[Statement]:
    d = ev.data
    return _clip_update(ev, "clips = $4, shortfall_reason = $5", d["clips"], d["shortfall_reason"])


@projection.handles("ClipRenderQueued")
def _render_queued(ev) -> list[Statement]:
    d = ev.data
    return _clip_update(ev, "video_id = $4, article_id = $5, template_id = $6, target_duration_seconds = $7, "
                            "format = $8, clips = $9", d["video_id"], d["article_id"], d["template_id"],
                        d["target_duration_seconds"], d["format"], d["clips"])


@projection.handles("ClipRendered")
def _rendered(ev) -> list[Statement]:
    d = ev.data
    entry = {"clip_id": d["clip_id"], "file_key": d["file_key"], "thumbnail_key": d["thumbnail_key"],
             "format": d["format"], "duration_ms": d["duration_ms"], "size_bytes": d["size_bytes"],
             "width": d["width"], "height": d["height"], "attempt": d["attempt"],
             "rendered_at": ev.recorded_at.isoformat(), "framing": d.get("framing")}
    return _clip_update(
        ev, "rendered_clips = rendered_clips || jsonb_build_array($4::jsonb), "
            "failed_clips = coalesce((SELECT jsonb_agg(f) FROM jsonb_array_elements(failed_clips) f "
            "WHERE f->>'clip_id' <> $5), '[]'::jsonb)", entry, d["clip_id"])


@projection.handles("ClipRenderFailed")
def _render_failed(ev) -> list[Statement]:
    d = ev.data
    entry = {"clip_id": d["clip_id"], "error": d["error_message"], "attempt": d["attempt"],
             "failed_at": ev.recorded_at.isoformat()}
    return _clip_update(
        ev, "failed_clips = coalesce((SELECT jsonb_agg(f) FROM jsonb_array_elements(failed_clips) f "
            "WHERE f->>'clip_id' <> $5), '[]'::jsonb) || jsonb_build_array($4::jsonb)", entry, d["clip_id"])


@projection.handles("CreditsRefunded")
def _refunded(ev) -> list[Statement]:
    """The refund of a clip job (the undelivered clips' price): ``credits_used`` is charged less refunded."""
    job_id = ev.data.get("job_id")
    if not job_id:
        return []
    return [("UPDATE clip_jobs SET credits_refunded = $2 WHERE job_id = $1", (job_id, ev.data["amount"]))]
