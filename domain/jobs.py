"""Job: one unit of asynchronous work (analysis, translation, clip rendering, ...).

States: ``pending`` (queued, or waiting for a retry) -> ``running`` -> ``completed`` | ``failed``;
``pending`` or ``running`` -> ``cancelled``. A finished job (completed, failed, cancelled) refuses
every further transition, cancellation included, with ``InvalidTransition`` (HTTP 409).

``params.credits`` is what the job was charged when it was queued (``CreditsCharged`` in the same
append as ``JobQueued``). A job that ends ``failed`` or ``cancelled`` gives it back: the command
that appends ``JobFailed`` or ``JobCancelled`` appends ``CreditsRefunded`` with it
(``services.application.jobs.append_job``).

Items: a job may do its work as named items (the clips of a render). Each finished item is
recorded at once (``JobItemCompleted``, with its result), so readers see it before the job ends;
an item that fails is recorded with its error (``JobItemFailed``) and done again by the job's next
attempt, which skips the items already completed. An item is completed at most once (a second
completion is refused), and only by the attempt that is running (a worker that lost its lease to
a later attempt is refused: ``StaleAttempt``). When ``params.item_credits`` prices the items
(``{item_id: credits}``), a job that ends failed or cancelled refunds only the items it did not
deliver: what was delivered stays paid.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, InvalidTransition, aggregate, schema_change


class StaleAttempt(InvalidTransition):
    """An attempt that is no longer the job's running one tried to record something."""

MAX_ITEM_ID = 100  # characters of an item's id (a clip's id is at most 100)

PENDING, RUNNING, COMPLETED, FAILED, CANCELLED = "pending", "running", "completed", "failed", "cancelled"
FINISHED = frozenset({COMPLETED, FAILED, CANCELLED})


@aggregate("Job")
class Job(Aggregate):
    class Queued(Aggregate.Created):
        """A unit of asynchronous work is accepted: its type, its parameters (its price among them), its attempts and
        its own `webhook_url`. It starts the job's stream and the job's chain: its `meta` names the request that queued
        it, and every later event of the job quotes it as its cause.

        Read by the `jobs` read model (GET /jobs), the `scheduler` (the `job_queue` row workers claim), `videos` (the
        analysis is pending), `monitoring_events` (jobs not finished yet), `clip_jobs` (a clip job's tracking object
        begins), `article_translations` (a translation asked, listed with its job); the dispatcher (the job's
        environment, type and `webhook_url`, for its end)."""

        published_as = "JobQueued"
        job_id: UUID
        workspace_id: UUID
        environment: str
        job_type: str
        params: dict[str, Any]
        max_attempts: int
        webhook_url: str | None

    class Started(Aggregate.Event):
        """A worker claimed the job and begins an attempt: which worker ran which attempt is on record, and a lease that
        expired shows as a second start by another worker.

        Read by the `jobs` read model (running, attempts, `started_at`), the `scheduler` (attempts only ever rise),
        `monitoring_events` (running jobs, durations), `clip_jobs` (detecting or rendering, attempts, `started_at`)."""

        published_as = "JobStarted"
        attempt: int
        worker: str

    class Progressed(Aggregate.Event):
        """Where a running job is (a percentage and a step), for the client who follows it; each one is an append with
        the job's expected version, so a cancellation that landed meanwhile stops the worker there.

        Read by the `jobs` read model (GET /jobs/{id} and its event stream), `clip_jobs` (a clip job's progress and
        stage); the dispatcher (the progress a `job.failed` payload shows)."""

        published_as = "JobProgressed"
        progress: int
        step: str

    class AttemptFailed(Aggregate.Event):
        """An attempt failed with an error another attempt may not meet; it records the error and when the retry is due,
        so retries are on record and a client sees why the job takes longer.

        Read by the `jobs` read model (attempts, `error_message`), `monitoring_events`, `clip_jobs` (the error and
        `next_attempt_at` of a clip job)."""

        published_as = "JobAttemptFailed"
        attempt: int
        error_message: str
        retry_at: datetime

    class Completed(Aggregate.Event):
        """The job succeeded, with its result: appended in the same append as everything the job produced (the video's
        graph and analysis, the article), which therefore exists exactly when the job completed.

        Read by the `jobs` read model, the `scheduler` (the row is final), `monitoring_events` (durations), `clip_jobs`
        (a clip job completed); the dispatcher (the `job.completed` webhook and the job's own `webhook_url`)."""

        published_as = "JobCompleted"
        schema_version = 2  # 2: environment (None only when upcast from 1: the job's JobQueued has it)
        result: dict[str, Any]
        article_id: int | None
        environment: str | None

    class Failed(Aggregate.Event):
        """The job failed for good (an error no retry fixes, or its last attempt), with a readable `error_message`; its
        refund is in the same append.

        Read by the `jobs` read model, the `scheduler` (the row is final), `videos` (the analysis failed),
        `monitoring_events`, `clip_jobs` (a clip job failed, its error); the
        dispatcher (the `job.failed` webhook and the job's own `webhook_url`)."""

        published_as = "JobFailed"
        schema_version = 2  # 2: environment (None only when upcast from 1: the job's JobQueued has it)
        error_message: str
        attempts: int
        environment: str | None

    class Cancelled(Aggregate.Event):
        """The client stopped a pending or running job (DELETE /jobs/{id}): a worker sees it at its next step and stops,
        nothing of the job is recorded after it, and its refund is in the same append.

        Read by the `jobs` read model, the `scheduler` (the row is final: never claimed again), `videos`,
        `monitoring_events`, `clip_jobs` (a clip job cancelled); the dispatcher (the `job.failed` webhook with
        status `cancelled`, and the job's own `webhook_url`)."""

        published_as = "JobCancelled"
        reason: str

    class ItemCompleted(Aggregate.Event):
        """One item of a running job is done (a clip of a render): its result is readable at once, before the
        job ends, and a later attempt does not do it again.

        Read by the `jobs` read model (the job's progress) and `clip_jobs` (a clip job's progress); the dispatcher
        (the progress a `job.failed` payload shows)."""

        published_as = "JobItemCompleted"
        item_id: str
        attempt: int
        progress: int
        result: dict[str, Any]

    class ItemFailed(Aggregate.Event):
        """One item of a running job failed in this attempt, with its error; the job's next attempt (on its
        retry schedule) does it again, and only the items not completed.

        Read by the `jobs` read model and `clip_jobs` (the version of the job they show)."""

        published_as = "JobItemFailed"
        item_id: str
        attempt: int
        error_message: str

    @staticmethod
    def create_id(job_id: UUID) -> UUID:
        return job_id

    @event(Queued)
    def __init__(self, job_id: UUID, workspace_id: UUID, environment: str, job_type: str, params: dict[str, Any],
                 max_attempts: int, webhook_url: str | None):
        self.workspace_id = workspace_id
        self.environment = environment
        self.job_type = job_type
        self.params = params
        self.max_attempts = max_attempts
        self.webhook_url = webhook_url
        self.status = PENDING
        self.progress = 0
        self.step = "queued"
        self.attempts = 0
        self.article_id: int | None = None
        self.result: dict[str, Any] | None = None  # what a completed job produced
        self.error_message: str | None = None
        self.items_done: dict[str, dict[str, Any]] = {}  # item id -> its result, in completion order
        self.items_failed: dict[str, str] = {}  # item id -> its last error, while not completed

    @classmethod
    def queue(cls, *, job_id: UUID, workspace_id: UUID, job_type: str, params: dict[str, Any] | None = None,
              environment: str = "production", max_attempts: int = 3, webhook_url: str | None = None) -> Job:
        if not job_type:
            raise DomainError("job type must not be empty", field="job_type")
        if max_attempts < 1:
            raise DomainError("max_attempts must be at least 1", field="max_attempts")
        return cls(job_id=job_id, workspace_id=workspace_id, environment=environment, job_type=job_type,
                   params=params or {}, max_attempts=max_attempts, webhook_url=webhook_url)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def credits_charged(self) -> int:
        """Credits charged when the job was queued (0: free, e.g. a sandbox key's job)."""
        return max(0, int(self.params.get("credits") or 0))

    @property
    def credits_delivered(self) -> int:
        """The part of the charge paid for items already completed (``params.item_credits``), which a
        failure or a cancellation does not give back."""
        prices = self.params.get("item_credits") or {}
        delivered = sum(max(0, int(prices.get(item_id) or 0)) for item_id in self.items_done)
        return min(self.credits_charged, delivered)

    @property
    def refund_amount(self) -> int:
        """What a failure or a cancellation gives back: the charge, less the items delivered."""
        return self.credits_charged - self.credits_delivered

    @property
    def refund_due(self) -> bool:
        """Ended without its result (failed or cancelled) after being charged: the undelivered part goes back."""
        return self.status in (FAILED, CANCELLED) and self.refund_amount > 0

    def check_not_finished(self, action: str) -> None:
        if self.finished:
            raise InvalidTransition(
                f"job is already {self.status}; a finished job cannot be {action}",
                job_id=str(self.id), status=self.status,
            )

    def start(self, attempt: int, worker: str) -> None:
        self.check_not_finished("started")
        if self.status == RUNNING and attempt <= self.attempts:
            raise InvalidTransition("job is already running this attempt", attempt=attempt)
        self._started(attempt=attempt, worker=worker)

    @event(Started)
    def _started(self, attempt: int, worker: str) -> None:
        self.status = RUNNING
        self.attempts = attempt
        self.step = "started"

    def report_progress(self, progress: int, step: str) -> None:
        self.check_not_finished("updated")
        if self.status != RUNNING:
            raise InvalidTransition("only a running job reports progress", status=self.status)
        if not 0 <= progress <= 100:
            raise DomainError("progress must be between 0 and 100", field="progress")
        self._progressed(progress=progress, step=step)

    @event(Progressed)
    def _progressed(self, progress: int, step: str) -> None:
        self.progress = progress
        self.step = step

    def fail_attempt(self, error_message: str, retry_at: datetime) -> None:
        self.check_not_finished("retried")
        self._attempt_failed(attempt=self.attempts, error_message=error_message, retry_at=retry_at)

    @event(AttemptFailed)
    def _attempt_failed(self, attempt: int, error_message: str, retry_at: datetime) -> None:
        self.status = PENDING
        self.step = f"retrying after attempt {attempt} failed"
        self.error_message = error_message

    def complete(self, result: dict[str, Any] | None = None, article_id: int | None = None) -> None:
        self.check_not_finished("completed")
        if self.status != RUNNING:
            raise InvalidTransition("only a running job completes", status=self.status)
        self._completed(result=result or {}, article_id=article_id, environment=self.environment)

    @event(Completed)
    def _completed(self, result: dict[str, Any], article_id: int | None, environment: str | None) -> None:
        self.status = COMPLETED
        self.progress = 100
        self.step = "completed"
        self.article_id = article_id
        self.result = result
        self.error_message = None

    def fail(self, error_message: str) -> None:
        self.check_not_finished("failed")
        self._failed(error_message=error_message or "job failed", attempts=self.attempts, environment=self.environment)

    @event(Failed)
    def _failed(self, error_message: str, attempts: int, environment: str | None) -> None:
        self.status = FAILED
        self.step = "failed"
        self.error_message = error_message

    def check_running_attempt(self, attempt: int) -> None:
        """Only the attempt that is running records items; an older one (its worker lost the lease
        and another attempt started) is refused with ``StaleAttempt``."""
        self.check_not_finished("updated")
        if self.status != RUNNING or attempt != self.attempts:
            raise StaleAttempt(f"attempt {attempt} is not the running attempt of this job",
                               attempt=attempt, running=self.attempts if self.status == RUNNING else None)

    def _check_item(self, item_id: str) -> None:
        if not isinstance(item_id, str) or not 1 <= len(item_id) <= MAX_ITEM_ID:
            raise DomainError(f"an item id is 1 to {MAX_ITEM_ID} characters", field="item_id")
        if item_id in self.items_done:
            raise InvalidTransition(f"item {item_id!r} is already completed", item_id=item_id)

    def complete_item(self, item_id: str, result: dict[str, Any], *, attempt: int, progress: int) -> None:
        """Record one item's result now (the job goes on with its other items)."""
        self.check_running_attempt(attempt)
        self._check_item(item_id)
        if not 0 <= progress <= 100:
            raise DomainError("progress must be between 0 and 100", field="progress")
        self._item_completed(item_id=item_id, attempt=attempt, progress=progress, result=result)

    @event(ItemCompleted)
    def _item_completed(self, item_id: str, attempt: int, progress: int, result: dict[str, Any]) -> None:
        self.items_done[item_id] = result
        self.items_failed.pop(item_id, None)
        self.progress = progress

    def fail_item(self, item_id: str, error_message: str, *, attempt: int) -> None:
        """Record that one item failed in this attempt; the next attempt does it again."""
        self.check_running_attempt(attempt)
        self._check_item(item_id)
        self._item_failed(item_id=item_id, attempt=attempt, error_message=error_message or "item failed")

    @event(ItemFailed)
    def _item_failed(self, item_id: str, attempt: int, error_message: str) -> None:
        self.items_failed[item_id] = error_message

    def cancel(self, reason: str = "cancelled by API") -> None:
        self.check_not_finished("cancelled")
        self._cancelled(reason=reason)

    @event(Cancelled)
    def _cancelled(self, reason: str) -> None:
        self.status = CANCELLED
        self.step = "cancelled"


# The job's end carries its environment from schema 2 on; schema 1 leaves it to the job's JobQueued.
for _end in ("JobCompleted", "JobFailed"):
    schema_change(_end, 1, """Adds `environment` (`production` or `sandbox`), so that the job's end reaches the
        webhooks of its environment alone.""", added={"environment": None},
        needs="""`environment` is null when upcast from schema 1: it is the `environment` of the job's `JobQueued`
        (same `stream_id`), which every job has.""")
