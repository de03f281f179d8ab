"""Webhook payloads are public resources (``domain.webhook_payloads``): each event type, one row, has
its documented shape (the schemas of docs/webhooks.md, generated from the models), built from
the domain event by the dispatcher's intake, with signed file URLs and nothing internal; an
internal change of an event leaves the payload as it was; a cancelled job is notified."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from domain.articles import Article, ArticleExport
from domain.clips import ClipRender
from domain.jobs import Job
from domain.resources import JobDetail, RenderedClip, VideoRecord
from domain.videos import Video
from domain.webhook_payloads import EVENT_FOR, EVENT_NAMES, EVENT_TYPES, JOB_END_EVENTS, json_schemas
from domain.workspaces import Workspace
from infra.codec import EventRegistry, StoredEvent
from infra.file_urls import FILES_PATH, InvalidFileToken, verify
from infra.settings import Settings
from infra.webhookdocs import BEGIN, END, main, render, updated
from services.processes.dispatcher.intake import FileLinks, plan_intake
from tests.webhook_bodies import check_body, internal_fields

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
WS = uuid.UUID("5a5a5a5a-1111-4222-8333-944445555666")
RECORDED = datetime(2026, 5, 4, 12, 0, 0, 250_000, tzinfo=UTC)
HOOK = uuid.UUID("6b6b6b6b-1111-4222-8333-944445555666")
JOB_URL = "https://per-request.example/cb"
FRAMING = {"mode": "follow_face", "faces_seen_pct": 96, "samples": 150, "faces": 1, "keyframes": 9, "reason": None}


def _settings(when: datetime = RECORDED, **kw) -> Settings:
    return Settings(secret_key="22" * 32, clock_fixed=when.isoformat(), public_base_url="https://api.example",
                    **kw)


def _stored(aggregates, registry: EventRegistry, first: int = 10) -> list[StoredEvent]:
    new = registry.to_new_events([e for agg in aggregates for e in agg.collect_events()], workspace_id=WS)
    return [StoredEvent.from_json(StoredEvent(first + i, e.stream_id, e.stream_type, e.version, e.workspace_id,
                                              e.type, e.schema, e.data, e.meta, RECORDED).to_json())
            for i, e in enumerate(new)]


def _registration() -> StoredEvent:
    return StoredEvent(1, HOOK, "Webhook", 1, WS, "WebhookRegistered", 1,
                       {"webhook_id": str(HOOK), "workspace_id": str(WS), "environment": "production",
                        "url": "https://h.example/all", "events": list(EVENT_NAMES), "secret_encrypted": "v1.x"},
                       {}, RECORDED)


def _history() -> list:
    """Aggregates whose events emit each webhook event type, a cancellation among them."""
    analysis = Job.queue(job_id=uuid.uuid4(), workspace_id=WS, job_type="analyze_video", params={"video_id": 4},
                         webhook_url=JOB_URL)
    analysis.start(1, "w")
    analysis.report_progress(60, "chapters")
    video = Video.upload(video_id=4, workspace_id=WS, environment="production", name="Talk",
                         storage_key=f"videos/{WS}/4/source.mp4", size_bytes=10_000, duration_ms=8000, media_id=1,
                         captions_key=f"videos/{WS}/4/captions.vtt", width=320, height=240, frame_rate=25.0,
                         video_codec="h264", audio_codec="aac", caption_cues=3, demuxer="mov",
                         thumbnail_key=f"videos/{WS}/4/poster.jpg")
    video.record_analysis(job_id=analysis.id, graph={"claims": [{"id": "c"}], "summary": {"geoReadinessScore": 40.0}},
                          analysis_mode="standard", article_id=9)
    article = Article(article_id=9, workspace_id=WS, environment="production", job_id=analysis.id, video_id=4,
                      media_id=1, title="Heat pumps", language="en", writing_style="journalistic", aeo_score=50,
                      geo_score=60, composite_score=57.0, keywords_primary=["heat"], has_transcript=True,
                      content={"title": "Heat pumps"}, markdown="# Heat pumps\n")
    analysis.complete({"video_id": 4, "claims": 1}, article_id=9)
    translated = Article.translation(source=article, article_id=10, job_id=uuid.uuid4(), language="fr",
                                     title="Pompes", content={"title": "Pompes"}, markdown="# Pompes\n",
                                     aeo_score=1, geo_score=2, composite_score=1.7, keywords_primary=["chaleur"])
    clip = Job.queue(job_id=uuid.uuid4(), workspace_id=WS, job_type="video_clip", webhook_url=JOB_URL)
    clip.start(1, "w")
    clip.complete({"file_key": f"clips/{WS}/{clip.id}/clip.mp4", "format": "mp4", "duration_ms": 5000,
                   "size_bytes": 900})
    render = Job.queue(job_id=uuid.uuid4(), workspace_id=WS, job_type="clip_render")
    clips = ClipRender.queue(job_id=render.id, workspace_id=WS, environment="production", video_id=4,
                             clips=[{"id": "a", "start_ms": 0, "end_ms": 5000, "duration_ms": 5000}], template_id=5)
    clips.record_rendered("a", attempt=1, file_key=f"clips/{WS}/{render.id}/a.1.mp4",
                          thumbnail_key=f"clips/{WS}/{render.id}/a.1.jpg", duration_ms=5000, size_bytes=1000,
                          width=720, height=1280, framing=FRAMING)
    failing = Job.queue(job_id=uuid.uuid4(), workspace_id=WS, job_type="translate_article", webhook_url=JOB_URL)
    failing.start(1, "w")
    failing.report_progress(30, "writing")
    failing.fail("the provider refused")
    cancelled = Job.queue(job_id=uuid.uuid4(), workspace_id=WS, job_type="regenerate_article", webhook_url=JOB_URL)
    cancelled.start(1, "w")
    cancelled.report_progress(40, "writing")
    cancelled.cancel()
    export = ArticleExport.record(article_id=9, workspace_id=WS, environment="production", export_format="html",
                                  content_type="text/html; charset=utf-8", etag='"e"', size=3,
                                  path="/v1/articles/9/export/html")
    workspace = Workspace.open(WS, "w", "pro", 10, 10)
    workspace.charge(9, "x")
    workspace.flag_low_credits(20.0, 2)
    return [analysis, video, article, translated, clip, render, clips, failing, cancelled, export, workspace]


@pytest.fixture(scope="module")
def delivered() -> tuple[list[StoredEvent], list]:
    registry = EventRegistry()
    events = [_registration(), *_stored(_history(), registry)]
    settings = _settings()
    plan = plan_intake(events, {}, {}, lambda ws, at: FileLinks.of(settings, ws, at))
    return events, plan.deliveries


def test_every_event_type_is_delivered_in_its_documented_shape_with_nothing_internal(delivered):
    events, deliveries = delivered
    to_hook = [d for d in deliveries if d.webhook_id == HOOK]
    assert {d.event for d in to_hook} == set(EVENT_NAMES)
    for d in deliveries:
        data = check_body(d.payload)
        assert data["environment"] == "production"
    # the events themselves are full of what a receiver must not see: the check can fail
    assert internal_fields([e.data for e in events if e.type in ("VideoUploaded", "ClipRendered", "ExportReady")])


def test_payloads_are_the_api_s_resources(delivered):
    _, deliveries = delivered
    by = {}
    for d in deliveries:
        if d.webhook_id == HOOK:
            by.setdefault(d.event, []).append(d.payload["data"])
    video = by["video.uploaded"][0]
    assert (video["id"], video["status"], video["duration_seconds"], video["has_transcript"]) == (4, "uploaded", 8.0,
                                                                                                   True)
    assert by["video.analyzed"][0]["video_id"] == 4 and by["video.analyzed"][0]["article_id"] == 9
    export = by["export.ready"][0]
    assert export["url"] == "https://api.example/v1/articles/9/export/html"
    assert by["article.generated"][0]["url"] == "https://api.example/v1/articles/9"
    assert by["article.translated"][0]["origin"] == "translation"
    assert by["article.translated"][0]["source_article_id"] == 9
    low = by["credits.low"][0]
    assert set(low) == {"environment", "balance", "total", "remaining_pct", "threshold_pct"}
    completed = {j["type"]: j for j in by["job.completed"]}
    analysis = completed["analyze_video"]
    assert (analysis["status"], analysis["step"], analysis["progress"], analysis["article_id"]) == (
        "completed", "completed", 100, 9)
    assert analysis["result"] == {"video_id": 4, "claims": 1} and analysis["urls_expire_at"] is None
    assert analysis["created_at"] == "2026-05-04T12:00:00.250000Z"
    simple = completed["video_clip"]["result"]
    assert set(simple) == {"url", "format", "duration_ms", "size_bytes"}
    failed = {j["status"]: j for j in by["job.failed"]}
    assert (failed["failed"]["progress"], failed["failed"]["error_message"]) == (30, "the provider refused")
    assert (failed["cancelled"]["step"], failed["cancelled"]["progress"]) == ("cancelled", 40)
    assert failed["cancelled"]["error_message"] is None


def test_the_end_of_every_job_reaches_its_webhook_url_cancellation_included(delivered):
    _, deliveries = delivered
    to_url = sorted((d.payload["data"]["type"], d.event, d.payload["data"]["status"])
                    for d in deliveries if d.webhook_id is None)
    assert to_url == [("analyze_video", "job.completed", "completed"),
                      ("regenerate_article", "job.failed", "cancelled"),
                      ("translate_article", "job.failed", "failed"), ("video_clip", "job.completed", "completed")]
    assert all(d.url == JOB_URL for d in deliveries if d.webhook_id is None)


def _urls(value, found=None) -> list[str]:
    found = [] if found is None else found
    if isinstance(value, dict):
        for v in value.values():
            _urls(v, found)
    elif isinstance(value, str) and FILES_PATH in value:
        found.append(value)
    return found


def test_file_urls_are_the_api_s_signed_urls_valid_for_the_documented_time(delivered):
    _, deliveries = delivered
    urls = _urls({str(i): d.payload["data"] for i, d in enumerate(deliveries)})
    assert len(urls) >= 5  # the upload, the clip and its thumbnail, the simple clip (twice: hook and job URL)
    ttl = _settings().webhook_file_url_ttl_s
    assert ttl >= 24 * 3600
    expires = datetime(2026, 5, 11, 12, 0, 1, tzinfo=UTC)  # 7 days from the event, the whole second up
    for d in deliveries:
        data = d.payload["data"]
        stamp = data.get("urls_expire_at") or data.get("source_url_expires_at")
        if _urls(data):
            assert stamp == expires.isoformat().replace("+00:00", "Z")
    for url in urls:
        token = url.rsplit("/", 1)[1]
        assert url.startswith("https://api.example/v1/files/")
        grant = verify(_settings(expires - timedelta(seconds=1)), token)
        assert grant.workspace_id == WS and grant.expires_at == expires
        with pytest.raises(InvalidFileToken):
            verify(_settings(expires), token)


def test_the_same_event_read_again_makes_the_same_body(delivered):
    events, deliveries = delivered
    later = _settings(RECORDED + timedelta(hours=5, seconds=0.7))  # a replay, hours later
    again = plan_intake(events, {}, {}, lambda ws, at: FileLinks.of(later, ws, at)).deliveries
    assert [d.payload for d in again] == [d.payload for d in deliveries]


def _one(events: list[StoredEvent], type_: str) -> StoredEvent:
    return next(e for e in events if e.type == type_)


def _body(events: list[StoredEvent]) -> dict:
    settings = _settings()
    plan = plan_intake([_registration(), *events], {}, {}, lambda ws, at: FileLinks.of(settings, ws, at))
    return {d.source_position: d.payload for d in plan.deliveries if d.webhook_id == HOOK}


def _with(ev: StoredEvent, data: dict, schema: int | None = None) -> StoredEvent:
    return StoredEvent(ev.position, ev.stream_id, ev.stream_type, ev.version, ev.workspace_id, ev.type,
                       ev.schema if schema is None else schema, data, ev.meta, ev.recorded_at)


def test_an_internal_change_of_an_event_leaves_the_public_payload_as_it_was(delivered):
    events, _ = delivered
    registry = EventRegistry()
    uploaded = _one(events, "VideoUploaded")
    rendered = _one(events, "ClipRendered")
    before = _body([uploaded, rendered])
    # fields only internals need, added or renamed by a later schema: nothing changes for receivers
    grown = _with(uploaded, {**uploaded.data, "demuxer": "matroska", "probe_flags": ["-fflags", "+genpts"],
                             "video_codec": "hevc", "storage_tier": "cold"})
    moved = _with(rendered, {**rendered.data, "encoder": "libx264", "render_host": "/srv/worker-3"})
    assert _body([grown, moved]) == before
    # ClipRendered of schema 1 (no framing): a clip.generated with framing null
    assert before[rendered.position]["data"]["framing"] == FRAMING
    unframed = _with(rendered, registry.upcast("ClipRendered", 1, {k: v for k, v in rendered.data.items()
                                                                     if k != "framing"}))
    assert _body([unframed])[rendered.position]["data"]["framing"] is None
    # the first schema of VideoUploaded (no demuxer, no publication date, no thumbnail), upcast as
    # the intake reads it: the same payload as today's event
    old = {k: v for k, v in uploaded.data.items() if k not in ("demuxer", "published_at", "thumbnail_key")}
    upcast = _with(uploaded, registry.upcast("VideoUploaded", 1, old))
    assert _body([upcast, rendered]) == before
    # a job event of schema 1 (no environment): the job's environment is taken from its JobQueued
    queued = next(e for e in events if e.type == "JobQueued" and e.data["job_type"] == "translate_article")
    failed = next(e for e in events if e.type == "JobFailed" and e.stream_id == queued.stream_id)
    old_failed = _with(failed, registry.upcast("JobFailed", 1, {"error_message": failed.data["error_message"],
                                                              "attempts": failed.data["attempts"]}))
    assert old_failed.data["environment"] is None
    progressed = [e for e in events if e.stream_id == queued.stream_id and e.type == "JobProgressed"]
    assert _body([queued, *progressed, old_failed]) == _body([queued, *progressed, failed])


def test_the_payload_of_a_resource_is_the_api_s_public_model():
    """A job, a video and a clip are one model each, which the API answers with and whose webhook
    payload subclasses it: a field of the resource is declared once, the API's own."""
    from services.api import clips, jobs, videos

    assert (jobs.JobDetail, videos.VideoRecord, clips.RenderedClip) == (JobDetail, VideoRecord, RenderedClip)
    payloads = {"job.completed": JobDetail, "job.failed": JobDetail, "video.uploaded": VideoRecord,
                "clip.generated": RenderedClip}
    for name, resource in payloads.items():
        model = EVENT_TYPES[name].model
        assert issubclass(model, resource), name
        assert set(resource.model_fields) <= set(model.model_fields), name
        # a payload redeclares a field of the resource only to narrow it (a video just uploaded is
        # "uploaded"; a field the API may leave out, a delivery always has), never to copy it
        below = model.__mro__[:model.__mro__.index(resource)]
        redeclared = {f for cls in below for f in cls.__dict__.get("__annotations__", {})} & set(resource.model_fields)
        for field in redeclared:
            ours, theirs = model.model_fields[field], resource.model_fields[field]
            assert ours.annotation != theirs.annotation or ours.is_required() > theirs.is_required(), (name, field)


def test_every_webhook_event_type_is_one_row_and_the_docs_list_the_rows():
    registry = EventRegistry()
    emitters = [e for t in EVENT_TYPES.values() for e in t.emitted_by]
    assert len(emitters) == len(set(emitters)), "a domain event emits one webhook event type at most"
    assert all(registry.knows(e) for e in emitters) and set(EVENT_FOR) == set(emitters)
    assert JOB_END_EVENTS == {"JobCompleted", "JobFailed", "JobCancelled"}
    assert EVENT_NAMES == tuple(EVENT_TYPES) and all(t.emitted_by for t in EVENT_TYPES.values())
    # the page's table of which domain event emits which webhook event is the rows, row for row
    documented = {}
    for line in DOC.read_text(encoding="utf-8").split("## Which domain event emits")[1].split("\n\n")[1].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0].startswith("`"):
            documented[cells[0].strip("`")] = tuple(re.findall(r"`(\w+)`", cells[1]))
    assert documented == {t.name: t.emitted_by for t in EVENT_TYPES.values()}


def test_docs_webhooks_md_holds_the_schemas_the_code_generates(capsys):
    text = DOC.read_text(encoding="utf-8")
    assert render() in text and updated(text) == text, (
        "docs/webhooks.md is out of date: run `python -m infra.webhookdocs --write`")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    for name in EVENT_NAMES:
        assert f"#### `{name}`" in text
    schemas = json_schemas()
    assert set(schemas) == set(EVENT_NAMES)
    for name, schema in schemas.items():
        assert schema["properties"]["type"] == {"const": name}
        assert schema["properties"]["data"]["additionalProperties"] is False
    main([])
    assert capsys.readouterr().out == render() + "\n"
