"""The event codec: domain events to stored form and back, JSON Schemas, upcasting."""

from __future__ import annotations

import uuid
from dataclasses import fields
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from eventsourcing.domain import Aggregate, event

from domain.agent.conversation import Conversation
from domain.api_keys import ApiKey
from domain.articles import Article, ArticleExport
from domain.base import PUBLISHED
from domain.clips import ClipDetection, ClipRender
from domain.jobs import Job
from domain.llm_usage import LlmUsage
from domain.media import Media
from domain.revival import Candidate, DescriptionCompletion, VideositeExperiment
from domain.videos import Video
from domain.webhooks import Webhook, WebhookDelivery
from domain.workspaces import Workspace
from infra.codec import ENVELOPE_FIELDS, EventRegistry, NewEvent, StoredEvent, UnknownEventType

WORKSPACE = uuid.UUID("44444444-4444-4444-8444-444444444444")
RECORDED = datetime(2026, 3, 1, 9, 30, 15, 123456, tzinfo=UTC)


@pytest.fixture
def registry() -> EventRegistry:
    return EventRegistry()


def stored(new: list[NewEvent], first_position: int = 1) -> list[StoredEvent]:
    """What the store commits and Kafka carries, read back from its JSON form."""
    return [
        StoredEvent.from_json(StoredEvent(
            position=first_position + i, stream_id=e.stream_id, stream_type=e.stream_type, version=e.version,
            workspace_id=e.workspace_id, type=e.type, schema=e.schema, data=e.data, meta=e.meta,
            recorded_at=RECORDED,
        ).to_json())
        for i, e in enumerate(new)
    ]


def job_history() -> Job:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis", params={"video": 3},
                    webhook_url="https://example.com/h")
    job.start(1, "w1")
    job.fail_attempt("timeout", datetime(2026, 3, 1, 10, tzinfo=UTC))
    job.start(2, "w2")
    job.report_progress(60, "chapters")
    job.complete({"chapters": 5}, article_id=9)
    return job


# ---- to_new_events


def test_to_new_events_names_versions_and_json_data(registry: EventRegistry) -> None:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis", params={"video": 3})
    job.start(1, "w1")

    queued, started = registry.to_new_events(job.collect_events(), workspace_id=WORKSPACE,
                                             meta={"request_id": "r-1"})

    assert (queued.type, queued.stream_type, queued.schema, queued.version) == ("JobQueued", "Job", 1, 1)
    assert (started.type, started.stream_type, started.schema, started.version) == ("JobStarted", "Job", 1, 2)
    assert queued.stream_id == started.stream_id == job.id
    assert queued.workspace_id == WORKSPACE
    # Only the event's own fields, in their JSON form (UUIDs as text): what readers will see.
    assert queued.data == {"job_id": str(job.id), "workspace_id": str(WORKSPACE), "environment": "production",
                           "job_type": "analysis", "params": {"video": 3}, "max_attempts": 3,
                           "webhook_url": None}
    assert started.data == {"attempt": 1, "worker": "w1"}
    assert queued.meta == {"request_id": "r-1"}


def test_to_new_events_gives_each_event_its_own_meta(registry: EventRegistry) -> None:
    job = job_history()
    meta = {"key_id": "k"}

    new = registry.to_new_events(job.collect_events(), workspace_id=WORKSPACE, meta=meta)
    new[0].meta["added"] = True

    assert meta == {"key_id": "k"}
    assert all(e.meta == {"key_id": "k"} for e in new[1:])


def test_to_new_events_refuses_an_unpublished_event(registry: EventRegistry) -> None:
    class Stray(Aggregate):  # never passed to @aggregate: no published name
        class Made(Aggregate.Created):
            pass

        @event(Made)
        def __init__(self) -> None:
            pass

    with pytest.raises(UnknownEventType):
        registry.to_new_events(Stray().collect_events(), workspace_id=WORKSPACE)


# ---- the stored form and back


def test_stored_event_json_round_trip_is_exact() -> None:
    original = StoredEvent(position=17, stream_id=uuid.uuid4(), stream_type="Job", version=3,
                           workspace_id=WORKSPACE, type="JobProgressed", schema=1,
                           data={"progress": 5, "step": "x"}, meta={"request_id": "r"}, recorded_at=RECORDED)

    assert StoredEvent.from_json(original.to_json()) == original


def test_stored_event_without_workspace_round_trips() -> None:
    original = StoredEvent(position=1, stream_id=uuid.uuid4(), stream_type="ApiKey", version=1,
                           workspace_id=None, type="ApiKeyRevoked", schema=1, data={"reason": "r"}, meta={},
                           recorded_at=RECORDED)

    assert StoredEvent.from_json(original.to_json()) == original


def test_to_domain_event_restores_class_fields_and_envelope(registry: EventRegistry) -> None:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis")
    job.start(1, "w1")
    _, started = stored(registry.to_new_events(job.collect_events(), workspace_id=WORKSPACE))

    ev = registry.to_domain_event(started)

    assert isinstance(ev, Job.Started)
    assert (ev.originator_id, ev.originator_version, ev.timestamp) == (job.id, 2, RECORDED)
    assert (ev.attempt, ev.worker) == (1, "w1")


def test_reconstruct_a_job_from_its_stored_events(registry: EventRegistry) -> None:
    job = job_history()

    rebuilt = registry.reconstruct(stored(registry.to_new_events(job.collect_events(), workspace_id=WORKSPACE)))

    assert isinstance(rebuilt, Job)
    assert (rebuilt.id, rebuilt.version) == (job.id, 6)
    assert (rebuilt.workspace_id, rebuilt.job_type, rebuilt.params, rebuilt.webhook_url) == (
        WORKSPACE, "analysis", {"video": 3}, "https://example.com/h")
    assert (rebuilt.status, rebuilt.progress, rebuilt.attempts, rebuilt.article_id) == ("completed", 100, 2, 9)
    assert rebuilt.error_message is None


def test_reconstructed_aggregate_accepts_further_commands(registry: EventRegistry) -> None:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis")
    job.start(1, "w1")
    rebuilt = registry.reconstruct(stored(registry.to_new_events(job.collect_events(), workspace_id=WORKSPACE)))

    rebuilt.report_progress(10, "next")

    [new] = registry.to_new_events(rebuilt.collect_events(), workspace_id=WORKSPACE)
    assert (new.type, new.version) == ("JobProgressed", 3)


def test_reconstruct_an_api_key_keeps_uuids_and_datetimes(registry: EventRegistry) -> None:
    expires, issuer = datetime(2031, 1, 2, 3, 4, 5, tzinfo=UTC), uuid.uuid4()
    key = ApiKey.issue(key_id=uuid.uuid4(), workspace_id=WORKSPACE, name="k", scopes=["jobs:read"],
                       environment="sandbox", key_prefix="service_test_abcdefg", key_digest="cd" * 32,
                       expires_at=expires, issuer_scopes=None, issued_by=issuer)
    key.revoke("rotated")

    rebuilt = registry.reconstruct(stored(registry.to_new_events(key.collect_events(), workspace_id=WORKSPACE)))

    assert (rebuilt.id, rebuilt.workspace_id, rebuilt.issued_by, rebuilt.expires_at) == (
        key.id, WORKSPACE, issuer, expires)
    assert isinstance(rebuilt.issued_by, uuid.UUID)
    assert (rebuilt.scopes, rebuilt.active) == (["jobs:read"], False)


def test_reconstruct_a_workspace_and_a_media(registry: EventRegistry) -> None:
    ws = Workspace.open(WORKSPACE, "Acme", "pro", 100, 60)
    ws.charge(30, "analysis", job_id=uuid.uuid4())
    ws.refund(10, "failed")
    ws.add_credits(5)
    media = Media.create(media_id=8, workspace_id=WORKSPACE, environment="production", name="Talks")

    rebuilt_ws = registry.reconstruct(stored(registry.to_new_events(ws.collect_events(), workspace_id=WORKSPACE)))
    rebuilt_media = registry.reconstruct(stored(registry.to_new_events(media.collect_events(),
                                                                       workspace_id=WORKSPACE)))

    assert (rebuilt_ws.credits_total, rebuilt_ws.credits_used, rebuilt_ws.credits_balance) == (105, 20, 85)
    assert (rebuilt_media.id, rebuilt_media.media_id, rebuilt_media.name) == (media.id, 8, "Talks")


def test_reconstruct_nothing_is_none(registry: EventRegistry) -> None:
    assert registry.reconstruct([]) is None


@pytest.mark.parametrize("call", [
    lambda r: r.current_schema("NoSuchEvent"),
    lambda r: r.stream_type_of("NoSuchEvent"),
    lambda r: r.json_schema("NoSuchEvent"),
    lambda r: r.upcast("NoSuchEvent", 1, {}),
])
def test_unknown_names_are_reported(registry: EventRegistry, call) -> None:
    with pytest.raises(UnknownEventType):
        call(registry)


# ---- JSON Schemas


def data_fields(event_cls: type) -> list[str]:
    return [f.name for f in fields(event_cls) if f.name not in ENVELOPE_FIELDS]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_json_schema_describes_exactly_the_data_fields(registry: EventRegistry, name: str) -> None:
    event_cls, schema_number, stream_type = PUBLISHED[name]

    schema = registry.json_schema(name)

    assert schema["title"] == name
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(data_fields(event_cls))
    assert schema["required"] == data_fields(event_cls)
    assert stream_type in schema["description"] and f"schema {schema_number}" in schema["description"]


def conforms(value: Any, schema: dict[str, Any]) -> bool:
    """Enough of JSON Schema for the types our events use."""
    if "anyOf" in schema:
        return any(conforms(value, s) for s in schema["anyOf"])
    kind = schema.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list) and all(conforms(i, schema.get("items", {})) for i in v),
        "null": lambda v: v is None,
        None: lambda v: True,
    }
    if not checks[kind](value):
        return False
    if schema.get("format") == "uuid":
        uuid.UUID(value)
    if schema.get("format") == "date-time":
        datetime.fromisoformat(value)
    return True


def test_stored_data_conforms_to_the_published_schemas(registry: EventRegistry) -> None:
    job = job_history()
    key = ApiKey.issue(key_id=uuid.uuid4(), workspace_id=WORKSPACE, name="k", scopes=["jobs:read"],
                       environment="production", key_prefix="p", key_digest="d",
                       expires_at=datetime(2031, 1, 1, tzinfo=UTC), issuer_scopes=None, issued_by=uuid.uuid4())
    key.revoke()
    ws = Workspace.open(WORKSPACE, "Acme", "pro", 100, 60)
    ws.charge(3, "a", job_id=uuid.uuid4())
    ws.refund(1, "b")
    ws.add_credits(1)
    ws.flag_low_credits(20.0, 2)
    ws.rotate_job_secret("sandbox", now=datetime(2031, 1, 1, tzinfo=UTC), grace=timedelta(hours=24))
    llm = LlmUsage.record(call_key="job/1", workspace_id=WORKSPACE, environment="production",
                          operation="article.write", prompt_tokens=10, completion_tokens=5)
    media = Media.create(media_id=1, workspace_id=WORKSPACE, environment="production", name="m")
    job2 = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="x")
    job2.start(1, "w")
    job2.complete_item("clip-1", {"url_key": "clips/w/1.mp4"}, attempt=1, progress=50)
    job2.fail_item("clip-2", "ffmpeg exited 1", attempt=1)
    job2.fail("no")
    job3 = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="x")
    job3.cancel()
    hook = Webhook.register(webhook_id=uuid.uuid4(), workspace_id=WORKSPACE, environment="production",
                            url="https://h.example", events=None, secret_encrypted="v1.x")
    hook.record_test(message_id=uuid.uuid4(), signed_at=1_700_000_000, status_code=None, latency_ms=10_000.04,
                     error="timed out after 10 s")
    hook.disable("410")
    hook.delete()
    delivery = WebhookDelivery(delivery_id=uuid.uuid4(), workspace_id=WORKSPACE, environment="production",
                               webhook_id=hook.id, url="https://h.example", event_name="job.failed", source_position=1)
    delivery.record_attempt(1, 1_700_000_000)
    delivery.record_failed(1, 500, "HTTP 500", 1.5, None, True)
    delivery.resend("k")
    delivery.record_attempt(2, 1_700_000_001)
    delivery.record_delivered(2, 200, 1.5)
    delivery.cancel("webhook deleted", 2)
    video = Video.upload(video_id=4, workspace_id=WORKSPACE, environment="production", name="v",
                         storage_key="videos/w/4/source.mp4", size_bytes=10, duration_ms=8000, media_id=1,
                         captions_key="videos/w/4/captions.vtt", width=320, height=240, frame_rate=25.0,
                         video_codec="h264", audio_codec="aac", caption_cues=3)
    video.record_analysis(job_id=job.id, graph={"claims": [{"id": "c"}], "summary": {"geoReadinessScore": 40.0}},
                          analysis_mode="standard", article_id=9)
    article = Article(article_id=9, workspace_id=WORKSPACE, environment="production", job_id=job.id, video_id=4,
                      media_id=None, title="t", language="fr", writing_style="journalistic", aeo_score=50,
                      geo_score=60, composite_score=57.0, keywords_primary=["k"], has_transcript=True,
                      content={"title": "t"}, markdown="# t\n")
    conversation = Conversation.start(conversation_id=uuid.uuid4(), workspace_id=WORKSPACE,
                                      environment="production", key_id=key.id, text="hi", planner="offline",
                                      request_id="r-0")
    conversation.reply(1, "hello", outcome="completed", not_done=0)
    turn = conversation.receive("my balance", planner="offline", request_id="r-1")
    conversation.record_action(turn, name="get_credits", arguments={}, status="refused", result=None,
                               error={"code": "insufficient_scope", "message": "m", "details": {"required": "x"}})
    conversation.reply(turn, "no", outcome="completed", not_done=0)
    detection = ClipDetection(job_id=job.id, workspace_id=WORKSPACE, environment="production", article_id=9,
                              video_id=4, template_id=1, target_duration_seconds=30, options={"prompt": None})
    detection.record([{"id": "clip_0_30000", "start_ms": 0, "end_ms": 30000}], "the video gives 1 clip", ["audio"])
    render = ClipRender.queue(job_id=job2.id, workspace_id=WORKSPACE, environment="production", video_id=4,
                              clips=[{"id": "a", "start_ms": 0, "end_ms": 5000, "duration_ms": 5000}], template_id=1)
    render.record_failed("a", attempt=1, error_message="ffmpeg exited 1")
    render.record_rendered("a", attempt=2, file_key="clips/w/j/a.2.mp4", thumbnail_key="clips/w/j/a.2.jpg",
                           duration_ms=5000, size_bytes=1000, width=720, height=1280,
                           framing={"mode": "follow_face", "faces_seen_pct": 96, "samples": 25, "faces": 1,
                                    "keyframes": 7, "reason": None})
    video.change_description("a new description")
    candidate = Candidate.open(video_id=4, workspace_id=WORKSPACE, environment="production", media_id=1)
    basis = (job.id, video.description_revision)
    candidate.move("reviewing", basis)
    completion_id = uuid.uuid4()
    candidate.select(completion_id, ["videosite_long"], basis)
    completion = DescriptionCompletion(
        completion_id=completion_id, workspace_id=WORKSPACE, environment="production", candidate_id=candidate.id,
        video_id=4, media_id=1, article_id=9, platforms=["videosite_long"], drafts=[{"platform_id": "videosite_long"}],
        warnings=[], videosite_experiment_id=None, credits=1, analysis_job_id=job.id, description_revision=1)
    experiment = VideositeExperiment.draft(completion_id=completion_id, workspace_id=WORKSPACE,
                                           environment="production", candidate=candidate.id, video_id=4,
                                           platforms=["videosite_long"])
    article.rename("Custom")
    article.attach_media(1)
    article.set_published_urls({"page_url": "https://blog.example.com/a", "video_url": None})
    video.revoke_public_links()
    translated = Article.translation(source=article, article_id=10, job_id=job2.id, language="en", title="t",
                                     content={"title": "t"}, markdown="# t\n", aeo_score=1, geo_score=2,
                                     composite_score=1.7, keywords_primary=["k"])
    export = ArticleExport.record(article_id=9, workspace_id=WORKSPACE, environment="production",
                                  export_format="html", content_type="text/html; charset=utf-8", etag='"e"', size=3,
                                  path="/v1/articles/9/export/html")
    pending = [e for agg in (job, key, ws, media, job2, job3, hook, delivery, video, article, llm, detection, render,
                             candidate, completion, experiment, translated, export, conversation)
               for e in agg.collect_events()]

    new = registry.to_new_events(pending, workspace_id=WORKSPACE)

    assert {e.type for e in new} == set(registry.names())  # every published event is exercised
    for e in new:
        schema = registry.json_schema(e.type)
        assert set(e.data) == set(schema["properties"]), e.type
        for field_name, value in e.data.items():
            assert conforms(value, schema["properties"][field_name]), (e.type, field_name, value)


# ---- upcasting


@pytest.fixture
def evolved(registry: EventRegistry, monkeypatch: pytest.MonkeyPatch) -> EventRegistry:
    """A registry where JobProgressed is at schema 3.

    Schema 1 had ``percent`` (a float, 0..1) and no step; schema 2 renamed it ``progress`` (0..100);
    schema 3 added ``step``. The real registry stays at schema 1 (the patch is on this instance only).
    """
    monkeypatch.setitem(registry._by_name, "JobProgressed", (Job.Progressed, 3, "Job"))
    registry.register_upcaster("JobProgressed", 1,
                               lambda d: {"progress": round(d["percent"] * 100)})
    registry.register_upcaster("JobProgressed", 2, lambda d: {**d, "step": d.get("step", "unknown")})
    return registry


def old_progressed(stream_id: uuid.UUID, schema: int, data: dict, version: int = 2) -> StoredEvent:
    return StoredEvent(position=version, stream_id=stream_id, stream_type="Job", version=version,
                       workspace_id=WORKSPACE, type="JobProgressed", schema=schema, data=data, meta={},
                       recorded_at=RECORDED)


def test_upcast_applies_every_step_from_the_stored_schema(evolved: EventRegistry) -> None:
    assert evolved.upcast("JobProgressed", 1, {"percent": 0.4}) == {"progress": 40, "step": "unknown"}
    assert evolved.upcast("JobProgressed", 2, {"progress": 70}) == {"progress": 70, "step": "unknown"}


def test_current_schema_is_not_upcast_and_keeps_its_data_object(evolved: EventRegistry) -> None:
    data = {"progress": 70, "step": "x"}

    assert evolved.upcast("JobProgressed", 3, data) is data  # the projector relies on this identity


def test_old_schema_is_upcast_when_read(evolved: EventRegistry) -> None:
    raw = old_progressed(uuid.uuid4(), 1, {"percent": 0.25}).to_json()

    ev = evolved.to_domain_event(StoredEvent.from_json(raw))

    assert isinstance(ev, Job.Progressed)
    assert (ev.progress, ev.step) == (25, "unknown")


def test_old_schema_is_never_rewritten(evolved: EventRegistry) -> None:
    old = old_progressed(uuid.uuid4(), 1, {"percent": 0.25})

    evolved.to_domain_event(old)

    assert (old.schema, old.data) == (1, {"percent": 0.25})


def test_reconstruct_mixes_old_and_current_schemas(evolved: EventRegistry) -> None:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis")
    job.start(1, "w1")
    history = stored(evolved.to_new_events(job.collect_events(), workspace_id=WORKSPACE))
    history.append(old_progressed(job.id, 1, {"percent": 0.5}, version=3))
    history.append(old_progressed(job.id, 2, {"progress": 80}, version=4))

    rebuilt = evolved.reconstruct(history)

    assert (rebuilt.version, rebuilt.progress, rebuilt.step, rebuilt.status) == (4, 80, "unknown", "running")


def test_new_events_are_written_at_the_current_schema(evolved: EventRegistry) -> None:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, job_type="analysis")
    job.start(1, "w1")
    job.report_progress(5, "s")

    *_, progressed = evolved.to_new_events(job.collect_events(), workspace_id=WORKSPACE)

    assert (progressed.type, progressed.schema) == ("JobProgressed", 3)


def test_a_missing_upcaster_is_reported(registry: EventRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._by_name, "JobStarted", (Job.Started, 2, "Job"))

    with pytest.raises(UnknownEventType, match="JobStarted schema 1"):
        registry.upcast("JobStarted", 1, {"attempt": 1, "worker": "w"})


def test_an_upcasters_own_error_is_not_mistaken_for_a_missing_upcaster(evolved: EventRegistry) -> None:
    """A malformed old event must fail loudly: the projector skips UnknownEventType as "not ours"."""
    with pytest.raises(KeyError, match="percent"):
        evolved.upcast("JobProgressed", 1, {"pct": 0.5})


def test_upcasters_belong_to_their_registry(evolved: EventRegistry) -> None:
    fresh = EventRegistry()

    assert fresh.current_schema("JobProgressed") == 1
    assert fresh.upcast("JobProgressed", 1, {"percent": 0.5}) == {"percent": 0.5}
