"""Workspace: the tenant. Owns the plan, the credit balance, the per-minute rate limit, and the
versions of its job-notification secrets (one per environment)."""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, InsufficientCredits, aggregate, schema_change

ENVIRONMENTS = ("production", "sandbox")
# Credits are production's: sandbox operations never charge them, so what is said about the
# balance (CreditsLow) is about production.
CREDITS_ENVIRONMENT = "production"


class JobSecretVersions:
    """The versions of one environment's job-notification secret: the current one, and the
    previous one with the end of its grace period (None before any rotation)."""

    __slots__ = ("current", "previous", "previous_valid_until")

    def __init__(self, current: int = 1, previous: int | None = None,
                 previous_valid_until: datetime | None = None) -> None:
        self.current = current
        self.previous = previous
        self.previous_valid_until = previous_valid_until

    def valid_at(self, now: datetime) -> list[int]:
        """The versions a delivery signed at ``now`` carries: the current first, then the previous
        one while its grace period lasts."""
        if self.previous is not None and self.previous_valid_until is not None and now < self.previous_valid_until:
            return [self.current, self.previous]
        return [self.current]


@aggregate("Workspace")
class Workspace(Aggregate):
    class Created(Aggregate.Created):
        """A tenant is opened (`vaeo workspace create`, or the first `vaeo up`) with its plan, its credits and its per-
        minute rate limit: the start of the stream every charge, refund and top-up is decided on.

        Read by the `workspaces` read model (GET /me, GET /credits)."""

        published_as = "WorkspaceCreated"
        workspace_id: UUID
        name: str
        plan: str
        credits_total: int
        rate_limit_per_min: int

    class CreditsCharged(Aggregate.Event):
        """The price of a job, appended in the same append as its `JobQueued` (402 when the balance is short), so no
        work is ever queued unpaid; `job_id` ties it to the job whose failure or cancellation refunds it.

        Read by the `workspaces` read model (credits used), `monitoring_events` (credits charged per minute), and the
        credits watch (a `CreditsLow` when the charge crosses the warning threshold)."""

        published_as = "CreditsCharged"
        amount: int
        reason: str
        job_id: UUID | None

    class CreditsRefunded(Aggregate.Event):
        """Gives a job's charge back when the job ends failed or cancelled, in the same append as that end and at most
        once (a claim in `credit_refunds`): a customer never pays for work that was not delivered.

        Read by the `workspaces` read model (credits used goes down), `monitoring_events` (credits refunded per
        minute), `clip_jobs` (what a clip job's `credits_used` no longer counts)."""

        published_as = "CreditsRefunded"
        amount: int
        reason: str
        job_id: UUID | None

    class CreditsAdded(Aggregate.Event):
        """An operator's top-up (`vaeo workspace credits W --add N`): the balance is a fold of the workspace's stream,
        so what raises it is an event like what lowers it.

        Read by the `workspaces` read model (GET /credits, GET /me); the commands that charge fold it from the
        stream."""

        published_as = "CreditsAdded"
        amount: int

    class CreditsLow(Aggregate.Event):
        """Credits remaining crossed the warning threshold downwards (production's: sandbox work is free). The credits
        watch appends it once per crossing, so the customer is warned once, not at every charge below the line.

        Read by the dispatcher (the `credits.low` webhook)."""

        published_as = "CreditsLow"
        schema_version = 2  # 2: environment, always production (sandbox calls never charge credits)
        balance: int
        total: int
        remaining_pct: float
        threshold_pct: float
        crossing_version: int  # the stream version of the CreditsCharged that crossed the threshold
        environment: str

    class JobSecretRotated(Aggregate.Event):
        """A new version of the environment's job-notification secret. The secret itself is derived from the service key
        and (workspace, environment, version), so no secret is in the event; the previous version stays valid
        (deliveries carry both signatures) until `previous_valid_until`.

        Read by the dispatcher (which versions sign a job's notifications at the time of sending)."""

        published_as = "JobSecretRotated"
        environment: str
        version: int
        previous_version: int
        previous_valid_until: datetime

    @staticmethod
    def create_id(workspace_id: UUID) -> UUID:
        return workspace_id

    @event(Created)
    def __init__(self, workspace_id: UUID, name: str, plan: str, credits_total: int, rate_limit_per_min: int):
        self.workspace_id = workspace_id
        self.name = name
        self.plan = plan
        self.credits_total = credits_total
        self.credits_used = 0
        self.rate_limit_per_min = rate_limit_per_min
        self.low_credits_flagged_at = 0  # crossing_version of the last CreditsLow
        self.job_secrets: dict[str, JobSecretVersions] = {}

    @classmethod
    def open(cls, workspace_id: UUID, name: str, plan: str, credits_total: int, rate_limit_per_min: int) -> Workspace:
        if not name.strip():
            raise DomainError("workspace name must not be empty", field="name")
        if credits_total < 0:
            raise DomainError("credits must be zero or more", field="credits_total")
        if rate_limit_per_min < 1:
            raise DomainError("rate limit must be at least 1 request per minute", field="rate_limit_per_min")
        return cls(workspace_id=workspace_id, name=name, plan=plan, credits_total=credits_total,
                   rate_limit_per_min=rate_limit_per_min)

    @property
    def credits_balance(self) -> int:
        return self.credits_total - self.credits_used

    def check_can_charge(self, amount: int) -> None:
        if amount > self.credits_balance:
            raise InsufficientCredits(
                f"this operation costs {amount} credits and the balance is {self.credits_balance}",
                required=amount, balance=self.credits_balance,
            )

    def charge(self, amount: int, reason: str, job_id: UUID | None = None) -> None:
        if amount <= 0:
            raise DomainError("a charge must be positive", field="amount")
        self.check_can_charge(amount)
        self._charged(amount=amount, reason=reason, job_id=job_id)

    @event(CreditsCharged)
    def _charged(self, amount: int, reason: str, job_id: UUID | None) -> None:
        self.credits_used += amount

    def refund(self, amount: int, reason: str, job_id: UUID | None = None) -> None:
        if amount <= 0:
            raise DomainError("a refund must be positive", field="amount")
        refundable = min(amount, self.credits_used)
        if refundable:
            self._refunded(amount=refundable, reason=reason, job_id=job_id)

    @event(CreditsRefunded)
    def _refunded(self, amount: int, reason: str, job_id: UUID | None) -> None:
        self.credits_used -= amount

    def add_credits(self, amount: int) -> None:
        if amount <= 0:
            raise DomainError("a top-up must be positive", field="amount")
        self._added(amount=amount)

    @event(CreditsAdded)
    def _added(self, amount: int) -> None:
        self.credits_total += amount

    @property
    def remaining_pct(self) -> float:
        return 100.0 * self.credits_balance / self.credits_total if self.credits_total > 0 else 0.0

    def flag_low_credits(self, threshold_pct: float, crossing_version: int) -> bool:
        """Record CreditsLow for the charge at ``crossing_version``, once: False when already flagged."""
        if crossing_version <= getattr(self, "low_credits_flagged_at", 0):
            return False
        self._low(balance=self.credits_balance, total=self.credits_total, remaining_pct=round(self.remaining_pct, 2),
                  threshold_pct=threshold_pct, crossing_version=crossing_version, environment=CREDITS_ENVIRONMENT)
        return True

    @event(CreditsLow)
    def _low(self, balance: int, total: int, remaining_pct: float, threshold_pct: float,
             crossing_version: int, environment: str) -> None:
        self.low_credits_flagged_at = crossing_version

    def job_secret_versions(self, environment: str) -> JobSecretVersions:
        """The environment's job-secret versions (version 1, no previous, until a first rotation)."""
        return self._job_secrets().get(environment) or JobSecretVersions()

    def rotate_job_secret(self, environment: str, *, now: datetime, grace: timedelta) -> JobSecretVersions:
        """Make a new version of the environment's job-notification secret; the current one stays
        valid for ``grace`` (a rotation during a grace period ends the older one's grace at once:
        at most two versions are ever valid)."""
        if environment not in ENVIRONMENTS:
            raise DomainError("environment must be production or sandbox", field="environment")
        if grace < timedelta(0):
            raise DomainError("the grace period must not be negative", field="grace")
        current = self.job_secret_versions(environment).current
        self._job_secret_rotated(environment=environment, version=current + 1, previous_version=current,
                                 previous_valid_until=now + grace)
        return self.job_secret_versions(environment)

    @event(JobSecretRotated)
    def _job_secret_rotated(self, environment: str, version: int, previous_version: int,
                            previous_valid_until: datetime) -> None:
        self._job_secrets()[environment] = JobSecretVersions(version, previous_version, previous_valid_until)

    def _job_secrets(self) -> dict[str, JobSecretVersions]:
        if not hasattr(self, "job_secrets"):  # folded from a snapshot or state before job secrets existed
            self.job_secrets = {}
        return self.job_secrets


def crosses_below(threshold_pct: float, before: Workspace, after: Workspace) -> bool:
    """A downward crossing: at or above the threshold before the change, below it after.

    Every crossing starts above the threshold, so "again only after credits went back above"
    needs no state: a top-up that lifts the balance over the threshold re-arms the next crossing.
    """
    return before.remaining_pct >= threshold_pct > after.remaining_pct


schema_change("CreditsLow", 1, """Adds `environment`, always `production`: sandbox calls never charge credits, so
    every crossing, of either schema, is production's (the `credits.low` webhook goes to production's webhooks).""",
    added={"environment": "production"})
