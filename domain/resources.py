"""The public shape of the resources that the API answers and a webhook delivers, written once.

A job, a video and a rendered clip are each one pydantic model here: the API's response (GET
/v1/jobs/{id}, GET /v1/videos/{id}, an item of ``rendered_clips``) is the model itself, and the
webhook event that carries the resource (``domain.webhook_payloads``) is a subclass of it that
adds what a delivery needs besides (the environment, when its signed URLs expire) and narrows
what is known at that moment (a video just uploaded is ``uploaded``). A field of the resource is
named, typed and described here and nowhere else, so the API and a receiver cannot drift apart.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

from domain.clip_framing import MAX_SAMPLES
from domain.clip_framing import MODES as FRAMING_MODES


class JobDetail(BaseModel):
    """A job, as GET /v1/jobs/{id} shows it."""

    id: UUID
    type: str = Field(description="the job type (analyze_video, video_clip, clip_render, ...)")
    status: str = Field(description="pending, running, completed, failed or cancelled")
    progress: int = Field(ge=0, le=100)
    step: str = Field(description="what the job is doing; once it ended, the same as status")
    article_id: int | None
    error_message: str | None = Field(description="why the job failed (while it is retried: why its last attempt did)")
    created_at: datetime = Field(description="when the job was queued")
    result: dict[str, Any] | None = Field(
        description="extension: what a completed job produced besides article_id (analyze_video: video_id, "
                    "claims, chapters, transcript_source, geo_readiness_score, and article_skipped saying why "
                    "when an article was asked for and none could be written; video_clip: url, a signed URL "
                    "of the clip, format, duration_ms, size_bytes); null unless completed")


class VideoRecord(BaseModel):
    """A video, as GET /v1/videos/{id} shows it."""

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
    status: str = Field(description="uploaded, analyzing or analyzed")
    has_transcript: bool = Field(description="captions came with the upload, the file has a text subtitle track, or an "
                                "analysis recognised words in its speech")
    analyzed_at: datetime | None
    created_at: datetime
    last_job_id: UUID | None
    article_id: int | None = Field(description="the article of the latest analysis, if it wrote one")
    source_url: str | None = Field(default=None, description=(
        "extension, detail and upload only: a signed URL of the uploaded media, valid 24 h, fetched without a "
        "key (Range requests work); see docs/api.md, Files and signed URLs"))


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


class RenderedClip(BaseModel):
    """One rendered clip, as an item of ``rendered_clips`` of GET /v1/production/clips/jobs/{jobId}."""

    clip_id: str
    url: str = Field(description="signed download URL of the clip (docs/api.md, Files and signed URLs)")
    thumbnail_url: str | None = Field(description="signed URL of its thumbnail (template renders)")
    format: str
    duration_ms: int
    size_bytes: int
    width: int | None
    height: int | None
    attempt: int
    rendered_at: datetime
    framing: ClipFraming | None = Field(
        description="extension: how a face-following template framed the clip (null for the other templates)")
