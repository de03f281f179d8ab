"""Workers (``vaeo worker``): claim jobs from ``job_queue``, run their handler, report as events.

Claiming uses ``FOR UPDATE SKIP LOCKED`` and a lease; a heartbeat renews the lease at a third of
its length, and a worker that cannot renew it stops working on the job (another may have taken
it over). Progress, retries and outcomes are events on the job's stream, appended with expected
versions, so a cancellation (``JobCancelled``) that lands between two steps makes the worker's
next append see a finished job and stop. Retries: any failure but ``PermanentJobError`` is
retried after ``job_retry_backoff_s * 2**(attempt-1)`` until ``max_attempts``; a lease that
expired counts as an attempt. The last failure appends ``JobFailed`` with a readable message.
Results the database refuses to store (a value it cannot hold) fail the job at once with the
database's reason; only an outage while recording them leaves the lease to expire.
CPU-heavy steps go through ``JobContext.run_blocking`` (a thread or process pool), never the loop.

Every append to a job goes through ``application.jobs.append_job``: the one that ends it ``failed``
(a permanent error, the last attempt, or an expired lease with no attempt left) carries the
refund of what it was charged. A handler's results (``JobContext.record_with_completion``)
commit in the same append as ``JobCompleted``, so a cancellation that lands first leaves nothing
recorded, and one that lands after finds the job completed (409). Results decided on another
stream's state (an analysis recorded on its video) are decided at the append, and again after a
conflict there: a write to that stream during the work is not a reason to redo the work.

Jobs with items (``JobContext.run_items``): a handler that works through named items (the clips
of a render) has each item's result appended the moment it is done (``JobItemCompleted``, with
the item's own events), a failed item recorded with its error (``JobItemFailed``) while the
others go on, and cancellation observed before each item. If any item failed, the attempt fails
(``ItemsFailed``) and is retried on the job's schedule; the next attempt skips the completed
items, so no item is done twice, whatever crashed in between: a completion commits whole or not
at all, and the job refuses a second completion of an item or one from an attempt that is no
longer running (``StaleAttempt``: that worker lost its lease and stops).

Fair shares between workspaces: a worker claims first the claimable job of the workspace that has
the fewest jobs running (then the one due first), so one tenant's queue of long jobs never goes
ahead of another tenant's first job. And a job with items does not keep its slot for its whole
length: once it has held the slot ``worker_time_slice_s``, it gives it up at its next item boundary
when another workspace's job waits for one (claimable in the queue while every slot is busy, or
paused in this worker), and waits its turn for a slot (FIFO) with its lease kept. A short job of
another tenant thus waits one slice and one item, not a whole render.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from datetime import timedelta
from typing import Any

import asyncpg

from domain.jobs import Job
from infra.codec import EventRegistry, StoredEvent
from infra.db import create_pool
from infra.eventstore import ConcurrencyError, EventStore, origin
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from infra.wiring import adapters_for
from services.application.bootstrap import bootstrap
from services.application.context import Application, Context
from services.application.jobs import append_job
from services.jobs.context import JobContext, JobHandlers
from services.jobs.errors import JobCancelledError, LeaseLost, PermanentJobError, database_reason, readable
from services.lib.common import backoff_delays, is_transient, sleep_until_stopped, until_connected

log = logging.getLogger("vaeo.worker")


# $4 is the service's clock (``Settings.now``): a job is claimed on the clock its retry was scheduled on.
_CLAIM = """
UPDATE job_queue q SET state = 'running', lease_owner = $1,
       lease_expires_at = $4::timestamptz + make_interval(secs => $2), attempts = q.attempts + 1, updated_at = $4
 WHERE q.job_id = (
       SELECT c.job_id FROM job_queue c
        WHERE c.job_type = ANY($3)
          AND ((c.state = 'queued' AND c.next_attempt_at <= $4)
               OR (c.state = 'running' AND c.lease_expires_at < $4))
        ORDER BY (SELECT count(*) FROM job_queue r
                   WHERE r.workspace_id = c.workspace_id AND r.state = 'running' AND r.lease_expires_at >= $4),
                 c.next_attempt_at
        FOR UPDATE SKIP LOCKED
        LIMIT 1)
RETURNING q.job_id, q.workspace_id, q.job_type, q.params, q.attempts, q.max_attempts
"""


# Whether another workspace has a job waiting for a slot (claimable now, of a type this worker runs).
_OTHERS_WAITING = """
SELECT EXISTS (SELECT 1 FROM job_queue
                WHERE job_type = ANY($1) AND workspace_id <> $2
                  AND ((state = 'queued' AND next_attempt_at <= $3)
                       OR (state = 'running' AND lease_expires_at < $3)))
"""


class Slot:
    """One of a worker's slots, held by the task that runs a job. A job with items may give it up
    at an item boundary and wait its turn for one again (``Worker.share_slot``); the task's end
    releases it only if it holds it."""

    def __init__(self, slots: asyncio.Semaphore) -> None:
        self._slots = slots
        self.held = True
        self.since = time.monotonic()

    def release(self) -> None:
        if self.held:
            self.held = False
            self._slots.release()

    async def wait_turn(self) -> None:
        await self._slots.acquire()
        self.held = True
        self.since = time.monotonic()



class Worker:
    def __init__(self, settings: Settings, handlers: JobHandlers, *, pool: asyncpg.Pool | None = None,
                 executor: Executor | None = None, worker_id: str | None = None,
                 store: EventStore | None = None) -> None:
        self.settings = settings
        self.handlers = handlers
        self.pool = pool
        self.executor = executor
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.registry = EventRegistry()
        self.store: EventStore | None = store  # None: one over the pool, made by ``run``
        self._application: Application | None = None
        self.completed = 0
        self.failed = 0
        # Job id -> the job's JobQueued, the cause of what its work appends (``job_context``), while one
        # of this worker's tasks runs the job (a count, as an expired lease can overlap two runs).
        self._origins: dict[str, StoredEvent | None] = {}
        self._runs: Counter[str] = Counter()
        self._slots = asyncio.Semaphore(max(1, settings.worker_concurrency))
        # Workspace id -> jobs of it that gave their slot up and wait for one (``share_slot``).
        self._paused: Counter[str] = Counter()

    async def run(self, stop: asyncio.Event) -> None:
        own_pool = self.pool is None
        if own_pool:
            size = 4 + self.settings.worker_concurrency
            self.pool = await until_connected(
                lambda: create_pool(self.settings.resolved_database_url(), max_size=size), stop, "worker")
            if self.pool is None:
                return
        if self.store is None:
            self.store = PostgresEventStore(self.pool, self.registry, notify=self.settings.notify_on_append,
                                            clock=self.settings.now)
        running: set[asyncio.Task] = set()
        slots = self._slots
        delays = backoff_delays()
        try:
            while not stop.is_set():
                await slots.acquire()
                try:
                    claimed = await self._claim()
                except Exception as exc:
                    slots.release()
                    if not is_transient(exc):
                        raise
                    delay = next(delays)
                    log.warning("worker: claim failed (%s); retrying in %.1fs", exc, delay)
                    await sleep_until_stopped(stop, delay)
                    continue
                delays = backoff_delays()
                if claimed is None:
                    slots.release()
                    await sleep_until_stopped(stop, self.settings.worker_poll_interval_s)
                    continue
                slot = Slot(slots)
                task = asyncio.create_task(self._run_claimed(claimed, slot))
                running.add(task)
                task.add_done_callback(lambda t, s=slot: (running.discard(t), s.release()))
        finally:
            # Shutdown: stop running jobs; their leases expire and another worker retries them.
            for task in running:
                task.cancel()
            await asyncio.gather(*running, return_exceptions=True)
            if own_pool:
                await self.pool.close()

    async def _claim(self) -> asyncpg.Record | None:
        if not self.handlers.types:
            return None
        async with self.pool.acquire() as conn:
            return await conn.fetchrow(_CLAIM, self.worker_id, self.settings.worker_lease_s, self.handlers.types,
                                       self.settings.now())

    async def share_slot(self, ctx: JobContext, slot: Slot | None) -> None:
        """At an item boundary: give the slot up when the job has held it a whole time slice and
        another workspace's job waits for one, then wait for a slot again (FIFO behind the jobs
        that waited first); the lease is kept meanwhile (the heartbeat goes on). The job's step
        says it is waiting, so a client sees why its progress pauses."""
        if slot is None or not slot.held or time.monotonic() - slot.since < self.settings.worker_time_slice_s:
            return
        workspace = str(ctx.workspace_id)
        if not await self._others_waiting(workspace):
            return
        step = ctx.job.step
        await ctx.progress(ctx.job.progress, "waiting for a worker slot (shared with other workspaces)")
        slot.release()
        self._paused[workspace] += 1
        try:
            await slot.wait_turn()
        finally:
            self._paused[workspace] -= 1
            if not self._paused[workspace]:
                del self._paused[workspace]
        await ctx.progress(ctx.job.progress, step)
        log.info("worker: job %s resumed after sharing its slot", ctx.job_id)

    async def _others_waiting(self, workspace: str) -> bool:
        """Another workspace's job waits for a slot: paused here, or claimable while no slot is free
        (with one free, the claim loop takes it without anybody giving a slot up)."""
        if any(other != workspace for other in self._paused):
            return True
        if not self._slots.locked():
            return False
        async with self.pool.acquire() as conn:
            return await conn.fetchval(_OTHERS_WAITING, self.handlers.types, uuid.UUID(workspace), self.settings.now())

    async def append_to_job(self, job: Job, decide: Callable[[Job], None], *,
                            also: list | tuple | Callable[[], Awaitable[list]] = ()) -> Job:
        """Apply ``decide`` to the job and append (with ``also``); on a conflict reload and decide again.

        ``also``: other streams' events, or a function deciding them afresh (called before each
        try). A conflict that did not come from the job's stream (one of ``also``'s streams moved)
        is raised when they are events: they were decided on a state that is gone.
        """
        for _ in range(10):
            if job.finished:
                raise JobCancelledError(f"job is {job.status}")
            loaded = job.version
            events = await also() if callable(also) else also
            decide(job)
            try:
                await append_job(job, self.job_context(job), also=events)
                return job
            except ConcurrencyError:
                fresh = await self.store.fetch_for_writing(job.id)
                if events and not callable(also) and fresh.version == loaded:
                    raise
                job = fresh
        raise ConcurrencyError(f"job {job.id}: too many concurrent changes")

    @property
    def application(self) -> Application:
        """The application over this worker's store (made again when the store is replaced)."""
        if self._application is None or self._application.store is not self.store:
            self._application = bootstrap(self.settings, self.store, adapters_for(self.store))
        return self._application

    async def load_job(self, job_id: uuid.UUID) -> Job | None:
        """The job to run (None: no such stream), its ``JobQueued`` kept as the cause of what its work
        appends while this worker runs it (read from the stream: the same on every worker)."""
        job = await self.store.fetch_for_writing(job_id)
        if job is not None:
            self._origins[str(job_id)] = await origin(self.store, job_id)
        return job

    def job_context(self, job: Job) -> Context:
        """The application for what a job's work appends: this worker and the job, with its
        ``JobQueued`` as the cause (``Application.reacting``: the chain of the request that queued
        it)."""
        return self.application.reacting(self._origins.get(str(job.id)), worker=self.worker_id, job_id=str(job.id))

    async def _set_queue_state(self, job_id: uuid.UUID, attempt: int, sql: str, *args: Any) -> None:
        async with self.pool.acquire() as conn:
            await conn.execute(sql, job_id, self.worker_id, attempt, self.settings.now(), *args)

    async def _run_claimed(self, row: asyncpg.Record, slot: Slot | None = None) -> None:
        job_id, attempt, max_attempts = row["job_id"], row["attempts"], row["max_attempts"]
        self._runs[str(job_id)] += 1
        try:
            await self._run_job(row, slot)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug or an outage in the bookkeeping itself: the lease will expire
            log.exception("worker: job %s attempt %d/%d: bookkeeping failed: %s", job_id, attempt, max_attempts, exc)
        finally:
            self._runs[str(job_id)] -= 1
            if not self._runs[str(job_id)]:
                del self._runs[str(job_id)]
                self._origins.pop(str(job_id), None)

    async def _run_job(self, row: asyncpg.Record, slot: Slot | None = None) -> None:
        job_id, attempt, max_attempts = row["job_id"], row["attempts"], row["max_attempts"]
        job = await self.load_job(job_id)
        if job is None:
            return
        if job.finished:
            await self._set_queue_state(job_id, attempt, _FINAL, job.status)
            return
        if attempt > max_attempts:
            # The previous attempt's lease expired (a worker died mid-job) and no attempt is left.
            await self._finish_failed(job, attempt, f"the job was interrupted {max_attempts} times "
                                                    f"(worker lost its lease); giving up")
            return
        handler = self.handlers.get(row["job_type"])
        job = await self.append_to_job(job, lambda j: j.start(attempt, self.worker_id))
        ctx = JobContext(self, job, row["params"], attempt, slot)
        work = asyncio.create_task(handler(ctx))
        beat = asyncio.create_task(self._heartbeat(job_id, attempt, work))
        started = time.monotonic()
        try:
            result = await work
        except JobCancelledError:
            fresh = await self.store.fetch_for_writing(job_id)
            await self._set_queue_state(job_id, attempt, _FINAL, fresh.status if fresh.finished else "cancelled")
            log.info("worker: job %s stopped: %s", job_id, fresh.status)
            return
        except LeaseLost as exc:  # a later attempt runs the job now (run_items found this one stale)
            log.warning("worker: job %s: %s; another worker owns it now", job_id, exc)
            return
        except asyncio.CancelledError:
            if beat.done() and isinstance(beat.exception(), LeaseLost):
                log.warning("worker: job %s: lease lost; another worker owns it now", job_id)
                return
            raise
        except Exception as exc:
            await self._after_failure(ctx.job, attempt, max_attempts, exc)
            return
        finally:
            beat.cancel()
        result = dict(result or {})
        article_id = result.pop("article_id", None)
        try:
            await self.append_to_job(ctx.job, lambda j: j.complete(result, article_id), also=ctx.completion_events)
        except JobCancelledError:
            await self._set_queue_state(job_id, attempt, _FINAL, "cancelled")
            return
        except ConcurrencyError as exc:  # results decided on a stream that moved, or one that kept moving
            await self._after_failure(await self.store.fetch_for_writing(job_id), attempt, max_attempts, exc)
            return
        except Exception as exc:
            if is_transient(exc):
                raise  # an outage: the lease expires and a later attempt records the results
            # The results themselves cannot be stored (a value the database refuses): another
            # attempt would compute the same ones, so the job fails now, with that cause, rather
            # than as a lost lease after every attempt.
            log.warning("worker: job %s: its results cannot be recorded: %s", job_id, readable(exc))
            fresh = await self.store.fetch_for_writing(job_id)
            await self._after_failure(fresh, attempt, max_attempts, PermanentJobError(
                f"recording the results failed: {database_reason(exc)}"))
            return
        await self._set_queue_state(job_id, attempt, _FINAL, "completed")
        self.completed += 1
        log.info("worker: job %s completed in %.2fs", job_id, time.monotonic() - started)

    async def _after_failure(self, job: Job, attempt: int, max_attempts: int, exc: Exception) -> None:
        message = readable(exc)
        if isinstance(exc, PermanentJobError) or attempt >= max_attempts:
            await self._finish_failed(job, attempt, message)
            return
        retry_at = self.settings.now() + timedelta(seconds=self.settings.job_retry_backoff_s * 2 ** (attempt - 1))
        try:
            await self.append_to_job(job, lambda j: j.fail_attempt(message, retry_at))
        except JobCancelledError:
            await self._set_queue_state(job.id, attempt, _FINAL, "cancelled")
            return
        await self._set_queue_state(job.id, attempt, _RETRY, retry_at, message)
        log.info("worker: job %s attempt %d/%d failed (%s); retry at %s", job.id, attempt, max_attempts, message,
                 retry_at.isoformat())

    async def _finish_failed(self, job: Job, attempt: int, message: str) -> None:
        try:
            await self.append_to_job(job, lambda j: j.fail(message))
            state = "failed"
        except JobCancelledError:
            state = "cancelled"
        await self._set_queue_state(job.id, attempt, _FINAL, state)
        self.failed += 1
        log.info("worker: job %s failed after %d attempt(s): %s", job.id, attempt, message)

    async def _heartbeat(self, job_id: uuid.UUID, attempt: int, work: asyncio.Task) -> None:
        interval = self.settings.worker_lease_s / 3
        while True:
            await asyncio.sleep(interval)
            try:
                async with self.pool.acquire() as conn:
                    renewed = await conn.fetchval(
                        "UPDATE job_queue SET lease_expires_at = $5::timestamptz + make_interval(secs => $4) "
                        "WHERE job_id = $1 AND lease_owner = $2 AND attempts = $3 AND state = 'running' "
                        "RETURNING 1", job_id, self.worker_id, attempt, self.settings.worker_lease_s,
                        self.settings.now())
            except Exception as exc:
                if is_transient(exc):
                    continue  # the lease may still hold; try again at the next beat
                raise
            if not renewed:
                work.cancel()
                raise LeaseLost(str(job_id))


# Queue updates by the lease holder of this attempt only: a worker that lost its lease cannot
# disturb the one that took over.
# $4 is the service's clock (``Settings.now``), the one every time in job_queue is read from.
_GUARD = "WHERE job_id = $1 AND lease_owner = $2 AND attempts = $3"
_FINAL = f"UPDATE job_queue SET state = $5, lease_owner = NULL, lease_expires_at = NULL, updated_at = $4 {_GUARD}"
_RETRY = (f"UPDATE job_queue SET state = 'queued', next_attempt_at = $5, last_error = $6, lease_owner = NULL, "
          f"lease_expires_at = NULL, updated_at = $4 {_GUARD}")
