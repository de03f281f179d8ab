"""The alert rules of docs/monitoring.md, as a pure function: read-model figures in, alerts out."""

from __future__ import annotations

import uuid

from infra.settings import Settings
from services.api.monitoring import evaluate_alerts

S = Settings()
WS_OK = {"creditsPct": 80.0, "creditsRemaining": 800}
QUIET = {"last1h": {"totalCalls": 0, "errorRate": 0.0}, "_errors_1h": 0,
         "jobs": {"completed24h": 0, "failed24h": 0}}


def alerts(workspace=WS_OK, figs=QUIET, webhooks=(), projections=None):
    return [(a["type"], a["severity"], a["value"], a["threshold"])
            for a in evaluate_alerts(S, workspace, figs, list(webhooks), projections)]


def test_nothing_to_report_gives_no_alert():
    assert alerts() == []


def test_credits_low_warning_under_20_and_critical_under_5_percent():
    assert alerts({"creditsPct": 20.0, "creditsRemaining": 200}) == []
    assert alerts({"creditsPct": 19.99, "creditsRemaining": 199}) == [("credits_low", "warning", 19.99, 20.0)]
    assert alerts({"creditsPct": 4.0, "creditsRemaining": 40}) == [("credits_low", "critical", 4.0, 5.0)]


def test_webhook_failing_needs_enough_failures_and_a_high_share():
    hook = uuid.uuid4()
    few = {"webhook_id": hook, "failing": 2, "total": 2}
    half = {"webhook_id": hook, "failing": 3, "total": 6}
    all_failing = {"webhook_id": hook, "failing": 4, "total": 4}
    mostly_fine = {"webhook_id": hook, "failing": 3, "total": 10}
    assert alerts(webhooks=[few]) == []  # under the minimum count
    assert alerts(webhooks=[mostly_fine]) == []  # 30 % is under the 50 % share
    assert alerts(webhooks=[half]) == [("webhook_failing", "warning", 0.5, 0.5)]
    assert alerts(webhooks=[all_failing]) == [("webhook_failing", "critical", 1.0, 0.5)]
    (alert,) = evaluate_alerts(S, WS_OK, QUIET, [half], None)
    assert alert["webhookId"] == str(hook) and "3 of its 6 deliveries" in alert["message"]


def test_projection_lag_warning_critical_and_stopped():
    def p(lag, status="live", error=None):
        return {"name": "jobs", "lag": lag, "status": status, "error": error}

    assert alerts(projections=[p(999)]) == []
    assert alerts(projections=[p(1000)]) == [("projection_lag", "warning", 1000, 1000)]
    assert alerts(projections=[p(10000)]) == [("projection_lag", "critical", 10000, 10000)]
    assert alerts(projections=[p(None)]) == []  # lag unknown (Kafka unreachable): no guess
    stopped = evaluate_alerts(S, WS_OK, QUIET, [], [p(3, "stopped", "UndefinedTableError: x")])
    assert [(a["type"], a["severity"], a["projection"]) for a in stopped] == [("projection_lag", "critical", "jobs")]
    assert "stopped" in stopped[0]["message"] and "UndefinedTableError" in stopped[0]["message"]


def test_error_rate_and_jobs_failing_respect_their_minimum_volumes():
    busy = {"last1h": {"totalCalls": 20, "errorRate": 0.3}, "_errors_1h": 6,
            "jobs": {"completed24h": 1, "failed24h": 1}}
    assert alerts(figs=busy) == [("error_rate_high", "critical", 0.3, 0.25)]  # 2 jobs: under the minimum of 3
    few_calls = dict(busy, last1h={"totalCalls": 9, "errorRate": 1.0})
    assert alerts(figs=few_calls) == []
    jobs = dict(QUIET, jobs={"completed24h": 8, "failed24h": 2})
    assert alerts(figs=jobs) == [("jobs_failing", "warning", 0.2, 0.1)]
