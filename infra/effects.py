"""What an append writes besides its events: small typed values that every event store applies in
the append's own transaction, all or nothing with the events.

A command says what it claims (a sandbox day's quota, a job's refund, a key's digest, an
idempotency key's answer) or drops (a revoked API key's stored answers); the store knows how:
PostgreSQL runs its SQL in the append transaction (``infra.eventstore_sql``), the in-memory store
applies the same rule to its tables (``infra.memory_store``). Either refuses the whole append with
the same error when a claim does not hold, so a command never hands SQL to a store and runs the
same against both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from domain.base import DomainError
from domain.pricing import MediaWork, SandboxAllowance


class EffectRefused(Exception):
    """A claim of the append does not hold: nothing of the append was written."""


class RefundClaimed(EffectRefused):
    """The job was refunded already (its claim in ``credit_refunds`` exists)."""


class DigestTaken(EffectRefused):
    """Another key has this digest already."""


class ClaimLapsed(EffectRefused):
    """The idempotency key is no longer held by this request: it lapsed and another took it."""


class SandboxQuotaExceeded(DomainError):
    code = "sandbox_quota_exceeded"
    status = 429


@dataclass(frozen=True)
class SandboxClaim:
    """A sandbox job's claim on its workspace's day: one job, its clip and decoded milliseconds.
    Refused (``SandboxQuotaExceeded``, naming the bound) past any bound of ``allowance``."""

    workspace_id: UUID
    allowance: SandboxAllowance
    work: MediaWork = MediaWork()

    def refusal(self, bound: str) -> SandboxQuotaExceeded:
        """The error for the bound that refused this claim (``SANDBOX_BOUNDS``)."""
        limit, quota, said = SANDBOX_BOUNDS[bound](self.allowance)
        return SandboxQuotaExceeded(f"this request would pass the sandbox's daily bound of {said}; it resets at "
                                    "midnight UTC (use a production key for more)", limit=limit, quota=quota)


# Each bound of a sandbox day (named as its PostgreSQL CHECK constraint) -> (limit, quota, said).
SANDBOX_BOUNDS: dict[str, Callable[[SandboxAllowance], tuple[str, int, str]]] = {
    "sandbox_job_quota_within": lambda a: ("jobs", a.jobs, f"{a.jobs} jobs"),
    "sandbox_clip_ms_within": lambda a: ("clip_seconds", a.clip_ms // 1000, f"{a.clip_ms // 1000} s of clips"),
    "sandbox_decoded_ms_within": lambda a: ("decoded_seconds", a.decoded_ms // 1000,
                                            f"{a.decoded_ms // 1000} s of analysed media"),
}


@dataclass(frozen=True)
class RefundClaim:
    """The at-most-once guard of a job's refund: a second claim refuses its append (``RefundClaimed``)."""

    job_id: UUID
    workspace_id: UUID
    amount: int


@dataclass(frozen=True)
class KeyDigest:
    """A key's digest indexed with the key's events, so that it authenticates on the next request
    on every process without waiting for the log. A digest taken already: ``DigestTaken``."""

    digest: str
    key_id: UUID
    workspace_id: UUID


@dataclass(frozen=True)
class IdempotencyAnswer:
    """An idempotency key's first answer, stored with the command's events. Refused (``ClaimLapsed``)
    when the request no longer holds the key. ``on_commit`` is called once the append committed.
    The key is the API key's own (``api_key_id``): another API key's request never finds it."""

    workspace_id: UUID
    environment: str
    api_key_id: UUID
    operation: str
    key: str
    owner: UUID
    status: int
    body: dict
    at: datetime
    on_commit: Callable[[], None] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class KeyAnswersDropped:
    """Every idempotency key of one API key deleted, answers and claims alike, with the key's
    revocation: a revoked key's answers (a created key, a webhook secret) are not kept for anyone."""

    workspace_id: UUID
    environment: str
    api_key_id: UUID


Effect = SandboxClaim | RefundClaim | KeyDigest | IdempotencyAnswer | KeyAnswersDropped


def committed(effects) -> None:
    """Tell the effects that asked for it that their append has committed."""
    for effect in effects:
        on_commit = getattr(effect, "on_commit", None)
        if on_commit is not None:
            on_commit()
