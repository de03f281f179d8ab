"""Jobs with items: each item recorded once, by the running attempt only; failures kept until the
item is done; the refund of a failed or cancelled job leaves what its items delivered paid."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from domain.base import DomainError, InvalidTransition
from domain.jobs import Job, StaleAttempt
from infra.codec import EventRegistry, StoredEvent

WORKSPACE = uuid.UUID("11111111-1111-4111-8111-111111111111")
RETRY_AT = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def running(attempt: int = 1, **params) -> Job:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="render", params=params)
    for k in range(1, attempt + 1):
        job.start(k, "w")
        if k < attempt:
            job.fail_attempt("boom", RETRY_AT)
    job.collect_events()
    return job


def test_a_completed_item_is_recorded_with_its_result_attempt_and_progress() -> None:
    job = running()
    job.complete_item("a", {"url": "x"}, attempt=1, progress=40)

    [ev] = job.collect_events()
    assert isinstance(ev, Job.ItemCompleted)
    assert (ev.item_id, ev.attempt, ev.progress, ev.result) == ("a", 1, 40, {"url": "x"})
    assert job.items_done == {"a": {"url": "x"}} and job.progress == 40 and job.status == "running"


def test_an_item_is_completed_at_most_once_even_by_a_later_attempt() -> None:
    job = running()
    job.complete_item("a", {}, attempt=1, progress=50)
    with pytest.raises(InvalidTransition):
        job.complete_item("a", {}, attempt=1, progress=50)
    job.fail_attempt("b failed", RETRY_AT)
    job.start(2, "w2")
    with pytest.raises(InvalidTransition):
        job.complete_item("a", {}, attempt=2, progress=50)
    with pytest.raises(InvalidTransition):
        job.fail_item("a", "late", attempt=2)


def test_a_failed_item_stays_failed_until_a_later_attempt_completes_it() -> None:
    job = running()
    job.fail_item("b", "ffmpeg exited 1", attempt=1)
    [ev] = job.collect_events()
    assert isinstance(ev, Job.ItemFailed) and (ev.item_id, ev.attempt, ev.error_message) == ("b", 1, "ffmpeg exited 1")
    assert job.items_failed == {"b": "ffmpeg exited 1"}
    job.fail_attempt("1 of 1 items failed", RETRY_AT)
    assert job.items_failed == {"b": "ffmpeg exited 1"}  # the retry shows what it will redo
    job.start(2, "w")
    job.complete_item("b", {"ok": True}, attempt=2, progress=100)
    assert job.items_failed == {} and job.items_done == {"b": {"ok": True}}


@pytest.mark.parametrize("stale", [1, 3])
def test_only_the_running_attempt_records_items(stale: int) -> None:
    job = running(attempt=2)
    with pytest.raises(StaleAttempt):
        job.complete_item("a", {}, attempt=stale, progress=10)
    with pytest.raises(StaleAttempt):
        job.fail_item("a", "x", attempt=stale)
    assert job.collect_events() == []


def test_a_pending_or_finished_job_records_no_item() -> None:
    job = running()
    job.fail_attempt("boom", RETRY_AT)  # pending, waiting for its retry
    with pytest.raises(StaleAttempt):
        job.complete_item("a", {}, attempt=1, progress=10)
    job.cancel()
    with pytest.raises(InvalidTransition):
        job.complete_item("a", {}, attempt=1, progress=10)


@pytest.mark.parametrize(("item_id", "progress"), [("", 10), ("x" * 101, 10), ("a", 101), ("a", -1)])
def test_item_ids_and_progress_are_bounded(item_id: str, progress: int) -> None:
    with pytest.raises(DomainError):
        running().complete_item(item_id, {}, attempt=1, progress=progress)


@pytest.mark.parametrize(("done", "end", "refund"), [
    ([], "fail", 9),
    (["a"], "fail", 7),  # a (2 credits) was delivered and stays paid
    (["a", "b"], "cancel", 4),
    (["a", "b", "c"], "complete", 0),  # nothing to refund: the job completed
])
def test_a_failed_or_cancelled_job_refunds_only_the_items_it_did_not_deliver(done, end, refund) -> None:
    job = running(credits=9, item_credits={"a": 2, "b": 3, "c": 4})
    for k, item in enumerate(done):
        job.complete_item(item, {}, attempt=1, progress=10 * (k + 1))
    {"fail": lambda: job.fail("x"), "cancel": job.cancel, "complete": job.complete}[end]()
    assert job.credits_delivered == 9 - (refund if end != "complete" else 0)
    assert job.refund_amount == (refund if end != "complete" else 0)
    assert job.refund_due is (refund > 0)


def test_without_item_prices_a_failed_job_refunds_its_whole_charge() -> None:
    job = running(credits=5)
    job.complete_item("a", {}, attempt=1, progress=50)
    job.fail("x")
    assert (job.refund_amount, job.refund_due) == (5, True)


def test_items_survive_the_round_trip_through_the_store_codec() -> None:
    registry = EventRegistry()
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="render")
    job.start(1, "w")
    job.complete_item("a", {"n": 1}, attempt=1, progress=50)
    job.fail_item("b", "bad", attempt=1)
    new = registry.to_new_events(job.collect_events(), workspace_id=WORKSPACE)
    assert [e.type for e in new] == ["JobQueued", "JobStarted", "JobItemCompleted", "JobItemFailed"]
    stored = [StoredEvent(k + 1, e.stream_id, e.stream_type, e.version, e.workspace_id, e.type, e.schema, e.data,
                          e.meta, RETRY_AT) for k, e in enumerate(new)]
    again = registry.reconstruct(stored)
    assert (again.items_done, again.items_failed, again.progress) == ({"a": {"n": 1}}, {"b": "bad"}, 50)


def test_the_jobs_read_model_moves_progress_with_each_item_and_guards_by_version() -> None:
    from projections import jobs as jobs_projection

    job = running()
    job.complete_item("a", {}, attempt=1, progress=33)
    job.fail_item("b", "x", attempt=1)
    done, failed = EventRegistry().to_new_events(job.collect_events(), workspace_id=WORKSPACE)
    [(sql, args)] = jobs_projection.projection.apply(
        StoredEvent(9, done.stream_id, "Job", done.version, WORKSPACE, done.type, 1, done.data, {}, RETRY_AT))
    assert "version < $2" in sql and (args[1], args[3]) == (done.version, 33)
    [(sql, args)] = jobs_projection.projection.apply(
        StoredEvent(10, failed.stream_id, "Job", failed.version, WORKSPACE, failed.type, 1, failed.data, {}, RETRY_AT))
    assert args[1] == failed.version and args[2:10] == (None, None, None, None, False, None, None, None)
