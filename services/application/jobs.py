"""Jobs: queue one with its charge, append to one (with its refund when it ends unpaid), cancel one."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from uuid import UUID

from domain.jobs import CANCELLED, FAILED, Job
from domain.pricing import MediaWork
from domain.workspaces import Workspace
from infra.effects import RefundClaim, RefundClaimed, SandboxClaim
from services.application.context import CHARGE_RETRIES, CONFLICT_RETRIES, Context, with_retries
from services.application.idempotency import job_id_for
from services.application.results import JobResult


@dataclass(frozen=True)
class QueueJob:
    """Queue a job of ``job_type``. ``credits`` (kept as ``params.credits``) are charged in the same
    append. ``effects`` commit with the job (an idempotency key's answer). ``announce(job_id)``
    gives other aggregates' new events that commit with ``JobQueued`` (what the job is about, such
    as ``ClipRenderQueued``). With ``reuse_existing``, ``job_id`` names an identical earlier
    request (``queue_job_once``)."""

    workspace_id: UUID
    job_type: str
    environment: str = "production"
    params: dict[str, Any] | None = None
    webhook_url: str | None = None
    job_id: UUID | None = None
    credits: int | None = None
    charge_reason: str | None = None
    work: MediaWork = MediaWork()
    effects: tuple[Any, ...] = ()
    reuse_existing: bool = False
    announce: Callable[[UUID], Sequence[Any]] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class CancelJob:
    """Cancel a pending or running job of the workspace, in ``environment`` (None: any)."""

    workspace_id: UUID
    job_id: UUID
    environment: str | None = None


async def queue_job(command: QueueJob, ctx: Context) -> JobResult:
    """Queue the job; ``(job, position)``. 402 when the balance is short for its credits, and
    ``append_job`` refunds them if the job ends failed or cancelled. With ``reuse_existing``, when
    the job's stream exists already, it is returned with position None and nothing is written nor
    charged.

    A sandbox job (free) counts against its workspace's sandbox allowance of the day
    (``Context.sandbox_allowance``): one job, and the clip and decoded milliseconds of ``work``;
    429 ``sandbox_quota_exceeded`` (naming the bound) past any of them, and nothing is written.

    A charged job is saved through the context's one charging path (``Context.save_charged``).
    """
    c = command
    job_id = c.job_id or ctx.new_id()
    params = {**(c.params or {}), "credits": c.credits} if c.credits is not None else c.params
    allowance = ctx.sandbox_allowance(c.environment)
    effects = [*([SandboxClaim(c.workspace_id, allowance, c.work)] if allowance is not None else []), *c.effects]

    async def attempt() -> JobResult:
        if c.reuse_existing and isinstance(earlier := await ctx.store.fetch_for_writing(job_id), Job):
            return JobResult(earlier, None)
        job = Job.queue(job_id=job_id, workspace_id=c.workspace_id, job_type=c.job_type, params=params,
                        environment=c.environment, max_attempts=ctx.app.max_attempts, webhook_url=c.webhook_url)
        pending = list(job.collect_events())
        if c.announce is not None:
            pending += c.announce(job_id)
        if c.credits:
            position = await ctx.save_charged(c.workspace_id, c.credits, c.charge_reason or f"{c.job_type} job",
                                              job_id=job_id, events=pending, effects=effects)
        else:
            position = await ctx.save(workspace_id=c.workspace_id, events=pending, effects=effects)
        return JobResult(job, position)

    return await with_retries(attempt, attempts=CHARGE_RETRIES if c.credits else CONFLICT_RETRIES)


async def queue_job_once(command: QueueJob, ctx: Context, *, operation: str,
                         request: Mapping[str, Any]) -> tuple[Job, bool, int | None]:
    """Queue the job of ``request`` unless an identical earlier request's job exists:
    ``(job, reused, position of the append or None when reused)``.

    The job id is ``job_id_for`` the request, so concurrent identical requests queue one job (the
    others find it, in this process in the workspace's charging turn, across processes after the
    append conflict) and are charged once. A job that ended failed or cancelled is not reused: the
    identical request then queues a new job under the next generation of the id.
    """
    generation = 0
    while True:
        job_id = job_id_for(command.workspace_id, command.environment, operation, request, generation)
        job, position = await queue_job(replace(command, job_id=job_id, reuse_existing=True), ctx)
        if position is not None:
            return job, False, position
        if job.status not in (FAILED, CANCELLED):
            return job, True, None
        generation += 1


async def append_job(job: Job, ctx: Context, *, also: Sequence[Any] = ()) -> int:
    """Append the job's pending events, and ``also`` (other aggregates' events that commit with them).

    When those events end the job ``failed`` or ``cancelled`` and it was charged at queue time,
    ``CreditsRefunded`` (the charge less what its completed items delivered: ``Job.refund_amount``)
    goes into the same append, with its claim (``RefundClaim``): the end and the refund commit
    together or not at all, and a job is refunded at most once whoever ends it (the cancel command,
    a worker, a worker taking over an expired lease). A claim that exists already (refunded before
    this rule, by the analysis handler itself) ends the job without a second refund.
    ``ConcurrencyError`` when the job or the workspace moved: reload and decide again.
    """
    pending = [*job.collect_events(), *also]
    if job.refund_due:
        workspace = await ctx.store.fetch_for_writing(job.workspace_id)
        refund = []
        if isinstance(workspace, Workspace):
            # str() first: a reloaded job's id is asyncpg's UUID type, which the codec does not encode
            workspace.refund(job.refund_amount, f"{job.job_type} job {job.status}", job_id=UUID(str(job.id)))
            refund = list(workspace.collect_events())
        if refund:
            try:
                return await ctx.save(workspace_id=job.workspace_id, events=[*pending, *refund],
                                      effects=[RefundClaim(job.id, job.workspace_id, job.refund_amount)])
            except RefundClaimed:
                pass
    return await ctx.save(workspace_id=job.workspace_id, events=pending)


async def cancel_job(command: CancelJob, ctx: Context) -> JobResult:
    """Cancel the job; finished: InvalidTransition. What the job was charged is refunded in the
    same append (``append_job``), whether or not a worker had claimed it. The cancellation and the
    refund join the job's chain (``Context.joining``): the audit of the job finds them."""

    async def attempt() -> JobResult:
        job = await ctx.load_in(command.job_id, Job, command.workspace_id, command.environment, "job")
        job.cancel()
        return JobResult(job, await append_job(job, await ctx.joining(command.job_id)))

    return await with_retries(attempt)
