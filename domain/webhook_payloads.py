"""The webhook event types, one row each, and the public ``data`` each delivers.

Everything about a webhook event type is declared once, in ``EVENT_TYPES``: its name, the domain
events that emit it, the pydantic model of its ``data`` and the mapping from the domain event to
that model. The dispatcher, the API's validation of a subscription, the generated schemas of
docs/webhooks.md and the tests read that row and nothing else, so a new event type is one row.

A webhook payload is a public resource, like an API answer: its fields are named and typed here
and nowhere else, and each domain event the dispatcher delivers is mapped to it field by field
(``public_data``). An internal event may gain, lose or rename fields (a new schema, an upcast):
only its mapping here changes, never what receivers get. Nothing internal is copied wholesale:
no storage key, no server path, no demuxer or codec detail; a stored file is a signed URL (with
its expiry), an export is its API URL.

A resource the API also answers is its public model (``domain.resources``), subclassed: a job is
the job as GET /v1/jobs/{id} shows it, a clip is an item of ``rendered_clips`` of GET
/v1/production/clips/jobs/{jobId}, a video is GET /v1/videos/{id} right after its upload; the
subclass only adds the environment and when its signed URLs expire. Pure: the dispatcher's
intake gives the event, what it keeps of the event's job (``JobFacts``) and the URL maker
(``Links``: file URLs are signed by the infrastructure, with an expiry fixed by the event's time,
so a replay makes the same payload).

``json_schemas()`` is the JSON Schema of each event type's body, which ``python -m
infra.webhookdocs --write`` prints into docs/webhooks.md.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from domain.resources import ClipFraming, JobDetail, RenderedClip, VideoRecord

Environment = Literal["production", "sandbox"]

# Names a public payload never has, at any depth: storage keys, server paths, the container forced
# on ffmpeg. A job's open ``result`` is cleaned of them too (a clip's key becomes its URL first).
INTERNAL_FIELD = re.compile(r"(^|_)(key|keys|path|paths|demuxer)$|^(storage|file|thumbnail|captions)_key", re.I)


class Links(Protocol):
    """Makes the URLs of a payload (the intake's, signed with the service key)."""

    @property
    def expires_at(self) -> datetime:
        """When the signed file URLs made by ``file`` stop working."""

    def file(self, storage_key: str) -> str | None:
        """A signed download URL of a stored file, valid until ``expires_at`` (None: a key that cannot
        be signed, which the service never writes)."""

    def api(self, path: str) -> str:
        """The absolute URL of an API path (``/v1/...``)."""


@dataclass(frozen=True)
class JobFacts:
    """What the dispatcher keeps of a job from the log (``webhook_jobs``): what GET /jobs/{id}
    shows that the job's last event does not carry."""

    job_type: str
    created_at: datetime | None  # JobQueued's time (None: a job taken in before it was kept)
    progress: int  # the last JobProgressed / JobItemCompleted
    video_id: int | None  # an analysis job's video (its params)


@dataclass(frozen=True)
class Source:
    """One domain event to deliver, with what the dispatcher knows around it."""

    type: str  # the domain event's name (JobCompleted)
    stream_id: UUID
    recorded_at: datetime
    environment: str  # the event's, or its job's
    data: Mapping[str, Any]
    job: JobFacts | None = None


class _Public(BaseModel):
    """What every delivery's ``data`` holds besides its resource: the environment, and no other field."""

    model_config = ConfigDict(extra="forbid")

    environment: Environment = Field(description="the environment of the key whose work this is")


class JobData(JobDetail, _Public):
    """A job as GET /v1/jobs/{id} shows it when it ended."""

    created_at: datetime | None = Field(  # type: ignore[assignment]
        description="when the job was queued (null only for a job queued before the dispatcher kept it)")
    urls_expire_at: datetime | None = Field(
        description="when the signed URLs in `result` stop working; null when it has none")


class CompletedJobData(JobData):
    """``job.completed``: the job as GET /v1/jobs/{id} shows it once it completed."""

    status: Literal["completed"]


class EndedJobData(JobData):
    """``job.failed``: the job as GET /v1/jobs/{id} shows it once it failed or was cancelled (the interface
    has no job.cancelled: ``status`` tells the two apart)."""

    status: Literal["failed", "cancelled"]


class ClipData(RenderedClip, _Public):
    """``clip.generated``: one rendered clip, as in ``rendered_clips`` of GET /v1/production/clips/jobs/{jobId}."""

    job_id: UUID
    url: str | None = Field(  # type: ignore[assignment]
        description="signed download URL of the clip, valid until urls_expire_at")
    urls_expire_at: datetime = Field(description="when url and thumbnail_url stop working")


class VideoData(VideoRecord, _Public):
    """``video.uploaded``: the video as GET /v1/videos/{id} shows it right after the upload."""

    status: Literal["uploaded"]
    analyzed_at: None
    last_job_id: None
    article_id: None
    source_url: str | None = Field(description="signed URL of the uploaded media, valid until "
                                               "source_url_expires_at")
    source_url_expires_at: datetime


class AnalysisData(_Public):
    """``video.analyzed``: the outcome of one analysis of a video."""

    video_id: int | None = Field(description="the video analysed (null only for an analysis queued before the "
                                             "dispatcher kept it)")
    job_id: UUID
    status: Literal["analyzed"]
    analyzed_at: datetime
    analysis_mode: str
    article_id: int | None
    geo_readiness_score: float
    counts: dict[str, int] = Field(description="how many claims, chapters, entities, ... the analysis found")


class ArticleData(_Public):
    """``article.generated`` and ``article.translated``: the article as GET /v1/articles lists it, with its
    scores (its text: GET /v1/articles/{id}, at ``url``)."""

    id: int
    url: str = Field(description="GET it with a key of scope articles:read for the article's text")
    title: str
    language: str
    writing_style: str
    aeo_score: int
    geo_score: int
    composite_score: float
    keywords_primary: list[str]
    media_id: int | None
    video_id: int | None
    job_id: UUID | None = Field(description="the job that wrote it")
    created_at: datetime
    origin: Literal["analysis", "regeneration", "translation"]
    source_article_id: int | None = Field(description="the article regenerated or translated from")
    source_language: str | None = Field(description="a translation's source language")


class ExportData(_Public):
    """``export.ready``: an article exported in a format for the first time."""

    article_id: int
    format: str
    url: str = Field(description="the export: GET it with a key of scope exports:read")
    content_type: str
    etag: str
    bytes: int
    created_at: datetime


class CreditsData(_Public):
    """``credits.low``: the production balance crossed the warning threshold downwards."""

    balance: int
    total: int
    remaining_pct: float
    threshold_pct: float


# ----------------------------------------------------------------------------------- the mappings


def public_result(result: Mapping[str, Any] | None, sign: Callable[[str], str | None]) -> dict[str, Any] | None:
    """A job's result as clients read it, in GET /jobs/{id} and in its webhook alike: a stored
    clip's key as its signed URL (``sign``), and no internal name at any depth."""
    if result is None:
        return None
    shown = dict(result)
    if "file_key" in shown:
        key, thumbnail = shown["file_key"], shown.get("thumbnail_key")
        shown["url"] = sign(key) if isinstance(key, str) and key else None
        if isinstance(thumbnail, str) and thumbnail:
            shown["thumbnail_url"] = sign(thumbnail)
    cleaned: dict[str, Any] = _clean(shown)
    return cleaned


def _clean(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _clean(v) for k, v in value.items() if not INTERNAL_FIELD.search(str(k))}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _job(src: Source, links: Links) -> JobData:
    d, facts = src.data, src.job
    status = {"JobCompleted": "completed", "JobFailed": "failed", "JobCancelled": "cancelled"}[src.type]
    result = public_result(d.get("result") or {}, links.file) if status == "completed" else None
    has_urls = result is not None and "url" in result
    model = CompletedJobData if status == "completed" else EndedJobData
    return model(environment=src.environment, id=src.stream_id,
                   type=facts.job_type if facts else str(d.get("job_type", "unknown")), status=status,
                   progress=100 if status == "completed" else (facts.progress if facts else 0), step=status,
                   article_id=d.get("article_id"), error_message=d.get("error_message") if status == "failed" else None,
                   created_at=facts.created_at if facts else None, result=result,
                   urls_expire_at=links.expires_at if has_urls else None)


def _clip(src: Source, links: Links) -> ClipData:
    d = src.data
    thumbnail = d.get("thumbnail_key")
    return ClipData(environment=src.environment, job_id=d["job_id"], clip_id=d["clip_id"],
                    url=links.file(d["file_key"]),
                    thumbnail_url=links.file(thumbnail) if thumbnail else None, urls_expire_at=links.expires_at,
                    format=d["format"], duration_ms=d["duration_ms"], size_bytes=d["size_bytes"],
                    width=d.get("width"), height=d.get("height"), attempt=d["attempt"], rendered_at=src.recorded_at,
                    framing=ClipFraming(**d["framing"]) if d.get("framing") else None)


def _video(src: Source, links: Links) -> VideoData:
    d = src.data
    return VideoData(environment=src.environment, id=d["video_id"], media_id=d.get("media_id"), name=d["name"],
                     description=d.get("description"), language=d["language"],
                     duration_seconds=round(d["duration_ms"] / 1000, 3), width=d.get("width"),
                     height=d.get("height"), frame_rate=d.get("frame_rate"), size_bytes=d["size_bytes"],
                     status="uploaded", has_transcript=bool(d.get("caption_cues") or d.get("subtitle_tracks")),
                     analyzed_at=None, created_at=src.recorded_at, last_job_id=None, article_id=None,
                     source_url=links.file(d["storage_key"]), source_url_expires_at=links.expires_at)


def _analysis(src: Source, links: Links) -> AnalysisData:
    d = src.data
    return AnalysisData(environment=src.environment, video_id=src.job.video_id if src.job else None,
                        job_id=d["job_id"], status="analyzed", analyzed_at=src.recorded_at,
                        analysis_mode=d["analysis_mode"], article_id=d.get("article_id"),
                        geo_readiness_score=d["geo_readiness_score"],
                        counts={k: v for k, v in (d.get("counts") or {}).items() if isinstance(v, int)})


def _article(src: Source, links: Links) -> ArticleData:
    d = src.data
    origin = d.get("origin") or ("translation" if src.type == "ArticleTranslated" else "analysis")
    return ArticleData(environment=src.environment, id=d["article_id"],
                       url=links.api(f"/v1/articles/{d['article_id']}"),
                       title=d["title"], language=d["language"], writing_style=d["writing_style"],
                       aeo_score=d["aeo_score"], geo_score=d["geo_score"], composite_score=d["composite_score"],
                       keywords_primary=list(d.get("keywords_primary") or []), media_id=d.get("media_id"),
                       video_id=d.get("video_id"), job_id=d.get("job_id"), created_at=src.recorded_at, origin=origin,
                       source_article_id=d.get("source_article_id"), source_language=d.get("source_language"))


def _export(src: Source, links: Links) -> ExportData:
    d = src.data
    return ExportData(environment=src.environment, article_id=d["article_id"], format=d["format"],
                      url=links.api(f"/v1/articles/{d['article_id']}/export/{d['format']}"),
                      content_type=d["content_type"], etag=d["etag"], bytes=d["bytes"], created_at=src.recorded_at)


def _credits(src: Source, links: Links) -> CreditsData:
    d = src.data
    return CreditsData(environment=src.environment, balance=d["balance"], total=d["total"],
                       remaining_pct=d["remaining_pct"], threshold_pct=d["threshold_pct"])


# ----------------------------------------------------------------------------------- the event types


@dataclass(frozen=True)
class WebhookEventType:
    """Everything about one webhook event type, declared once: its name in the interface (what a
    subscription lists and a delivery's ``type`` says), the domain events that emit it, the model
    of its ``data`` (whose JSON Schema docs/webhooks.md shows) and the mapping that builds that
    model from one of those domain events. ``ends_a_job``: a job's per-request ``webhook_url``
    receives it too (the job's end, however it ends)."""

    name: str
    emitted_by: tuple[str, ...]
    model: type[_Public]
    mapping: Callable[[Source, Links], _Public]
    ends_a_job: bool = False


# The interface has no job.cancelled: a cancelled job ends as job.failed with status "cancelled",
# so every job's end is notified under one of the two names receivers know.
EVENT_TYPES: dict[str, WebhookEventType] = {t.name: t for t in (
    WebhookEventType("video.uploaded", ("VideoUploaded",), VideoData, _video),
    WebhookEventType("video.analyzed", ("VideoAnalyzed",), AnalysisData, _analysis),
    WebhookEventType("article.generated", ("ArticleGenerated",), ArticleData, _article),
    WebhookEventType("article.translated", ("ArticleTranslated",), ArticleData, _article),
    WebhookEventType("clip.generated", ("ClipRendered",), ClipData, _clip),
    WebhookEventType("export.ready", ("ExportReady",), ExportData, _export),
    WebhookEventType("job.completed", ("JobCompleted",), CompletedJobData, _job, ends_a_job=True),
    WebhookEventType("job.failed", ("JobFailed", "JobCancelled"), EndedJobData, _job, ends_a_job=True),
    WebhookEventType("credits.low", ("CreditsLow",), CreditsData, _credits),
)}
EVENT_NAMES = tuple(EVENT_TYPES)  # the names, in the interface's order
# Views of the rows: the event type each domain event emits, and the domain events that end a job.
EVENT_FOR: dict[str, WebhookEventType] = {e: t for t in EVENT_TYPES.values() for e in t.emitted_by}
JOB_END_EVENTS = frozenset(e for t in EVENT_TYPES.values() if t.ends_a_job for e in t.emitted_by)


def public_data(src: Source, links: Links) -> dict[str, Any]:
    """The ``data`` of the delivery of ``src``, as JSON values."""
    return EVENT_FOR[src.type].mapping(src, links).model_dump(mode="json")


# ----------------------------------------------------------------------------------- the schemas


def _untitled(value: Any) -> Any:
    """A schema without pydantic's generated titles (the field names say as much)."""
    if isinstance(value, dict):
        return {k: _untitled(v) for k, v in value.items() if not (k == "title" and isinstance(v, str))}
    if isinstance(value, list):
        return [_untitled(v) for v in value]
    return value


def body_schema(event_name: str) -> dict[str, Any]:
    """The JSON Schema of the whole body of a delivery of ``event_name``."""
    data = _untitled(EVENT_TYPES[event_name].model.model_json_schema())
    defs = data.pop("$defs", None)
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": event_name,
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "type", "created_at", "workspace_id", "data"],
        "properties": {
            "id": {"type": "string", "format": "uuid", "description": "the delivery id (deduplicate on it)"},
            "type": {"const": event_name},
            "created_at": {"type": "string", "format": "date-time",
                           "description": "when the event was recorded"},
            "workspace_id": {"type": "string", "format": "uuid"},
            "data": data,
        },
    }
    if defs:
        schema["$defs"] = defs
    return schema


def json_schemas() -> dict[str, dict[str, Any]]:
    return {name: body_schema(name) for name in EVENT_TYPES}
