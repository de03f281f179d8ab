"""Clips: queue a simple clip of a video, a clip detection on an article, a render of clips.

Each loads what the request names from the event store (404 when it is not the caller's), checks
the request against the video (``domain.clips``: a range inside it, a format it can give), prices
it (``domain.pricing``; sandbox keys pay nothing) and queues its job with the clip flow's own
event (``ClipRenderQueued`` or ``ClipDetectionQueued``) in the same append as ``JobQueued`` and
the charge. Detection and render are durable and idempotent: an identical request of the same
workspace and environment names the same job (``queue_job_once``) and is answered with it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any
from uuid import UUID

from domain.articles import Article
from domain.base import NotFound
from domain.clips import (
    DETECTION_JOB,
    MAX_RENDER_CLIP_MS,
    RENDER_FORMAT,
    RENDER_JOB,
    VIDEO_CLIP_JOB,
    ClipDetection,
    ClipRefused,
    ClipRender,
    Template,
    check_format,
    check_range,
    check_render_clips,
    frame_ms,
    template,
)
from domain.pricing import MediaWork, SandboxAllowance, clip_price, detection_price, render_clip_price
from domain.videos import Video, video_stream_id
from services.application.articles import load_article
from services.application.context import Context
from services.application.jobs import QueueJob, queue_job, queue_job_once
from services.application.results import PricedJob, PricedJobOnce

SIMPLE_CLIP_ID = "clip"  # the one item of a video_clip job


def _sandbox_clip_max(sandbox: SandboxAllowance | None) -> int | None:
    """The longest clip a sandbox key may cut or render (its work is free, so bounded by size);
    None for production keys, whose bounds are the interface's."""
    return sandbox.clip_max_ms if sandbox is not None else None


def _has_video(video: Video) -> bool:
    return video.video_codec is not None


def _has_audio(video: Video) -> bool:
    return video.audio_codec is not None


@dataclass(frozen=True)
class RequestClip:
    """Cut ``[start_ms, end_ms)`` of a video as ``fmt``."""

    workspace_id: UUID
    environment: str
    video_id: int
    start_ms: int
    end_ms: int
    fmt: str
    webhook_url: str | None = None


@dataclass(frozen=True)
class RequestDetection:
    """Detect clips in an article's video with a template: the request's fields, defaults filled in
    (``target_duration_seconds`` None: the template's)."""

    workspace_id: UUID
    environment: str
    article_id: int
    template_id: int
    target_duration_seconds: int | None
    requested_clip_count: int
    analysis_mode: str
    prompt: str | None
    protect_sentence_boundaries: bool
    duration_margin_enabled: bool
    duration_margin_percent: int
    allow_shorter_duration: bool
    allow_longer_duration: bool


@dataclass(frozen=True)
class RequestRender:
    """Render the requested clips of an article's video with a template (each clip: ``id``,
    ``title``, ``start_ms``, ``end_ms``, ``duration_ms`` and its optional fields, as the interface
    takes them)."""

    workspace_id: UUID
    environment: str
    article_id: int
    template_id: int
    target_duration_seconds: int | None
    clips: Sequence[Mapping[str, Any]]


def _request(command: RequestDetection | RequestRender) -> dict[str, Any]:
    """The canonical request, as the client sent it with the defaults filled in: its hash names the
    job (``queue_job_once``), so an identical request finds the same job."""
    request = {f.name: getattr(command, f.name) for f in fields(command) if f.name not in ("workspace_id",
                                                                                          "environment")}
    if "clips" in request:
        request["clips"] = [dict(clip) for clip in request["clips"]]
    return request


async def request_clip(command: RequestClip, ctx: Context) -> PricedJob:
    """Queue the cut; 400 (``ClipRefused``) for a range past the video's end or a format its streams
    cannot give. Returns (job, price, position)."""
    c = command
    workspace_id, environment, video_id = c.workspace_id, c.environment, c.video_id
    start_ms, end_ms, fmt = c.start_ms, c.end_ms, c.fmt
    video = await ctx.load_in(video_stream_id(video_id), Video, workspace_id, environment, "video", video_id)
    check_range(start_ms, end_ms, video.duration_ms, max_ms=_sandbox_clip_max(ctx.sandbox_allowance(environment)))
    check_format(fmt, has_audio=_has_audio(video), has_video=_has_video(video))
    price = 0 if environment == "sandbox" else clip_price(end_ms - start_ms)
    clip = {"id": SIMPLE_CLIP_ID, "title": video.name, "start_ms": start_ms, "end_ms": end_ms,
            "duration_ms": end_ms - start_ms}

    def announce(job_id: UUID) -> list[Any]:
        render = ClipRender.queue(job_id=job_id, workspace_id=workspace_id, environment=environment,
                                  video_id=video_id, clips=[clip], fmt=fmt)
        return list(render.collect_events())

    job, position = await queue_job(QueueJob(
        workspace_id, VIDEO_CLIP_JOB, environment=environment,
        params={"video_id": video_id, "start_ms": start_ms, "end_ms": end_ms, "format": fmt,
                "item_credits": {SIMPLE_CLIP_ID: price}},
        credits=price, charge_reason=f"clip of video {video_id}", webhook_url=c.webhook_url,
        work=MediaWork(clip_ms=end_ms - start_ms), announce=announce), ctx)
    return PricedJob(job, price, position)


async def load_article_video(ctx: Context, workspace_id: UUID, environment: str, article_stream_id: UUID,
                             article_id: int) -> tuple[Article, Video]:
    """The article (404 unless it is the caller's) and the video it was written from (400 when it
    has none: clips are cut from a video)."""
    article = await ctx.load_in(article_stream_id, Article, workspace_id, environment, "article", article_id)
    if article.video_id is None:
        raise ClipRefused("the article was not written from a video, and clips are cut from one",
                          field="article_id", rule="no_video")
    video = await ctx.load_in(video_stream_id(article.video_id), Video, workspace_id, environment, "video",
                              article.video_id)
    return article, video


def _template(template_id: int) -> Template:
    """The system template ``template_id``; 404 when there is none."""
    chosen = template(template_id)
    if chosen is None:
        raise NotFound("template not found", id=str(template_id))
    return chosen


async def _loaded(ctx: Context, command: RequestDetection | RequestRender) -> tuple[Template, Article, Video]:
    """What the request names, in the order a client learns of it: the template (404), the article
    (404 unless the caller's: found by its id on the write side, never through a read model, which
    may not yet have applied the article an analysis has just written) and its video (400 when the
    article has none)."""
    chosen = _template(command.template_id)
    article = await load_article(ctx, command.workspace_id, command.environment, command.article_id)
    article, video = await load_article_video(ctx, command.workspace_id, command.environment, article.id,
                                              command.article_id)
    return chosen, article, video


async def request_detection(command: RequestDetection, ctx: Context) -> PricedJobOnce:
    """Queue the detection, or find the identical earlier request's job: (job, reused, price,
    position of the append or None)."""
    c = command
    chosen, article, video = await _loaded(ctx, c)
    request, environment = _request(c), c.environment
    request["target_duration_seconds"] = c.target_duration_seconds or chosen.target_duration_seconds
    price = 0 if environment == "sandbox" else detection_price(video.duration_ms)
    options = {k: v for k, v in request.items() if k not in ("article_id", "template_id", "target_duration_seconds")}

    def announce(job_id: UUID) -> list[Any]:
        detection = ClipDetection(job_id=job_id, workspace_id=c.workspace_id, environment=environment,
                                  article_id=article.article_id, video_id=video.video_id, template_id=chosen.id,
                                  target_duration_seconds=request["target_duration_seconds"], options=options)
        return list(detection.collect_events())

    job, reused, position = await queue_job_once(QueueJob(
        c.workspace_id, DETECTION_JOB, environment=environment,
        params={"article_id": article.article_id, "video_id": video.video_id,
                "article_job_id": str(article.job_id), "template_id": chosen.id},
        credits=price, charge_reason=f"clip detection in article {article.article_id}", announce=announce),
        ctx, operation=DETECTION_JOB, request=request)
    return PricedJobOnce(job, reused, price, position)


async def request_render(command: RequestRender, ctx: Context) -> PricedJobOnce:
    """Queue the render of the requested clips with the template, each an item of the job priced on
    its own (what failed is refunded), or find the identical earlier request's job: (job, reused,
    price, position of the append or None). 400 (``ClipRefused``) for a clip outside the video or
    whose duration disagrees."""
    c = command
    chosen, article, video = await _loaded(ctx, c)
    request, environment = _request(c), c.environment
    clips = request["clips"]
    check_render_clips(clips, video.duration_ms, frame_ms(video.frame_rate),
                       max_ms=_sandbox_clip_max(ctx.sandbox_allowance(environment)) or MAX_RENDER_CLIP_MS)
    if not _has_video(video):
        raise ClipRefused("the article's video has no video stream: a template render needs a picture",
                          field="article_id", rule="no_video")
    free = environment == "sandbox"
    item_credits = {clip["id"]: 0 if free else render_clip_price(clip["end_ms"] - clip["start_ms"]) for clip in clips}
    price = sum(item_credits.values())

    def announce(job_id: UUID) -> list[Any]:
        render = ClipRender.queue(job_id=job_id, workspace_id=command.workspace_id, environment=environment,
                                  video_id=video.video_id, clips=clips, fmt=RENDER_FORMAT,
                                  article_id=article.article_id, template_id=chosen.id,
                                  target_duration_seconds=request.get("target_duration_seconds"))
        return list(render.collect_events())

    job, reused, position = await queue_job_once(QueueJob(
        command.workspace_id, RENDER_JOB, environment=environment,
        params={"article_id": article.article_id, "video_id": video.video_id, "template_id": chosen.id,
                "item_credits": item_credits},
        credits=price, charge_reason=f"render of {len(clips)} clips of article {article.article_id}",
        announce=announce, work=MediaWork(clip_ms=sum(clip["end_ms"] - clip["start_ms"] for clip in clips))),
        ctx, operation=RENDER_JOB, request=request)
    return PricedJobOnce(job, reused, price, position)
