"""Webhooks end to end: the real api, relay, projector and dispatcher processes, a real HTTPS receiver.

The processes run with the test allowance limited to the receivers' addresses (127.0.0.20/30),
so every other loopback spelling is refused like any private address; they trust the test CA
through VAEO_WEBHOOK_EXTRA_CA_FILE and retry on a compressed schedule.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest

from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from services.application.jobs import QueueJob
from tests.helpers import handle
from tests.support.netguard import REFUSED
from tests.support.service import Service, spawn, start_api, stop_all, tear_down
from tests.support.stack import env_for, make_isolated_settings
from tests.support.webhooks import Receiver, TestCA, end_job, verify, wait_until

ALLOW = "127.0.0.20/30"
SCHEDULE = "[0, 0.3, 0.3]"
KILL_DELIVERIES = 2000  # kill -9 of a dispatcher during this many deliveries (docs/webhooks.md)
CONCURRENCY = 100  # attempts on the wire per dispatcher


@pytest.fixture(scope="module")
async def hooks(stack_settings: Settings, template_db: str, tmp_path_factory) -> AsyncIterator[Service]:
    settings = await make_isolated_settings(stack_settings, template_db)
    logs = tmp_path_factory.mktemp("logs")
    ca = TestCA(tmp_path_factory.mktemp("ca"))
    env = dict(env_for(settings), VAEO_WEBHOOK_TEST_ALLOW=ALLOW, VAEO_WEBHOOK_EXTRA_CA_FILE=str(ca.ca_file),
               VAEO_WEBHOOK_RETRY_SCHEDULE_S=SCHEDULE, VAEO_WEBHOOK_RETRY_FLOOR_S="0.2",
               VAEO_DISPATCHER_GROUP=settings.consumer_group_prefix + "dispatcher",
               VAEO_DISPATCHER_POLL_INTERVAL_S="0.05", VAEO_DISPATCHER_LEASE_S="3",
               VAEO_DISPATCHER_CONCURRENCY=str(CONCURRENCY))
    procs = {}
    http = aiohttp.ClientSession()
    pool = await create_pool(settings.resolved_database_url(), max_size=10)
    try:
        for name in ("relay", "projector", "dispatcher"):
            procs[name] = spawn(name, env, logs)
        base, procs["api"] = await start_api(settings, http, logs, **{k: v for k, v in env.items()
                                                                       if k.startswith("VAEO_WEBHOOK")})
        svc = Service(settings, [base], pool, PostgresEventStore(pool, EventRegistry()), http, procs, logs)
        svc.ca = ca  # type: ignore[attr-defined]
        svc.env = env  # type: ignore[attr-defined]
        yield svc
    finally:
        await tear_down(procs, http, pool, stack_settings, settings, logs)


async def _deliveries(client, hook_id: str) -> list[dict]:
    r = await client.get(f"/webhooks/{hook_id}/deliveries")
    assert r.status == 200, r.body
    return r.data


async def test_register_list_delete_the_secret_once_and_other_workspaces_see_404(hooks):
    ws, intruder = await hooks.workspace(), await hooks.workspace()
    r = await ws.client.post("/webhooks", {"url": "https://127.0.0.20:9/hook", "events": ["job.failed"]})
    assert r.status == 201, r.body
    assert set(r.data) == {"id", "url", "secret", "events"} and r.body["_warning"]
    assert r.data["secret"].startswith("whsec_") and r.data["events"] == ["job.failed"]
    hook = r.data["id"]
    listed = await ws.client.get("/webhooks")
    assert listed.status == 200 and [h["id"] for h in listed.data] == [hook]
    assert "secret" not in listed.data[0] and r.data["secret"] not in str(listed.body)
    async with hooks.pool.acquire() as conn:  # the secret is nowhere in clear
        stored = await conn.fetchval("SELECT data::text FROM events WHERE stream_id = $1", uuid.UUID(hook))
    assert r.data["secret"] not in stored and r.data["secret"][6:] not in stored
    default = await ws.client.post("/webhooks", {"url": "https://127.0.0.21:9/"})
    assert default.status == 201 and len(default.data["events"]) == 9
    for method, path in (("DELETE", f"/webhooks/{hook}"), ("POST", f"/webhooks/{hook}/test"),
                         ("GET", f"/webhooks/{hook}/deliveries")):
        assert (await intruder.client.call(method, path)).status == 404
    assert (await intruder.client.get("/webhooks")).data == []
    deleted = await ws.client.delete(f"/webhooks/{hook}")
    assert deleted.status == 200 and deleted.data == {"id": hook, "deleted": True}
    assert [h["id"] for h in (await ws.client.get("/webhooks")).data] == [default.data["id"]]
    assert (await ws.client.delete(f"/webhooks/{hook}")).status == 404


async def test_registration_refuses_the_ssrf_table_and_invalid_bodies(hooks):
    ws = await hooks.workspace()
    forms = [u for u in REFUSED if ".example" not in u]
    assert len(forms) >= 40
    for url in forms:
        r = await ws.client.post("/webhooks", {"url": url})
        assert r.status == 400, (url, r.body)
        assert r.error["code"] in ("destination_refused", "validation_error"), (url, r.body)
    for body in ({"url": "https://127.0.0.20/", "events": ["job.failed", "job.failed"]},
                 {"url": "https://127.0.0.20/", "events": ["job.finished"]},
                 {"url": "https://127.0.0.20/", "secret": "mine"},
                 {"events": ["job.failed"]}):
        r = await ws.client.post("/webhooks", body)
        assert r.status == 400 and r.error["code"] == "validation_error", (body, r.body)
    assert (await ws.client.get("/webhooks")).data == []


# The per-job webhook_url forms of the black-box probe, and more: each is 400 destination_refused
# at request time (the pattern of the body may refuse a few first: 400 validation_error).
JOB_URLS_REFUSED = [
    "https://127.0.0.1:18443/job", "https://169.254.169.254/latest/meta-data/", "https://evil@127.0.0.1/",
    "https://[::1]:18444/", "https://user:pass@127.0.0.20/", "https://2130706433/", "https://0x7f000001/",
    "https://127.1/", "https://[::ffff:127.0.0.1]/", "https://localhost/", "https://metadata.google.internal/",
    "https://10.0.0.7/", "https://[fd00:ec2::254]/", "https://100.100.100.200/",
]


async def test_a_job_webhook_url_is_guarded_when_the_request_arrives(hooks, tmp_path):
    from tests.media_factory import run
    from tests.support.api_videos import upload

    ws = await hooks.workspace()
    clip = tmp_path / "tone.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000:duration=2",
         "-c:a", "aac", str(clip)])
    status, body = await upload(ws.client, clip)
    assert status == 201, body
    video = body["data"]["id"]
    for url in JOB_URLS_REFUSED:
        r = await ws.client.post(f"/videos/{video}/analyze", {"outputs": {"article": False}, "webhook_url": url})
        assert r.status == 400, (url, r.body)
        assert r.error["code"] in ("destination_refused", "validation_error"), (url, r.body)
        if r.error["code"] == "destination_refused":
            assert r.error["details"]["field"] == "webhook_url" and r.error["details"]["reason"], r.body
    for url in JOB_URLS_REFUSED[:4]:  # the probe's own four reach the guard itself
        r = await ws.client.post(f"/videos/{video}/analyze", {"webhook_url": url})
        assert r.error["code"] == "destination_refused", (url, r.body)
    jobs = await ws.client.get("/jobs")
    assert jobs.data == []  # nothing was queued, nothing charged
    allowed = await ws.client.post(f"/videos/{video}/analyze", {"outputs": {"article": False},
                                                                "webhook_url": "https://127.0.0.21:9/job"})
    assert allowed.status == 202, allowed.body  # the test network the processes allow


async def test_the_job_secret_is_per_environment_and_rotates_without_writing_it_anywhere(hooks):
    ws = await hooks.workspace()
    sandbox = hooks.client(await hooks.key(ws, ["webhooks:admin"], environment="sandbox"))
    production = await ws.client.get("/webhooks/job-secret")
    sandboxed = await sandbox.get("/webhooks/job-secret")
    assert production.status == 200 and sandboxed.status == 200, (production.body, sandboxed.body)
    assert production.data["secret"].startswith("whsec_") and sandboxed.data["secret"].startswith("whsec_")
    assert production.data["secret"] != sandboxed.data["secret"]  # a sandbox key cannot sign for production
    assert (production.data["environment"], sandboxed.data["environment"]) == ("production", "sandbox")
    assert production.data["version"] == 1 and production.data["previous_version"] is None

    rotated = await sandbox.post("/webhooks/job-secret/rotate")
    assert rotated.status == 200, rotated.body
    assert rotated.body["_warning"]
    assert rotated.data["version"] == 2 and rotated.data["previous_version"] == 1
    assert rotated.data["secret"] not in (sandboxed.data["secret"], production.data["secret"])
    valid_until = datetime.fromisoformat(rotated.data["previous_valid_until"].replace("Z", "+00:00"))
    assert timedelta(hours=23, minutes=59) < valid_until - datetime.now(UTC) <= timedelta(hours=24)
    assert (await sandbox.get("/webhooks/job-secret")).data["secret"] == rotated.data["secret"]
    assert (await ws.client.get("/webhooks/job-secret")).data == production.data  # production untouched
    async with hooks.pool.acquire() as conn:
        stored = await conn.fetch("SELECT data::text AS data FROM events WHERE workspace_id = $1", ws.id)
    text = " ".join(r["data"] for r in stored)
    for secret in (rotated.data["secret"], sandboxed.data["secret"], production.data["secret"]):
        assert secret[6:] not in text
    for log in hooks.logs.iterdir():
        content = log.read_text(errors="replace")
        assert rotated.data["secret"][6:] not in content and production.data["secret"][6:] not in content


async def _test_events(pool, hook_id: str) -> list[dict]:
    async with pool.acquire() as conn:
        return [r["data"] for r in await conn.fetch("SELECT data FROM events WHERE stream_id = $1 AND type = $2 "
                                                    "ORDER BY version", uuid.UUID(hook_id), "WebhookTestSent")]


async def test_test_endpoint_signs_and_reports_and_gives_up_at_ten_seconds(hooks):
    ws = await hooks.workspace()
    fast = await Receiver(hooks.ca, "127.0.0.22").start()
    slow = await Receiver(hooks.ca, "127.0.0.23", delay_s=11).start()
    try:
        first = await ws.client.post("/webhooks", {"url": fast.url()})
        answered = await ws.client.post(f"/webhooks/{first.data['id']}/test")
        assert answered.status == 200 and answered.data["delivered"] is True, answered.body
        assert answered.data["status_code"] == 200
        assert verify(first.data["secret"], fast.hits[0])["type"] == "webhook.test"
        assert fast.hits[0].headers["webhook-id"] == answered.data["id"]
        created = await ws.client.post("/webhooks", {"url": slow.url()})
        started = time.monotonic()
        r = await ws.client.post(f"/webhooks/{created.data['id']}/test")
        elapsed = time.monotonic() - started
        assert r.status == 200 and r.data["delivered"] is False and r.data["status_code"] is None
        # The attempt stops at 10 s, before the receiver's answer at 11 s (so it is not delivered); no
        # upper bound on the time: on a busy machine the round trip around it takes what it takes.
        assert "timed out" in r.data["error"] and elapsed >= 9.5, (elapsed, r.body)
        # Each test is recorded, as answered, on the webhook's stream (WebhookTestSent); never the secret.
        [timed_out] = await _test_events(hooks.pool, created.data["id"])
        assert timed_out == {"message_id": r.data["id"], "signed_at": timed_out["signed_at"], "delivered": False,
                             "status_code": None, "latency_ms": r.data["latency_ms"], "error": r.data["error"]}
        assert abs(timed_out["signed_at"] - time.time()) < 60
        [delivered] = await _test_events(hooks.pool, first.data["id"])
        assert delivered == {"message_id": answered.data["id"], "signed_at": int(fast.hits[0].headers[
            "webhook-timestamp"]), "delivered": True, "status_code": 200, "latency_ms": answered.data["latency_ms"],
            "error": None}
        assert first.data["secret"] not in str(delivered) and first.data["secret"][6:] not in str(delivered)
    finally:
        await fast.stop()
        await slow.stop()


async def test_deliveries_read_model_and_resend_after_exhaustion(hooks):
    ws = await hooks.workspace()
    failing = {"on": True}
    receiver = await Receiver(hooks.ca, "127.0.0.21", answer=lambda n: 500 if failing["on"] else 200).start()
    try:
        created = await ws.client.post("/webhooks", {"url": receiver.url(), "events": ["job.completed"]})
        hook = created.data["id"]
        await end_job(hooks.store, ws.id)
        await wait_until(lambda: len(receiver.hits) >= 3, what="three attempts")
        deadline = time.monotonic() + 20
        while True:
            data = await _deliveries(ws.client, hook)
            if data and data[0]["status"] == "exhausted" or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.1)
        assert len(data) == 1 and data[0]["status"] == "exhausted" and data[0]["event"] == "job.completed"
        assert [a["status_code"] for a in data[0]["attempts"]] == [500, 500, 500]
        failing["on"] = False
        r = await ws.client.post(f"/webhooks/{hook}/deliveries/{data[0]['id']}/resend")
        assert r.status == 202, r.body
        await wait_until(lambda: len(receiver.hits) >= 4, what="the resent attempt")
        assert {h.headers["webhook-id"] for h in receiver.hits} == {data[0]["id"]}
        again = await ws.client.post(f"/webhooks/{hook}/deliveries/{data[0]['id']}/resend")
        deadline = time.monotonic() + 20
        while (await _deliveries(ws.client, hook))[0]["status"] != "succeeded":
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        assert again.status in (202, 409)
    finally:
        await receiver.stop()


async def test_a_deleted_webhook_s_pending_retries_end_cancelled_and_its_deliveries_say_why(hooks):
    """A 429 with Retry-After: 600 parks the delivery for ten minutes; deleting the webhook ends
    it at once, with an event, and GET .../deliveries (still readable) shows how and why."""
    ws = await hooks.workspace()
    receiver = await Receiver(hooks.ca, "127.0.0.22", answer=lambda n: (429, {"Retry-After": "600"})).start()
    try:
        created = await ws.client.post("/webhooks", {"url": receiver.url(), "events": ["job.failed"]})
        hook = created.data["id"]
        await end_job(hooks.store, ws.id, fail=True)
        deadline = time.monotonic() + 20
        while not ((data := await _deliveries(ws.client, hook)) and data[0]["attempts"]
                   and data[0]["attempts"][0]["status_code"] == 429):
            assert time.monotonic() < deadline, data
            await asyncio.sleep(0.1)
        assert data[0]["status"] == "pending" and data[0]["reason"] is None
        assert (await ws.client.delete(f"/webhooks/{hook}")).status == 200
        deadline = time.monotonic() + 20
        while (data := await _deliveries(ws.client, hook))[0]["status"] == "pending":
            assert time.monotonic() < deadline, data
            await asyncio.sleep(0.1)
        assert len(data) == 1 and data[0]["status"] == "cancelled" and data[0]["reason"] == "webhook deleted"
        assert data[0]["next_attempt_at"] is None and [a["status_code"] for a in data[0]["attempts"]] == [429]
        assert len(receiver.hits) == 1
        async with hooks.pool.acquire() as conn:
            types = [r["type"] for r in await conn.fetch(
                "SELECT type FROM events WHERE stream_id = $1 ORDER BY version", uuid.UUID(data[0]["id"]))]
        assert types == ["WebhookDeliveryScheduled", "WebhookDeliveryAttempted", "WebhookDeliveryFailed",
                         "WebhookDeliveryCancelled"]
    finally:
        await receiver.stop()


async def test_a_cancelled_job_notifies_its_webhook_url_and_its_webhooks_with_the_job_as_get_shows_it(hooks):
    """DELETE /jobs/{id} ends the job: its webhook_url and the webhooks subscribed to job.failed get
    job.failed (the interface has no job.cancelled) whose data is the job GET /jobs/{id} answers."""
    ws = await hooks.workspace()
    receiver = await Receiver(hooks.ca, "127.0.0.23").start()
    try:
        created = await ws.client.post("/webhooks", {"url": receiver.url("/hook"), "events": ["job.failed"]})
        assert created.status == 201, created.body
        job_secret = (await ws.client.get("/webhooks/job-secret")).data["secret"]
        job, _ = await handle(hooks.store, QueueJob(ws.id, job_type="e2e_idle", webhook_url=receiver.url("/job")))
        cancelled = await ws.client.delete(f"/jobs/{job.id}")
        assert cancelled.status == 200 and cancelled.data["status"] == "cancelled", cancelled.body
        await wait_until(lambda: len(receiver.hits) >= 2, what="the cancellation's two deliveries")
        by_path = {h.path: h for h in receiver.hits}
        assert sorted(by_path) == ["/hook", "/job"]
        to_url, to_hook = verify(job_secret, by_path["/job"]), verify(created.data["secret"], by_path["/hook"])
        assert to_url["type"] == to_hook["type"] == "job.failed" and to_url["data"] == to_hook["data"]
        shown = (await ws.client.get(f"/jobs/{job.id}")).data
        data = to_url["data"]
        assert data["environment"] == "production" and data["urls_expire_at"] is None
        assert {k: data[k] for k in shown if k != "created_at"} == {k: v for k, v in shown.items() if k != "created_at"}
        assert datetime.fromisoformat(data["created_at"]) == datetime.fromisoformat(shown["created_at"])
        assert (data["status"], data["step"]) == ("cancelled", "cancelled")
    finally:
        await receiver.stop()


async def test_kill_9_of_a_dispatcher_during_deliveries_loses_none(hooks):
    """Two dispatchers share the work; one is killed with SIGKILL mid-way and started again."""
    ws = await hooks.workspace()
    receiver = await Receiver(hooks.ca, "127.0.0.20").start()
    second = spawn("dispatcher", hooks.env, hooks.logs, label="dispatcher2")
    try:
        created = await ws.client.post("/webhooks", {"url": receiver.url(), "events": ["job.completed"]})
        assert created.status == 201
        sem = asyncio.Semaphore(32)

        async def one() -> uuid.UUID:
            async with sem:
                return await end_job(hooks.store, ws.id)

        producing = asyncio.ensure_future(asyncio.gather(*(one() for _ in range(KILL_DELIVERIES))))
        await wait_until(lambda: len(receiver.hits) >= KILL_DELIVERIES // 4, what="a quarter delivered")
        victim = hooks.procs["dispatcher"]
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait()
        at_kill = len(receiver.hits)
        jobs = await producing
        hooks.procs["dispatcher"] = spawn("dispatcher", hooks.env, hooks.logs, label="dispatcher-restarted")
        assert at_kill < KILL_DELIVERIES
        await wait_until(lambda: len({h.headers["webhook-id"] for h in receiver.hits}) >= KILL_DELIVERIES,
                         timeout=60, what="every delivery")
        got = {orjson_job(h) for h in receiver.hits}
        assert got == {str(j) for j in jobs}
        duplicates = len(receiver.hits) - KILL_DELIVERIES
        # At most what the killed process had sent and not recorded: its attempts on the wire and
        # those waiting for their record (two workers per connection: services/processes/dispatcher/sender.py).
        assert duplicates <= 2 * CONCURRENCY, duplicates
        async with hooks.pool.acquire() as conn:
            statuses = dict(await conn.fetch("SELECT status, count(*) FROM webhook_deliveries d "
                                             "WHERE webhook_id = $1 GROUP BY status", uuid.UUID(created.data["id"])))
        assert statuses.get("succeeded", 0) + statuses.get("sending", 0) + statuses.get("pending", 0) \
            == KILL_DELIVERIES
    finally:
        stop_all({"dispatcher2": second})
        await receiver.stop()


def orjson_job(hit) -> str:
    import orjson

    return orjson.loads(hit.body)["data"]["id"]
