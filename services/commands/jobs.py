"""Jobs: queue one with its charge, append to one (with its refund when it ends unpaid), cancel one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from uuid import UUID, uuid4

import asyncpg

from domain.base import DomainError
from domain.jobs import Job
from domain.pricing import MediaWork, SandboxAllowance
from domain.workspaces import Workspace
from infra.eventstore import EventStore, SideEffect
from services.commands.common import CHARGE_RETRIES, CONFLICT_RETRIES, charged_workspace, load_in, with_retries
from services.commands.meta import joining


class SandboxQuotaExceeded(DomainError):
    code = "sandbox_quota_exceeded"
    status = 429


# The CHECK constraints of ``sandbox_job_quota`` -> the bound each enforces, as the error names it.
_SANDBOX_BOUNDS = {
    "sandbox_job_quota_within": ("jobs", lambda a: (a.jobs, f"{a.jobs} jobs")),
    "sandbox_clip_ms_within": ("clip_seconds", lambda a: (a.clip_ms // 1000, f"{a.clip_ms // 1000} s of clips")),
    "sandbox_decoded_ms_within": ("decoded_seconds",
                                  lambda a: (a.decoded_ms // 1000, f"{a.decoded_ms // 1000} s of analysed media")),
}


def _count_sandbox_job(workspace_id: UUID, allowance: SandboxAllowance, work: MediaWork):
    """The sandbox job's claim on its workspace's day (one job, its clip and decoded milliseconds),
    in the append's transaction: a CHECK refuses a claim past any bound, and the append with it."""

    async def claim(conn: asyncpg.Connection) -> None:
        await conn.execute(
            "INSERT INTO sandbox_job_quota AS q (workspace_id, day, jobs, quota, clip_ms, clip_ms_quota, decoded_ms, "
            "decoded_ms_quota) VALUES ($1, $2, 1, $3, $4, $5, $6, $7) "
            "ON CONFLICT (workspace_id, day) DO UPDATE SET jobs = q.jobs + 1, quota = EXCLUDED.quota, "
            "clip_ms = q.clip_ms + EXCLUDED.clip_ms, clip_ms_quota = EXCLUDED.clip_ms_quota, "
            "decoded_ms = q.decoded_ms + EXCLUDED.decoded_ms, decoded_ms_quota = EXCLUDED.decoded_ms_quota",
            workspace_id, allowance.day, allowance.jobs, work.clip_ms, allowance.clip_ms, work.decoded_ms,
            allowance.decoded_ms)

    return claim


def _sandbox_refusal(constraint: str, allowance: SandboxAllowance) -> SandboxQuotaExceeded:
    limit, describe = _SANDBOX_BOUNDS[constraint]
    quota, said = describe(allowance)
    return SandboxQuotaExceeded(f"this request would pass the sandbox's daily bound of {said}; it resets at "
                                "midnight UTC (use a production key for more)", limit=limit, quota=quota)


async def queue_job(store: EventStore, workspace_id: UUID, *, job_type: str, params: dict | None = None,
                    environment: str = "production", max_attempts: int = 3, webhook_url: str | None = None,
                    job_id: UUID | None = None, credits: int | None = None, charge_reason: str | None = None,
                    sandbox: SandboxAllowance | None = None, work: MediaWork = MediaWork(),
                    meta: dict | None = None,
                    before: Sequence[SideEffect] = (), reuse_existing: bool = False,
                    announce: Callable[[UUID], Sequence] | None = None) -> tuple[Job, int | None]:
    """Queue a job. ``credits`` (kept as ``params.credits``) are charged in the same append: 402 when
    the balance is short, and ``append_job`` refunds them if the job ends failed or cancelled.

    ``before`` are side effects of the caller committed with the job (an idempotency key's answer).
    ``announce(job_id)`` gives other aggregates' new events that commit with ``JobQueued`` (what the
    job is about, such as ``ClipRenderQueued``).
    With ``reuse_existing``, ``job_id`` names an identical earlier request (``services.idempotency``):
    when that job's stream exists already, it is returned with position None and nothing is written
    nor charged.

    A sandbox job (free) counts against its workspace's ``sandbox`` allowance of the day: one job,
    and the clip and decoded milliseconds of ``work``; 429 ``sandbox_quota_exceeded`` (naming the
    bound) past any of them, and nothing is written.

    Charges of one workspace are decided one after the other inside this process (the workspace
    stream's lock of the event store, held for the decision and not for the commit): concurrent
    analyses of different videos then queue up for a moment instead of failing on each other's
    charge, their appends share group commits, and retries settle what other processes interleave.
    """
    job_id = job_id or uuid4()
    if credits is not None:
        params = {**(params or {}), "credits": credits}
    quota = []
    if environment == "sandbox" and sandbox is not None:
        quota = [_count_sandbox_job(workspace_id, sandbox, work)]

    async def attempt() -> tuple[Job, int | None]:
        if reuse_existing and isinstance(earlier := await store.load_aggregate(job_id), Job):
            return earlier, None
        job = Job.queue(job_id=job_id, workspace_id=workspace_id, job_type=job_type, params=params,
                        environment=environment, max_attempts=max_attempts, webhook_url=webhook_url)
        pending = list(job.collect_events())
        if announce is not None:
            pending += announce(job_id)
        try:
            if credits:
                # The workspace's charges are decided one after the other in this process (its
                # stream's lock), which is held for the decision and the queueing of the append
                # only, not for its commit (``save_in_turn``).
                async with store.stream_lock(workspace_id):
                    workspace = await charged_workspace(store, workspace_id, credits,
                                                        charge_reason or f"{job_type} job", job_id=job_id)
                    saved = await store.save_in_turn(workspace, turn=workspace, workspace_id=workspace_id,
                                                     meta=meta, events=pending, before=[*quota, *before])
                position = await saved
            else:
                position = await store.save(workspace_id=workspace_id, meta=meta, events=pending,
                                            before=[*quota, *before])
        except asyncpg.CheckViolationError as exc:
            if exc.constraint_name not in _SANDBOX_BOUNDS or sandbox is None:
                raise
            raise _sandbox_refusal(exc.constraint_name, sandbox) from None
        return job, position

    return await with_retries(attempt, attempts=CHARGE_RETRIES if credits else CONFLICT_RETRIES)


def _claim_refund(job: Job):
    """The at-most-once guard of a job's refund: a second claim is a unique violation, so the
    append that carries it is refused whole (in group commit too: it is a PostgreSQL error)."""

    async def claim(conn: asyncpg.Connection) -> None:
        await conn.execute("INSERT INTO credit_refunds (job_id, workspace_id, amount) VALUES ($1, $2, $3)",
                           job.id, job.workspace_id, job.refund_amount)

    return claim


async def append_job(store: EventStore, job: Job, *, also: Sequence = (), meta: dict | None = None) -> int:
    """Append the job's pending events, and ``also`` (other aggregates' events that commit with them).

    When those events end the job ``failed`` or ``cancelled`` and it was charged at queue time,
    ``CreditsRefunded`` (the charge less what its completed items delivered: ``Job.refund_amount``)
    goes into the same append, with its claim in ``credit_refunds``: the end
    and the refund commit together or not at all, and a job is refunded at most once whoever ends
    it (the cancel command, a worker, a worker taking over an expired lease). A claim that exists
    already (refunded before this rule, by the analysis handler itself) ends the job without a
    second refund. ``ConcurrencyError`` when the job or the workspace moved: reload and decide again.
    """
    pending = [*job.collect_events(), *also]
    if job.refund_due:
        workspace = await store.load_aggregate(job.workspace_id)
        refund = []
        if isinstance(workspace, Workspace):
            # str() first: a reloaded job's id is asyncpg's UUID type, which the codec does not encode
            workspace.refund(job.refund_amount, f"{job.job_type} job {job.status}", job_id=UUID(str(job.id)))
            refund = list(workspace.collect_events())
        if refund:
            try:
                return await store.save(workspace_id=job.workspace_id, meta=meta, events=[*pending, *refund],
                                        before=[_claim_refund(job)])
            except asyncpg.UniqueViolationError as exc:
                if exc.constraint_name != "credit_refunds_pkey":
                    raise
    return await store.save(workspace_id=job.workspace_id, meta=meta, events=pending)


async def cancel_job(store: EventStore, workspace_id: UUID, job_id: UUID, meta: dict | None = None) -> tuple[Job, int]:
    """Cancel a pending or running job of the workspace (any environment); see ``cancel_job_in``."""
    return await cancel_job_in(store, workspace_id, job_id, environment=None, meta=meta)

async def cancel_job_in(store: EventStore, workspace_id: UUID, job_id: UUID, *, environment: str | None,
                        meta: dict | None = None) -> tuple[Job, int]:
    """Cancel a pending or running job of this workspace and environment (None: any); finished:
    InvalidTransition. What the job was charged is refunded in the same append (``append_job``),
    whether or not a worker had claimed it. The cancellation and the refund join the job's chain
    (``meta.joining``): the audit of the job finds them."""

    async def attempt() -> tuple[Job, int]:
        job = await load_in(store, job_id, Job, workspace_id, environment, "job")
        job.cancel()
        return job, await append_job(store, job, meta=joining(meta, await store.origin(job_id)))

    return await with_retries(attempt)

