"""Refunds of charged jobs on the real servers: whoever ends a job failed or cancelled (the cancel
command, a worker, a worker taking over an expired lease) appends the refund in the same
transaction, at most once per job, never for a job that was charged nothing."""

from __future__ import annotations

import asyncio

import pytest

from domain.base import InvalidTransition
from domain.workspaces import Workspace
from infra.eventstore import EventStore, PostgresEventStore
from services.application.jobs import CancelJob, QueueJob
from services.application.workspaces import CreateWorkspace
from services.worker import JobHandlers, PermanentJobError, Worker
from tests.helpers import handle
from tests.integration.test_worker import job_finished, start_pipeline, wait_for


async def charged_job(store, credits: int = 7, *, total: int = 20, max_attempts: int = 3,
                      job_type: str = "charged"):
    ws, _ = await handle(store, CreateWorkspace(name="refunds", plan="pro", credits=total, rate_limit=100))
    job, _ = await handle(store, QueueJob(ws, job_type=job_type, credits=credits, charge_reason="test"),
        max_attempts=max_attempts)
    return ws, job


async def balance(store, ws) -> int:
    workspace: Workspace = await store.fetch_for_writing(ws)
    return workspace.credits_balance


async def outcome(pool, job_id) -> dict:
    """The job's final events and its refunds, each with the transaction that wrote it."""
    async with pool.acquire() as conn:
        rows = await conn.fetch(
            "SELECT position, type, data, xmin::text AS tx FROM events "
            "WHERE (stream_id = $1 AND type IN ('JobFailed', 'JobCancelled', 'JobCompleted')) "
            "   OR (type = 'CreditsRefunded' AND data->>'job_id' = $2) ORDER BY position", job_id, str(job_id))
        claims = await conn.fetch("SELECT amount FROM credit_refunds WHERE job_id = $1", job_id)
    return {"types": [r["type"] for r in rows], "tx": {r["tx"] for r in rows},
            "positions": [r["position"] for r in rows], "refunds": [r["data"]["amount"] for r in rows
                                                                    if r["type"] == "CreditsRefunded"],
            "claims": [r["amount"] for r in claims]}


async def test_cancelling_a_queued_job_refunds_its_charge_in_the_same_append(store, pool):
    ws, job = await charged_job(store, 7)
    assert await balance(store, ws) == 13

    cancelled, _ = await handle(store, CancelJob(ws, job_id=job.id, environment="production"))

    assert cancelled.status == "cancelled"
    assert await balance(store, ws) == 20
    seen = await outcome(pool, job.id)
    assert seen["types"] == ["JobCancelled", "CreditsRefunded"]
    assert len(seen["tx"]) == 1 and seen["positions"][1] == seen["positions"][0] + 1  # one append
    assert seen["refunds"] == [7] and seen["claims"] == [7]

    with pytest.raises(InvalidTransition):
        await handle(store, CancelJob(ws, job_id=job.id, environment="production"))
    assert (await outcome(pool, job.id))["refunds"] == [7]
    assert await balance(store, ws) == 20


def writer(store, group_commit: bool) -> EventStore:
    """The store as the worker uses it, or as the API does (concurrent appends share commits)."""
    return PostgresEventStore(store.pool, store.registry, group_commit=True) if group_commit else store


@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_concurrent_cancellations_refund_once(store, pool, group_commit: bool):
    ws, job = await charged_job(store, 9)
    api = writer(store, group_commit)

    results = await asyncio.gather(*(handle(api, CancelJob(ws, job_id=job.id)) for _ in range(6)),
                                   return_exceptions=True)

    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, InvalidTransition) for r in results if isinstance(r, Exception)), results
    seen = await outcome(pool, job.id)
    assert seen["types"] == ["JobCancelled", "CreditsRefunded"] and seen["refunds"] == [9]
    assert await balance(store, ws) == 20


async def test_a_job_charged_nothing_is_never_refunded(store, pool):
    ws, job = await charged_job(store, 0)
    assert job.params["credits"] == 0 and await balance(store, ws) == 20

    await handle(store, CancelJob(ws, job_id=job.id))

    seen = await outcome(pool, job.id)
    assert seen["types"] == ["JobCancelled"] and seen["claims"] == []
    assert await balance(store, ws) == 20


@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_a_refund_claimed_earlier_is_not_paid_twice(store, pool, group_commit: bool):
    """A job refunded before the refund moved into the ending append (the analysis handler used to
    refund, then the worker failed the job) still ends, without a second refund."""
    ws, job = await charged_job(store, 4)
    async with pool.acquire() as conn:
        await conn.execute("INSERT INTO credit_refunds (job_id, workspace_id, amount) VALUES ($1, $2, 4)", job.id, ws)

    cancelled, _ = await handle(writer(store, group_commit), CancelJob(ws, job_id=job.id))

    assert cancelled.status == "cancelled"
    seen = await outcome(pool, job.id)
    assert seen["types"] == ["JobCancelled"] and seen["refunds"] == []
    assert await balance(store, ws) == 16


async def test_a_job_whose_worker_died_on_its_last_attempt_fails_with_one_refund(fast, store, pool, background):
    start_pipeline(fast, background)
    first_started = asyncio.Event()
    handlers_a, handlers_b = JobHandlers(), JobHandlers()
    ran_on_b: list[int] = []

    @handlers_a.register("charged")
    async def hang(ctx):
        first_started.set()
        await asyncio.Event().wait()

    @handlers_b.register("charged")
    async def finish(ctx):
        ran_on_b.append(ctx.attempt)
        return {}

    ws, job = await charged_job(store, 5, max_attempts=1)
    a_task = asyncio.create_task(Worker(fast, handlers_a, pool=pool, worker_id="worker-a").run(asyncio.Event()))
    await asyncio.wait_for(first_started.wait(), 30)
    a_task.cancel()  # the worker dies holding the lease of the job's only attempt
    await asyncio.gather(a_task, return_exceptions=True)
    background.start(Worker(fast, handlers_b, pool=pool, worker_id="worker-b").run)

    done = await wait_for(lambda: job_finished(store, job.id), what="job failed")
    assert done.status == "failed" and "interrupted 1 times" in done.error_message
    assert ran_on_b == []  # no attempt left: the taker-over fails it without running it
    seen = await outcome(pool, job.id)
    assert seen["types"] == ["JobFailed", "CreditsRefunded"] and len(seen["tx"]) == 1
    assert seen["refunds"] == [5] and seen["claims"] == [5]
    assert await balance(store, ws) == 20


@pytest.mark.parametrize(("fails", "status", "events", "balance_after"), [
    (True, "failed", ["JobFailed", "CreditsRefunded"], 20),  # a permanent error: refunded with JobFailed
    (False, "completed", ["JobCompleted"], 14),  # a completed job keeps its charge
])
async def test_a_worker_ends_a_charged_job(fast, store, pool, background, fails: bool, status: str, events: list,
                                           balance_after: int):
    start_pipeline(fast, background)
    handlers = JobHandlers()

    @handlers.register("charged")
    async def work(ctx):
        if fails:
            raise PermanentJobError("the media is unreadable")
        return {"ok": True}

    background.start(Worker(fast, handlers, pool=pool).run)
    ws, job = await charged_job(store, 6)

    assert (await wait_for(lambda: job_finished(store, job.id), what="job finished")).status == status
    seen = await outcome(pool, job.id)
    assert seen["types"] == events and len(seen["tx"]) == 1
    assert seen["refunds"] == seen["claims"] == ([6] if fails else [])
    assert await balance(store, ws) == balance_after


@pytest.mark.parametrize("rival", ["cancel", "second_worker"])
async def test_endings_racing_each_other_refund_once(settings, store, pool, rival: str):
    """A worker failing a job's last attempt races a cancellation, or a second worker that took
    over the expired lease and fails it too: one ending, one refund, for every job."""
    ws, _ = await handle(store, CreateWorkspace(name="race", plan="pro", credits=100, rate_limit=100))
    workers = [Worker(settings, JobHandlers(), pool=pool, worker_id=f"w{i}") for i in range(2)]
    for worker in workers:
        worker.store = store
    jobs = []
    for _ in range(8):
        job, _ = await handle(store, QueueJob(ws, job_type="charged", credits=5), max_attempts=1)
        job = await workers[0].append_to_job(job, lambda j: j.start(1, "w0"))
        jobs.append(job)
    assert await balance(store, ws) == 60

    for job in jobs:
        second = (handle(store, CancelJob(ws, job_id=job.id)) if rival == "cancel"
                  else workers[1]._finish_failed(await store.fetch_for_writing(job.id), 2, "lease expired"))
        await asyncio.gather(workers[0]._finish_failed(job, 1, "provider down"), second, return_exceptions=True)

    for job in jobs:
        seen = await outcome(pool, job.id)
        assert len(seen["types"]) == 2 and seen["types"][1] == "CreditsRefunded", seen
        assert seen["types"][0] in ("JobFailed", "JobCancelled") and len(seen["tx"]) == 1
        assert seen["refunds"] == [5] and seen["claims"] == [5]
    assert await balance(store, ws) == 100
