"""GET /jobs, GET /jobs/{id}, DELETE /jobs/{id} (cancel).

Cancelling a pending or running job answers 200 with the job now ``cancelled`` (step
``cancelled``; a worker running it stops at its next step); what the job was charged is refunded
in the same write, so GET /credits right after shows it. A job already finished (completed,
failed or cancelled) cannot be cancelled: 409 ``invalid_state`` with its status in ``details``.
Another workspace's or environment's job answers 404 exactly like a missing one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from domain.jobs import Job
from services import commands
from services.api.base import Call, Route, not_found

_COLUMNS = "id, type, status, progress, step, article_id, error_message, created_at"
_LIST = f"""SELECT {_COLUMNS} FROM jobs WHERE workspace_id = $1 AND environment = $2
             ORDER BY created_at DESC, id LIMIT $3 OFFSET $4"""
_ONE = f"SELECT {_COLUMNS}, result FROM jobs WHERE id = $1 AND workspace_id = $2 AND environment = $3"


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


class JobDetail(BaseModel):
    id: UUID
    type: str
    status: str = Field(description="pending, running, completed, failed or cancelled")
    progress: int = Field(ge=0, le=100)
    step: str
    article_id: int | None
    error_message: str | None
    created_at: datetime
    result: dict[str, Any] | None = Field(
        description="extension: what a completed job produced besides article_id (analyze_video: video_id, "
                    "claims, chapters, transcript_source, geo_readiness_score, and article_skipped saying why "
                    "when an article was asked for and none could be written); null unless completed")


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
    async with call.pool.acquire() as conn:
        rows = await conn.fetch(_LIST, call.workspace_id, call.environment, q.limit, q.offset)
    return {"data": [
        {"id": r["id"], "type": r["type"], "status": r["status"], "progress": r["progress"], "step": r["step"],
         "articleId": r["article_id"], "createdAt": int(r["created_at"].timestamp() * 1000)}
        for r in rows
    ]}


async def get_job(call: Call) -> dict:
    job_id = _job_id(call)
    async with call.pool.acquire() as conn:
        row = await conn.fetchrow(_ONE, job_id, call.workspace_id, call.environment)
    if row is None:
        raise not_found("job", job_id)
    return {"data": _detail(row)}


async def cancel_job(call: Call) -> dict:
    job_id = _job_id(call)
    job, position = await commands.cancel_job_in(call.store, call.workspace_id, job_id,
                                                 environment=call.environment, meta=call.meta())
    await call.read_your_writes("jobs", position)
    if job.refund_due:
        await call.read_your_writes("workspaces", position)
    return {"data": _from_aggregate(job)}


def _from_aggregate(job: Job) -> dict:
    return {"id": job.id, "type": job.job_type, "status": job.status, "progress": job.progress, "step": job.step,
            "article_id": job.article_id, "error_message": job.error_message, "created_at": job.created_on,
            "result": job.result if job.status == "completed" else None}


ROUTES = [
    Route("GET", "/jobs", list_jobs, scope="jobs:read", tag="Jobs", query=JobsQuery, response=JobList,
          summary="The caller's environment's jobs, newest first (camelCase, createdAt in epoch ms)"),
    Route("GET", "/jobs/{id}", get_job, scope="jobs:read", tag="Jobs", response=JobResponse, errors=(404,),
          summary="One job (snake_case)"),
    Route("DELETE", "/jobs/{id}", cancel_job, scope="jobs:write", tag="Jobs", response=JobResponse, writes=True,
          errors=(404, 409), summary="Cancel a pending or running job: 200 with the job now cancelled; "
                                     "409 invalid_state when it has already finished"),
]
