"""GET /jobs, GET /jobs/{id}, DELETE /jobs/{id} (cancel), GET /jobs/{id}/events (a job's progress
as Server-Sent Events).

Cancelling a pending or running job answers 200 with the job now ``cancelled`` (step
``cancelled``; a worker running it stops at its next step); what the job was charged is refunded
in the same write, so GET /credits right after shows it. A job already finished (completed,
failed or cancelled) cannot be cancelled: 409 ``invalid_state`` with its status in ``details``.
Another workspace's or environment's job answers 404 exactly like a missing one.

The events of a job are read from the jobs read model, not from the log: every change of the row
(its version) is one event carrying the job as GET /jobs/{id} shows it, ``job.progressed`` while it
runs and ``job.completed``, ``job.failed`` or ``job.cancelled`` at its end, after which the stream
ends. The stream re-reads the job when the jobs projection has applied a batch on the workspace's
partition (the projector's NOTIFY and the stored progress that read-your-writes waits on too),
not on a timer of its own. The event id is the row's version: it increases, and a reader can tell a
state it has already seen. Changes the projector applies in one batch show as one event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from domain.jobs import FINISHED, Job
from domain.resources import JobDetail
from infra.eventlog import key_of, partition_for
from projections import jobs_queries as queries
from services.api.base import KAFKA, WAITER, Call, Route, not_found
from services.api.errors import found
from services.api.streams import ServerSentEvent
from services.application.jobs import CancelJob


class JobsQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100, description="page size, 1 to 100")
    offset: int = Field(default=0, ge=0, le=1_000_000_000, description="jobs to skip, newest first")


class JobListItem(BaseModel):
    id: UUID
    type: str
    status: str
    progress: int = Field(ge=0, le=100)
    step: str
    articleId: int | None
    createdAt: int = Field(description="epoch milliseconds")


class JobList(BaseModel):
    data: list[JobListItem]


class JobResponse(BaseModel):
    data: JobDetail


def _detail(r) -> dict:
    return {"id": r["id"], "type": r["type"], "status": r["status"], "progress": r["progress"], "step": r["step"],
            "article_id": r["article_id"], "error_message": r["error_message"], "created_at": r["created_at"],
            "result": r["result"] if r["status"] == "completed" else None}


def _job_id(call: Call) -> UUID:
    try:
        return UUID(call.path("id"))
    except ValueError:
        raise not_found("job", call.path("id")) from None


async def list_jobs(call: Call) -> dict:
    q: JobsQuery = call.query
    rows = await queries.page(call.pool, call.workspace_id, call.environment, q.limit, q.offset)
    return {"data": [
        {"id": r["id"], "type": r["type"], "status": r["status"], "progress": r["progress"], "step": r["step"],
         "articleId": r["article_id"], "createdAt": int(r["created_at"].timestamp() * 1000)}
        for r in rows
    ]}


async def get_job(call: Call) -> dict:
    job_id = _job_id(call)
    row = found(await queries.one(call.pool, job_id, call.workspace_id, call.environment), "job", job_id)
    return {"data": _shown(call, _detail(row))}


def _shown(call: Call, detail: dict) -> dict:
    """A stored file in a job's result (a clip) is shown as a signed URL, made when it is read."""
    from services.api.clips import present_result

    return {**detail, "result": present_result(call, detail["result"])}


async def cancel_job(call: Call) -> dict:
    job_id = _job_id(call)
    job, position = await call.context.handle(CancelJob(call.workspace_id, job_id, environment=call.environment))
    await call.read_your_writes("jobs", position)
    if job.refund_due:
        await call.read_your_writes("workspaces", position)
    return {"data": _shown(call, _from_aggregate(job))}


# A stream re-reads its job at least this often even when no progress notification comes, seconds.
_RECHECK_S = 30.0


async def job_events(call: Call) -> AsyncIterator[ServerSentEvent]:
    job_id = _job_id(call)
    waiter = call.app[WAITER]
    partition = partition_for(key_of(call.workspace_id), call.app[KAFKA].partitions)
    reached = waiter.reached("jobs", partition)  # before the read: a change after it wakes the stream
    row = found(await queries.one(call.pool, job_id, call.workspace_id, call.environment), "job", job_id)
    return _progress(call, job_id, row, partition, reached)


async def _progress(call: Call, job_id: UUID, row, partition: int, reached: int) -> AsyncIterator[ServerSentEvent]:
    """The job's states from ``row`` on, one event per version, until it finishes."""
    waiter = call.app[WAITER]
    sent_version = None
    while row is not None:  # None: the read model was torn down to be rebuilt; the client may reconnect
        if row["version"] != sent_version:
            sent_version = row["version"]
            status = row["status"]
            yield ServerSentEvent(f"job.{status}" if status in FINISHED else "job.progressed",
                                  _shown(call, _detail(row)), id=row["version"])
            if status in FINISHED:
                return
        await waiter.wait("jobs", partition, reached + 1, timeout_s=_RECHECK_S)
        reached = waiter.reached("jobs", partition)
        row = await queries.one(call.pool, job_id, call.workspace_id, call.environment)


def _from_aggregate(job: Job) -> dict:
    return {"id": job.id, "type": job.job_type, "status": job.status, "progress": job.progress, "step": job.step,
            "article_id": job.article_id, "error_message": job.error_message, "created_at": job.created_on,
            "result": job.result if job.status == "completed" else None}


ROUTES = [
    Route("GET", "/jobs", list_jobs, scope="jobs:read", tag="Jobs", query=JobsQuery, response=JobList,
          summary="The caller's environment's jobs, newest first (camelCase, createdAt in epoch ms)"),
    Route("GET", "/jobs/{id}", get_job, scope="jobs:read", tag="Jobs", response=JobResponse, errors=(404,),
          summary="One job (snake_case)"),
    Route("GET", "/jobs/{id}/events", job_events, scope="jobs:read", tag="Jobs", stream=True, errors=(404,),
          response=JobDetail, events=("job.progressed", "job.completed", "job.failed", "job.cancelled"),
          summary="Extension: the job's progress as Server-Sent Events (job.progressed, then job.completed, "
                  "job.failed or job.cancelled, and the stream ends); 404 before the stream starts"),
    Route("DELETE", "/jobs/{id}", cancel_job, scope="jobs:write", tag="Jobs", response=JobResponse, writes=True,
          errors=(404, 409), summary="Cancel a pending or running job: 200 with the job now cancelled; "
                                     "409 invalid_state when it has already finished"),
]
