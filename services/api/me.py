"""GET /me: the caller's workspace and key."""

from __future__ import annotations

from uuid import UUID

from pydantic import BaseModel

from domain.workspaces import Workspace
from projections import workspaces_queries as queries
from services.api.base import Call, Route
from services.api.models import Environment


async def load_workspace(call: Call) -> dict:
    """The workspace's read-model row; the event store when the projection has not caught up yet.

    A workspace is created together with its first key, which works at once (authentication
    reads the write side): its first GET /me may arrive before the projector has applied it.
    """
    row = await queries.one(call.pool, call.workspace_id)
    if row is not None:
        return dict(row)
    [ws] = await call.store.fetch_latest(call.workspace_id)  # read only
    assert isinstance(ws, Workspace)
    return {"id": ws.id, "name": ws.name, "plan": ws.plan, "credits_total": ws.credits_total,
            "credits_used": ws.credits_used, "rate_limit_per_min": ws.rate_limit_per_min}


class MeWorkspace(BaseModel):
    id: UUID
    name: str
    plan: str
    creditsTotal: int
    creditsUsed: int
    rateLimitPerMin: int


class MeApiKey(BaseModel):
    id: UUID
    scopes: list[str]
    environment: Environment


class MeData(BaseModel):
    workspace: MeWorkspace
    apiKey: MeApiKey


class MeResponse(BaseModel):
    data: MeData


async def get_me(call: Call) -> dict:
    ws = await load_workspace(call)
    p = call.principal
    return {"data": {
        "workspace": {"id": ws["id"], "name": ws["name"], "plan": ws["plan"], "creditsTotal": ws["credits_total"],
                      "creditsUsed": ws["credits_used"], "rateLimitPerMin": ws["rate_limit_per_min"]},
        "apiKey": {"id": p.key_id, "scopes": sorted(p.scopes), "environment": p.environment},
    }}


ROUTES = [
    Route("GET", "/me", get_me, scope="*", tag="Foundation", response=MeResponse,
          summary="The caller's workspace (plan, credits, rate limit) and key (scopes, environment)"),
]
