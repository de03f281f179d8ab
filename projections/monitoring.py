"""Monitoring read models: per-minute buckets behind GET /monitoring, its alerts and /metrics.

Two projections, because a projection reads one topic:

- ``monitoring_calls`` (``source="telemetry"``): API calls per workspace, environment and minute
  (calls, failed calls, 5xx, latency sum).
- ``monitoring_events`` (domain events): jobs not finished yet (pending or running), jobs
  finished per minute (completed, failed, cancelled), credits charged and refunded per minute,
  and job durations per type and outcome (histogram buckets for ``/metrics``).

Windows slide at read time: ``last1h`` is the current minute of the service clock and the 59
before it, ``last24h`` the current minute and the 1439 before it. A bucket is stamped with the
minute of the call's ``ts`` (the API's clock) or of the event's ``recorded_at``.

Compaction rule: every record also carries a statement that folds its workspace's minute buckets
older than ``RETENTION`` (25 h) before the
record's own time into per-day totals (``*_days``) and deletes them. The cutoff comes from the
record, never from the wall clock, so a rebuild compacts exactly as the live run did, and the
windows (24 h at most) never read a compacted minute. Totals over all time are preserved.

A failed call (``errors``) is a 5xx or a 4xx other than 401 and 404 (a missing resource or key
is the caller asking, not the service failing); 5xx are also counted apart.

Counters are deltas relying on the runner's exactly-once effect (tracking in the same
transaction, duplicates skipped); job rows are guarded by the stream version.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from projections.base import Accumulate, Projection, Statement

# Minute buckets older than this (before the newest record of their workspace) are compacted.
# A constant, not a setting: the rule is part of the read model (changing it is a rebuild).
RETENTION = timedelta(hours=25)
# Upper bounds of the job-duration histogram buckets, seconds (the last is +Inf).
DURATION_BUCKETS: tuple[float, ...] = (0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, float("inf"))


def is_failed_call(status: int) -> bool:
    """A 5xx, or a 4xx that says the call was wrong; not a missing key or resource (401, 404), and
    not a client that closed its connection before the answer (499: nothing failed here)."""
    return status >= 500 or (400 <= status < 500 and status not in (401, 404, 499))


def minute_of(at: datetime) -> datetime:
    return at.replace(second=0, microsecond=0)


# ------------------------------------------------------------------------------ API calls

calls = Projection(
    name="monitoring_calls",
    source="telemetry",
    ddl=[
        """CREATE TABLE IF NOT EXISTS monitoring_api_minutes (
            workspace_id   uuid NOT NULL,
            environment    text NOT NULL,
            minute         timestamptz NOT NULL,
            calls          bigint NOT NULL,
            errors         bigint NOT NULL,
            server_errors  bigint NOT NULL,
            latency_ms_sum double precision NOT NULL,
            PRIMARY KEY (workspace_id, environment, minute)
        )""",
        """CREATE TABLE IF NOT EXISTS monitoring_api_days (
            workspace_id   uuid NOT NULL,
            environment    text NOT NULL,
            day            date NOT NULL,
            calls          bigint NOT NULL,
            errors         bigint NOT NULL,
            server_errors  bigint NOT NULL,
            latency_ms_sum double precision NOT NULL,
            PRIMARY KEY (workspace_id, environment, day)
        )""",
    ],
    tables=["monitoring_api_minutes", "monitoring_api_days"],
    ordering="commutative",  # increments, and compaction preserves every sum
)

_CALL = """INSERT INTO monitoring_api_minutes (workspace_id, environment, minute, calls, errors, server_errors,
                                               latency_ms_sum)
           VALUES ($1, $2, $3, $7, $4, $5, $6)
           ON CONFLICT (workspace_id, environment, minute) DO UPDATE SET
             calls = monitoring_api_minutes.calls + excluded.calls,
             errors = monitoring_api_minutes.errors + excluded.errors,
             server_errors = monitoring_api_minutes.server_errors + excluded.server_errors,
             latency_ms_sum = monitoring_api_minutes.latency_ms_sum + excluded.latency_ms_sum"""
_COMPACT_CALLS = """WITH old AS (
             DELETE FROM monitoring_api_minutes WHERE workspace_id = $1 AND minute < $2 RETURNING *)
           INSERT INTO monitoring_api_days (workspace_id, environment, day, calls, errors, server_errors,
                                            latency_ms_sum)
           SELECT workspace_id, environment, (minute AT TIME ZONE 'UTC')::date, sum(calls), sum(errors),
                  sum(server_errors), sum(latency_ms_sum)
             FROM old GROUP BY 1, 2, 3
           ON CONFLICT (workspace_id, environment, day) DO UPDATE SET
             calls = monitoring_api_days.calls + excluded.calls,
             errors = monitoring_api_days.errors + excluded.errors,
             server_errors = monitoring_api_days.server_errors + excluded.server_errors,
             latency_ms_sum = monitoring_api_days.latency_ms_sum + excluded.latency_ms_sum"""


@calls.handles("api_call")
def _call(record: dict) -> list[Statement]:
    workspace = record.get("workspace_id")
    if not workspace:
        return []
    at = datetime.fromtimestamp(record["ts"] / 1000, UTC)
    status = int(record["status"])
    env = record.get("environment") or "production"
    return [
        (_CALL, (workspace, env, minute_of(at), int(is_failed_call(status)), int(status >= 500),
                 float(record["latency_ms"]), 1)),
        (_COMPACT_CALLS, (workspace, minute_of(at) - RETENTION)),
    ]


calls.accumulate = {
    _CALL: Accumulate(key=(0, 1, 2), add=(3, 4, 5, 6)),
    # Compacting a workspace up to the later cutoff does what compacting up to both does.
    _COMPACT_CALLS: Accumulate(key=(0,), keep_max=(1,)),
}


# ------------------------------------------------------------------------- domain events

events = Projection(
    name="monitoring_events",
    ddl=[
        """CREATE TABLE IF NOT EXISTS monitoring_open_jobs (
            job_id       uuid PRIMARY KEY,
            workspace_id uuid NOT NULL,
            environment  text NOT NULL,
            job_type     text NOT NULL,
            status       text NOT NULL CHECK (status IN ('pending', 'running')),
            started_at   timestamptz,
            version      integer NOT NULL
        )""",
        "CREATE INDEX IF NOT EXISTS monitoring_open_jobs_by_ws ON monitoring_open_jobs (workspace_id, environment)",
        """CREATE TABLE IF NOT EXISTS monitoring_event_minutes (
            workspace_id     uuid NOT NULL,
            environment      text NOT NULL,
            minute           timestamptz NOT NULL,
            jobs_completed   bigint NOT NULL DEFAULT 0,
            jobs_failed      bigint NOT NULL DEFAULT 0,
            jobs_cancelled   bigint NOT NULL DEFAULT 0,
            credits_charged  bigint NOT NULL DEFAULT 0,
            credits_refunded bigint NOT NULL DEFAULT 0,
            PRIMARY KEY (workspace_id, environment, minute)
        )""",
        """CREATE TABLE IF NOT EXISTS monitoring_event_days (
            workspace_id     uuid NOT NULL,
            environment      text NOT NULL,
            day              date NOT NULL,
            jobs_completed   bigint NOT NULL,
            jobs_failed      bigint NOT NULL,
            jobs_cancelled   bigint NOT NULL,
            credits_charged  bigint NOT NULL,
            credits_refunded bigint NOT NULL,
            PRIMARY KEY (workspace_id, environment, day)
        )""",
        """CREATE TABLE IF NOT EXISTS monitoring_job_durations (
            job_type  text NOT NULL,
            outcome   text NOT NULL,
            bucket_le double precision NOT NULL,   -- upper bound of the bucket (not cumulative), seconds
            count     bigint NOT NULL,
            PRIMARY KEY (job_type, outcome, bucket_le)
        )""",
        """CREATE TABLE IF NOT EXISTS monitoring_job_duration_totals (
            job_type  text NOT NULL,
            outcome   text NOT NULL,
            count     bigint NOT NULL,
            sum_s     double precision NOT NULL,
            PRIMARY KEY (job_type, outcome)
        )""",
    ],
    tables=["monitoring_open_jobs", "monitoring_event_minutes", "monitoring_event_days", "monitoring_job_durations",
            "monitoring_job_duration_totals"],
    ordering="per_stream",  # job rows belong to their stream; the bucket updates are increments
)

_COLUMNS = ("jobs_completed", "jobs_failed", "jobs_cancelled", "credits_charged", "credits_refunded")
_BUMP = f"""INSERT INTO monitoring_event_minutes (workspace_id, environment, minute, {', '.join(_COLUMNS)})
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            ON CONFLICT (workspace_id, environment, minute) DO UPDATE SET
            {', '.join(f'{c} = monitoring_event_minutes.{c} + excluded.{c}' for c in _COLUMNS)}"""
_COMPACT_EVENTS = f"""WITH old AS (
             DELETE FROM monitoring_event_minutes WHERE workspace_id = $1 AND minute < $2 RETURNING *)
           INSERT INTO monitoring_event_days (workspace_id, environment, day, {', '.join(_COLUMNS)})
           SELECT workspace_id, environment, (minute AT TIME ZONE 'UTC')::date,
                  {', '.join(f'sum({c})' for c in _COLUMNS)}
             FROM old GROUP BY 1, 2, 3
           ON CONFLICT (workspace_id, environment, day) DO UPDATE SET
           {', '.join(f'{c} = monitoring_event_days.{c} + excluded.{c}' for c in _COLUMNS)}"""


def _bump(ev, environment: str, **counts: int) -> list[Statement]:
    minute = minute_of(ev.recorded_at)
    values = tuple(counts.get(c, 0) for c in _COLUMNS)
    return [(_BUMP, (ev.workspace_id, environment, minute, *values)),
            (_COMPACT_EVENTS, (ev.workspace_id, minute - RETENTION))]


@events.handles("JobQueued")
def _queued(ev) -> list[Statement]:
    return [("""INSERT INTO monitoring_open_jobs (job_id, workspace_id, environment, job_type, status, version)
                VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT (job_id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, ev.data["environment"], ev.data["job_type"], ev.version))]


@events.handles("JobStarted")
def _started(ev) -> list[Statement]:
    return [("""UPDATE monitoring_open_jobs SET status = 'running', started_at = coalesce(started_at, $3),
                                                version = $2
                WHERE job_id = $1 AND version < $2""", (ev.stream_id, ev.version, ev.recorded_at))]


@events.handles("JobAttemptFailed")
def _attempt_failed(ev) -> list[Statement]:
    return [("UPDATE monitoring_open_jobs SET status = 'pending', version = $2 WHERE job_id = $1 AND version < $2",
             (ev.stream_id, ev.version))]


# The job leaves the open set; its minute bucket and its duration (first start to end) are counted
# from the row it leaves, in one statement: a replayed end finds no row and counts nothing.
_FINISH = """WITH j AS (
    DELETE FROM monitoring_open_jobs WHERE job_id = $1 RETURNING workspace_id, environment, job_type, started_at),
  m AS (
    INSERT INTO monitoring_event_minutes (workspace_id, environment, minute, jobs_completed, jobs_failed,
                                          jobs_cancelled)
    SELECT workspace_id, environment, $2, $3, $4, $5 FROM j
    ON CONFLICT (workspace_id, environment, minute) DO UPDATE SET
      jobs_completed = monitoring_event_minutes.jobs_completed + excluded.jobs_completed,
      jobs_failed = monitoring_event_minutes.jobs_failed + excluded.jobs_failed,
      jobs_cancelled = monitoring_event_minutes.jobs_cancelled + excluded.jobs_cancelled),
  d AS (
    SELECT job_type, greatest(0, extract(epoch FROM ($6::timestamptz - started_at)))::float8 AS s
      FROM j WHERE started_at IS NOT NULL),
  t AS (
    INSERT INTO monitoring_job_duration_totals (job_type, outcome, count, sum_s)
    SELECT job_type, $7, 1, s FROM d
    ON CONFLICT (job_type, outcome) DO UPDATE SET count = monitoring_job_duration_totals.count + 1,
      sum_s = monitoring_job_duration_totals.sum_s + excluded.sum_s)
INSERT INTO monitoring_job_durations (job_type, outcome, bucket_le, count)
SELECT job_type, $7, (SELECT min(b) FROM unnest($8::float8[]) AS b WHERE b >= d.s), 1 FROM d
ON CONFLICT (job_type, outcome, bucket_le) DO UPDATE SET count = monitoring_job_durations.count + 1"""


def _finish(outcome: str):
    flags = (int(outcome == "completed"), int(outcome == "failed"), int(outcome == "cancelled"))

    def handler(ev) -> list[Statement]:
        minute = minute_of(ev.recorded_at)
        return [(_FINISH, (ev.stream_id, minute, *flags, ev.recorded_at, outcome, list(DURATION_BUCKETS))),
                (_COMPACT_EVENTS, (ev.workspace_id, minute - RETENTION))]

    return handler


events.handles("JobCompleted")(_finish("completed"))
events.handles("JobFailed")(_finish("failed"))
events.handles("JobCancelled")(_finish("cancelled"))


# Credits are the workspace's; sandbox keys consume none, so they are counted under production.
@events.handles("CreditsCharged")
def _charged(ev) -> list[Statement]:
    return _bump(ev, "production", credits_charged=ev.data["amount"])


@events.handles("CreditsRefunded")
def _refunded(ev) -> list[Statement]:
    return _bump(ev, "production", credits_refunded=ev.data["amount"])
