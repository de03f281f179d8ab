"""Monitoring, alerts, credits.low, /metrics and `vaeo status` on the real servers.

The API runs in-process (``build_app``) with a fixed clock a few minutes ahead of the wall clock,
so every call of a test lands in one minute bucket and events recorded meanwhile fall inside the
windows; other apps on the same database read with the clock moved forward (no sleeping).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer
from prometheus_client.parser import text_string_to_metric_families

from infra.eventstore import ConcurrencyError
from services.api.app import build_app
from services.application.jobs import QueueJob
from services.application.keys import IssueKey
from services.application.workspaces import CreateWorkspace
from services.jobs.context import JobHandlers
from services.jobs.errors import PermanentJobError
from services.processes.credits_watch import CreditsWatch
from services.processes.projector.rebuild import rebuild
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from services.processes.worker import Worker
from tests.helpers import handle, wait_projected
from tests.support.monitoring import charge, wait_for
from tests.support.stack import ROOT, env_for


class Api:
    def __init__(self, settings) -> None:
        self.client = TestClient(TestServer(build_app(settings)))

    async def __aenter__(self) -> Api:
        await self.client.start_server()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.client.close()

    async def get(self, path: str, key: str | None = None) -> tuple[int, dict | str]:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with self.client.get(path, headers=headers) as resp:
            raw = await resp.read()
            try:
                return resp.status, orjson.loads(raw)
            except orjson.JSONDecodeError:
                return resp.status, raw.decode()


@pytest.fixture
def clocked(settings):
    fixed = (datetime.now(UTC) + timedelta(minutes=5)).replace(second=30, microsecond=0)
    return settings.model_copy(update={"clock_fixed": fixed.isoformat(), "worker_poll_interval_s": 0.05,
                                       "job_retry_backoff_s": 0.05, "heartbeat_interval_s": 0.5})


async def calls_counted(pool, workspace_id, n: int) -> None:
    async def done():
        async with pool.acquire() as conn:
            return await conn.fetchval("SELECT coalesce(sum(calls), 0) FROM monitoring_api_minutes "
                                       "WHERE workspace_id = $1", workspace_id) + await conn.fetchval(
                "SELECT coalesce(sum(calls), 0) FROM monitoring_api_days WHERE workspace_id = $1", workspace_id) >= n

    await wait_for(done, what=f"{n} calls counted")


async def test_monitoring_figures_match_the_traffic_and_jobs_windows_slide_and_a_rebuild_agrees(
        clocked, store, pool, background):
    settings = clocked
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop))
    handlers = JobHandlers()
    release = asyncio.Event()

    @handlers.register("ok")
    async def ok(ctx):
        return {}

    @handlers.register("boom")
    async def boom(ctx):
        raise PermanentJobError("the media cannot be read")

    @handlers.register("hold")
    async def hold(ctx):
        await release.wait()
        return {}

    background.start(Worker(settings, handlers, pool=pool).run)
    ws, issued = await handle(store, CreateWorkspace(name="mon", plan="pro", credits=1000, rate_limit=100_000))
    other, other_key = await handle(store, CreateWorkspace(name="other", plan="free", credits=10, rate_limit=1000))
    narrow = await handle(store, IssueKey(ws, name="narrow", scopes=["jobs:read"], environment="production",
        expires_at=None, issuer_scopes=None, issued_by=None))
    # Jobs: 3 completed, 2 failed, 1 running (held), 1 pending (no worker knows its type).
    for job_type in ("ok", "ok", "ok", "boom", "boom", "hold", "nobody"):
        await handle(store, QueueJob(ws, job_type=job_type))
    await handle(store, QueueJob(other, job_type="ok"))  # another workspace: never counted here
    await charge(store, ws, 120)

    async with Api(settings) as api:
        ok_calls = 0
        for _ in range(12):
            assert (await api.get("/v1/me", issued.key))[0] == 200
            ok_calls += 1
        for _ in range(3):  # 404: the caller asking for nothing, not counted as failed
            assert (await api.get(f"/v1/jobs/{uuid.uuid4()}", issued.key))[0] == 404
        for _ in range(4):  # 403: counted as failed
            assert (await api.get("/v1/me", narrow.key))[0] == 403
        assert (await api.get("/v1/me", other_key.key))[0] == 200
        total = 12 + 3 + 4 + 2

        async def jobs_settled():
            async with pool.acquire() as conn:
                return await conn.fetchval(
                    "SELECT count(*) FILTER (WHERE status IN ('completed', 'failed')) = 5 "
                    "AND count(*) FILTER (WHERE status = 'running') = 1 FROM jobs WHERE workspace_id = $1", ws)

        await wait_for(jobs_settled, what="jobs finished")
        await wait_projected(settings, pool, ["monitoring_events", "workspaces", "jobs"])
        # A real 5xx: the jobs read model's table is gone while GET /jobs runs (the projector has
        # nothing to write there meanwhile: every job event is applied).
        async with pool.acquire() as conn:
            await conn.execute("ALTER TABLE jobs RENAME TO jobs_away")
        try:
            for _ in range(2):
                assert (await api.get("/v1/jobs", issued.key))[0] == 500
        finally:
            async with pool.acquire() as conn:
                await conn.execute("ALTER TABLE jobs_away RENAME TO jobs")
        await calls_counted(pool, ws, total)

        status, body = await api.get("/v1/monitoring", issued.key)
        assert status == 200, body
        data = body["data"]
        assert data["workspace"] == {"plan": "pro", "creditsRemaining": 880, "creditsPct": 88.0}
        assert data["last1h"]["totalCalls"] == total
        assert data["last1h"]["errorRate"] == round(6 / total, 4)  # 4 x 403 + 2 x 500
        assert data["last1h"]["avgLatencyMs"] > 0
        assert data["last24h"] == {"totalCalls": total, "errorRate": round(6 / total, 4), "creditsConsumed": 120}
        assert data["jobs"] == {"pending": 1, "running": 1, "completed24h": 3, "failed24h": 2}
        # 2 of 5 finished jobs failed (40% >= 10%): warning; errors 6/21 = 28.6% >= 25%: critical.
        kinds = {a["type"]: a for a in data["alerts"]}
        assert kinds["jobs_failing"]["severity"] == "warning" and kinds["jobs_failing"]["value"] == 0.4
        assert kinds["error_rate_high"]["severity"] == "critical"
        assert "credits_low" not in kinds and "projection_lag" not in kinds
        status, alerts = await api.get("/v1/monitoring/alerts", issued.key)
        assert status == 200
        assert alerts["has_alerts"] is True and alerts["critical_count"] == 1
        assert sorted(a["type"] for a in alerts["data"]) == ["error_rate_high", "jobs_failing"]
        status, body = await api.get("/v1/monitoring", narrow.key)
        assert status == 403 and body["error"]["details"]["required"] == "usage:read"

    # Rebuilding both monitoring projections gives the same answer (read with the same clock).
    await calls_counted(pool, ws, total + 2 + 1)  # the two monitoring reads above and the 403
    async with Api(settings) as api:
        before = (await api.get("/v1/monitoring", issued.key))[1]
        await calls_counted(pool, ws, total + 4)
        for name in ("monitoring_calls", "monitoring_events"):
            await rebuild(settings, name)
        again = (await api.get("/v1/monitoring", issued.key))[1]
    assert again["data"]["jobs"] == before["data"]["jobs"]
    assert again["data"]["workspace"] == before["data"]["workspace"]
    assert again["data"]["last24h"]["creditsConsumed"] == 120
    # ``before`` could not count the read that made it; ``again`` counts it and nothing else new.
    assert again["data"]["last24h"]["totalCalls"] == before["data"]["last24h"]["totalCalls"] + 1
    assert [(a["type"], a["severity"]) for a in again["data"]["alerts"]] == [
        (a["type"], a["severity"]) for a in before["data"]["alerts"]]

    # An hour later (the clock moved, no sleep): the calls left last1h, not last24h.
    await calls_counted(pool, ws, total + 5)
    counted = total + 5
    async with Api(settings.model_copy(update={"clock_offset_s": 3600})) as later:
        data = (await later.get("/v1/monitoring", issued.key))[1]["data"]
        assert data["last1h"] == {"totalCalls": 0, "errorRate": 0.0, "avgLatencyMs": 0.0}
        assert data["last24h"]["totalCalls"] == counted
        assert data["jobs"]["completed24h"] == 3
        assert "error_rate_high" not in {a["type"] for a in data["alerts"]}
    # A day and an hour later: everything left both windows; that call's own record compacts the
    # workspace's minute buckets older than 25 h before it into a day total, which keeps every call.
    async with Api(settings.model_copy(update={"clock_offset_s": 25 * 3600 + 120})) as day_later:
        data = (await day_later.get("/v1/monitoring", issued.key))[1]["data"]
        assert data["last24h"] == {"totalCalls": 0, "errorRate": 0.0, "creditsConsumed": 0}
        assert data["jobs"] == {"pending": 1, "running": 1, "completed24h": 0, "failed24h": 0}
        assert (await day_later.get("/v1/me", issued.key))[0] == 200

    async def compacted():
        async with pool.acquire() as conn:
            return await conn.fetchrow(
                "SELECT (SELECT coalesce(sum(calls), 0) FROM monitoring_api_days WHERE workspace_id = $1) AS days, "
                "(SELECT count(*) FROM monitoring_api_minutes WHERE workspace_id = $1 AND minute < $2) AS old",
                ws, datetime.fromisoformat(settings.clock_fixed) + timedelta(minutes=30))

    row = await wait_for(lambda: _when(compacted, lambda r: r["days"] >= counted), what="compaction")
    assert row["days"] == counted and row["old"] == 0  # the hour-later read is within 25 h: still a minute
    release.set()


async def _when(fetch, check):
    row = await fetch()
    return row if check(row) else None


async def test_credits_low_is_appended_once_per_crossing_and_again_after_a_top_up(settings, store, pool, background):
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["workspaces", "monitoring_events"]))
    watch = CreditsWatch(settings)
    background.start(watch.run)
    ws, issued = await handle(store, CreateWorkspace(name="credits", plan="pro", credits=100, rate_limit=1000))

    async def lows() -> list:
        return [e for e in await store.read_stream(ws) if e.type == "CreditsLow"]

    async def watched_to_head():
        async with pool.acquire() as conn:
            head = await conn.fetchval("SELECT max(position) FROM events")
            cp = await conn.fetchval("SELECT coalesce(max(position), 0) FROM relay_checkpoint")
            consumed = await conn.fetchval("SELECT coalesce(sum(next_offset), 0) FROM projection_offsets "
                                           "WHERE projection = 'credits_watch'")
            total = await conn.fetchval("SELECT count(*) FROM events")
        return cp >= head and consumed >= total

    for amount in (30, 40, 5):  # 100 -> 70 -> 30 -> 25: never under 20%
        await charge(store, ws, amount)
    await charge(store, ws, 10)  # 25 -> 15: crosses
    await wait_for(lows, what="first CreditsLow")
    for amount in (5, 3):  # 15 -> 10 -> 7: still under, no new event
        await charge(store, ws, amount)
    await wait_for(watched_to_head, what="watch caught up")
    first = await lows()
    assert len(first) == 1
    assert first[0].data == {"balance": 15, "total": 100, "remaining_pct": 15.0, "threshold_pct": 20.0,
                             "crossing_version": 5, "environment": "production"}
    # Monitoring shows the warning.
    await wait_projected(settings, pool, ["workspaces"])
    async with Api(settings) as api:
        alerts = (await api.get("/v1/monitoring/alerts", issued.key))[1]
    assert [(a["type"], a["severity"], a["value"], a["threshold"]) for a in alerts["data"]] == [
        ("credits_low", "warning", 7.0, 20.0)]

    # The operator's top-up: `vaeo workspace credits W --add 100` (200 total, 107 left: 53.5%).
    out = subprocess.run([sys.executable, "-m", "services.cli", "workspace", "credits", str(ws), "--add", "100"],
                         env=env_for(settings), capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    await charge(store, ws, 60)  # 47 left: 23.5%, above
    await charge(store, ws, 10)  # 37 left: 18.5%, crosses again
    await wait_for(lambda: _when(lows, lambda xs: len(xs) == 2), what="second CreditsLow")
    await charge(store, ws, 30)  # 7 left: 3.5%, critical, but no new crossing of the warning threshold
    await wait_for(watched_to_head, what="watch caught up")
    assert len(await lows()) == 2
    # A second watch starting from the beginning of the log (a replay) appends nothing.
    async with pool.acquire() as conn:
        await conn.execute("DELETE FROM projection_offsets WHERE projection = 'credits_watch'")
    replay = CreditsWatch(settings)
    background.start(replay.run)
    await wait_for(watched_to_head, what="replay caught up")
    assert len(await lows()) == 2 and replay.appended == 0
    await wait_projected(settings, pool, ["workspaces"])
    async with Api(settings) as api:
        alerts = (await api.get("/v1/monitoring/alerts", issued.key))[1]
    assert alerts["critical_count"] == 1 and alerts["data"][0]["threshold"] == 5.0


def _samples(text: str) -> dict[tuple[str, tuple], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


async def test_metrics_parse_and_move_with_traffic_and_status_prints_every_section(settings, store, pool, background):
    settings = settings.model_copy(update={"heartbeat_interval_s": 0.5, "worker_poll_interval_s": 0.05})
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop))
    handlers = JobHandlers()

    @handlers.register("ok")
    async def ok(ctx):
        return {}

    background.start(Worker(settings, handlers, pool=pool).run)
    ws, issued = await handle(store, CreateWorkspace(name="metrics", plan="pro", credits=100, rate_limit=100_000))
    for _ in range(3):
        await handle(store, QueueJob(ws, job_type="ok"))
    await handle(store, QueueJob(ws, job_type="queued-forever"))
    me = ("vaeo_http_requests_total", (("method", "GET"), ("route", "/v1/me"), ("status", "200")))
    async with Api(settings) as api:
        for _ in range(5):
            assert (await api.get("/v1/me", issued.key))[0] == 200
        status, text = await api.get("/metrics")
        assert status == 200
        first = _samples(text)
        assert first[me] == 5
        count = ("vaeo_http_request_duration_seconds_count",) + me[1:]
        assert first[count] == 5
        for _ in range(7):
            await api.get("/v1/me", issued.key)

        async def jobs_done():
            async with pool.acquire() as conn:
                return await conn.fetchval("SELECT count(*) = 3 FROM jobs WHERE status = 'completed'")

        await wait_for(jobs_done, what="jobs completed")
        await wait_projected(settings, pool, ["monitoring_events", "scheduler", "event_counts"])
        second = _samples((await api.get("/metrics"))[1])
        assert second[me] == 12
        async with pool.acquire() as conn:
            head = await conn.fetchval("SELECT max(position) FROM events")
        assert second[("vaeo_events_appended_total", ())] == head
        assert second[("vaeo_relay_lag_events", ())] == 0
        assert second[("vaeo_projection_lag_messages", (("projection", "jobs"),))] == 0
        assert second[("vaeo_projection_messages_consumed_total", (("projection", "jobs"),))] >= head
        assert second[("vaeo_job_queue_depth", (("job_type", "queued-forever"), ("state", "queued")))] == 1
        hist = (("job_type", "ok"), ("outcome", "completed"))
        assert second[("vaeo_job_duration_seconds_count", hist)] == 3
        assert second[("vaeo_job_duration_seconds_bucket", tuple(sorted((*hist, ("le", "+Inf")))))] == 3
        assert second[("vaeo_webhook_attempts_total", (("outcome", "delivered"),))] == 0
        assert any(k[0] == "vaeo_process_heartbeat_age_seconds" and ("kind", "api") in k[1] for k in second)

        protected = settings.model_copy(update={"metrics_token": "s3cret-token"})
        async with Api(protected) as guarded:
            assert (await guarded.get("/metrics"))[0] == 401
            assert (await guarded.get("/metrics", "s3cret-token"))[0] == 200

        out = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "services.cli", "status"],
                                      env=env_for(settings), capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    screen = out.stdout
    for section in ("PROCESSES", "LOG", "PROJECTIONS", "QUEUE", "WEBHOOKS"):
        assert section in screen.splitlines(), screen
    assert f"head position     {head:>12,}" in screen
    assert "api" in screen and " up " in screen
    assert "monitoring_events" in screen and "queued-forever" in screen
    assert "pending retries 0" in screen


async def test_usage_llm_sums_tokens_per_operation_in_readable_names(settings, store, pool, background):
    from domain.llm_usage import LlmUsage

    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["llm_usage", "workspaces"]))
    ws, issued = await handle(store, CreateWorkspace(name="llm", plan="pro", credits=100, rate_limit=1000))
    calls = [("article.write", 1200, 800), ("article.write", 1000, 600), ("article.translate", 900, 950),
             ("some.new_step", 10, 5)]
    usages = [LlmUsage.record(call_key=f"job-1/{i}", workspace_id=ws, environment="production", operation=op,
                              prompt_tokens=p, completion_tokens=c) for i, (op, p, c) in enumerate(calls)]
    usages.append(LlmUsage.record(call_key="sandbox/1", workspace_id=ws, environment="sandbox",
                                  operation="article.write", prompt_tokens=5, completion_tokens=5))
    await store.save(events=store.registry.to_new_events([e for u in usages for e in u.collect_events()],
                                                    workspace_id=ws))
    retried = LlmUsage.record(call_key="job-1/0", workspace_id=ws, environment="production",
                              operation="article.write", prompt_tokens=1200, completion_tokens=800)
    with pytest.raises(ConcurrencyError):  # the same call recorded again: the same stream, refused
        await store.save(events=store.registry.to_new_events(retried.collect_events(), workspace_id=ws))
    await wait_projected(settings, pool, ["llm_usage"])
    async with Api(settings) as api:
        status, body = await api.get("/v1/usage/llm", issued.key)
    assert status == 200, body
    assert body["data"] == {
        "operations": [
            {"operation": "article.translate", "name": "Article translation", "calls": 1, "promptTokens": 900,
             "completionTokens": 950, "totalTokens": 1850},
            {"operation": "article.write", "name": "Article writing", "calls": 2, "promptTokens": 2200,
             "completionTokens": 1400, "totalTokens": 3600},
            {"operation": "some.new_step", "name": "some.new_step", "calls": 1, "promptTokens": 10,
             "completionTokens": 5, "totalTokens": 15},
        ],
        "totals": {"calls": 4, "promptTokens": 3110, "completionTokens": 2355, "totalTokens": 5465},
    }
    assert "model" not in orjson.dumps(body).decode()


async def test_heartbeats_forget_processes_stopped_or_silent_beyond_the_retention(settings, pool):
    from services.lib.status import HEARTBEAT_RETENTION_DAYS, heartbeat

    old = datetime.now(UTC) - timedelta(days=HEARTBEAT_RETENTION_DAYS, hours=1)
    recent = datetime.now(UTC) - timedelta(days=1)
    async with pool.acquire() as conn:
        await conn.executemany(
            "INSERT INTO process_heartbeats (process_id, kind, host, pid, started_at, beat_at, stopped_at) "
            "VALUES ($1, 'api', 'vm', 1, $2, $2, $3)",
            [("old-stopped", old, old), ("old-silent", old, None), ("recent-stopped", recent, recent),
             ("recent-silent", recent, None)])
    stop = asyncio.Event()
    beating = asyncio.create_task(heartbeat(settings.model_copy(update={"heartbeat_interval_s": 0.1}), "relay", stop))
    deadline = time.monotonic() + 10
    async with pool.acquire() as conn:
        while not await conn.fetchval("SELECT count(*) FROM process_heartbeats WHERE kind = 'relay'"):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        stop.set()
        await beating
        rows = {r["process_id"]: r for r in await conn.fetch("SELECT * FROM process_heartbeats")}
    assert {"recent-stopped", "recent-silent"} <= set(rows) and not {"old-stopped", "old-silent"} & set(rows)
    [mine] = [r for r in rows.values() if r["kind"] == "relay"]
    assert mine["stopped_at"] is not None  # marked stopped on the way out
