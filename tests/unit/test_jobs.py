"""Job aggregate (given events, when a command, then events), the published-event registry and
the worker's job handler registry."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from eventsourcing.domain import Aggregate, event

from domain import base
from domain.base import (
    PUBLISHED,
    DomainError,
    InsufficientCredits,
    InvalidTransition,
    NotFound,
    aggregate,
    deterministic_id,
)
from domain.jobs import Job
from services.jobs.context import JobHandlers

WORKSPACE = uuid.UUID("11111111-1111-4111-8111-111111111111")
RETRY_AT = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def queued(**overrides) -> Job:
    """Given: a job that was queued (its JobQueued already collected)."""
    args = {"job_id": uuid.uuid4(), "workspace_id": WORKSPACE, "job_type": "analysis", "params": {"video": 7}}
    args.update(overrides)
    job = Job.queue(**args)
    job.collect_events()
    return job


def running(attempt: int = 1) -> Job:
    job = queued()
    job.start(attempt, "worker-a")
    job.collect_events()
    return job


def then(job: Job) -> list[Aggregate.Event]:
    return list(job.collect_events())


# ---- queue


def test_queue_records_job_queued_with_its_parameters() -> None:
    job_id = uuid.uuid4()
    job = Job.queue(job_id=job_id, workspace_id=WORKSPACE, job_type="analysis", params={"video": 7},
                    environment="sandbox", max_attempts=5, webhook_url="https://example.com/hook")

    [ev] = then(job)
    assert isinstance(ev, Job.Queued)
    assert (ev.originator_id, ev.originator_version) == (job_id, 1)
    assert (ev.job_id, ev.workspace_id, ev.environment) == (job_id, WORKSPACE, "sandbox")
    assert (ev.job_type, ev.params, ev.max_attempts, ev.webhook_url) == (
        "analysis", {"video": 7}, 5, "https://example.com/hook")
    assert (job.status, job.progress, job.step, job.attempts) == ("pending", 0, "queued", 0)


def test_queue_defaults_params_environment_and_attempts() -> None:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis")

    [ev] = then(job)
    assert (ev.params, ev.environment, ev.max_attempts, ev.webhook_url) == ({}, "production", 3, None)


@pytest.mark.parametrize(("overrides", "field"), [
    ({"job_type": ""}, "job_type"),
    ({"max_attempts": 0}, "max_attempts"),
])
def test_queue_refuses_invalid_requests(overrides: dict, field: str) -> None:
    args = {"job_id": uuid.uuid4(), "workspace_id": WORKSPACE, "job_type": "analysis", **overrides}
    with pytest.raises(DomainError) as err:
        Job.queue(**args)
    assert err.value.details["field"] == field
    assert err.value.status == 400


# ---- start, progress, retries


def test_start_records_attempt_and_worker() -> None:
    job = queued()

    job.start(1, "worker-a")

    [ev] = then(job)
    assert isinstance(ev, Job.Started)
    assert (ev.attempt, ev.worker, ev.originator_version) == (1, "worker-a", 2)
    assert (job.status, job.attempts, job.step) == ("running", 1, "started")


def test_running_job_refuses_the_same_attempt_twice() -> None:
    job = running(attempt=1)

    with pytest.raises(InvalidTransition):
        job.start(1, "worker-b")
    assert then(job) == []


def test_running_job_can_be_taken_over_by_a_later_attempt() -> None:
    """A lease that expired lets another worker start the next attempt of a running job."""
    job = running(attempt=1)

    job.start(2, "worker-b")

    [ev] = then(job)
    assert (ev.attempt, ev.worker) == (2, "worker-b")
    assert job.attempts == 2


def test_report_progress_records_progress_and_step() -> None:
    job = running()

    job.report_progress(40, "transcript")

    [ev] = then(job)
    assert isinstance(ev, Job.Progressed)
    assert (ev.progress, ev.step) == (40, "transcript")
    assert (job.progress, job.step) == (40, "transcript")


@pytest.mark.parametrize("progress", [0, 100])
def test_report_progress_accepts_the_bounds(progress: int) -> None:
    job = running()

    job.report_progress(progress, "step")

    [ev] = then(job)
    assert ev.progress == progress


@pytest.mark.parametrize("progress", [-1, 101])
def test_report_progress_refuses_out_of_range(progress: int) -> None:
    job = running()

    with pytest.raises(DomainError) as err:
        job.report_progress(progress, "step")
    assert not isinstance(err.value, InvalidTransition)
    assert err.value.details["field"] == "progress"
    assert then(job) == []


def test_pending_job_does_not_report_progress() -> None:
    job = queued()

    with pytest.raises(InvalidTransition):
        job.report_progress(10, "step")
    assert then(job) == []


def test_fail_attempt_returns_the_job_to_pending_with_the_error() -> None:
    job = running(attempt=2)

    job.fail_attempt("ffmpeg exited with 1", RETRY_AT)

    [ev] = then(job)
    assert isinstance(ev, Job.AttemptFailed)
    assert (ev.attempt, ev.error_message, ev.retry_at) == (2, "ffmpeg exited with 1", RETRY_AT)
    assert (job.status, job.error_message) == ("pending", "ffmpeg exited with 1")
    assert job.step == "retrying after attempt 2 failed"


def test_retried_job_starts_its_next_attempt() -> None:
    job = running(attempt=1)
    job.fail_attempt("timeout", RETRY_AT)
    job.collect_events()

    job.start(2, "worker-b")

    [ev] = then(job)
    assert ev.attempt == 2
    assert job.status == "running"


# ---- outcomes


def test_complete_records_result_and_sets_progress_to_100() -> None:
    job = running()
    job.report_progress(30, "half")
    job.fail_attempt("transient", RETRY_AT)
    job.start(2, "worker-a")
    job.collect_events()

    job.complete({"chapters": 4}, article_id=12)

    [ev] = then(job)
    assert isinstance(ev, Job.Completed)
    assert (ev.result, ev.article_id) == ({"chapters": 4}, 12)
    assert (job.status, job.progress, job.step, job.article_id) == ("completed", 100, "completed", 12)
    assert job.error_message is None  # the earlier attempt's error is not the outcome


def test_complete_without_result_records_an_empty_result() -> None:
    job = running()

    job.complete()

    [ev] = then(job)
    assert (ev.result, ev.article_id) == ({}, None)


def test_pending_job_does_not_complete() -> None:
    job = queued()

    with pytest.raises(InvalidTransition):
        job.complete({"x": 1})
    assert then(job) == []


def test_fail_records_message_and_attempts() -> None:
    job = running(attempt=3)

    job.fail("no caption track found")

    [ev] = then(job)
    assert isinstance(ev, Job.Failed)
    assert (ev.error_message, ev.attempts) == ("no caption track found", 3)
    assert (job.status, job.error_message) == ("failed", "no caption track found")


def test_fail_without_message_gives_a_readable_one() -> None:
    job = running()

    job.fail("")

    [ev] = then(job)
    assert ev.error_message == "job failed"


@pytest.mark.parametrize("given", [queued, running])
def test_cancel_pending_or_running_job(given) -> None:
    job = given()

    job.cancel("user asked")

    [ev] = then(job)
    assert isinstance(ev, Job.Cancelled)
    assert ev.reason == "user asked"
    assert (job.status, job.step) == ("cancelled", "cancelled")


# ---- finished jobs refuse every transition


FINISH = {
    "completed": lambda j: j.complete({"ok": True}),
    "failed": lambda j: j.fail("broken"),
    "cancelled": lambda j: j.cancel(),
}
COMMANDS = {
    "start": lambda j: j.start(9, "worker-z"),
    "report_progress": lambda j: j.report_progress(50, "step"),
    "fail_attempt": lambda j: j.fail_attempt("again", RETRY_AT),
    "complete": lambda j: j.complete({}),
    "fail": lambda j: j.fail("again"),
    "cancel": lambda j: j.cancel(),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("outcome", sorted(FINISH))
def test_finished_job_refuses_every_transition(outcome: str, command: str) -> None:
    job = running()
    FINISH[outcome](job)
    job.collect_events()
    version = job.version

    with pytest.raises(InvalidTransition) as err:
        COMMANDS[command](job)

    assert err.value.status == 409
    assert err.value.details["status"] == outcome
    assert then(job) == []
    assert (job.status, job.version) == (outcome, version)


# ---- domain/base: errors, deterministic ids, the published-event registry


# ---- refunds: what a job was charged at queue time goes back when it ends without its result


@pytest.mark.parametrize(("credits", "end", "due"), [
    (5, lambda j: (j.start(1, "w"), j.fail("boom")), True),
    (5, lambda j: j.cancel(), True),
    (5, lambda j: (j.start(1, "w"), j.cancel()), True),
    (5, lambda j: (j.start(1, "w"), j.complete({})), False),
    (5, lambda j: j.start(1, "w"), False),  # still running
    (5, lambda j: (j.start(1, "w"), j.fail_attempt("x", RETRY_AT)), False),  # a retry is coming
    (0, lambda j: j.cancel(), False),  # a sandbox job is charged nothing
    (None, lambda j: (j.start(1, "w"), j.fail("boom")), False),  # a job type that charges nothing
])
def test_refund_is_due_when_a_charged_job_ends_failed_or_cancelled(credits, end, due: bool) -> None:
    job = queued(params={"video": 7} if credits is None else {"video": 7, "credits": credits})
    end(job)

    assert job.credits_charged == (credits or 0)
    assert job.refund_due is due



@pytest.mark.parametrize(("error", "code", "status"), [
    (DomainError, "invalid_request", 400),
    (NotFound, "not_found", 404),
    (InvalidTransition, "invalid_state", 409),
    (InsufficientCredits, "insufficient_credits", 402),
])
def test_domain_errors_carry_code_status_and_details(error: type[DomainError], code: str, status: int) -> None:
    err = error("refused", field="x")

    assert isinstance(err, DomainError)
    assert (err.code, err.status, err.message, err.details) == (code, status, "refused", {"field": "x"})
    assert str(err) == "refused"


def test_deterministic_id_is_stable_and_distinguishes_parts() -> None:
    first = deterministic_id("idempotency", WORKSPACE, "key-1")

    assert first == deterministic_id("idempotency", WORKSPACE, "key-1")
    assert first != deterministic_id("idempotency", WORKSPACE, "key-2")
    assert first != deterministic_id("idempotency", uuid.uuid4(), "key-1")
    assert first.version == 5


def test_every_job_event_is_published_under_its_stable_name() -> None:
    assert {name: (cls, stream) for name, (cls, _, stream) in PUBLISHED.items() if stream == "Job"} == {
        "JobQueued": (Job.Queued, "Job"),
        "JobStarted": (Job.Started, "Job"),
        "JobProgressed": (Job.Progressed, "Job"),
        "JobAttemptFailed": (Job.AttemptFailed, "Job"),
        "JobCompleted": (Job.Completed, "Job"),
        "JobFailed": (Job.Failed, "Job"),
        "JobCancelled": (Job.Cancelled, "Job"),
        "JobItemCompleted": (Job.ItemCompleted, "Job"),
        "JobItemFailed": (Job.ItemFailed, "Job"),
    }
    assert Job.stream_type == "Job"


@pytest.fixture
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> tuple[dict, dict]:
    """Aggregates declared by a test register into copies, never into the real registry."""
    published, aggregates = dict(base.PUBLISHED), dict(base.AGGREGATES)
    monkeypatch.setattr(base, "PUBLISHED", published)
    monkeypatch.setattr(base, "AGGREGATES", aggregates)
    return published, aggregates


def test_aggregate_publishes_named_events_with_their_schema(isolated_registry: tuple[dict, dict]) -> None:
    published, aggregates = isolated_registry

    @aggregate("Gadget")
    class Gadget(Aggregate):
        class Built(Aggregate.Created):
            published_as = "GadgetBuilt"
            colour: str

        class Painted(Aggregate.Event):
            published_as = "GadgetPainted"
            schema_version = 3
            colour: str

        class Polished(Aggregate.Event):  # no published name: not part of the contract
            pass

        @event(Built)
        def __init__(self, colour: str) -> None:
            self.colour = colour

    assert published["GadgetBuilt"] == (Gadget.Built, 1, "Gadget")
    assert published["GadgetPainted"] == (Gadget.Painted, 3, "Gadget")
    assert Gadget.Polished not in {cls for cls, _, _ in published.values()}
    assert aggregates["Gadget"] is Gadget
    assert "GadgetBuilt" not in PUBLISHED  # the real registry is untouched


def test_aggregate_refuses_a_name_published_twice(isolated_registry: tuple[dict, dict]) -> None:
    with pytest.raises(TypeError, match="JobQueued"):
        @aggregate("Impostor")
        class Impostor(Aggregate):
            class Made(Aggregate.Created):
                published_as = "JobQueued"


# ---- services/worker: the job handler registry


async def _analysis(ctx) -> dict:
    return {"ok": True}


async def _clips(ctx) -> dict:
    return {}


def test_job_handlers_register_and_look_up_by_type() -> None:
    handlers = JobHandlers()

    returned = handlers.register("analysis")(_analysis)
    handlers.register("clip_render")(_clips)

    assert returned is _analysis  # usable as a decorator: the function stays what it was
    assert handlers.get("analysis") is _analysis
    assert handlers.get("clip_render") is _clips
    assert handlers.get("translation") is None
    assert handlers.types == ["analysis", "clip_render"]


def test_job_handlers_registering_a_type_again_replaces_it() -> None:
    handlers = JobHandlers()
    handlers.register("analysis")(_analysis)

    handlers.register("analysis")(_clips)

    assert handlers.get("analysis") is _clips
    assert handlers.types == ["analysis"]


def test_job_handlers_start_empty() -> None:
    """An empty registry claims nothing: the worker skips the claim query when there are no types."""
    assert JobHandlers().types == []

