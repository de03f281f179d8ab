"""Webhooks, pure: signatures (checked by the independent ``standardwebhooks`` verifier), ids,
the event mapping, the intake plan, the retry schedule, the aggregates."""

from __future__ import annotations

import hashlib
import hmac
import random
import uuid
from datetime import UTC, datetime, timedelta

import orjson
import pytest
from standardwebhooks.webhooks import Webhook as StandardVerifier
from standardwebhooks.webhooks import WebhookVerificationError

from domain.base import DomainError, InvalidTransition
from domain.webhook_payloads import EVENT_FOR, EVENT_NAMES
from domain.webhooks import (
    Webhook,
    WebhookDelivery,
    WebhookError,
    attempt_events,
    cancel_events,
    delivery_id,
    next_delay,
)
from domain.workspaces import Workspace
from infra.codec import EventRegistry, StoredEvent
from infra.crypto import SecretBox
from infra.webhook_http import job_notification_secret, new_webhook_secret, parse_retry_after, signature_headers
from services.processes.dispatcher.intake import plan_intake

NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def _verify_service_signature(secret: str, body: bytes, header: str) -> bool:
    """What the docs tell receivers to do for X-Service-Signature."""
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header)


def test_both_signatures_verify_and_a_one_byte_change_fails_both():
    secret = new_webhook_secret()
    assert secret.startswith("whsec_")
    body = orjson.dumps({"id": "d1", "type": "job.completed", "data": {"job_id": "x"}})
    headers = signature_headers(secret, "d1", body)
    assert StandardVerifier(secret).verify(body, headers) == orjson.loads(body)
    assert _verify_service_signature(secret, body, headers["X-Service-Signature"])
    tampered = body.replace(b"x", b"y", 1)
    assert len(tampered) == len(body) and tampered != body
    with pytest.raises(WebhookVerificationError):
        StandardVerifier(secret).verify(tampered, headers)
    assert not _verify_service_signature(secret, tampered, headers["X-Service-Signature"])
    with pytest.raises(WebhookVerificationError):  # another secret
        StandardVerifier(new_webhook_secret()).verify(body, headers)


def test_each_attempt_is_signed_afresh_with_its_own_timestamp_and_the_same_id():
    secret = new_webhook_secret()
    body = b'{"a":1}'
    first = signature_headers(secret, "d1", body, timestamp=1_700_000_000)
    second = signature_headers(secret, "d1", body, timestamp=1_700_000_005)
    assert first["webhook-id"] == second["webhook-id"] == "d1"
    assert first["webhook-signature"] != second["webhook-signature"]
    # A replayed old message is refused by the verifier (timestamp tolerance).
    with pytest.raises(WebhookVerificationError, match="too old"):
        StandardVerifier(secret).verify(body, first)


def test_job_notification_secret_is_per_workspace_derived_and_verifiable():
    key = SecretBox.generate_key_hex()
    ws1, ws2 = uuid.uuid4(), uuid.uuid4()
    s1 = job_notification_secret(key, ws1, "production")
    assert s1 == job_notification_secret(key, ws1, "production") != job_notification_secret(key, ws2, "production")
    assert s1 != job_notification_secret(SecretBox.generate_key_hex(), ws1, "production")
    body = b'{"type":"job.completed"}'
    StandardVerifier(s1).verify(body, signature_headers(s1, "d", body))


def test_job_notification_secret_is_per_environment_and_version():
    key = SecretBox.generate_key_hex()
    ws = uuid.uuid4()
    production, sandbox = job_notification_secret(key, ws, "production"), job_notification_secret(key, ws, "sandbox")
    rotated = job_notification_secret(key, ws, "production", 2)
    assert len({production, sandbox, rotated, job_notification_secret(key, ws, "sandbox", 2)}) == 4
    body = b'{"type":"job.completed"}'
    with pytest.raises(WebhookVerificationError):  # a sandbox secret never verifies a production delivery
        StandardVerifier(sandbox).verify(body, signature_headers(production, "d", body))
    with pytest.raises(ValueError):
        job_notification_secret(key, ws, "staging")


def test_a_delivery_in_a_grace_period_verifies_with_either_secret_and_the_spec_header_uses_the_new_one():
    key = SecretBox.generate_key_hex()
    ws = uuid.uuid4()
    old, new = job_notification_secret(key, ws, "production", 1), job_notification_secret(key, ws, "production", 2)
    body = b'{"type":"job.completed"}'
    headers = signature_headers(new, "d", body, also=(old,))
    assert len(headers["webhook-signature"].split(" ")) == 2
    StandardVerifier(new).verify(body, headers)
    StandardVerifier(old).verify(body, headers)
    assert headers["X-Service-Signature"] == "sha256=" + hmac.new(new.encode(), body, hashlib.sha256).hexdigest()
    after = signature_headers(new, "d", body)
    StandardVerifier(new).verify(body, after)
    with pytest.raises(WebhookVerificationError):
        StandardVerifier(old).verify(body, after)


def test_a_rotation_records_the_version_and_the_grace_never_a_secret():
    workspace = Workspace.open(uuid.uuid4(), "ws", "pro", 10, 10)
    workspace.collect_events()
    now = datetime.now(UTC)
    assert workspace.job_secret_versions("sandbox").valid_at(now) == [1]

    first = workspace.rotate_job_secret("sandbox", now=now, grace=timedelta(hours=24))
    assert (first.current, first.previous) == (2, 1)
    assert first.valid_at(now + timedelta(hours=23)) == [2, 1] and first.valid_at(now + timedelta(hours=24)) == [2]
    assert workspace.job_secret_versions("production").valid_at(now) == [1]  # the other environment: untouched
    second = workspace.rotate_job_secret("sandbox", now=now + timedelta(hours=1), grace=timedelta(hours=24))
    assert (second.current, second.previous) == (3, 2)  # version 1 ends with the second rotation
    [ev1, ev2] = workspace.collect_events()
    assert isinstance(ev2, Workspace.JobSecretRotated)
    stored = EventRegistry().to_new_events([ev1, ev2], workspace_id=workspace.id)
    assert [e.data.keys() for e in stored] == [{"environment", "version", "previous_version",
                                                "previous_valid_until"}] * 2
    assert stored[1].data["version"] == 3 and stored[1].data["environment"] == "sandbox"
    with pytest.raises(DomainError):
        workspace.rotate_job_secret("staging", now=now, grace=timedelta(0))


def test_delivery_ids_are_stable_and_distinct_per_target_position_and_name():
    w = uuid.uuid4()
    assert delivery_id(w, 7, "job.completed") == delivery_id(w, 7, "job.completed")
    assert delivery_id(w, 7, "job.completed") != delivery_id(w, 8, "job.completed")
    assert delivery_id(w, 7, "job.completed") != delivery_id(uuid.uuid4(), 7, "job.completed")
    assert delivery_id("https://a.example/x", 7, "job.failed") != delivery_id("https://a.example/x", 7, "job.completed")


def test_a_cancelled_job_is_notified_under_job_failed():
    # the interface has no job.cancelled: a cancellation is the job's end as job.failed
    assert EVENT_FOR["JobCancelled"].name == "job.failed"
    assert EVENT_FOR["ClipRendered"].name == "clip.generated"


def test_schedule_jitter_retry_after_and_exhaustion():
    schedule = [0, 5, 300]
    rng = random.Random(1)
    assert next_delay(schedule, 0, rng=rng) == 0
    d = next_delay(schedule, 1, jitter=0.1, rng=rng)
    assert 4.5 <= d <= 5.5
    assert next_delay(schedule, 3) is None
    # 429 Retry-After: honoured, clamped, never shorter than the schedule or the floor
    assert next_delay(schedule, 1, jitter=0, retry_after=120, retry_after_max=60) == 60
    assert next_delay(schedule, 2, jitter=0, retry_after=10) == 300
    assert next_delay(schedule, 1, jitter=0, retry_after=0, floor=2) == 5
    assert next_delay([0, 0.1], 1, jitter=0, timed_out=True, floor=1) == 1
    now = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)
    assert parse_retry_after("30", now) == 30
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after("Mon, 04 May 2026 12:01:00 GMT", now) == 60


def test_register_checks_events_and_https():
    with pytest.raises(WebhookError):
        Webhook.register(webhook_id=uuid.uuid4(), workspace_id=uuid.uuid4(), environment="production",
                         url="https://a.example", events=["job.done"], secret_encrypted="v1.x")
    with pytest.raises(WebhookError):
        Webhook.register(webhook_id=uuid.uuid4(), workspace_id=uuid.uuid4(), environment="production",
                         url="https://a.example", events=["job.failed", "job.failed"], secret_encrypted="v1.x")
    with pytest.raises(WebhookError):
        Webhook.register(webhook_id=uuid.uuid4(), workspace_id=uuid.uuid4(), environment="production",
                         url="http://a.example", events=None, secret_encrypted="v1.x")
    w = Webhook.register(webhook_id=uuid.uuid4(), workspace_id=uuid.uuid4(), environment="production",
                         url="https://a.example", events=None, secret_encrypted="v1.x")
    assert w.events == list(EVENT_NAMES)
    w.delete()
    with pytest.raises(InvalidTransition):
        w.delete()


def test_delivery_resend_only_after_giving_up():
    d = WebhookDelivery(delivery_id=uuid.uuid4(), workspace_id=uuid.uuid4(), environment="production",
                        webhook_id=uuid.uuid4(), url="https://a.example", event_name="job.failed", source_position=3)
    d.record_attempt(1, 0)
    d.record_failed(1, 500, "HTTP 500", 3.0, datetime.now(UTC), False)
    with pytest.raises(InvalidTransition):
        d.resend("k")
    d.record_attempt(2, 0)
    d.record_failed(2, 500, "HTTP 500", 3.0, None, True)
    assert d.status == "exhausted"
    d.resend("k")
    assert d.status == "pending"


REGISTRY = EventRegistry()


def _stored_form(events, ws) -> list[tuple]:
    return [(e.stream_id, e.version, e.type, e.data) for e in REGISTRY.to_new_events(events, workspace_id=ws)]


@pytest.mark.parametrize(("status_code", "error", "next_at", "exhausted"), [
    (200, None, None, False),
    (500, "HTTP 500 " + "x" * 600, datetime(2026, 1, 1, 12, tzinfo=UTC), False),
    (None, "timed out after 10 s", None, True),
])
def test_the_sender_s_attempt_events_are_the_aggregate_s_without_a_replay(status_code, error, next_at, exhausted):
    ws, hook = uuid.uuid4(), uuid.uuid4()
    scheduled = {"workspace_id": ws, "environment": "production", "webhook_id": hook, "url": "https://a.example",
                 "event_name": "job.failed", "source_position": 7}
    did = delivery_id(hook, 7, "job.failed")
    d = WebhookDelivery(delivery_id=did, **scheduled)
    d.record_attempt(1, 1_700_000_000)
    d.record_failed(1, 500, "HTTP 500", 2.4, datetime(2026, 1, 1, tzinfo=UTC), False)
    d.record_attempt(2, 1_700_000_005)
    if status_code == 200:
        d.record_delivered(2, status_code, 12.6)
    else:
        d.record_failed(2, status_code, error, 12.6, next_at, exhausted)
    by_aggregate = _stored_form(d.collect_events(), ws)
    first = attempt_events(did, 0, scheduled, attempt=1, signed_at=1_700_000_000, status_code=500, latency_ms=2.4,
                           error="HTTP 500", now=NOW, next_attempt_at=datetime(2026, 1, 1, tzinfo=UTC))
    second = attempt_events(did, 3, scheduled, attempt=2, signed_at=1_700_000_005, status_code=status_code,
                            latency_ms=12.6, error=error, now=NOW, next_attempt_at=next_at, exhausted=exhausted)
    assert _stored_form(first + second, ws) == by_aggregate
    replayed = REGISTRY.reconstruct([StoredEvent(i, e.stream_id, e.stream_type, e.version, ws, e.type, 1, e.data,
                                                 {}, datetime.now(UTC))
                                     for i, e in enumerate(REGISTRY.to_new_events(first + second, workspace_id=ws))])
    assert replayed.status == d.status and replayed.attempts == 2


def test_a_cancelled_delivery_ended_unsent_and_cannot_be_resent():
    ws, hook = uuid.uuid4(), uuid.uuid4()
    scheduled = {"workspace_id": ws, "environment": "production", "webhook_id": hook, "url": "https://a.example",
                 "event_name": "job.failed", "source_position": 7}
    did = delivery_id(hook, 7, "job.failed")
    never_sent = _stored_form(cancel_events(did, 0, scheduled, reason="webhook deleted", attempts=0, now=NOW), ws)
    assert [(v, t, d) for _, v, t, d in never_sent] == [
        (1, "WebhookDeliveryScheduled", {"delivery_id": str(did), "workspace_id": str(ws), "environment": "production",
                                         "webhook_id": str(hook), "url": "https://a.example",
                                         "event_name": "job.failed", "source_position": 7}),
        (2, "WebhookDeliveryCancelled", {"reason": "webhook deleted", "attempts": 0})]
    after_one = _stored_form(cancel_events(did, 3, scheduled, reason="webhook disabled", attempts=1, now=NOW), ws)
    assert [(v, t, d) for _, v, t, d in after_one] == [
        (4, "WebhookDeliveryCancelled", {"reason": "webhook disabled", "attempts": 1})]
    d = WebhookDelivery(delivery_id=did, **scheduled)
    d.cancel("webhook deleted", 0)
    assert d.status == "cancelled"
    with pytest.raises(InvalidTransition):
        d.resend("k")


def test_a_test_send_is_recorded_on_the_webhook_stream_without_the_secret():
    secret = new_webhook_secret()
    w = Webhook.register(webhook_id=uuid.uuid4(), workspace_id=uuid.uuid4(), environment="production",
                         url="https://a.example/h", events=None, secret_encrypted=SecretBox(
                             SecretBox.generate_key_hex()).encrypt(secret, "x"))
    w.collect_events()
    message = uuid.uuid4()
    w.record_test(message_id=message, signed_at=1_700_000_000, status_code=503, latency_ms=41.26, error="HTTP 503")
    w.delete()
    w.record_test(message_id=message, signed_at=1_700_000_001, status_code=None, latency_ms=10_000.0,
                  error="timed out after 10 s")  # a test that was under way when the webhook was deleted
    new = REGISTRY.to_new_events(w.collect_events(), workspace_id=w.workspace_id)
    assert [e.type for e in new] == ["WebhookTestSent", "WebhookDeleted", "WebhookTestSent"]
    assert new[0].data == {"message_id": str(message), "signed_at": 1_700_000_000, "delivered": False,
                           "status_code": 503, "latency_ms": 41.3, "error": "HTTP 503"}
    assert new[2].data["error"] == "timed out after 10 s" and new[2].data["status_code"] is None
    assert secret not in str([e.data for e in new]) and secret[6:] not in str([e.data for e in new])


def _ev(position: int, ws: uuid.UUID, type_: str, stream: uuid.UUID, data: dict, stream_type: str = "Job",
        version: int = 1) -> StoredEvent:
    return StoredEvent(position, stream, stream_type, version, ws, type_, 1, data, {}, datetime.now(UTC))


def test_intake_fans_out_to_active_subscribed_targets_of_the_workspace_and_environment():
    ws, other = uuid.uuid4(), uuid.uuid4()
    hook_all, hook_failed, hook_sandbox, hook_other = (uuid.uuid4() for _ in range(4))
    job = uuid.uuid4()

    def reg(pos, hook, events, env="production", w=ws):
        return _ev(pos, w, "WebhookRegistered", hook, {"webhook_id": str(hook), "workspace_id": str(w),
                                                       "environment": env, "url": f"https://h/{pos}",
                                                       "events": events, "secret_encrypted": "v1.x"}, "Webhook")

    events = [
        reg(1, hook_all, list(EVENT_NAMES)),
        reg(2, hook_failed, ["job.failed"]),
        reg(3, hook_sandbox, list(EVENT_NAMES), env="sandbox"),
        reg(4, hook_other, list(EVENT_NAMES), w=other),
        _ev(5, ws, "JobQueued", job, {"job_id": str(job), "workspace_id": str(ws), "environment": "production",
                                      "job_type": "analyze", "params": {}, "max_attempts": 3,
                                      "webhook_url": "https://per-request.example/cb"}),
        _ev(6, ws, "JobCompleted", job, {"result": {}, "article_id": 4}, version=2),
    ]
    plan = plan_intake(events, {}, {})
    got = {(row.webhook_id, row.event) for row in plan.deliveries}
    assert got == {(hook_all, "job.completed"), (None, "job.completed")}
    job_row = next(r for r in plan.deliveries if r.webhook_id is None)
    assert job_row.url == "https://per-request.example/cb"
    body = job_row.payload
    assert body["type"] == "job.completed" and body["data"]["id"] == str(job)
    assert body["data"]["type"] == "analyze" and body["id"] == str(job_row.id)
    assert body["data"]["status"] == "completed" and body["data"]["article_id"] == 4
    # The same events again (a replay) name the same deliveries.
    again = plan_intake(events, {}, {})
    assert [r.id for r in again.deliveries] == [r.id for r in plan.deliveries]


def test_intake_a_deleted_webhook_gets_nothing_after_its_deletion():
    ws, hook, job = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    events = [
        _ev(1, ws, "WebhookRegistered", hook, {"webhook_id": str(hook), "workspace_id": str(ws),
                                               "environment": "production", "url": "https://h",
                                               "events": ["job.failed"], "secret_encrypted": "v1.x"}, "Webhook"),
        _ev(2, ws, "WebhookDeleted", hook, {"reason": "x"}, "Webhook", version=2),
        _ev(3, ws, "JobFailed", job, {"error_message": "boom", "attempts": 1}),
    ]
    assert plan_intake(events, {}, {}).deliveries == []


def _hooks(ws: uuid.UUID) -> tuple[list[StoredEvent], uuid.UUID, uuid.UUID]:
    production, sandbox = uuid.uuid4(), uuid.uuid4()
    regs = [_ev(n, ws, "WebhookRegistered", hook, {"webhook_id": str(hook), "workspace_id": str(ws),
                                                   "environment": env, "url": f"https://h/{env}",
                                                   "events": list(EVENT_NAMES), "secret_encrypted": "v1.x"},
                "Webhook")
            for n, (hook, env) in enumerate(((production, "production"), (sandbox, "sandbox")), start=1)]
    return regs, production, sandbox


def _analyzed(position: int, ws: uuid.UUID, job: uuid.UUID, **extra) -> StoredEvent:
    return _ev(position, ws, "VideoAnalyzed", uuid.uuid4(), {"job_id": str(job), "analysis_mode": "standard",
                                                             "article_id": None, "geo_readiness_score": 0.5,
                                                             "counts": {}, **extra}, "Video", version=3)


def test_intake_delivers_an_event_only_to_its_own_environment_s_webhooks():
    ws, job = uuid.uuid4(), uuid.uuid4()
    regs, production, sandbox = _hooks(ws)
    events = [*regs, _analyzed(10, ws, job, environment="sandbox"), _analyzed(11, ws, job, environment="production"),
              _ev(12, ws, "CreditsLow", ws, {"balance": 1, "total": 10, "remaining_pct": 10.0, "threshold_pct": 20.0,
                                             "crossing_version": 3, "environment": "production"}, "Workspace")]
    plan = plan_intake(events, {}, {})
    got = sorted((row.source_position, row.webhook_id == sandbox, row.environment, row.payload["data"]["environment"])
                 for row in plan.deliveries)
    assert got == [(10, True, "sandbox", "sandbox"), (11, False, "production", "production"),
                   (12, False, "production", "production")]
    assert plan.unrouted == []


def test_intake_derives_an_old_event_s_environment_from_its_job_and_refuses_one_it_cannot_tell():
    ws, job, unknown_job = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    regs, production, sandbox = _hooks(ws)
    registry = EventRegistry()
    old = _analyzed(11, ws, job)  # written as schema 1: no environment; upcast, it says None
    upcast = StoredEvent(old.position, old.stream_id, old.stream_type, old.version, ws, old.type,
                         registry.current_schema("VideoAnalyzed"), registry.upcast("VideoAnalyzed", 1, old.data),
                         {}, old.recorded_at)
    assert upcast.data["environment"] is None
    queued = _ev(10, ws, "JobQueued", job, {"job_id": str(job), "workspace_id": str(ws), "environment": "sandbox",
                                            "job_type": "analyze_video", "params": {}, "max_attempts": 3,
                                            "webhook_url": None})
    orphan = _analyzed(12, ws, unknown_job)
    plan = plan_intake([*regs, queued, upcast, orphan], {}, {})
    # The job said sandbox; the orphan goes to nobody: neither environment.
    assert [(row.source_position, row.webhook_id) for row in plan.deliveries] == [(11, sandbox)]
    assert [(u.source_position, u.event_type) for u in plan.unrouted] == [(12, "VideoAnalyzed")]


def test_old_events_are_upcast_with_the_environment_where_their_type_tells_it():
    registry = EventRegistry()
    low = registry.upcast("CreditsLow", 1, {"balance": 1, "total": 10, "remaining_pct": 10.0, "threshold_pct": 20.0,
                                            "crossing_version": 3})
    assert low["environment"] == "production"  # credits are production's
    for name, data in (("JobCompleted", {"result": {}, "article_id": None}),
                       ("JobFailed", {"error_message": "x", "attempts": 1})):
        assert registry.current_schema(name) == 2 and registry.upcast(name, 1, data)["environment"] is None


def test_the_events_a_webhook_is_delivered_for_carry_their_environment():
    from domain.jobs import Job
    from domain.videos import Video

    ws = uuid.uuid4()
    video = Video.upload(video_id=4, workspace_id=ws, environment="sandbox", name="v", storage_key="k",
                         size_bytes=1, duration_ms=1000)
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="analyze_video", environment="sandbox")
    job.start(1, "w")
    video.record_analysis(job_id=job.id, graph={}, analysis_mode="standard", article_id=None)
    job.complete({})
    failing = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="analyze_video", environment="production")
    failing.fail("boom")
    workspace = Workspace.open(ws, "w", "pro", 10, 10)
    workspace.charge(9, "x")
    workspace.flag_low_credits(20.0, 2)
    stored = EventRegistry().to_new_events([*video.collect_events(), *job.collect_events(),
                                            *failing.collect_events(), *workspace.collect_events()], workspace_id=ws)
    carried = {e.type: e.data["environment"] for e in stored if e.type in EVENT_FOR}
    assert carried == {"VideoUploaded": "sandbox", "VideoAnalyzed": "sandbox", "JobCompleted": "sandbox",
                       "JobFailed": "production", "CreditsLow": "production"}
