"""Workers on the real servers: claims, leases, cancellation, retries, exclusivity."""

from __future__ import annotations

import asyncio
import uuid

from services.application.jobs import CancelJob, QueueJob
from services.jobs.context import JobHandlers
from services.jobs.errors import PermanentJobError
from services.processes.worker import Worker
from tests.helpers import handle, wait_projected
from tests.support.pipeline import job_finished, start_pipeline, wait_for


async def job_events(store, job_id) -> list:
    return await store.read_stream(job_id)


async def test_a_lease_that_expires_is_reclaimed_by_another_worker(fast, store, pool, background):
    start_pipeline(fast, background)
    first_started = asyncio.Event()
    handlers_a, handlers_b = JobHandlers(), JobHandlers()

    @handlers_a.register("slow")
    async def hang(ctx):
        first_started.set()
        await asyncio.Event().wait()  # the process "dies" while holding the job

    @handlers_b.register("slow")
    async def finish(ctx):
        return {"done_by": "b", "attempt": ctx.attempt}

    ws = uuid.uuid4()
    job, _ = await handle(store, QueueJob(ws, job_type="slow"), max_attempts=3)
    worker_a = Worker(fast, handlers_a, pool=pool, worker_id="worker-a")
    a_stop = asyncio.Event()
    a_task = asyncio.create_task(worker_a.run(a_stop))
    await asyncio.wait_for(first_started.wait(), 30)
    # Kill A abruptly: its task is cancelled and nothing releases the lease (as after kill -9).
    a_task.cancel()
    await asyncio.gather(a_task, return_exceptions=True)
    background.start(Worker(fast, handlers_b, pool=pool, worker_id="worker-b").run)
    done = await wait_for(lambda: job_finished(store, job.id), what="job finished")
    assert done.status == "completed"
    events = await job_events(store, job.id)
    started = [(e.data["attempt"], e.data["worker"]) for e in events if e.type == "JobStarted"]
    assert started == [(1, "worker-a"), (2, "worker-b")]
    assert events[-1].type == "JobCompleted" and events[-1].data["result"] == {"done_by": "b", "attempt": 2}


async def test_cancellation_stops_a_running_job_between_steps(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    steps_run: list[int] = []
    reached_step_3 = asyncio.Event()

    @handlers.register("long")
    async def long_job(ctx):
        for i in range(1, 200):
            await ctx.progress(min(i, 99), f"step {i}")
            steps_run.append(i)
            if i == 3:
                reached_step_3.set()
            await asyncio.sleep(0.02)
        return {}

    background.start(Worker(fast, handlers, pool=pool).run)
    ws = uuid.uuid4()
    job, _ = await handle(store, QueueJob(ws, job_type="long"))
    await asyncio.wait_for(reached_step_3.wait(), 30)
    await handle(store, CancelJob(ws, job_id=job.id))

    async def queue_row_final():
        async with pool.acquire() as conn:
            return await conn.fetchval("SELECT state FROM job_queue WHERE job_id = $1 AND state = 'cancelled'",
                                       job.id)

    await wait_for(queue_row_final, what="queue row cancelled")
    stopped_at = len(steps_run)
    await asyncio.sleep(0.3)
    assert len(steps_run) == stopped_at < 199  # nothing ran after the cancellation was observed
    events = await job_events(store, job.id)
    types = [e.type for e in events]
    assert types[-1] == "JobCancelled"
    assert "JobCompleted" not in types
    await wait_projected(fast, pool, ["jobs"])
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT status, step FROM jobs WHERE id = $1", job.id)
    assert (row["status"], row["step"]) == ("cancelled", "cancelled")


async def test_the_last_failed_attempt_gives_job_failed_with_its_message(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    calls: list[int] = []

    @handlers.register("flaky")
    async def always_fails(ctx):
        calls.append(ctx.attempt)
        raise RuntimeError(f"provider unreachable on attempt {ctx.attempt}")

    background.start(Worker(fast, handlers, pool=pool).run)
    ws = uuid.uuid4()
    job, _ = await handle(store, QueueJob(ws, job_type="flaky"), max_attempts=3)
    done = await wait_for(lambda: job_finished(store, job.id), what="job failed")
    assert done.status == "failed"
    assert calls == [1, 2, 3]
    types = [e.type for e in await job_events(store, job.id)]
    assert types == ["JobQueued", "JobStarted", "JobAttemptFailed", "JobStarted", "JobAttemptFailed", "JobStarted",
                     "JobFailed"]
    assert done.error_message == "provider unreachable on attempt 3"
    await wait_projected(fast, pool, ["jobs"])
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT status, error_message, attempts FROM jobs WHERE id = $1", job.id)
    assert dict(row) == {"status": "failed", "error_message": "provider unreachable on attempt 3", "attempts": 3}


async def test_a_permanent_error_fails_at_once_without_retry(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()

    @handlers.register("bad_input")
    async def refuse(ctx):
        raise PermanentJobError("the video has no audio track")

    background.start(Worker(fast, handlers, pool=pool).run)
    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type="bad_input"), max_attempts=3)
    done = await wait_for(lambda: job_finished(store, job.id), what="job failed")
    assert (done.status, done.error_message, done.attempts) == ("failed", "the video has no audio track", 1)


async def test_two_workers_never_run_the_same_job_at_once(fast, store, pool, background):
    start_pipeline(fast, background)
    running: set[uuid.UUID] = set()
    overlaps: list[uuid.UUID] = []
    runs: list[tuple[uuid.UUID, str]] = []

    def handlers_for(name: str) -> JobHandlers:
        handlers = JobHandlers()

        @handlers.register("unit")
        async def work(ctx):
            if ctx.job_id in running:
                overlaps.append(ctx.job_id)
            running.add(ctx.job_id)
            runs.append((ctx.job_id, name))
            await asyncio.sleep(0.05)
            running.discard(ctx.job_id)
            return {"by": name}

        return handlers

    for name in ("w1", "w2", "w3"):
        background.start(Worker(fast, handlers_for(name), pool=pool, worker_id=name).run)
    ws = uuid.uuid4()
    jobs = [(await handle(store, QueueJob(ws, job_type="unit")))[0].id for _ in range(30)]
    for job_id in jobs:
        await wait_for(lambda j=job_id: job_finished(store, j), what="all jobs done")
    assert overlaps == []
    assert sorted(j for j, _ in runs) == sorted(jobs)  # each job ran exactly once
    assert len({w for _, w in runs}) >= 2  # the work was shared
    async with pool.acquire() as conn:
        completed = await conn.fetchval("SELECT count(*) FROM events WHERE type = 'JobCompleted'")
    assert completed == 30


async def test_results_the_database_cannot_store_fail_the_job_at_once_with_the_reason(fast, store, pool, background):
    # A NUL in a result: PostgreSQL refuses it in JSON text. Another attempt would compute the
    # same results, so the job fails on its first attempt and says why (it used to end, after
    # every attempt's lease had expired, as "worker lost its lease").
    start_pipeline(fast, background)
    handlers = JobHandlers()
    calls: list[int] = []

    @handlers.register("unstorable")
    async def nul_in_result(ctx):
        calls.append(ctx.attempt)
        return {"transcript": "caption text with a \x00 inside"}

    background.start(Worker(fast, handlers, pool=pool).run)
    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type="unstorable"), max_attempts=3)
    done = await wait_for(lambda: job_finished(store, job.id), what="job failed")
    assert (done.status, done.attempts, calls) == ("failed", 1, [1])
    assert done.error_message.startswith("recording the results failed: ")
    assert "lease" not in done.error_message
    assert "\\u0000" in done.error_message  # the database's detail names the value it refused
    types = [e.type for e in await job_events(store, job.id)]
    assert types == ["JobQueued", "JobStarted", "JobFailed"]
