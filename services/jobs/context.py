"""What a job handler sees: ``JobContext``, its items (``ItemDone``) and the table of handlers.

A job handler (``services/jobs/*``) is ``async def handler(ctx: JobContext) -> dict | None``.
The context is all it may use: its params, the event store, the settings' clock, id
allocation, progress reporting, cancellation checks, results that commit with the job's
completion, items recorded one by one, and off-loop work. The process that runs the job (the
worker, ``vaeo worker``) hands itself to the context as a ``JobRunner``: the handlers know that
protocol, never the process, so the arrow goes from the process to the jobs.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from domain.base import DomainError
from domain.jobs import Job, StaleAttempt
from infra.eventstore import ConcurrencyError, EventStore
from infra.settings import Settings
from services.application.context import Context
from services.jobs.errors import ItemsFailed, JobCancelledError, LeaseLost, PermanentJobError, readable
from services.lib.common import is_transient


class JobRunner(Protocol):
    """What a ``JobContext`` asks of the process that runs its job (the worker)."""

    settings: Settings
    executor: Executor | None

    @property
    def store(self) -> EventStore: ...

    def job_context(self, job: Job) -> Context:
        """The application for what the job's work appends (its ``meta``: the worker, the job, its cause)."""

    async def append_to_job(self, job: Job, decide: Callable[[Job], None], *,
                            also: list | tuple | Callable[[], Awaitable[list]] = ()) -> Job:
        """Apply ``decide`` to the job and append it (with ``also``), reloading on a conflict."""

    async def share_slot(self, ctx: JobContext, slot: Any) -> None:
        """At an item boundary: give the job's slot up to another workspace's job, and wait for one."""


@dataclass
class ItemDone:
    """An item's outcome: its ``result`` (kept on the job, readable at once), ``events`` of other
    aggregates that commit with it (a rendered clip's own event), and ``discard``, which undoes
    what the item left outside the log (its stored files) when its outcome cannot be recorded
    (the job was cancelled meanwhile, or another attempt owns it now)."""

    result: dict
    events: list = field(default_factory=list)
    discard: Callable[[], None] | None = None


Handler = Callable[["JobContext"], Awaitable[dict | None]]


class JobHandlers:
    """Job type -> handler. A handler returns the result dict (``article_id`` is lifted out)."""

    def __init__(self) -> None:
        self._handlers: dict[str, Handler] = {}

    def register(self, job_type: str) -> Callable[[Handler], Handler]:
        def add(fn: Handler) -> Handler:
            self._handlers[job_type] = fn
            return fn

        return add

    def get(self, job_type: str) -> Handler | None:
        return self._handlers.get(job_type)

    @property
    def types(self) -> list[str]:
        return sorted(self._handlers)


class JobContext:
    """What a handler sees, and all it may use: its params, the event store (load and save other
    streams), the settings' clock, id allocation, progress reporting, cancellation checks,
    results that commit with the job's completion, and off-loop work."""

    def __init__(self, worker: JobRunner, job: Job, params: dict, attempt: int, slot: Any = None) -> None:
        self._worker = worker
        self._slot = slot
        self._job = job
        self.job_id: uuid.UUID = uuid.UUID(str(job.id))  # asyncpg's UUID type -> the standard one
        self.workspace_id: uuid.UUID = uuid.UUID(str(job.workspace_id))
        self.environment: str = job.environment
        self.params = params
        self.attempt = attempt
        self._results: list[list | Callable[[], Awaitable[list]]] = []

    @property
    def store(self) -> EventStore:
        """The event store: ``fetch_for_writing`` and ``read_stream`` for streams other than the job's."""
        return self._worker.store

    @property
    def context(self) -> Context:
        """The application for this job's work: what it saves carries the job's ``meta``."""
        return self._worker.job_context(self._job)

    @property
    def job(self) -> Job:
        """The job as this attempt last saw it."""
        return self._job

    def now(self) -> datetime:
        """The settings' clock (fixed in tests and replays)."""
        return self._worker.settings.now()

    async def next_id(self, sequence: str) -> int:
        """A new integer id (an article's, ...) from its PostgreSQL sequence."""
        return await self._worker.store.next_id(sequence)

    @property
    def meta(self) -> dict:
        """The ``meta`` of what this job's work appends: the worker, the job, the job's chain and
        its ``JobQueued`` as the cause (``JobRunner.job_context``). ``save_now`` and the results of
        ``record_with_completion`` carry it; a handler that saves through ``store`` passes it."""
        return self.context.meta

    async def save_now(self, *aggregates) -> int:
        """Append other streams' events at once, in their own transaction, with this job's meta:
        for what must stay recorded whatever happens to the job next (tokens a provider spent)."""
        return await self.context.save(*aggregates, workspace_id=self.workspace_id)

    async def progress(self, progress: int, step: str) -> None:
        """Record progress as JobProgressed; raises JobCancelledError if the job was cancelled."""
        self._job = await self._worker.append_to_job(self._job, lambda j: j.report_progress(progress, step))

    async def checkpoint(self) -> None:
        """Between steps: stop here if the job was cancelled meanwhile."""
        fresh = await self._worker.store.fetch_for_writing(self.job_id)
        if fresh.finished:
            raise JobCancelledError(f"job is {fresh.status}")
        self._job = fresh

    def record_with_completion(self, events: list | Callable[[], Awaitable[list]]) -> None:
        """The job's results, appended with ``JobCompleted``: pending events of other aggregates, or
        a function deciding them on those aggregates loaded afresh (called at the append, and again
        after a conflict with what another command wrote meanwhile)."""
        self._results.append(events)

    async def completion_events(self) -> list:
        """The results to append with ``JobCompleted``, the functions' decided now."""
        return [event for results in self._results for event in (await results() if callable(results) else results)]

    async def run_items(self, items: list[str] | tuple[str, ...], work: Callable[[str], Awaitable[ItemDone]], *,
                        failure_events: Callable[[str, str], list] | None = None,
                        progress: tuple[int, int] = (0, 100), chained: bool = False) -> dict[str, dict]:
        """Do the job's items in order and record each outcome as soon as it is known.

        Items an earlier attempt completed are skipped. Before each item the job is re-read, so a
        cancellation stops the work there. ``work(item)`` returns an ``ItemDone``: its result is
        appended at once as ``JobItemCompleted`` with its events, and the job's progress moves
        through ``progress`` (the share of items done); ``ctx.job.items_done`` holds the results
        recorded so far. An item that raises is appended as ``JobItemFailed`` (with
        ``failure_events(item, message)``) and the next item goes on; with ``chained`` (each item
        reads the results of the items before it) the attempt stops there instead, and the next
        attempt starts again at the failed item, so every item is done after all those before it.
        Then, if any item failed: ``PermanentJobError`` when every failure was one (another attempt
        would fail alike), else ``ItemsFailed``, which the worker retries on the job's schedule.
        Returns every item's result (earlier attempts' included), in the order of ``items``.
        """
        ordered = list(dict.fromkeys(items))
        first, last = progress
        failed: dict[str, str] = {}
        permanent = True
        for item in ordered:
            if item in self._job.items_done:
                continue
            await self._worker.share_slot(self, self._slot)
            await self.checkpoint()
            try:
                done = await work(item)
            except (JobCancelledError, LeaseLost):
                raise
            except Exception as exc:
                if is_transient(exc):
                    raise  # an outage, not the item's fault: the lease expires and a later attempt goes on
                message = readable(exc)
                permanent = permanent and isinstance(exc, PermanentJobError)
                failed[item] = message
                extra = failure_events(item, message) if failure_events else []
                await self._record_item(lambda j, i=item, m=message: j.fail_item(i, m, attempt=self.attempt), extra)
                if chained:
                    break
                continue
            share = (len(self._job.items_done) + 1) / len(ordered)
            try:
                await self._record_item(lambda j, i=item, d=done, p=round(first + (last - first) * share):
                                        j.complete_item(i, d.result, attempt=self.attempt, progress=p), done.events)
            except (JobCancelledError, LeaseLost, DomainError, ConcurrencyError):
                # Refused for sure (an outage may hide a commit: then the files stay, as the log may name them).
                if done.discard is not None:
                    done.discard()
                raise
        if failed:
            if permanent:
                raise PermanentJobError(str(ItemsFailed(failed, len(ordered))))
            raise ItemsFailed(failed, len(ordered))
        return {item: self._job.items_done[item] for item in ordered}

    async def _record_item(self, decide: Callable[[Job], None], events: list) -> None:
        """Append an item's outcome with ``events``; an attempt that is no longer running stops here."""
        try:
            self._job = await self._worker.append_to_job(self._job, decide, also=events)
        except StaleAttempt as exc:
            raise LeaseLost(f"job {self.job_id}: {exc}") from None

    async def run_blocking(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run CPU-heavy or blocking work off the event loop (the worker's executor)."""
        return await asyncio.get_running_loop().run_in_executor(self._worker.executor, fn, *args)
