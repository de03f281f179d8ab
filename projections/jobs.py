"""The jobs read model: GET /jobs and GET /jobs/{id}."""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="jobs",
    ddl=[
        """CREATE TABLE IF NOT EXISTS jobs (
            id            uuid PRIMARY KEY,
            workspace_id  uuid NOT NULL,
            environment   text NOT NULL,
            type          text NOT NULL,
            status        text NOT NULL,
            progress      integer NOT NULL,
            step          text NOT NULL,
            article_id    integer,
            error_message text,
            attempts      integer NOT NULL DEFAULT 0,
            max_attempts  integer NOT NULL,
            params        jsonb NOT NULL,
            result        jsonb,
            webhook_url   text,
            created_at    timestamptz NOT NULL,
            updated_at    timestamptz NOT NULL,
            started_at    timestamptz,
            finished_at   timestamptz,
            version       integer NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS jobs_by_workspace ON jobs (workspace_id, environment, created_at DESC, id)",
    ],
    tables=["jobs"],
    ordering="per_stream",
)

# One UPDATE shape for every change, so that runs of changes go to the server as one executemany.
# A NULL argument leaves the column as it is; the version guard makes a replayed event a no-op.
_UPDATE = """UPDATE jobs SET
    status = coalesce($3, status), progress = coalesce($4, progress), step = coalesce($5, step),
    article_id = coalesce($6, article_id), error_message = CASE WHEN $7::bool THEN $8 ELSE error_message END,
    attempts = greatest(attempts, coalesce($9, attempts)), result = coalesce($10, result),
    started_at = coalesce(started_at, $11), finished_at = coalesce($12, finished_at),
    updated_at = $13, version = $2
  WHERE id = $1 AND version < $2"""


def _update(ev, *, status=None, progress=None, step=None, article_id=None, set_error=False, error=None,
            attempts=None, result=None, started=False, finished=False) -> list[Statement]:
    at = ev.recorded_at
    return [(_UPDATE, (ev.stream_id, ev.version, status, progress, step, article_id, set_error, error, attempts,
                       result, at if started else None, at if finished else None, at))]


@projection.handles("JobQueued")
def _queued(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO jobs (id, workspace_id, environment, type, status, progress, step, max_attempts, params,
                                  webhook_url, created_at, updated_at, version)
                VALUES ($1, $2, $3, $4, 'pending', 0, 'queued', $5, $6, $7, $8, $8, $9)
                ON CONFLICT (id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], d["job_type"], d["max_attempts"], d["params"],
              d.get("webhook_url"), ev.recorded_at, ev.version))]


@projection.handles("JobStarted")
def _started(ev) -> list[Statement]:
    return _update(ev, status="running", step="started", attempts=ev.data["attempt"], started=True)


@projection.handles("JobProgressed")
def _progressed(ev) -> list[Statement]:
    return _update(ev, progress=ev.data["progress"], step=ev.data["step"])


@projection.handles("JobItemCompleted")
def _item_completed(ev) -> list[Statement]:
    """An item done moves the job's progress (its result is the job type's own read model's business)."""
    return _update(ev, progress=ev.data["progress"])


@projection.handles("JobItemFailed")
def _item_failed(ev) -> list[Statement]:
    """Nothing the job detail shows changes (the attempt's failure comes with JobAttemptFailed)."""
    return _update(ev)


@projection.handles("JobAttemptFailed")
def _attempt_failed(ev) -> list[Statement]:
    d = ev.data
    return _update(ev, status="pending", step=f"retrying after attempt {d['attempt']} failed", set_error=True,
                   error=d["error_message"])


@projection.handles("JobCompleted")
def _completed(ev) -> list[Statement]:
    return _update(ev, status="completed", progress=100, step="completed", article_id=ev.data.get("article_id"),
                   set_error=True, error=None, result=ev.data.get("result") or {}, finished=True)


@projection.handles("JobFailed")
def _failed(ev) -> list[Statement]:
    return _update(ev, status="failed", step="failed", set_error=True, error=ev.data["error_message"],
                   finished=True)


@projection.handles("JobCancelled")
def _cancelled(ev) -> list[Statement]:
    return _update(ev, status="cancelled", step="cancelled", finished=True)


def _merge(first: Statement, second: Statement) -> Statement | None:
    """Two guarded updates of one job in a batch as one: what ``_UPDATE`` would leave after both.

    Arguments: (id, version, status, progress, step, article_id, set_error, error, attempts,
    result, started_at, finished_at, updated_at). Column by column as the SQL reads them:
    coalesce takes the later non-NULL value; the error flag and text come from the later update
    that sets them; attempts is the greatest; started_at keeps the first; version and updated_at
    are the later update's.
    """
    if first[0] != _UPDATE or second[0] != _UPDATE:
        return None
    a, b = first[1], second[1]

    def later(i: int):
        return b[i] if b[i] is not None else a[i]

    set_error = a[6] or b[6]
    error = b[7] if b[6] else a[7]
    attempts = max((x for x in (a[8], b[8]) if x is not None), default=None)
    return (_UPDATE, (a[0], b[1], later(2), later(3), later(4), later(5), set_error, error, attempts, later(9),
                      a[10] if a[10] is not None else b[10], later(11), b[12]))


projection.merge = _merge
