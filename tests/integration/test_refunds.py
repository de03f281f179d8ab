"""Refunds of charged jobs ended by workers on the real servers: whoever ends a job failed (a
worker, a worker taking over an expired lease, racing a cancellation) appends the refund in the
same transaction, at most once per job. The cancel command's refunds are in
``tests/command_contract.py``, run on both stores."""

from __future__ import annotations

import asyncio

import pytest

from domain.workspaces import Workspace
from infra.codec import EventRegistry
from services.application.jobs import CancelJob, QueueJob
from services.application.workspaces import CreateWorkspace
from services.jobs.context import JobHandlers
from services.jobs.errors import PermanentJobError
from services.processes.worker import Worker
from tests.helpers import handle
from tests.support.command_backends import PostgresBackend
from tests.support.pipeline import job_finished, start_pipeline, wait_for


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
    """The job's final events and its refunds (``PostgresBackend.ending``)."""
    return await PostgresBackend(pool, EventRegistry(), False).ending(job_id)


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
    assert seen["types"] == ["JobFailed", "CreditsRefunded"] and seen["one_append"]
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
    assert seen["types"] == events and seen["one_append"]
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
        assert seen["types"][0] in ("JobFailed", "JobCancelled") and seen["one_append"]
        assert seen["refunds"] == [5] and seen["claims"] == [5]
    assert await balance(store, ws) == 100
