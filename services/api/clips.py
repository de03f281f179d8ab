"""Clips: POST /videos/{id}/clips (a range cut as it is), GET /production/templates, POST
/production/clips/detect, POST /production/clips/render, GET /production/clips/jobs/{jobId}.

The operations queue jobs (``services.jobs.clips``) and answer 202; their outcome is read from the
job (GET /jobs/{id}: a simple clip's ``result``) or the clip jobs read model (the tracking
object). Files are never in a read model as URLs: ``rendered_clips`` and a simple clip's result
carry storage keys, turned into signed URLs (``infra.file_urls``) each time they are read.
What a request asks of a video it cannot give (a range past its end, mp3 of a silent video, a
render clip whose ``duration_ms`` disagrees with its range) is a 400 naming the field. See
docs/clips.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from domain.clip_detection import MODES
from domain.clips import (
    CLIP_FORMATS,
    MAX_CLIP_ID,
    MAX_CLIPS,
    MAX_PROMPT,
    MAX_RATIONALE,
    MAX_TARGET_S,
    MAX_TITLE,
    MIN_TARGET_S,
    REFRAMES,
    SYSTEM_TEMPLATES,
    ClipRefused,
    preview_data_url,
)
from domain.resources import RenderedClip
from domain.videos import MAX_DURATION_MS
from domain.webhook_payloads import public_result
from infra.file_urls import signed_url
from projections import clip_jobs_queries as queries
from services.api.base import SETTINGS, ApiError, Call, Route, integer_id, not_found
from services.api.errors import found
from services.api.models import Name, Text
from services.application import clips as commands

INT32 = 2_147_483_647
WEBHOOK_URL = {"min_length": 8, "max_length": 2048, "pattern": r"^https://[^\s\u0000]+$"}
MIN_JOB_ID, MAX_JOB_ID = 16, 160


# ------------------------------------------------------------------------------------ models


class VideoClipRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    start_ms: int = Field(ge=0, le=INT32, description="where the clip starts in the video, milliseconds")
    end_ms: int = Field(ge=1, le=INT32, description="where it ends: after start_ms, at most the video's duration")
    format: Literal[CLIP_FORMATS] = Field(  # type: ignore[valid-type]
        default="mp4", description="mp4 (H.264 + AAC), webm (VP9 + Opus) or mp3 (audio only)")
    webhook_url: str | None = Field(default=None, description="receives job.completed or job.failed",
                                    **WEBHOOK_URL)


class ClipJobCreated(BaseModel):
    job_id: UUID
    status: str
    type: str
    credits_charged: int = Field(description="extension: credits charged (0 for sandbox keys)")


class ClipJobCreatedResponse(BaseModel):
    data: ClipJobCreated


class TemplateItem(BaseModel):
    id: int
    name: str
    format: str = Field(description="the aspect ratio, such as 9:16")
    target_duration_seconds: int
    is_system: bool
    is_default: bool
    is_customized: bool
    thumbnail_available: bool
    thumbnail_url: str = Field(description="extension: the template's preview (an SVG data URL)")
    width: int = Field(description="extension: the rendered clip's width, pixels")
    height: int = Field(description="extension: the rendered clip's height, pixels")
    reframe: Literal[REFRAMES] = Field(  # type: ignore[valid-type]
        description="extension: crop (centred), blur_fill (the whole picture over a blurred fill) or follow_face "
                    "(cropped around the person, the centre when no face is seen)")
    captions: bool = Field(description="extension: captions are burned from the transcript")
    title_seconds: float = Field(description="extension: the clip's title shows this long at its start")


class TemplateList(BaseModel):
    data: list[TemplateItem]


class DetectRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    article_id: int = Field(ge=1, le=INT32)
    template_id: int = Field(ge=1, le=INT32)
    target_duration_seconds: int | None = Field(default=None, ge=MIN_TARGET_S, le=MAX_TARGET_S,
                                                description="default: the template's target duration")
    requested_clip_count: int = Field(default=10, ge=1, le=MAX_CLIPS)
    analysis_mode: Literal[MODES] = "multimodal"  # type: ignore[valid-type]
    prompt: Text(MAX_PROMPT) | None = None
    protect_sentence_boundaries: bool = True
    duration_margin_enabled: bool = True
    duration_margin_percent: int = Field(default=10, ge=0, le=50)
    allow_shorter_duration: bool = True
    allow_longer_duration: bool = False


class RenderClip(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: Name(MAX_CLIP_ID)
    title: Name(MAX_TITLE)
    thumbnail_title: Text(MAX_TITLE) | None = None
    start_ms: float = Field(ge=0, le=MAX_DURATION_MS)
    end_ms: float = Field(gt=0, le=MAX_DURATION_MS)
    duration_ms: float = Field(gt=0, le=MAX_DURATION_MS)
    viral_score: float | None = Field(default=None, ge=0, le=100)
    rationale: Text(MAX_RATIONALE) | None = None


class RenderRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    article_id: int = Field(ge=1, le=INT32)
    template_id: int = Field(ge=1, le=INT32)
    target_duration_seconds: int | None = Field(default=None, ge=MIN_TARGET_S, le=MAX_TARGET_S)
    clips: list[RenderClip] = Field(min_length=1, max_length=MAX_CLIPS)


class ProductionJobCreated(BaseModel):
    job_id: UUID
    type: Literal["clip_detection", "clip_render"]
    status: str
    reused: bool = Field(description="true when an identical earlier request's job is answered")
    credits_charged: int = Field(description="extension: credits this request charged (0 when reused or sandbox)")


class ProductionJobCreatedResponse(BaseModel):
    data: ProductionJobCreated


class ClipJobTracking(BaseModel):
    job_id: UUID
    type: str = Field(description="clip_detection, clip_render or video_clip")
    status: str = Field(description="queued, detecting or rendering, completed, failed, cancelled (docs/clips.md)")
    progress: int = Field(ge=0, le=100)
    stage: str
    article_id: int | None
    template_id: int | None
    target_duration_seconds: int | None
    clips: list[dict[str, Any]] = Field(description="the detected clips (detection) or the requested ones (render)")
    rendered_clips: list[RenderedClip]
    failed_clips: list[dict[str, Any]] = Field(description="clip_id, error, attempt of each clip whose last "
                                                           "attempt failed")
    attempts: int
    max_attempts: int
    next_attempt_at: datetime | None
    error: dict[str, Any] | None = Field(description="message, attempt, final (false while a retry is coming)")
    credits_used: int = Field(description="credits charged, less what was refunded")
    started_at: datetime = Field(description="when the job was accepted")
    completed_at: datetime | None
    updated_at: datetime
    video_id: int | None = Field(description="extension: the video the clips are cut from")
    shortfall_reason: str | None = Field(description="extension: why a detection found fewer clips than asked")


class ClipJobTrackingResponse(BaseModel):
    data: ClipJobTracking


# ------------------------------------------------------------------------------------ helpers


def refused(exc: ClipRefused) -> ApiError:
    """A request the video cannot satisfy: 400 naming the body field, like a validation error."""
    field = exc.details.get("field", "")
    extra = {k: v for k, v in exc.details.items() if k not in ("field", "rule")}
    return ApiError(400, "validation_error", exc.message,
                    {"fields": [{"field": f"body.{field}", "rule": exc.details.get("rule", "invalid"),
                                 "message": exc.message}], **extra})


def file_url(call: Call, key: str | None) -> str | None:
    return signed_url(call.app[SETTINGS], call.workspace_id, key) if key else None


def present_result(call: Call, result: dict | None) -> dict | None:
    """A job's result as clients read it, the same rule as its webhook's: a stored clip's key
    becomes its signed URL, and no internal name (a storage key, a path) shows at any depth."""
    return public_result(result, lambda key: file_url(call, key)) if result else result


# ------------------------------------------------------------------------------------ handlers


async def create_video_clip(call: Call) -> dict:
    body: VideoClipRequest = call.body
    video_id = integer_id(call.path("id"), "video")
    try:
        job, price, position = await call.context.handle(commands.RequestClip(
            call.workspace_id, call.environment, video_id, start_ms=body.start_ms, end_ms=body.end_ms,
            fmt=body.format, webhook_url=body.webhook_url))
    except ClipRefused as exc:
        raise refused(exc) from None
    await call.read_your_writes("jobs", position)
    return {"data": {"job_id": job.id, "status": job.status, "type": job.job_type, "credits_charged": price}}


async def list_templates(call: Call) -> dict:
    return {"data": [{**t.to_dict(), "thumbnail_url": preview_data_url(t)} for t in SYSTEM_TEMPLATES]}


async def detect_clips(call: Call) -> dict:
    body: DetectRequest = call.body
    try:
        job, reused, price, position = await call.context.handle(commands.RequestDetection(
            call.workspace_id, call.environment, **body.model_dump()))
    except ClipRefused as exc:
        raise refused(exc) from None
    return await _created(call, job, reused, 0 if reused else price, position)


async def render_clips(call: Call) -> dict:
    body: RenderRequest = call.body
    request = body.model_dump()
    for clip in request["clips"]:  # milliseconds are whole: the interface's numbers, rounded
        for name in ("start_ms", "end_ms", "duration_ms"):
            clip[name] = round(clip[name])
    try:
        job, reused, price, position = await call.context.handle(commands.RequestRender(
            call.workspace_id, call.environment, **request))
    except ClipRefused as exc:
        raise refused(exc) from None
    return await _created(call, job, reused, 0 if reused else price, position)


async def _created(call: Call, job, reused: bool, price: int, position: int | None) -> dict:
    if position is not None:
        await call.read_your_writes("clip_jobs", position)
    return {"data": {"job_id": job.id, "type": job.job_type, "status": _status(job.job_type, job.status),
                     "reused": reused, "credits_charged": price}}


def _status(job_type: str, status: str) -> str:
    """The job's status in the tracking object's words (``pending`` is ``queued`` there)."""
    if status == "pending":
        return "queued"
    if status == "running":
        return "detecting" if job_type == "clip_detection" else "rendering"
    return status


def _job_id(call: Call) -> UUID:
    raw = call.path("jobId")
    if not MIN_JOB_ID <= len(raw) <= MAX_JOB_ID:
        rule = "string_too_short" if len(raw) < MIN_JOB_ID else "string_too_long"
        raise ApiError(400, "validation_error", f"invalid request: path.jobId is {MIN_JOB_ID} to {MAX_JOB_ID} "
                       "characters", {"fields": [{"field": "path.jobId", "rule": rule,
                                                  "message": f"{MIN_JOB_ID} to {MAX_JOB_ID} characters"}]})
    try:
        return UUID(raw)
    except ValueError:
        raise not_found("clip job", raw) from None


async def get_clip_job(call: Call) -> dict:
    job_id = _job_id(call)
    row = found(await queries.tracking(call.pool, job_id, call.workspace_id, call.environment), "clip job", job_id)
    rendered = [{"clip_id": c["clip_id"], "url": file_url(call, c["file_key"]),
                 "thumbnail_url": file_url(call, c.get("thumbnail_key")), "format": c["format"],
                 "duration_ms": c["duration_ms"], "size_bytes": c["size_bytes"], "width": c.get("width"),
                 "height": c.get("height"), "attempt": c["attempt"], "rendered_at": c["rendered_at"],
                 "framing": c.get("framing")}
                for c in row["rendered_clips"]]
    return {"data": {
        "job_id": row["job_id"], "type": row["type"], "status": row["status"], "progress": row["progress"],
        "stage": row["stage"], "article_id": row["article_id"], "template_id": row["template_id"],
        "target_duration_seconds": row["target_duration_seconds"], "clips": row["clips"],
        "rendered_clips": rendered, "failed_clips": row["failed_clips"], "attempts": row["attempts"],
        "max_attempts": row["max_attempts"], "next_attempt_at": row["next_attempt_at"], "error": row["error"],
        "credits_used": row["credits_charged"] - row["credits_refunded"], "started_at": row["started_at"],
        "completed_at": row["completed_at"], "updated_at": row["updated_at"], "video_id": row["video_id"],
        "shortfall_reason": row["shortfall_reason"]}}


def describe_tracking(document: dict) -> dict:
    """The length rule of the tracking route's ``jobId`` in the generated document (the route
    matches any text there, so that a wrong length answers 400 rather than an unknown route)."""
    op = document.get("paths", {}).get("/production/clips/jobs/{jobId}", {}).get("get")
    for param in (op or {}).get("parameters", []):
        if param["name"] == "jobId":
            param["schema"] = {"type": "string", "minLength": MIN_JOB_ID, "maxLength": MAX_JOB_ID}
    return document


ROUTES = [
    Route("POST", "/videos/{id}/clips", create_video_clip, scope="clips:create", tag="Clips", status=202,
          body=VideoClipRequest, response=ClipJobCreatedResponse, writes=True, errors=(402, 404, 429),
          summary="Queue a clip of the video: the range start_ms-end_ms re-encoded frame-accurately as mp4, webm "
                  "or mp3; GET /jobs/{id} shows its signed URL when done; 400 for a range past the video's end or "
                  "mp3 of a video without audio"),
    Route("GET", "/production/templates", list_templates, scope="production:read", tag="Clips",
          response=TemplateList, summary="The system templates (9:16, 1:1, 16:9; two follow the speaker's face), "
                                         "exactly one default"),
    Route("POST", "/production/clips/detect", detect_clips, scope="clips:create", tag="Clips", status=202,
          body=DetectRequest, response=ProductionJobCreatedResponse, writes=True, errors=(402, 404, 429),
          summary="Queue the detection of up to requested_clip_count clips in the article's video; an identical "
                  "request answers its earlier job (reused true)"),
    Route("POST", "/production/clips/render", render_clips, scope="clips:create", tag="Clips", status=202,
          body=RenderRequest, response=ProductionJobCreatedResponse, writes=True, errors=(402, 404, 429),
          summary="Queue the render of 1 to 50 clips with a template; each appears in rendered_clips as soon as "
                  "it is done; an identical request answers its earlier job (reused true)"),
    Route("GET", "/production/clips/jobs/{jobId}", get_clip_job, scope="jobs:read", tag="Clips",
          response=ClipJobTrackingResponse, errors=(400, 404),
          summary="The tracking object of a clip job (jobId 16-160 characters)"),
]
