"""Jobs with items on the real servers: each item recorded as soon as it is done, failed items
retried alone on the job's schedule, cancellation between items, and kill -9 of the worker process
in the middle of an item (it resumes; no item is done twice)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path

from services.application.jobs import CancelJob, QueueJob
from services.application.workspaces import CreateWorkspace
from services.jobs.context import ItemDone, JobHandlers
from services.jobs.errors import PermanentJobError
from services.processes.worker import Worker
from tests.helpers import handle, wait_projected
from tests.integration.item_worker import ITEM_JOB
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.stack import ROOT, env_for


async def item_events(store, job_id) -> list[tuple[str, str, int]]:
    return [(e.type, e.data["item_id"], e.data["attempt"]) for e in await store.read_stream(job_id)
            if e.type in ("JobItemCompleted", "JobItemFailed")]


async def test_each_item_is_recorded_and_readable_before_the_job_ends(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    release = {item: asyncio.Event() for item in ("a", "b", "c")}

    @handlers.register("gated")
    async def gated(ctx):
        async def work(item):
            await release[item].wait()
            return ItemDone({"made": item})

        results = await ctx.run_items(["a", "b", "c"], work, progress=(10, 90))
        return {"results": results}

    background.start(Worker(fast, handlers, pool=pool).run)
    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type="gated"))
    progress_seen = []
    for k, item in enumerate(("a", "b", "c"), start=1):
        release[item].set()
        await wait_for(lambda n=k: _items_done(store, job.id, n), what=f"{k} items done")
        live = await store.fetch_for_writing(job.id)
        if k < 3:  # the result is in the log while the job still runs
            assert live.status == "running" and list(live.items_done) == ["a", "b", "c"][:k]
            await wait_projected(fast, pool, ["jobs"])
            async with pool.acquire() as conn:
                progress_seen.append(await conn.fetchval("SELECT progress FROM jobs WHERE id = $1", job.id))
    done = await wait_for(lambda: job_finished(store, job.id), what="job completed")
    assert done.status == "completed"
    assert done.result == {"results": {"a": {"made": "a"}, "b": {"made": "b"}, "c": {"made": "c"}}}
    assert progress_seen == [37, 63]  # 10 + 80 * 1/3, 10 + 80 * 2/3
    assert await item_events(store, job.id) == [("JobItemCompleted", "a", 1), ("JobItemCompleted", "b", 1),
                                                ("JobItemCompleted", "c", 1)]


async def _items_done(store, job_id, n: int) -> bool:
    job = await store.fetch_for_writing(job_id)
    return len(job.items_done) >= n


async def test_a_failed_item_is_retried_alone_on_the_jobs_schedule(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    calls: list[tuple[str, int]] = []

    @handlers.register("flaky_items")
    async def flaky(ctx):
        async def work(item):
            calls.append((item, ctx.attempt))
            if item == "b" and ctx.attempt < 3:
                raise RuntimeError(f"encoder crashed on {item}")
            return ItemDone({"item": item})

        await ctx.run_items(["a", "b", "c"], work)
        return {}

    background.start(Worker(fast, handlers, pool=pool).run)
    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type="flaky_items"), max_attempts=3)
    done = await wait_for(lambda: job_finished(store, job.id), what="job completed")
    assert done.status == "completed" and done.attempts == 3
    assert calls == [("a", 1), ("b", 1), ("c", 1), ("b", 2), ("b", 3)]  # a and c never redone
    assert await item_events(store, job.id) == [
        ("JobItemCompleted", "a", 1), ("JobItemFailed", "b", 1), ("JobItemCompleted", "c", 1),
        ("JobItemFailed", "b", 2), ("JobItemCompleted", "b", 3)]
    types = [e.type for e in await store.read_stream(job.id)]
    assert types.count("JobAttemptFailed") == 2 and types[-1] == "JobCompleted"
    failed_attempt = next(e for e in await store.read_stream(job.id) if e.type == "JobAttemptFailed")
    assert failed_attempt.data["error_message"] == "1 of 3 items failed: b: encoder crashed on b"


async def test_chained_items_stop_at_a_failure_and_each_reads_the_recorded_results_before_it(fast, store, pool,
                                                                                           background):
    """Each item reads what the items before it recorded (as a speech window reads the text before
    it): the attempt stops at a failed item, so none runs before one it follows, and the retried
    item reads what it read the first time."""
    start_pipeline(fast, background)
    handlers = JobHandlers()
    calls: list[tuple[str, int, list]] = []

    @handlers.register("chained_items")
    async def chained(ctx):
        async def work(item):
            before = [ctx.job.items_done[i]["item"] for i in ("a", "b", "c") if i in ctx.job.items_done]
            calls.append((item, ctx.attempt, before))
            if item == "b" and ctx.attempt < 2:
                raise RuntimeError("stumbled on b")
            return ItemDone({"item": item})

        await ctx.run_items(["a", "b", "c"], work, chained=True)
        return {}

    background.start(Worker(fast, handlers, pool=pool).run)
    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type="chained_items"), max_attempts=3)
    done = await wait_for(lambda: job_finished(store, job.id), what="job completed")
    assert done.status == "completed" and done.attempts == 2
    assert calls == [("a", 1, []), ("b", 1, ["a"]), ("b", 2, ["a"]), ("c", 2, ["a", "b"])]  # c waited for b
    assert await item_events(store, job.id) == [
        ("JobItemCompleted", "a", 1), ("JobItemFailed", "b", 1), ("JobItemCompleted", "b", 2),
        ("JobItemCompleted", "c", 2)]


async def test_items_that_fail_every_attempt_fail_the_job_and_refund_only_what_was_not_delivered(
        fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    calls = Counter()

    @handlers.register("priced_items")
    async def priced(ctx):
        async def work(item):
            calls[item] += 1
            if item == "c":
                raise RuntimeError("no video stream in the output")
            return ItemDone({})

        await ctx.run_items(["a", "b", "c"], work)
        return {}

    background.start(Worker(fast, handlers, pool=pool).run)
    ws, _ = await handle(store, CreateWorkspace(name="w", plan="pro", credits=100, rate_limit=1000))
    job, _ = await handle(store, QueueJob(ws, job_type="priced_items", credits=9, params={"item_credits": {"a": 2,
        "b": 3, "c": 4}}), max_attempts=2)
    done = await wait_for(lambda: job_finished(store, job.id), what="job failed")
    assert done.status == "failed" and done.attempts == 2
    assert calls == {"a": 1, "b": 1, "c": 2}
    assert done.error_message == "1 of 3 items failed: c: no video stream in the output"
    workspace = await store.fetch_for_writing(ws)
    assert workspace.credits_used == 5  # a and b delivered (2 + 3); c's 4 credits refunded


async def test_a_permanent_item_error_is_not_retried(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    calls: list[tuple[str, int]] = []

    @handlers.register("bad_item")
    async def bad(ctx):
        async def work(item):
            calls.append((item, ctx.attempt))
            if item == "b":
                raise PermanentJobError("the range ends after the video")
            return ItemDone({})

        await ctx.run_items(["a", "b"], work)
        return {}

    background.start(Worker(fast, handlers, pool=pool).run)
    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type="bad_item"), max_attempts=3)
    done = await wait_for(lambda: job_finished(store, job.id), what="job failed")
    assert (done.status, done.attempts, calls) == ("failed", 1, [("a", 1), ("b", 1)])
    assert done.items_done == {"a": {}} and done.items_failed == {"b": "the range ends after the video"}


async def test_cancellation_is_observed_between_items(fast, store, pool, background):
    start_pipeline(fast, background)
    handlers = JobHandlers()
    b_started, go_on = asyncio.Event(), asyncio.Event()
    calls: list[str] = []

    @handlers.register("cancellable")
    async def cancellable(ctx):
        async def work(item):
            calls.append(item)
            if item == "b":
                b_started.set()
                await go_on.wait()
            return ItemDone({"item": item})

        await ctx.run_items(["a", "b", "c"], work)
        return {}

    background.start(Worker(fast, handlers, pool=pool).run)
    ws, _ = await handle(store, CreateWorkspace(name="w", plan="pro", credits=100, rate_limit=1000))
    job, _ = await handle(store, QueueJob(ws, job_type="cancellable", credits=6, params={"item_credits": {"a": 2,
        "b": 2, "c": 2}}))
    await asyncio.wait_for(b_started.wait(), 30)
    await handle(store, CancelJob(ws, job_id=job.id))
    go_on.set()

    async def queue_row_final():
        async with pool.acquire() as conn:
            return await conn.fetchval("SELECT state FROM job_queue WHERE job_id = $1 AND state = 'cancelled'",
                                       job.id)

    await wait_for(queue_row_final, what="queue row cancelled")
    await asyncio.sleep(0.3)
    assert calls == ["a", "b"]  # c never started; b's result was not recorded after the cancellation
    assert await item_events(store, job.id) == [("JobItemCompleted", "a", 1)]
    assert (await store.read_stream(job.id))[-1].type == "JobCancelled"
    assert (await store.fetch_for_writing(ws)).credits_used == 2  # item a was delivered before the cancellation


def _trace_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def test_kill_minus_nine_during_an_item_resumes_without_doing_any_item_twice(fast, store, pool, background,
                                                                                  tmp_path):
    start_pipeline(fast, background)
    trace = tmp_path / "trace.txt"
    env = dict(env_for(fast), VAEO_WORKER_LEASE_S="1.5", VAEO_JOB_RETRY_BACKOFF_S="0.1",
               VAEO_WORKER_POLL_INTERVAL_S="0.05")
    items = ["a", "b", "c", "d"]

    def spawn() -> subprocess.Popen:
        log = (tmp_path / "worker.log").open("ab")
        return subprocess.Popen([sys.executable, "-m", "tests.integration.item_worker"], env=env, cwd=ROOT,
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    job, _ = await handle(store, QueueJob(uuid.uuid4(), job_type=ITEM_JOB, params={"items": items, "trace": str(trace),
        "item_s": 0.6}), max_attempts=3)
    first = spawn()
    try:
        await wait_for(lambda: _started(trace, "start c"), timeout=60, what="item c started")
        first.send_signal(signal.SIGKILL)  # in the middle of item c
        first.wait()
        assert "end c 1" not in _trace_lines(trace)
        second = spawn()
        try:
            done = await wait_for(lambda: job_finished(store, job.id), timeout=60, what="job completed")
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(20)
    finally:
        if first.poll() is None:
            first.kill()
    assert done.status == "completed" and done.attempts == 2
    completed = [(item, attempt) for kind, item, attempt in await item_events(store, job.id)
                 if kind == "JobItemCompleted"]
    assert completed == [("a", 1), ("b", 1), ("c", 2), ("d", 2)]  # each item once; c redone after the kill
    starts = [line for line in _trace_lines(trace) if line.startswith("start")]
    assert starts == ["start a 1", "start b 1", "start c 1", "start c 2", "start d 2"]
    await wait_projected(fast, pool, ["jobs"])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT status FROM jobs WHERE id = $1", job.id) == "completed"


async def _started(trace: Path, prefix: str) -> bool:
    return any(line.startswith(prefix) for line in _trace_lines(trace))
