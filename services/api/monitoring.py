"""GET /monitoring, GET /monitoring/alerts and GET /usage/llm.

The figures come from the monitoring read models (``projections/monitoring.py``: per-minute
buckets of API calls from the telemetry topic, of finished jobs and credits from the event log,
and the jobs not finished yet), summed over windows that end at the current minute of the
service clock (``Settings.now``): ``last1h`` is that minute and the 59 before it, ``last24h`` that
minute and the 1439 before it. Calls and jobs are the caller's environment's; credits are the
workspace's (sandbox keys consume none, so a sandbox key reads 0 consumed, as on GET /usage).

Alerts are evaluated when they are read, from those read models, the clock and the thresholds
in settings (``alert_*``), by the pure ``evaluate_alerts``. They are not a stored read model: an
alert is a function of time as much as of events (an error spike must clear an hour later with
no event at all, a lagging projection is not an event), and a threshold changed in settings
applies at once instead of after a rebuild. Rebuilding the monitoring projections therefore
gives the same alerts as it gives the same figures. The rules are in ``docs/monitoring.md``.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from aiohttp import web
from pydantic import BaseModel

from infra.settings import Settings
from projections import llm_usage_queries, monitoring_queries, webhooks_queries
from projections.reading import Pool
from services.api.base import SETTINGS, Call, Route
from services.api.me import load_workspace
from services.lib.status import EndOffsets, projection_states

log = logging.getLogger("vaeo.api.monitoring")

END_OFFSETS = web.AppKey("end_offsets", EndOffsets)



def windows(now: datetime) -> dict[str, datetime]:
    current = now.replace(second=0, microsecond=0)
    return {"now": current, "from_1h": current - timedelta(minutes=59), "from_24h": current - timedelta(minutes=1439)}


async def figures(pool: Pool, workspace_id: UUID, environment: str, now: datetime) -> dict[str, Any]:
    w = windows(now)
    c, e, o = await monitoring_queries.figures(pool, workspace_id, environment, w["from_1h"], w["from_24h"],
                                               w["now"])
    return {
        "last1h": {"totalCalls": c["calls_1h"], "errorRate": _ratio(c["errors_1h"], c["calls_1h"]),
                   "avgLatencyMs": round(c["latency_1h"] / c["calls_1h"], 3) if c["calls_1h"] else 0.0},
        "last24h": {"totalCalls": c["calls_24h"], "errorRate": _ratio(c["errors_24h"], c["calls_24h"]),
                    "creditsConsumed": e["credits"] if environment == "production" else 0},
        "jobs": {"pending": o["pending"], "running": o["running"], "completed24h": e["completed"],
                 "failed24h": e["failed"]},
        "_errors_1h": c["errors_1h"],
    }


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def credits_block(ws: dict) -> dict[str, Any]:
    total, used = ws["credits_total"], ws["credits_used"]
    remaining = total - used
    return {"plan": ws["plan"], "creditsRemaining": remaining,
            "creditsPct": round(100.0 * remaining / total, 2) if total > 0 else 0.0}


def _alert(type_: str, severity: str, message: str, value: float, threshold: float, **extra) -> dict:
    return {"type": type_, "severity": severity, "message": message, "value": value, "threshold": threshold, **extra}


def _level(value: float, warning: float, critical: float, *, below: bool = False) -> str | None:
    if below:
        return "critical" if value < critical else "warning" if value < warning else None
    return "critical" if value >= critical else "warning" if value >= warning else None


def evaluate_alerts(settings: Settings, workspace: dict, figs: dict, webhooks: list[dict],
                    projections: list[dict] | None) -> list[dict]:
    """The documented rules (docs/monitoring.md), pure: read models and thresholds in, alerts out."""
    out = []
    pct = workspace["creditsPct"]
    level = _level(pct, settings.alert_credits_warning_pct, settings.alert_credits_critical_pct, below=True)
    if level:
        threshold = settings.alert_credits_critical_pct if level == "critical" else settings.alert_credits_warning_pct
        out.append(_alert("credits_low", level, f"{workspace['creditsRemaining']} credits remaining ({pct}% of the "
                          f"total), under the {threshold}% threshold", pct, threshold))
    calls, rate = figs["last1h"]["totalCalls"], figs["last1h"]["errorRate"]
    level = _level(rate, settings.alert_error_rate_warning, settings.alert_error_rate_critical)
    if level and calls >= settings.alert_error_rate_min_calls:
        threshold = settings.alert_error_rate_critical if level == "critical" else settings.alert_error_rate_warning
        out.append(_alert("error_rate_high", level, f"{figs['_errors_1h']} of {calls} calls failed in the last hour "
                          f"({rate:.1%}; 5xx and 4xx other than 401/404)", rate, threshold))
    done, failed = figs["jobs"]["completed24h"] + figs["jobs"]["failed24h"], figs["jobs"]["failed24h"]
    share = _ratio(failed, done)
    level = _level(share, settings.alert_jobs_failed_warning, settings.alert_jobs_failed_critical)
    if level and done >= settings.alert_jobs_min_finished:
        threshold = settings.alert_jobs_failed_critical if level == "critical" else settings.alert_jobs_failed_warning
        out.append(_alert("jobs_failing", level, f"{failed} of the {done} jobs finished in the last 24 h failed",
                          share, threshold))
    for w in webhooks:
        ratio = _ratio(w["failing"], w["total"])
        if w["failing"] >= settings.alert_webhook_failing_min and ratio >= settings.alert_webhook_failing_ratio:
            severity = "critical" if w["failing"] == w["total"] else "warning"
            out.append(_alert("webhook_failing", severity,
                              f"webhook {w['webhook_id']}: {w['failing']} of its {w['total']} deliveries of the last "
                              f"24 h failed", ratio, settings.alert_webhook_failing_ratio,
                              webhookId=str(w["webhook_id"])))
    for p in projections or []:
        if p["status"] == "stopped":
            out.append(_alert("projection_lag", "critical", f"read model {p['name']} stopped: {p['error']}",
                              p["lag"] or 0, settings.alert_projection_lag_critical, projection=p["name"]))
            continue
        if p["lag"] is None:
            continue
        level = _level(p["lag"], settings.alert_projection_lag_warning, settings.alert_projection_lag_critical)
        if level:
            threshold = (settings.alert_projection_lag_critical if level == "critical"
                         else settings.alert_projection_lag_warning)
            out.append(_alert("projection_lag", level, f"read model {p['name']} is {p['lag']:,} messages behind "
                              "the log", p["lag"], threshold, projection=p["name"]))
    return out


async def _projections(call: Call) -> list[dict] | None:
    try:
        ends = await call.app[END_OFFSETS].get()
    except Exception as exc:  # Kafka unreachable: lags unknown, a stopped projection still shows
        log.warning("end offsets unknown: %s: %s", type(exc).__name__, exc)
        ends = None
    return await projection_states(call.pool, ends)  # the pool runs each statement on a connection of its own


async def _snapshot(call: Call) -> tuple[dict, dict, list[dict]]:
    settings = call.app[SETTINGS]
    workspace = credits_block(await load_workspace(call))
    figs = await figures(call.pool, call.workspace_id, call.environment, settings.now())
    webhooks = [dict(r) for r in await webhooks_queries.failing(call.pool, call.workspace_id, call.environment,
                                                                settings.now() - timedelta(hours=24))]
    projections = await _projections(call)
    alerts = evaluate_alerts(settings, workspace, figs, webhooks, projections)
    return workspace, figs, alerts


class MonitoringWorkspace(BaseModel):
    plan: str
    creditsRemaining: int
    creditsPct: float


class Last1h(BaseModel):
    totalCalls: int
    errorRate: float
    avgLatencyMs: float


class Last24h(BaseModel):
    totalCalls: int
    errorRate: float
    creditsConsumed: int


class JobsFigures(BaseModel):
    pending: int
    running: int
    completed24h: int
    failed24h: int


class Alert(BaseModel):
    type: str
    severity: str
    message: str
    value: float
    threshold: float


class MonitoringData(BaseModel):
    workspace: MonitoringWorkspace
    last1h: Last1h
    last24h: Last24h
    jobs: JobsFigures
    alerts: list[Alert]


class MonitoringResponse(BaseModel):
    data: MonitoringData


class AlertsResponse(BaseModel):
    data: list[Alert]
    has_alerts: bool
    critical_count: int


async def get_monitoring(call: Call) -> dict:
    workspace, figs, alerts = await _snapshot(call)
    return {"data": {"workspace": workspace, "last1h": figs["last1h"], "last24h": figs["last24h"],
                     "jobs": figs["jobs"], "alerts": alerts}}


async def get_monitoring_alerts(call: Call) -> dict:
    _, _, alerts = await _snapshot(call)
    return {"data": alerts, "has_alerts": bool(alerts),
            "critical_count": sum(a["severity"] == "critical" for a in alerts)}


ROUTES = [
    Route("GET", "/monitoring", get_monitoring, scope="usage:read", tag="Monitoring", response=MonitoringResponse,
          summary="Credits, API calls of the last hour and day, jobs, and the active alerts (sliding windows)"),
    Route("GET", "/monitoring/alerts", get_monitoring_alerts, scope="usage:read", tag="Monitoring",
          response=AlertsResponse,
          summary="Active alerts: credits_low, error_rate_high, jobs_failing, webhook_failing, projection_lag"),
]


# ------------------------------------------------------------------------------ GET /usage/llm

# Readable names of the operations engines record; an unknown operation is shown by its own name.
OPERATION_NAMES = {
    "article.write": "Article writing",
    "article.translate": "Article translation",
    "article.regenerate": "Article regeneration",
    "descriptions.complete": "Platform descriptions",
    "clips.detect": "Clip detection",
    "agent.chat": "Assistant",
    "analysis.enrich": "Analysis enrichment",
    "transcript.asr": "Speech recognition",
}


class LlmOperation(BaseModel):
    operation: str
    name: str
    calls: int
    promptTokens: int
    completionTokens: int
    totalTokens: int


class LlmTotals(BaseModel):
    calls: int
    promptTokens: int
    completionTokens: int
    totalTokens: int


class LlmUsageData(BaseModel):
    operations: list[LlmOperation]
    totals: LlmTotals


class LlmUsageResponse(BaseModel):
    data: LlmUsageData


async def get_usage_llm(call: Call) -> dict:
    rows = await llm_usage_queries.by_operation(call.pool, call.workspace_id, call.environment)
    ops = [{"operation": r["operation"], "name": OPERATION_NAMES.get(r["operation"], r["operation"]),
            "calls": r["calls"], "promptTokens": r["prompt_tokens"], "completionTokens": r["completion_tokens"],
            "totalTokens": r["prompt_tokens"] + r["completion_tokens"]} for r in rows]
    totals = {k: sum(o[k] for o in ops) for k in ("calls", "promptTokens", "completionTokens", "totalTokens")}
    return {"data": {"operations": ops, "totals": totals}}


ROUTES.append(Route("GET", "/usage/llm", get_usage_llm, scope="usage:read", tag="Monitoring",
                    response=LlmUsageResponse,
                    summary="LLM usage per operation (readable names, calls, prompt/completion/total tokens); "
                            "no model, cost or margin"))
