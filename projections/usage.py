"""API usage from the telemetry topic (``source="telemetry"``): GET /usage, later /monitoring.

One record per API call (``kind`` ``api_call``: workspace, environment, route, status, latency,
timestamp). Counters are deltas: they rely on the runner's exactly-once effect (offsets stored in
the same transaction, duplicates skipped by offset). Calls are kept per workspace and
environment in total and per hour (for the monitoring windows).
"""

from __future__ import annotations

from datetime import UTC, datetime

from projections.base import Accumulate, Projection, Statement

projection = Projection(
    name="usage",
    source="telemetry",
    ddl=[
        """CREATE TABLE IF NOT EXISTS api_usage (
            workspace_id   uuid NOT NULL,
            environment    text NOT NULL,
            calls          bigint NOT NULL,
            errors         bigint NOT NULL,
            latency_ms_sum double precision NOT NULL,
            last_call_at   timestamptz NOT NULL,
            PRIMARY KEY (workspace_id, environment)
        )""",
        """CREATE TABLE IF NOT EXISTS api_usage_hourly (
            workspace_id   uuid NOT NULL,
            environment    text NOT NULL,
            hour           timestamptz NOT NULL,
            calls          bigint NOT NULL,
            errors         bigint NOT NULL,
            latency_ms_sum double precision NOT NULL,
            PRIMARY KEY (workspace_id, environment, hour)
        )""",
    ],
    tables=["api_usage", "api_usage_hourly"],
)

_TOTAL = """INSERT INTO api_usage (workspace_id, environment, calls, errors, latency_ms_sum, last_call_at)
            VALUES ($1, $2, $6, $3, $4, $5)
            ON CONFLICT (workspace_id, environment) DO UPDATE SET
              calls = api_usage.calls + excluded.calls, errors = api_usage.errors + excluded.errors,
              latency_ms_sum = api_usage.latency_ms_sum + excluded.latency_ms_sum,
              last_call_at = greatest(api_usage.last_call_at, excluded.last_call_at)"""
_HOURLY = """INSERT INTO api_usage_hourly (workspace_id, environment, hour, calls, errors, latency_ms_sum)
             VALUES ($1, $2, $3, $6, $4, $5)
             ON CONFLICT (workspace_id, environment, hour) DO UPDATE SET
               calls = api_usage_hourly.calls + excluded.calls, errors = api_usage_hourly.errors + excluded.errors,
               latency_ms_sum = api_usage_hourly.latency_ms_sum + excluded.latency_ms_sum"""


@projection.handles("api_call")
def _call(record: dict) -> list[Statement]:
    workspace = record.get("workspace_id")
    if not workspace:
        return []  # a call refused before a workspace was known (401) belongs to nobody
    at = datetime.fromtimestamp(record["ts"] / 1000, UTC)
    hour = at.replace(minute=0, second=0, microsecond=0)
    error = 1 if record["status"] >= 400 else 0
    latency = float(record["latency_ms"])
    env = record.get("environment") or "production"
    return [(_TOTAL, (workspace, env, error, latency, at, 1)), (_HOURLY, (workspace, env, hour, error, latency, 1))]


projection.ordering = "commutative"  # increments
projection.accumulate = {
    _TOTAL: Accumulate(key=(0, 1), add=(2, 3, 5), keep_max=(4,)),
    _HOURLY: Accumulate(key=(0, 1, 2), add=(3, 4, 5)),
}
