"""The public ``data`` of each webhook event: one pydantic model per shape, one mapping per domain event.

A webhook payload is a public resource, like an API answer: its fields are named and typed here
and nowhere else, and each domain event the dispatcher delivers is mapped to it field by field
(``public_data``). An internal event may gain, lose or rename fields (a new schema, an upcast):
only its mapping here changes, never what receivers get. Nothing internal is copied wholesale:
no storage key, no server path, no demuxer or codec detail; a stored file is a signed URL (with
its expiry), an export is its API URL.

The shapes follow the API's: a job is the job as GET /v1/jobs/{id} shows it, a clip is an item
of ``rendered_clips`` of GET /v1/production/clips/jobs/{jobId}, a video is GET /v1/videos/{id}
right after its upload. Pure: the dispatcher's intake gives the event, what it keeps of the
event's job (``JobFacts``) and the URL maker (``Links``: file URLs are signed by the
infrastructure, with an expiry fixed by the event's time, so a replay makes the same payload).

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

from domain.clip_framing import MAX_SAMPLES
from domain.clip_framing import MODES as FRAMING_MODES

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
    model_config = ConfigDict(extra="forbid")

    environment: Environment = Field(description="the environment of the key whose work this is")


class JobData(_Public):
    """A job as GET /v1/jobs/{id} shows it when it ended."""

    id: UUID
    type: str = Field(description="the job type (analyze_video, video_clip, clip_render, ...)")
    status: str
    progress: int = Field(ge=0, le=100)
    step: str = Field(description="the same as status")
    article_id: int | None
    error_message: str | None = Field(description="why the job failed; null when completed or cancelled")
    created_at: datetime | None = Field(description="when the job was queued")
    result: dict[str, Any] | None = Field(
        description="what a completed job produced, as GET /v1/jobs/{id} shows it (a clip's file as `url` and "
                    "`thumbnail_url`, signed); null unless completed")
    urls_expire_at: datetime | None = Field(
        description="when the signed URLs in `result` stop working; null when it has none")


class CompletedJobData(JobData):
    """``job.completed``: the job as GET /v1/jobs/{id} shows it once it completed."""

    status: Literal["completed"]


class EndedJobData(JobData):
    """``job.failed``: the job as GET /v1/jobs/{id} shows it once it failed or was cancelled (the interface
    has no job.cancelled: ``status`` tells the two apart)."""

    status: Literal["failed", "cancelled"]


class ClipFraming(BaseModel):
    """How a face-following template framed a clip (docs/clips.md, "Following the speaker"): one
    public shape, in ``clip.generated`` and in the clip job's ``rendered_clips``."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal[FRAMING_MODES] = Field(  # type: ignore[valid-type]
        description="follow_face (the crop follows a face, or a pair that fits one window), two_faces (two "
                    "panels, each following one person) or centre_fallback (the centre crop: see reason)")
    faces_seen_pct: int = Field(ge=0, le=100, description="share of the sampled frames with a face")
    samples: int = Field(ge=0, le=MAX_SAMPLES, description="frames looked at (5 per second of the clip)")
    faces: int = Field(ge=0, le=2, description="the people followed: 0 (centre fallback), 1 or 2")
    keyframes: int = Field(ge=0, description="points of the crop's path(s) ffmpeg follows")
    reason: str | None = Field(max_length=200, description="why the centre crop was used; null otherwise")


class ClipData(_Public):
    """``clip.generated``: one rendered clip, as in ``rendered_clips`` of GET /v1/production/clips/jobs/{jobId}."""

    job_id: UUID
    clip_id: str
    url: str | None = Field(description="signed download URL of the clip, valid until urls_expire_at")
    thumbnail_url: str | None = Field(description="signed URL of its thumbnail (template renders)")
    urls_expire_at: datetime = Field(description="when url and thumbnail_url stop working")
    format: str
    duration_ms: int
    size_bytes: int
    width: int | None
    height: int | None
    attempt: int
    rendered_at: datetime
    framing: ClipFraming | None = Field(
        description="how a face-following template framed the clip; null for the other templates")


class VideoData(_Public):
    """``video.uploaded``: the video as GET /v1/videos/{id} shows it right after the upload."""

    id: int
    media_id: int | None
    name: str
    description: str | None
    language: str
    duration_seconds: float
    width: int | None
    height: int | None
    frame_rate: float | None
    size_bytes: int
    status: Literal["uploaded"]
    has_transcript: bool
    analyzed_at: None
    created_at: datetime
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


# The shape of each webhook event's data (the nine names of domain.webhooks.EVENT_NAMES).
MODELS: dict[str, type[_Public]] = {
    "video.uploaded": VideoData,
    "video.analyzed": AnalysisData,
    "article.generated": ArticleData,
    "article.translated": ArticleData,
    "clip.generated": ClipData,
    "export.ready": ExportData,
    "job.completed": CompletedJobData,
    "job.failed": EndedJobData,
    "credits.low": CreditsData,
}


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
    return _clean(shown)


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
    has_urls = bool(result) and "url" in result
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


# Domain event -> its mapping. The webhook name is domain.webhooks.EVENT_FOR's.
MAPPINGS: dict[str, Callable[[Source, Links], _Public]] = {
    "JobCompleted": _job,
    "JobFailed": _job,
    "JobCancelled": _job,
    "ClipRendered": _clip,
    "VideoUploaded": _video,
    "VideoAnalyzed": _analysis,
    "ArticleGenerated": _article,
    "ArticleTranslated": _article,
    "ExportReady": _export,
    "CreditsLow": _credits,
}


def public_data(src: Source, links: Links) -> dict[str, Any]:
    """The ``data`` of the delivery of ``src``, as JSON values."""
    return MAPPINGS[src.type](src, links).model_dump(mode="json")


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
    data = _untitled(MODELS[event_name].model_json_schema())
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
    return {name: body_schema(name) for name in MODELS}
