"""Job: one unit of asynchronous work (analysis, translation, clip rendering, ...).

States: ``pending`` (queued, or waiting for a retry) -> ``running`` -> ``completed`` | ``failed``;
``pending`` or ``running`` -> ``cancelled``. A finished job (completed, failed, cancelled) refuses
every further transition, cancellation included, with ``InvalidTransition`` (HTTP 409).

``params.credits`` is what the job was charged when it was queued (``CreditsCharged`` in the same
append as ``JobQueued``). A job that ends ``failed`` or ``cancelled`` gives it back: the command
that appends ``JobFailed`` or ``JobCancelled`` appends ``CreditsRefunded`` with it
(``services.commands.append_job``).
"""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, InvalidTransition, aggregate, upcast_with_environment

PENDING, RUNNING, COMPLETED, FAILED, CANCELLED = "pending", "running", "completed", "failed", "cancelled"
FINISHED = frozenset({COMPLETED, FAILED, CANCELLED})


@aggregate("Job")
class Job(Aggregate):
    class Queued(Aggregate.Created):
        """A unit of asynchronous work is accepted: its type, its parameters (its price among them), its attempts and
        its own `webhook_url`. It starts the job's stream and the job's chain: its `meta` names the request that queued
        it, and every later event of the job quotes it as its cause.

        Read by the `jobs` read model (GET /jobs), the `scheduler` (the `job_queue` row workers claim), `videos` (the
        analysis is pending), `monitoring_events` (jobs not finished yet); the dispatcher (the job's environment, type
        and `webhook_url`, for its end)."""

        published_as = "JobQueued"
        job_id: UUID
        workspace_id: UUID
        environment: str
        job_type: str
        params: dict
        max_attempts: int
        webhook_url: str | None

    class Started(Aggregate.Event):
        """A worker claimed the job and begins an attempt: which worker ran which attempt is on record, and a lease that
        expired shows as a second start by another worker.

        Read by the `jobs` read model (running, attempts, `started_at`), the `scheduler` (attempts only ever rise),
        `monitoring_events` (running jobs, durations)."""

        published_as = "JobStarted"
        attempt: int
        worker: str

    class Progressed(Aggregate.Event):
        """Where a running job is (a percentage and a step), for the client who follows it; each one is an append with
        the job's expected version, so a cancellation that landed meanwhile stops the worker there.

        Read by the `jobs` read model (GET /jobs/{id} and its event stream)."""

        published_as = "JobProgressed"
        progress: int
        step: str

    class AttemptFailed(Aggregate.Event):
        """An attempt failed with an error another attempt may not meet; it records the error and when the retry is due,
        so retries are on record and a client sees why the job takes longer.

        Read by the `jobs` read model (attempts, `error_message`), `monitoring_events`."""

        published_as = "JobAttemptFailed"
        attempt: int
        error_message: str
        retry_at: datetime

    class Completed(Aggregate.Event):
        """The job succeeded, with its result: appended in the same append as everything the job produced (the video's
        graph and analysis, the article), which therefore exists exactly when the job completed.

        Read by the `jobs` read model, the `scheduler` (the row is final), `monitoring_events` (durations); the
        dispatcher (the `job.completed` webhook and the job's own `webhook_url`)."""

        published_as = "JobCompleted"
        schema_version = 2  # 2: environment (None only when upcast from 1: the job's JobQueued has it)
        result: dict
        article_id: int | None
        environment: str | None

    class Failed(Aggregate.Event):
        """The job failed for good (an error no retry fixes, or its last attempt), with a readable `error_message`; its
        refund is in the same append.

        Read by the `jobs` read model, the `scheduler` (the row is final), `videos` (the analysis failed),
        `monitoring_events`; the dispatcher (the `job.failed` webhook and the job's own `webhook_url`)."""

        published_as = "JobFailed"
        schema_version = 2  # 2: environment (None only when upcast from 1: the job's JobQueued has it)
        error_message: str
        attempts: int
        environment: str | None

    class Cancelled(Aggregate.Event):
        """The client stopped a pending or running job (DELETE /jobs/{id}): a worker sees it at its next step and stops,
        nothing of the job is recorded after it, and its refund is in the same append.

        Read by the `jobs` read model, the `scheduler` (the row is final: never claimed again), `videos`,
        `monitoring_events`."""

        published_as = "JobCancelled"
        reason: str

    @staticmethod
    def create_id(job_id: UUID) -> UUID:
        return job_id

    @event(Queued)
    def __init__(self, job_id: UUID, workspace_id: UUID, environment: str, job_type: str, params: dict,
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
        self.result: dict | None = None  # what a completed job produced
        self.error_message: str | None = None

    @classmethod
    def queue(cls, *, job_id: UUID, workspace_id: UUID, job_type: str, params: dict | None = None,
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
    def refund_due(self) -> bool:
        """Ended without its result (failed or cancelled) after being charged: the charge goes back."""
        return self.status in (FAILED, CANCELLED) and self.credits_charged > 0

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

    def complete(self, result: dict | None = None, article_id: int | None = None) -> None:
        self.check_not_finished("completed")
        if self.status != RUNNING:
            raise InvalidTransition("only a running job completes", status=self.status)
        self._completed(result=result or {}, article_id=article_id, environment=self.environment)

    @event(Completed)
    def _completed(self, result: dict, article_id: int | None, environment: str | None) -> None:
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

    def cancel(self, reason: str = "cancelled by API") -> None:
        self.check_not_finished("cancelled")
        self._cancelled(reason=reason)

    @event(Cancelled)
    def _cancelled(self, reason: str) -> None:
        self.status = CANCELLED
        self.step = "cancelled"


# The job's end carries its environment from schema 2 on; schema 1 leaves it to the job's JobQueued.
upcast_with_environment("JobCompleted", 1, None)
upcast_with_environment("JobFailed", 1, None)
