"""The reads of the monitoring read models (``monitoring_calls`` from the telemetry topic,
``monitoring_events`` from the log): GET /monitoring's figures and the job durations of /metrics."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from projections.reading import Pool, Row

_CALLS = """SELECT coalesce(sum(calls) FILTER (WHERE minute >= $3), 0)::bigint AS calls_1h,
                   coalesce(sum(errors) FILTER (WHERE minute >= $3), 0)::bigint AS errors_1h,
                   coalesce(sum(latency_ms_sum) FILTER (WHERE minute >= $3), 0)::float8 AS latency_1h,
                   coalesce(sum(calls), 0)::bigint AS calls_24h,
                   coalesce(sum(errors), 0)::bigint AS errors_24h
              FROM monitoring_api_minutes
             WHERE workspace_id = $1 AND environment = $2 AND minute >= $4 AND minute <= $5"""
_EVENTS = """SELECT coalesce(sum(jobs_completed) FILTER (WHERE environment = $2), 0)::bigint AS completed,
                    coalesce(sum(jobs_failed) FILTER (WHERE environment = $2), 0)::bigint AS failed,
                    coalesce(sum(credits_charged - credits_refunded) FILTER (WHERE environment = 'production'),
                             0)::bigint AS credits
               FROM monitoring_event_minutes
              WHERE workspace_id = $1 AND minute >= $3 AND minute <= $4"""
_OPEN = """SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
                  count(*) FILTER (WHERE status = 'running') AS running
             FROM monitoring_open_jobs WHERE workspace_id = $1 AND environment = $2"""
_DURATIONS = """SELECT job_type, outcome, bucket_le, count FROM monitoring_job_durations
                 ORDER BY job_type, outcome, bucket_le"""
_DURATION_TOTALS = "SELECT job_type, outcome, count, sum_s FROM monitoring_job_duration_totals"


async def figures(pool: Pool, workspace_id: UUID, environment: str, from_1h: datetime, from_24h: datetime,
                  now: datetime) -> tuple[Row, Row, Row]:
    """The environment's calls (last hour and last 24 h), its jobs finished and credits consumed in
    the last 24 h, and its open jobs: three rows, read on one connection."""
    async with pool.acquire() as conn:
        calls = await conn.fetchrow(_CALLS, workspace_id, environment, from_1h, from_24h, now)
        events = await conn.fetchrow(_EVENTS, workspace_id, environment, from_24h, now)
        open_jobs = await conn.fetchrow(_OPEN, workspace_id, environment)
    return calls, events, open_jobs


async def job_durations(pool: Pool) -> tuple[list[Row], list[Row]]:
    """Every job type's duration histogram (its buckets) and its count and sum, per outcome."""
    async with pool.acquire() as conn:
        return await conn.fetch(_DURATIONS), await conn.fetch(_DURATION_TOTALS)
