"""Projections are pure: a stored event in, replay-safe SQL statements out."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.base import PUBLISHED
from domain.jobs import Job
from domain.media import Media, media_stream_id
from domain.webhooks import cancel_events, delivery_id
from domain.workspaces import Workspace
from infra.codec import StoredEvent
from projections import jobs, medias, scheduler, webhooks
from tests.support.projection_events import REGISTRY, T0, WORKSPACE, stored

# Argument order of the jobs projection's UPDATE (see projections/jobs.py).
UPDATE_ARGS = ("id", "version", "status", "progress", "step", "article_id", "set_error", "error", "attempts",
               "result", "started_at", "finished_at", "updated_at")


def job_events(*commands) -> tuple[Job, list[StoredEvent]]:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis", params={"video": 1},
                    environment="sandbox", max_attempts=4, webhook_url="https://example.com/h")
    for command in commands:
        command(job)
    return job, stored(job)


def last_event(*commands) -> tuple[Job, StoredEvent]:
    job, events = job_events(*commands)
    return job, events[-1]


def only_update(statements: list) -> dict:
    [(sql, args)] = statements
    assert sql.lstrip().startswith("UPDATE jobs")
    return dict(zip(UPDATE_ARGS, args, strict=True))


def start(j: Job) -> None:
    j.start(1, "w1")


# ---- jobs


def test_jobs_queued_inserts_the_job() -> None:
    job, ev = last_event()

    [(sql, args)] = jobs.projection.apply(ev)

    assert "INSERT INTO jobs" in sql and "ON CONFLICT (id) DO NOTHING" in sql
    assert args == (job.id, WORKSPACE, "sandbox", "analysis", 4, {"video": 1}, "https://example.com/h",
                    ev.recorded_at, 1)


def test_jobs_started() -> None:
    job, ev = last_event(start)

    row = only_update(jobs.projection.apply(ev))

    assert (row["id"], row["version"]) == (job.id, 2)
    assert (row["status"], row["step"], row["attempts"]) == ("running", "started", 1)
    assert (row["started_at"], row["finished_at"], row["updated_at"]) == (ev.recorded_at, None, ev.recorded_at)
    assert row["progress"] is None and row["set_error"] is False


def test_jobs_progressed() -> None:
    _, ev = last_event(start, lambda j: j.report_progress(35, "transcript"))

    row = only_update(jobs.projection.apply(ev))

    assert (row["version"], row["progress"], row["step"]) == (3, 35, "transcript")
    assert row["status"] is None  # unchanged
    assert (row["started_at"], row["finished_at"]) == (None, None)


def test_jobs_attempt_failed_records_the_error_and_returns_to_pending() -> None:
    retry_at = T0 + timedelta(hours=1)
    _, ev = last_event(lambda j: j.start(2, "w1"), lambda j: j.fail_attempt("ffprobe timed out", retry_at))

    row = only_update(jobs.projection.apply(ev))

    assert (row["status"], row["step"]) == ("pending", "retrying after attempt 2 failed")
    assert (row["set_error"], row["error"]) == (True, "ffprobe timed out")
    assert row["finished_at"] is None


def test_jobs_completed_sets_result_progress_and_clears_the_error() -> None:
    _, ev = last_event(start, lambda j: j.complete({"chapters": 3}, article_id=21))

    row = only_update(jobs.projection.apply(ev))

    assert (row["status"], row["progress"], row["step"]) == ("completed", 100, "completed")
    assert (row["article_id"], row["result"]) == (21, {"chapters": 3})
    assert (row["set_error"], row["error"]) == (True, None)
    assert row["finished_at"] == ev.recorded_at


def test_jobs_failed_records_the_message_and_finish_time() -> None:
    _, ev = last_event(start, lambda j: j.fail("no captions"))

    row = only_update(jobs.projection.apply(ev))

    assert (row["status"], row["step"]) == ("failed", "failed")
    assert (row["set_error"], row["error"]) == (True, "no captions")
    assert row["finished_at"] == ev.recorded_at


def test_jobs_cancelled_keeps_the_error_and_records_the_finish_time() -> None:
    _, ev = last_event(lambda j: j.cancel("user"))

    row = only_update(jobs.projection.apply(ev))

    assert (row["status"], row["step"], row["version"]) == ("cancelled", "cancelled", 2)
    assert row["set_error"] is False
    assert row["finished_at"] == ev.recorded_at


def test_jobs_read_model_follows_every_job_event() -> None:
    job_event_names = {name for name, (_, _, stream) in PUBLISHED.items() if stream == "Job"}

    assert job_event_names <= set(jobs.projection.handlers)


def test_jobs_changes_are_guarded_by_the_stream_version() -> None:
    """Replaying an event (or an older one after a newer) must be a no-op."""
    _, events = job_events(start, lambda j: j.report_progress(10, "a"), lambda j: j.complete({}))

    for ev in events[1:]:
        [(sql, args)] = jobs.projection.apply(ev)
        assert "WHERE id = $1 AND version < $2" in sql
        assert args[:2] == (ev.stream_id, ev.version)


# ---- medias


def test_medias_created_inserts_the_media() -> None:
    media = Media.create(media_id=31, workspace_id=WORKSPACE, environment="production", name="Talks",
                         description="d", category=None, language="en")
    [ev] = stored(media)

    [(sql, args)] = medias.projection.apply(ev)

    assert "INSERT INTO medias" in sql and "ON CONFLICT (id) DO NOTHING" in sql
    assert args == (31, media_stream_id(31), WORKSPACE, "production", "Talks", "d", None, "en", ev.recorded_at, 1)


# ---- scheduler


def test_scheduler_queued_creates_a_claimable_row() -> None:
    job, ev = last_event()

    [(sql, args)] = scheduler.projection.apply(ev)

    assert "INSERT INTO job_queue" in sql and "'queued'" in sql and "ON CONFLICT (job_id) DO NOTHING" in sql
    assert args == (job.id, WORKSPACE, "sandbox", "analysis", {"video": 1}, 4, ev.recorded_at)


def test_scheduler_started_raises_attempts_monotonically() -> None:
    job, ev = last_event(lambda j: j.start(3, "w1"))

    [(sql, args)] = scheduler.projection.apply(ev)

    assert "greatest(attempts, $2)" in sql
    assert args == (job.id, 3)


@pytest.mark.parametrize(("finish", "state"), [
    (lambda j: (j.start(1, "w"), j.complete({})), "completed"),
    (lambda j: (j.start(1, "w"), j.fail("x")), "failed"),
    (lambda j: j.cancel(), "cancelled"),
])
def test_scheduler_final_events_move_the_row_to_a_final_state(finish, state: str) -> None:
    job, ev = last_event(finish)

    [(sql, args)] = scheduler.projection.apply(ev)

    assert f"state = '{state}'" in sql
    assert "lease_owner = NULL" in sql
    assert "state IN ('queued', 'running')" in sql  # a final state is absorbing
    assert args == (job.id,)


def test_scheduler_leaves_progress_and_retries_to_the_workers() -> None:
    _, events = job_events(start, lambda j: j.report_progress(5, "a"),
                           lambda j: j.fail_attempt("x", T0 + timedelta(minutes=5)))
    progressed, attempt_failed = events[-2:]

    assert (progressed.type, attempt_failed.type) == ("JobProgressed", "JobAttemptFailed")
    assert scheduler.projection.apply(progressed) == []
    assert scheduler.projection.apply(attempt_failed) == []


# ---- events a projection does not handle


def workspace_event() -> StoredEvent:
    ws = Workspace.open(WORKSPACE, "Acme", "pro", 10, 60)
    return stored(ws)[0]


@pytest.mark.parametrize("projection", [jobs.projection, medias.projection, scheduler.projection],
                         ids=lambda p: p.name)
def test_unhandled_events_give_no_statements(projection) -> None:
    media = Media.create(media_id=1, workspace_id=WORKSPACE, environment="production", name="m")
    _, job_stream = job_events(start)
    candidates = [workspace_event(), *stored(media), *job_stream]
    unhandled = [ev for ev in candidates if ev.type not in projection.handlers]

    assert unhandled  # the test would prove nothing otherwise
    for ev in unhandled:
        assert projection.apply(ev) == []


def test_webhooks_a_cancelled_delivery_ends_with_its_reason_guarded_by_the_version() -> None:
    hook = uuid.uuid4()
    did = delivery_id(hook, 9, "job.failed")
    new = REGISTRY.to_new_events(cancel_events(did, 3, {}, reason="webhook deleted", attempts=1,
                                               now=datetime(2026, 5, 4, tzinfo=UTC)),
                                 workspace_id=WORKSPACE)
    ev = StoredEvent(position=40, stream_id=did, stream_type=new[0].stream_type, version=new[0].version,
                     workspace_id=WORKSPACE, type=new[0].type, schema=1, data=new[0].data, meta={}, recorded_at=T0)

    [(sql, args)] = webhooks.projection.apply(ev)

    assert "status = 'cancelled'" in sql and "next_attempt_at = NULL" in sql and "version < $2" in sql
    assert args == (did, 4, 1, "webhook deleted", T0)


def test_unknown_event_types_give_no_statements() -> None:
    ev = StoredEvent(position=1, stream_id=uuid.uuid4(), stream_type="Future", version=1, workspace_id=WORKSPACE,
                     type="SomethingNew", schema=1, data={}, meta={}, recorded_at=T0)

    for projection in (jobs.projection, medias.projection, scheduler.projection):
        assert projection.apply(ev) == []


def test_consecutive_job_updates_of_one_batch_merge_into_what_they_would_leave_in_sequence():
    """Five events of a job in one batch: the planner sends the insert and one merged update."""
    import uuid as _uuid
    from datetime import UTC, datetime, timedelta

    from infra.codec import StoredEvent
    from projections import jobs
    from projections.plan import execution_plan

    job, ws = _uuid.uuid4(), _uuid.uuid4()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)

    def ev(version, type_, data):
        return StoredEvent(version, job, "Job", version, ws, type_, 1, data, {}, t0 + timedelta(seconds=version))

    events = [
        ev(1, "JobQueued", {"job_id": str(job), "workspace_id": str(ws), "environment": "production",
                            "job_type": "t", "params": {}, "max_attempts": 3, "webhook_url": None}),
        ev(2, "JobStarted", {"attempt": 1, "worker": "w"}),
        ev(3, "JobAttemptFailed", {"attempt": 1, "error_message": "boom", "retry_at": t0.isoformat()}),
        ev(4, "JobStarted", {"attempt": 2, "worker": "w"}),
        ev(5, "JobProgressed", {"progress": 40, "step": "half"}),
    ]
    keyed = [(job, st) for e in events for st in jobs.projection.apply(e)]
    plan = execution_plan(keyed, "per_stream", jobs.projection.merge)
    assert [len(args) for _, args in plan] == [1, 1]  # the insert, then one update
    (_, (merged,)) = plan[1]
    # (id, version, status, progress, step, article_id, set_error, error, attempts, result, started, finished, updated)
    assert merged[0] == job and merged[1] == 5
    assert (merged[2], merged[3], merged[4]) == ("running", 40, "half")
    assert (merged[6], merged[7]) == (True, "boom")  # set by the failed attempt, not cleared since
    assert merged[8] == 2
    assert merged[10] == t0 + timedelta(seconds=2)  # started_at: the first start
    assert merged[11] is None and merged[12] == t0 + timedelta(seconds=5)
    unmerged = execution_plan(keyed, "per_stream")
    assert [len(args) for _, args in unmerged] == [1, 1, 1, 1, 1]


def test_counter_upserts_of_one_batch_fold_into_one_statement_per_row():
    """Telemetry of 5 calls in two workspaces: one usage total, one hourly and one minute bucket
    row per workspace, with the counts summed, the last call kept and the later compaction cutoff."""
    from projections import monitoring, usage
    from projections.plan import execution_plan

    ws_a, ws_b = str(uuid.uuid4()), str(uuid.uuid4())
    t0 = int(datetime(2026, 1, 1, 10, 0, tzinfo=UTC).timestamp() * 1000)
    calls = [(ws_a, 200, 10.0, 0), (ws_b, 500, 5.0, 1000), (ws_a, 404, 20.0, 2000), (ws_a, 201, 30.0, 3000),
             (ws_b, 200, 1.0, 4000)]
    records = [{"kind": "api_call", "workspace_id": ws, "environment": "production", "status": status,
                "latency_ms": latency, "ts": t0 + dt} for ws, status, latency, dt in calls]

    plan = execution_plan([(None, st) for r in records for st in usage.projection.apply(r)], "commutative",
                          accumulate=usage.projection.accumulate)
    total = dict(plan)[usage._TOTAL]
    assert len(total) == 2 and len(dict(plan)[usage._HOURLY]) == 2
    a = next(args for args in total if args[0] == ws_a)
    # (workspace, env, errors, latency_ms_sum, last_call_at, calls)
    assert (a[2], a[3], a[5]) == (1, 60.0, 3)
    assert a[4] == datetime.fromtimestamp((t0 + 3000) / 1000, UTC)
    b = next(args for args in total if args[0] == ws_b)
    assert (b[2], b[3], b[5]) == (1, 6.0, 2)

    plan = dict(execution_plan([(None, st) for r in records for st in monitoring.calls.apply(r)], "commutative",
                               accumulate=monitoring.calls.accumulate))
    minutes = {args[0]: args for args in plan[monitoring._CALL]}
    # (workspace, env, minute, errors, server_errors, latency_ms_sum, calls)
    assert minutes[ws_b][3:] == (1, 1, 6.0, 2)
    assert minutes[ws_a][3:] == (0, 0, 60.0, 3)  # a 404 is the caller asking, not a failure
    assert len(plan[monitoring._COMPACT_CALLS]) == 2


def test_statements_that_differ_outside_the_folded_arguments_are_kept_apart():
    from projections.base import Accumulate

    rule = Accumulate(key=(0,), add=(1,), keep_max=(2,))
    assert rule.fold(("a", 1, 5, "x"), ("a", 2, 3, "x")) == ("a", 3, 5, "x")
    assert rule.fold(("a", 1, 5, "x"), ("a", 2, 3, "y")) is None  # an argument neither key nor folded differs

    from projections import event_counts
    from projections.plan import execution_plan

    ws = uuid.uuid4()
    evs = [StoredEvent(p, uuid.uuid4(), "Media", 1, ws, t, 1, {}, {}, datetime(2026, 1, 1, tzinfo=UTC))
           for p, t in ((7, "MediaCreated"), (9, "JobQueued"), (8, "MediaCreated"))]
    plan = execution_plan([(e.stream_id, st) for e in evs for st in event_counts.projection.apply(e)], "commutative",
                          accumulate=event_counts.projection.accumulate)
    rows = sorted(args for _, many in plan for args in many)
    # (workspace, type, last_position, count): positions out of order still keep the greatest
    assert [(r[1], r[2], r[3]) for r in rows] == [("JobQueued", 9, 1), ("MediaCreated", 8, 2)]
