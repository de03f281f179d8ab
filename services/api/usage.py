"""GET /usage and GET /credits.

Usage counts the API calls of the caller's environment (telemetry, aggregated by the ``usage``
projection). Sandbox keys consume no credits, so their ``totalCreditsConsumed`` is 0; the credit
balance (GET /credits) is the workspace's, whichever key reads it.
"""

from __future__ import annotations

from pydantic import BaseModel

from projections import usage_queries as queries
from services.api.base import Call, Route
from services.api.me import load_workspace


class UsageData(BaseModel):
    totalApiCalls: int
    totalCreditsConsumed: int
    averageResponseMs: float
    plan: str


class UsageResponse(BaseModel):
    data: UsageData


class CreditsData(BaseModel):
    balance: int
    total: int
    used: int
    plan: str


class CreditsResponse(BaseModel):
    data: CreditsData


async def get_usage(call: Call) -> dict:
    ws = await load_workspace(call)
    row = await queries.of_environment(call.pool, call.workspace_id, call.environment)
    calls = row["calls"] if row else 0
    average = round(row["latency_ms_sum"] / calls, 3) if calls else 0.0
    consumed = ws["credits_used"] if call.environment == "production" else 0
    return {"data": {"totalApiCalls": calls, "totalCreditsConsumed": consumed, "averageResponseMs": average,
                     "plan": ws["plan"]}}


async def get_credits(call: Call) -> dict:
    ws = await load_workspace(call)
    total, used = ws["credits_total"], ws["credits_used"]
    return {"data": {"balance": total - used, "total": total, "used": used, "plan": ws["plan"]}}


ROUTES = [
    Route("GET", "/usage", get_usage, scope="usage:read", tag="Foundation", response=UsageResponse,
          summary="API calls counted with their latency (from the telemetry topic), credits consumed, plan"),
    Route("GET", "/credits", get_credits, scope="credits:read", tag="Foundation", response=CreditsResponse,
          summary="Credit balance of the workspace (balance = total - used)"),
]
