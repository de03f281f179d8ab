"""The dispatcher on the real servers: relay -> Kafka -> intake -> sender -> a real HTTPS receiver.

Receivers are aiohttp servers on 127.0.0.x with a certificate from a test CA that the dispatcher
trusts through ``webhook_extra_ca_file``; 127.0.0.x is reachable only through the test
allowance. The retry schedule is compressed through settings. Helpers here (``TestCA``,
``Receiver``, ``Canary``) are shared with tests/e2e/test_webhooks.py.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import socket
import time
import uuid

import orjson
import pytest
from standardwebhooks.webhooks import Webhook as StandardVerifier
from standardwebhooks.webhooks import WebhookVerificationError

from domain.videos import Video, video_stream_id
from infra.codec import NewEvent
from infra.eventstore import EventStore
from infra.netguard import Vetted, parse_destination
from infra.webhook_http import WebhookClient, job_notification_secret
from services.application.jobs import CancelJob, QueueJob
from services.application.webhooks import DeleteWebhook
from services.application.workspaces import CreateWorkspace, RotateJobSecret
from services.processes.dispatcher import run_dispatcher
from services.processes.dispatcher.intake import NAME
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from tests.helpers import handle, wait_projected
from tests.support.webhooks import (
    Hit,
    Receiver,
    TestCA,
    _register,
    end_job,
    verify,
    wait_dispatched,
    wait_until,
    webhook_settings,
)

# ------------------------------------------------------------------------------ test helpers


class Canary:
    """A TCP listener on an address that must never be contacted; counts connections."""

    def __init__(self, address: str, port: int = 0) -> None:
        self.address, self.port, self.connections = address, port, 0

    async def start(self) -> Canary:
        async def seen(reader, writer):
            self.connections += 1
            writer.close()

        self._server = await asyncio.start_server(seen, self.address, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        self._server.close()
        await self._server.wait_closed()


class ControlledResolver:
    """DNS the test controls: each name answers from its list of answers, one per lookup (the last repeats)."""

    def __init__(self, answers: dict[str, list[list[str]]]) -> None:
        self.answers = answers
        self.lookups: dict[str, int] = {}

    async def resolve(self, host: str, port: int) -> list[str]:
        if host not in self.answers:
            raise OSError("NXDOMAIN")
        n = self.lookups.get(host, 0)
        self.lookups[host] = n + 1
        seq = self.answers[host]
        return seq[min(n, len(seq) - 1)]


def assert_one_byte_change_fails(secret: str, hit: Hit) -> None:
    tampered = bytearray(hit.body)
    tampered[len(tampered) // 2] ^= 0x01
    with pytest.raises(WebhookVerificationError):
        StandardVerifier(secret).verify(bytes(tampered), hit.headers)
    expected = "sha256=" + hmac.new(secret.encode(), bytes(tampered), hashlib.sha256).hexdigest()
    assert expected != hit.headers["X-Service-Signature"]


@pytest.fixture
def ca(tmp_path) -> TestCA:
    return TestCA(tmp_path)


async def _delivery_events(pool, delivery_id) -> list[str]:
    async with pool.acquire() as conn:
        return [r["type"] for r in await conn.fetch("SELECT type FROM events WHERE stream_id = $1 ORDER BY version",
                                                    delivery_id)]


# ------------------------------------------------------------------------------------ tests


async def test_subscribed_events_arrive_once_signed_both_ways_unsubscribed_and_deleted_get_nothing(
        settings, store, pool, background, ca):
    settings = webhook_settings(settings, ca)
    everything, failures_only, deleted = (await Receiver(ca, "127.0.0.2").start(),
                                          await Receiver(ca, "127.0.0.3").start(),
                                          await Receiver(ca, "127.0.0.4").start())
    other_ws_receiver = await Receiver(ca, "127.0.0.5").start()
    ws, other = uuid.uuid4(), uuid.uuid4()
    hook_all, secret_all = await _register(store, settings, ws, everything.url(), ["job.completed", "job.failed"])
    _, secret_failed = await _register(store, settings, ws, failures_only.url(), ["job.failed"])
    hook_deleted, _ = await _register(store, settings, ws, deleted.url())
    await handle(store, DeleteWebhook(ws, webhook_id=hook_deleted, environment="production"))
    await _register(store, settings, other, other_ws_receiver.url())
    sandbox_hook, _ = await _register(store, settings, ws, deleted.url(), environment="sandbox")
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    completed = [await end_job(store, ws) for _ in range(3)]
    failed = [await end_job(store, ws, fail=True) for _ in range(2)]
    await wait_dispatched(settings, pool)

    assert len(everything.hits) == 5 and len(failures_only.hits) == 2
    assert deleted.hits == [] and other_ws_receiver.hits == []
    ids = [h.headers["webhook-id"] for h in everything.hits]
    assert len(set(ids)) == 5  # once per delivery id
    for hit in everything.hits:
        body = verify(secret_all, hit)
        assert body["id"] == hit.headers["webhook-id"] and body["workspace_id"] == str(ws)
        assert set(body) == {"id", "type", "created_at", "workspace_id", "data"}
        assert_one_byte_change_fails(secret_all, hit)
    by_type = {}
    for b in everything.bodies():
        by_type.setdefault(b["type"], set()).add(b["data"]["id"])
    assert by_type == {"job.completed": {str(j) for j in completed}, "job.failed": {str(j) for j in failed}}
    for hit in failures_only.hits:
        assert verify(secret_failed, hit)["type"] == "job.failed"
        with pytest.raises(WebhookVerificationError):
            StandardVerifier(secret_all).verify(hit.body, hit.headers)
    assert sandbox_hook  # a sandbox webhook never receives production jobs' events (checked by `deleted`)
    # Every attempt is on the delivery's own stream.
    assert await _delivery_events(pool, uuid.UUID(ids[0])) == [
        "WebhookDeliveryScheduled", "WebhookDeliveryAttempted", "WebhookDelivered"]
    for r in (everything, failures_only, deleted, other_ws_receiver):
        await r.stop()


async def test_a_job_webhook_url_gets_its_end_signed_with_the_workspace_job_secret(settings, store, pool, background,
                                                                                   ca):
    settings = webhook_settings(settings, ca)
    receiver = await Receiver(ca, "127.0.0.6").start()
    ws = uuid.uuid4()
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    job = await end_job(store, ws, webhook_url=receiver.url("/job-callback"))
    await end_job(store, ws)  # no webhook_url: nothing
    # A cancelled job's end is notified too: job.failed (the interface has no job.cancelled), status cancelled.
    cancelled, _ = await handle(store, QueueJob(ws, job_type="analyze", environment="production",
                                                webhook_url=receiver.url("/cancelled")))
    cancelled.start(1, "test")
    cancelled.report_progress(35, "transcribing")
    await store.save(events=store.registry.to_new_events(cancelled.collect_events(), workspace_id=ws))
    await handle(store, CancelJob(ws, cancelled.id))
    await wait_dispatched(settings, pool)
    assert sorted(h.path for h in receiver.hits) == ["/cancelled", "/job-callback"]
    secret = job_notification_secret(settings.secret_key, ws, "production")
    bodies = {b["data"]["id"]: b for b in (verify(secret, hit) for hit in receiver.hits)}
    done, ended = bodies[str(job)], bodies[str(cancelled.id)]
    assert done["type"] == "job.completed" and done["data"]["status"] == "completed"
    assert (done["data"]["type"], done["data"]["result"], done["data"]["article_id"]) == ("analyze", {"ok": True}, 3)
    assert ended["type"] == "job.failed"
    assert {k: ended["data"][k] for k in ("status", "step", "progress", "error_message", "type")} == {
        "status": "cancelled", "step": "cancelled", "progress": 35, "error_message": None, "type": "analyze"}
    assert ended["data"]["created_at"] is not None
    await receiver.stop()


async def test_job_urls_are_signed_per_environment_and_a_rotation_signs_with_both_during_its_grace(
        settings, store, pool, background, ca):
    settings = webhook_settings(settings, ca)
    production, sandbox = await Receiver(ca, "127.0.0.13").start(), await Receiver(ca, "127.0.0.14").start()
    ws, _ = await handle(store, CreateWorkspace(name="ws", plan="pro", credits=100, rate_limit=100))
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    await end_job(store, ws, webhook_url=production.url("/job"))
    await end_job(store, ws, webhook_url=sandbox.url("/job"), environment="sandbox")
    await wait_until(lambda: len(production.hits) == 1 and len(sandbox.hits) == 1, what="both environments' ends")
    v1 = {env: job_notification_secret(settings.secret_key, ws, env) for env in ("production", "sandbox")}
    verify(v1["production"], production.hits[0])
    verify(v1["sandbox"], sandbox.hits[0])
    with pytest.raises(WebhookVerificationError):  # a sandbox secret cannot stand for production
        StandardVerifier(v1["sandbox"]).verify(production.hits[0].body, production.hits[0].headers)
    with pytest.raises(WebhookVerificationError):
        StandardVerifier(v1["production"]).verify(sandbox.hits[0].body, sandbox.hits[0].headers)

    grace_s = 2.0
    versions, _ = await handle(store, RotateJobSecret(ws, "production"), job_secret_grace_s=grace_s,
                               clock=settings.now)
    rotated_at = time.monotonic()
    assert (versions.current, versions.previous) == (2, 1)
    v2 = job_notification_secret(settings.secret_key, ws, "production", 2)
    await end_job(store, ws, webhook_url=production.url("/job"))  # after the rotation on the log
    await end_job(store, ws, webhook_url=sandbox.url("/job"), environment="sandbox")
    await wait_until(lambda: len(production.hits) == 2 and len(sandbox.hits) == 2, what="the ends after rotation")
    assert time.monotonic() - rotated_at < grace_s, "too slow to observe the grace period"
    during = production.hits[1]
    assert len(during.headers["webhook-signature"].split(" ")) == 2
    verify(v2, during)  # the interface's header and Standard Webhooks with the new secret
    StandardVerifier(v1["production"]).verify(during.body, during.headers)  # and the old one, in its grace
    verify(v1["sandbox"], sandbox.hits[1])  # the sandbox secret did not move
    assert len(sandbox.hits[1].headers["webhook-signature"].split(" ")) == 1

    await asyncio.sleep(max(0.0, grace_s - (time.monotonic() - rotated_at)) + 0.2)
    await end_job(store, ws, webhook_url=production.url("/job"))
    await wait_until(lambda: len(production.hits) == 3, what="the end after the grace period")
    after = production.hits[2]
    verify(v2, after)
    with pytest.raises(WebhookVerificationError):  # the grace is over: only the new secret verifies
        StandardVerifier(v1["production"]).verify(after.body, after.headers)
    async with pool.acquire() as conn:
        logged = await conn.fetch("SELECT data::text FROM events WHERE type = 'JobSecretRotated'")
    assert len(logged) == 1 and all(secret[6:] not in logged[0][0] for secret in (v2, v1["production"]))
    for r in (production, sandbox):
        await r.stop()


async def _analyzed_video(store: EventStore, workspace_id, video_id: int, environment: str) -> uuid.UUID:
    """A video uploaded and analysed in ``environment``, as the worker records it."""
    job, _ = await handle(store, QueueJob(workspace_id, job_type="analyze_video", environment=environment))
    video = Video.upload(video_id=video_id, workspace_id=workspace_id, environment=environment, name="v",
                         storage_key="k", size_bytes=1, duration_ms=1000)
    video.record_analysis(job_id=job.id, graph={}, analysis_mode="standard", article_id=None)
    await store.save(events=store.registry.to_new_events(video.collect_events(), workspace_id=workspace_id))
    return job.id


async def test_video_analyzed_reaches_only_the_webhooks_of_its_environment_and_an_unknown_one_reaches_none(
        settings, store, pool, background, ca):
    settings = webhook_settings(settings, ca)
    production, sandbox = await Receiver(ca, "127.0.0.15").start(), await Receiver(ca, "127.0.0.16").start()
    ws = uuid.uuid4()
    await _register(store, settings, ws, production.url(), ["video.analyzed"])
    await _register(store, settings, ws, sandbox.url(), ["video.analyzed"], environment="sandbox")
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    base = 900_000 + int(time.time() * 1000) % 90_000
    production_job = await _analyzed_video(store, ws, base, "production")
    sandbox_job = await _analyzed_video(store, ws, base + 1, "sandbox")
    # Written before VideoAnalyzed carried its environment (schema 1), by a job the log knows: upcast,
    # then derived from the job's JobQueued (sandbox).
    old_job, _ = await handle(store, QueueJob(ws, job_type="analyze_video", environment="sandbox"))
    # ... and one whose job the dispatcher never saw: its environment cannot be told.
    orphan_job = uuid.uuid4()
    for n, job_id in enumerate((old_job.id, orphan_job), start=2):
        stream = video_stream_id(base + n)
        await store.save(events=[NewEvent(stream, "Video", 1, ws, "VideoAnalyzed", 1,
                                     {"job_id": str(job_id), "analysis_mode": "standard", "article_id": None,
                                      "geo_readiness_score": 0.1, "counts": {}})])
    await wait_dispatched(settings, pool)

    assert [b["data"]["job_id"] for b in production.bodies()] == [str(production_job)]
    assert sorted(b["data"]["job_id"] for b in sandbox.bodies()) == sorted([str(sandbox_job), str(old_job.id)])
    assert {b["data"]["environment"] for b in production.bodies()} == {"production"}
    assert {b["data"]["environment"] for b in sandbox.bodies()} == {"sandbox"}
    async with pool.acquire() as conn:
        unrouted = await conn.fetch("SELECT event_type, workspace_id FROM webhook_unrouted")
    assert [(r["event_type"], r["workspace_id"]) for r in unrouted] == [("VideoAnalyzed", ws)]
    for r in (production, sandbox):
        await r.stop()


async def test_500_five_times_then_200_keeps_the_schedule_and_the_delivery_id(settings, store, pool, background, ca):
    schedule = [0, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    settings = webhook_settings(settings, ca, webhook_retry_schedule_s=schedule, webhook_retry_jitter=0.1)
    receiver = await Receiver(ca, "127.0.0.7", answer=lambda n: 500 if n < 5 else 200).start()
    ws = uuid.uuid4()
    _, secret = await _register(store, settings, ws, receiver.url(), ["job.failed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    await end_job(store, ws, fail=True)
    await wait_until(lambda: len(receiver.hits) >= 6, what="six attempts")
    await wait_dispatched(settings, pool)
    assert len(receiver.hits) == 6
    assert len({h.headers["webhook-id"] for h in receiver.hits}) == 1
    assert len({h.headers["webhook-signature"] for h in receiver.hits}) >= 2  # signed afresh (timestamps move)
    for k in range(1, 6):
        gap = receiver.hits[k].at - receiver.hits[k - 1].at
        assert schedule[k] * 0.9 - 0.02 <= gap <= schedule[k] * 1.1 + 0.4, (k, gap)
        verify(secret, receiver.hits[k])
    delivery = uuid.UUID(receiver.hits[0].headers["webhook-id"])
    types = await _delivery_events(pool, delivery)
    assert types.count("WebhookDeliveryAttempted") == 6 and types.count("WebhookDeliveryFailed") == 5
    assert types[-1] == "WebhookDelivered"
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT status, attempts FROM webhook_deliveries WHERE id = $1", delivery)
    assert dict(row) == {"status": "succeeded", "attempts": 6}
    await receiver.stop()


async def test_429_retry_after_is_honoured_and_410_disables_the_webhook(settings, store, pool, background, ca):
    settings = webhook_settings(settings, ca, webhook_retry_schedule_s=[0, 0.1, 0.1, 0.1],
                                webhook_retry_after_max_s=1.5)
    answers = {0: (429, {"Retry-After": "60"}), 1: (410, {})}
    receiver = await Receiver(ca, "127.0.0.8", answer=lambda n: answers.get(n, 200)).start()
    ws = uuid.uuid4()
    hook, _ = await _register(store, settings, ws, receiver.url(), ["job.failed", "job.completed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    await end_job(store, ws, fail=True)
    await wait_until(lambda: len(receiver.hits) >= 2, what="two attempts")
    gap = receiver.hits[1].at - receiver.hits[0].at
    assert 1.4 <= gap <= 2.2, gap  # Retry-After 60 clamped to 1.5 s
    await wait_dispatched(settings, pool)
    async with pool.acquire() as conn:
        types = [r["type"] for r in await conn.fetch("SELECT type FROM events WHERE stream_id = $1 ORDER BY version",
                                                     hook)]
        status = await conn.fetchval("SELECT status FROM webhook_deliveries WHERE webhook_id = $1", hook)
    assert types == ["WebhookRegistered", "WebhookDisabled"] and status == "failed"
    await end_job(store, ws)  # after the 410: nothing more
    await wait_dispatched(settings, pool)
    assert len(receiver.hits) == 2
    await receiver.stop()


async def test_receiver_down_for_a_while_then_up_gets_everything(settings, store, pool, background, ca):
    settings = webhook_settings(settings, ca, webhook_retry_schedule_s=[0, 0.3, 0.5, 0.8, 1, 1, 1, 1, 1, 1])
    with socket.socket() as s:
        s.bind(("127.0.0.9", 0))
        port = s.getsockname()[1]
    ws = uuid.uuid4()
    await _register(store, settings, ws, f"https://127.0.0.9:{port}/hook", ["job.completed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    jobs = [await end_job(store, ws) for _ in range(20)]

    async def failed_attempts() -> int:
        async with pool.acquire() as conn:
            return await conn.fetchval("SELECT count(*) FROM webhook_deliveries WHERE attempts >= 2")

    deadline = time.monotonic() + 30
    while await failed_attempts() < 20:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    receiver = await Receiver(ca, "127.0.0.9", port=port).start()
    await wait_until(lambda: len({h.headers["webhook-id"] for h in receiver.hits}) >= 20, what="all 20")
    await wait_dispatched(settings, pool)
    assert {b["data"]["id"] for b in receiver.bodies()} == {str(j) for j in jobs}
    await receiver.stop()


async def test_send_time_guard_refuses_every_form_and_pins_the_vetted_address_against_rebinding(
        settings, store, pool, background, ca):
    receiver = await Receiver(ca, "127.0.0.10", names=["rebind.test", "late.test"]).start()
    canary4 = await Canary("127.0.0.11").start()
    port = canary4.port
    canary6 = await Canary("::1", port).start()
    settings = webhook_settings(settings, ca, webhook_test_allow="127.0.0.10/32",
                                webhook_retry_schedule_s=[0, 0.3])
    resolver = ControlledResolver({
        # rebinding: checked answer (the receiver), then the canary: the send must use the checked one
        "rebind.test": [["127.0.0.10"], ["127.0.0.11"]],
        # the other way round: first answer refused (no connection), and a refusal is final: no
        # retry is made, although a second lookup would have passed
        "late.test": [["127.0.0.11"], ["127.0.0.10"]],
        "canary.test": [["127.0.0.11"]],
        "canary6.test": [["::1"]],
        "mapped.test": [["::ffff:127.0.0.11"]],
        "mixed.test": [["127.0.0.10", "127.0.0.11"]],
        "metadata.test": [["169.254.169.254"]],
        "private.test": [["10.0.0.7"]],
        "localhost": [["127.0.0.11"]],
        "metadata.google.internal": [["127.0.0.11"]],
    })
    refused = [f"https://{h}:{port}/x" for h in (
        "127.0.0.11", "2130706443", "0x7f00000b", "0177.0.0.013", "127.0.11", "[::1]", "[::ffff:127.0.0.11]",
        "[::ffff:7f00:b]", "[::127.0.0.11]", "[2002:7f00:b::]", "[64:ff9b::7f00:b]", "[::ffff:0:7f00:b]",
        "canary.test", "canary6.test", "mapped.test", "mixed.test", "metadata.test", "private.test", "localhost",
        "metadata.google.internal", "nxdomain.test", "[::]", "0.0.0.0", "169.254.169.254", "[fd00:ec2::254]",
        "100.100.100.200", "10.0.0.7", "192.168.1.1", "172.16.0.1", "100.64.0.1", "198.18.0.1", "240.0.0.1",
        "224.0.0.1", "255.255.255.255", "[fe80::1]", "[fc00::1]", "192.0.0.8",
        "[2001:0:4136:e378:8000:63bf:80ff:fff4]", "instance-data", "api.localhost",
    )]
    assert len(refused) >= 40
    ws = uuid.uuid4()
    for url in refused:  # registered as if they had passed once (the registration guard is bypassed)
        await _register(store, settings, ws, url, ["job.failed"])
    await _register(store, settings, ws, receiver.url(host="rebind.test"), ["job.failed"])
    await _register(store, settings, ws, receiver.url(host="late.test"), ["job.failed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop, resolver=resolver))
    await end_job(store, ws, fail=True)
    await wait_until(lambda: len(receiver.hits) >= 1, what="rebind.test delivered")
    await wait_dispatched(settings, pool)
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT url, status, attempts, last_error FROM webhook_deliveries")
    by_url = {r["url"]: r for r in rows}
    for url in refused:
        r = by_url[url]
        assert r["last_error"].startswith("destination refused"), dict(r)
        if url.startswith("https://nxdomain.test"):  # no answer at all: an outage, retried on the schedule
            assert (r["status"], r["attempts"]) == ("exhausted", 2), dict(r)
        else:  # refused for good at the first attempt
            assert (r["status"], r["attempts"]) == ("failed", 1), dict(r)
    assert by_url[receiver.url(host="rebind.test")]["status"] == "succeeded"
    late = by_url[receiver.url(host="late.test")]
    assert (late["status"], late["attempts"]) == ("failed", 1) and "resolves to" in late["last_error"]
    assert resolver.lookups["rebind.test"] == 1  # one lookup per attempt: none at connection time
    assert resolver.lookups["late.test"] == 1
    assert [h.host.split(":")[0] for h in receiver.hits] == ["rebind.test"]  # Host kept
    assert canary4.connections == 0 and canary6.connections == 0
    for r in (receiver, canary4, canary6):
        await r.stop()


async def test_a_destination_that_becomes_refused_ends_failed_at_once_without_retries(
        settings, store, pool, background, ca):
    """A name that passed the guard at registration and now resolves to a refused address (a
    metadata address): the attempt is not sent, not retried, and the delivery ends failed with the
    guard's reason on its stream; a job's per-request webhook_url the same way."""
    receiver = await Receiver(ca, "127.0.0.12", names=["turned.test"]).start()
    settings = webhook_settings(settings, ca, webhook_test_allow="127.0.0.12/32",
                                webhook_retry_schedule_s=[0, 0.2, 0.2, 0.2, 0.2])
    resolver = ControlledResolver({"turned.test": [["127.0.0.12"], ["169.254.169.254"]]})
    ws = uuid.uuid4()
    hook, _ = await _register(store, settings, ws, receiver.url(host="turned.test"), ["job.completed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop, resolver=resolver))
    await end_job(store, ws)
    await wait_until(lambda: len(receiver.hits) == 1, what="the first delivery, while the name was fine")
    await wait_dispatched(settings, pool)
    await end_job(store, ws)  # the name now resolves to the metadata address
    await end_job(store, ws, webhook_url=receiver.url("/job", host="turned.test"))
    await wait_dispatched(settings, pool)
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT id, webhook_id, status, attempts, last_error FROM webhook_deliveries "
                                "WHERE status <> 'succeeded'")
    assert len(rows) == 3, [dict(r) for r in rows]  # the webhook: jobs 2 and 3; job 3: its webhook_url
    for r in rows:
        assert (r["status"], r["attempts"]) == ("failed", 1), dict(r)
        assert r["last_error"].startswith("destination refused: turned.test resolves to"), dict(r)
        types = await _delivery_events(pool, r["id"])
        assert types == ["WebhookDeliveryScheduled", "WebhookDeliveryAttempted", "WebhookDeliveryFailed"]
    async with pool.acquire() as conn:
        failed = await conn.fetchval("SELECT data FROM events WHERE stream_id = $1 AND type = 'WebhookDeliveryFailed'",
                                     rows[0]["id"])
    failed = orjson.loads(failed) if isinstance(failed, str) else failed
    assert failed["next_attempt_at"] is None and failed["status_code"] is None
    await asyncio.sleep(0.6)  # longer than the whole schedule: still nothing more
    assert len(receiver.hits) == 1 and resolver.lookups["turned.test"] == 1 + len(rows)
    await receiver.stop()


async def test_a_replay_of_the_log_sends_nothing_again(settings, store, pool, background, ca):
    """Deliveries are the dispatcher's own state, named by uuid5: reading the log again (a second
    dispatcher group starting from the beginning, like a rebuild) creates no second delivery."""
    settings = webhook_settings(settings, ca)
    receiver = await Receiver(ca, "127.0.0.12").start()
    ws = uuid.uuid4()
    await _register(store, settings, ws, receiver.url())
    background.start(Relay(settings).run)
    first = asyncio.Event()
    task = asyncio.create_task(run_dispatcher(settings, first))
    for _ in range(5):
        await end_job(store, ws)
    await wait_dispatched(settings, pool)
    first.set()
    await task
    assert len(receiver.hits) == 5
    async with pool.acquire() as conn:  # forget the intake's offsets: it reads the whole log again
        await conn.execute("DELETE FROM projection_offsets WHERE projection = $1", NAME)
    replay = settings.model_copy(update={"dispatcher_group": settings.dispatcher_group + ".replay"})
    background.start(lambda stop: run_dispatcher(replay, stop))
    await wait_dispatched(settings, pool)
    assert len(receiver.hits) == 5
    await receiver.stop()


async def test_pending_retries_of_a_deleted_webhook_end_cancelled_with_an_event(settings, store, pool, background,
                                                                               ca):
    """Retries an hour apart: without the cancellation, the deleted webhook's deliveries would
    stay pending for an hour (and end with no event). Two were attempted once; one never was."""
    settings = webhook_settings(settings, ca, webhook_retry_schedule_s=[0, 3600], webhook_retry_jitter=0.0)
    receiver = await Receiver(ca, "127.0.0.13", answer=lambda n: 500).start()
    ws = uuid.uuid4()
    hook, _ = await _register(store, settings, ws, receiver.url(), ["job.failed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["webhooks"]))
    background.start(lambda stop: run_dispatcher(settings, stop, sender=False))

    async def rows() -> dict:
        async with pool.acquire() as conn:
            return {r["id"]: dict(r) for r in await conn.fetch(
                "SELECT id, status, attempts, last_error FROM webhook_deliveries WHERE webhook_id = $1", hook)}

    async def until(predicate, what: str) -> dict:
        deadline = time.monotonic() + 30
        while not predicate(got := await rows()):
            assert time.monotonic() < deadline, (what, got)
            await asyncio.sleep(0.05)
        return got

    for _ in range(2):
        await end_job(store, ws, fail=True)
    sending = asyncio.Event()
    sender = asyncio.create_task(run_dispatcher(settings, sending, intake=False))
    await until(lambda g: len(g) == 2 and all(r["status"] == "pending" and r["attempts"] == 1 for r in g.values()),
                "two deliveries attempted once, retrying in an hour")
    sending.set()
    await sender
    await end_job(store, ws, fail=True)
    got = await until(lambda g: len(g) == 3, "the third delivery")
    never_sent = {d for d, r in got.items() if r["attempts"] == 0}
    assert len(never_sent) == 1
    await handle(store, DeleteWebhook(ws, webhook_id=hook, environment="production"))
    # The dispatcher learns of the deletion from the log (relay, then its intake); a sender that
    # claims before that sends, like any delivery already due when a webhook is deleted.
    deadline = time.monotonic() + 30
    while True:
        async with pool.acquire() as conn:
            if await conn.fetchval("SELECT status FROM webhook_targets WHERE webhook_id = $1", hook) == "deleted":
                break
        assert time.monotonic() < deadline, "the intake never saw the deletion"
        await asyncio.sleep(0.05)
    background.start(lambda stop: run_dispatcher(settings, stop, intake=False))
    got = await until(lambda g: all(r["status"] not in ("pending", "sending") for r in g.values()),
                      "every delivery ended")

    assert len(receiver.hits) == 2  # nothing was sent after the deletion
    for delivery, row in got.items():
        made = 0 if delivery in never_sent else 1
        assert row == {"id": delivery, "status": "failed", "attempts": made,
                       "last_error": "cancelled: webhook deleted"}, row
        expected = (["WebhookDeliveryScheduled"] if made == 0 else
                    ["WebhookDeliveryScheduled", "WebhookDeliveryAttempted", "WebhookDeliveryFailed"])
        assert await _delivery_events(pool, delivery) == [*expected, "WebhookDeliveryCancelled"]
        async with pool.acquire() as conn:
            data = await conn.fetchval("SELECT data FROM events WHERE stream_id = $1 AND type = $2", delivery,
                                       "WebhookDeliveryCancelled")
        assert data == {"reason": "webhook deleted", "attempts": made}
    # The deliveries read model shows how and why each one ended.
    await wait_projected(settings, pool, ["webhooks"])
    async with pool.acquire() as conn:
        log_rows = await conn.fetch("SELECT id, status, attempts, last_error, next_attempt_at "
                                    "FROM webhook_delivery_log WHERE webhook_id = $1", hook)
    assert {r["id"]: (r["status"], r["attempts"], r["last_error"], r["next_attempt_at"]) for r in log_rows} == {
        d: ("cancelled", 0 if d in never_sent else 1, "webhook deleted", None) for d in got}
    await receiver.stop()


async def test_the_client_sends_to_the_vetted_address_and_reuses_a_connection_only_for_that_address_and_name(ca):
    """Kept-alive connections are pooled per (vetted address, port, server name): when the
    check of the next attempt gives another address, the request goes there, not down the
    connection still open to the first one; another name never rides a connection opened for
    the first one (its certificate was checked for that name only)."""
    first = await Receiver(ca, "127.0.0.14", names=["pool.test", "other.test"], raw=True).start()
    second = await Receiver(ca, "127.0.0.15", names=["pool.test"], port=first.port, raw=True).start()
    pool_test = parse_destination(first.url(host="pool.test"))
    other_test = parse_destination(first.url(host="other.test"))
    async with WebhookClient(extra_ca_file=str(ca.ca_file)) as client:
        for dest, address in ((pool_test, "127.0.0.14"), (pool_test, "127.0.0.14"), (pool_test, "127.0.0.15"),
                              (other_test, "127.0.0.14")):
            outcome = await client.post(Vetted(dest, address, (address,)), b"{}", {})
            assert outcome.status_code == 200, outcome
    assert [h.host for h in first.hits] == [f"pool.test:{first.port}", f"pool.test:{first.port}",
                                            f"other.test:{first.port}"]
    assert [h.host for h in second.hits] == [f"pool.test:{first.port}"]
    assert first.hits[0].peer == first.hits[1].peer  # kept alive for the same address and name
    assert first.hits[2].peer != first.hits[0].peer  # a new connection for the other name
    for r in (first, second):
        await r.stop()


async def test_a_retry_recorded_after_its_webhook_was_deleted_ends_at_once(settings, store, pool, background, ca):
    """The webhook is deleted while an attempt is on the wire: the failed attempt's retry (due in
    an hour) is made due at once when it is recorded, and ends cancelled."""
    settings = webhook_settings(settings, ca, webhook_retry_schedule_s=[0, 3600], webhook_retry_jitter=0.0)
    receiver = await Receiver(ca, "127.0.0.16", answer=lambda n: 500, delay_s=2).start()
    ws = uuid.uuid4()
    hook, _ = await _register(store, settings, ws, receiver.url(), ["job.failed"])
    background.start(Relay(settings).run)
    background.start(lambda stop: run_dispatcher(settings, stop))
    await end_job(store, ws, fail=True)
    await wait_until(lambda: len(receiver.hits) == 1, what="the attempt on the wire")
    await handle(store, DeleteWebhook(ws, webhook_id=hook, environment="production"))
    async with pool.acquire() as conn:
        deadline = time.monotonic() + 10
        while await conn.fetchval("SELECT status FROM webhook_targets WHERE webhook_id = $1", hook) != "deleted":
            assert time.monotonic() < deadline
            await asyncio.sleep(0.02)
        # The intake knows of the deletion while the attempt is still on the wire.
        assert await conn.fetchval("SELECT status FROM webhook_deliveries WHERE webhook_id = $1", hook) == "sending"
        deadline = time.monotonic() + 15
        while (row := await conn.fetchrow("SELECT id, status, last_error FROM webhook_deliveries "
                                          "WHERE webhook_id = $1", hook))["status"] != "failed":
            assert time.monotonic() < deadline, dict(row)
            await asyncio.sleep(0.05)
    assert row["last_error"] == "cancelled: webhook deleted" and len(receiver.hits) == 1
    assert await _delivery_events(pool, row["id"]) == [
        "WebhookDeliveryScheduled", "WebhookDeliveryAttempted", "WebhookDeliveryFailed", "WebhookDeliveryCancelled"]
    await receiver.stop()
