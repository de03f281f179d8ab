"""The clip job types: ``video_clip`` (a range cut as it is), ``clip_detection`` (clip
opportunities in an article's video) and ``clip_render`` (clips made with a template).

Cuts and renders are items of their job (``JobContext.run_items``): each clip is made, probed,
stored and announced (``ClipRendered``, with its ``JobItemCompleted``) as soon as it is done; a
clip that fails is recorded (``ClipRenderFailed`` with ``JobItemFailed``) and made again by the
job's next attempt, which leaves the clips already made alone. ``video_clip`` is a job of one
item, whose result (the file, its format, duration and size) is also the job's.

Every ffmpeg run goes through ``infra.media``'s checked argument lists and ``run_killable``: a
timeout scaled to the clip's length (``clip_timeout_base_s`` + ``clip_timeout_per_second`` per
second), a kill of its process group when the job's task is cancelled, and at most
``worker_ffmpeg_processes`` runs of this worker at once. Outputs are written to staging files,
probed (duration within ``CLIP_TOLERANCE_MS`` of the range, the video stream, the template's
size), then moved into storage under ``clips/<workspace>/<job>/``; staging files are deleted
whatever happens, and stored files whose clip could not be recorded are deleted too.

Detection reads the article's transcript (the video's captions or subtitle track) and the content
graph its analysis recorded, and runs ``domain.clip_detection.detect`` off the loop; its clips
commit with the job's completion (``ClipsDetected``). With a ``prompt`` and an OpenAI-compatible
provider configured (``VAEO_LLM_BASE_URL``, ``VAEO_LLM_MODEL``), the provider rates the best
windows for the prompt (``shortlist``, ``rating_messages``, ``parse_ratings``) and its ratings
replace the offline matching of the prompt's terms; its tokens are recorded (``clips.detect``).
"""

from __future__ import annotations

import asyncio
from functools import partial
from pathlib import Path
from uuid import UUID

from domain.analysis.sentences import split_sentences
from domain.articles import Article, article_stream_for_job
from domain.clip_detection import DetectionRequest, InvalidRatings, detect, parse_ratings, rating_messages, shortlist
from domain.clip_framing import MIN_SOURCE_SIDE, Framing, fallback, oriented, plan_framing
from domain.clip_overlay import ass_script, title_layout
from domain.clips import (
    DETECTION_JOB,
    RENDER_JOB,
    VIDEO_CLIP_JOB,
    ClipDetection,
    ClipRender,
    Template,
    caption_pages,
    clip_slug,
    detection_stream_id,
    frame_ms,
    render_stream_id,
    template,
)
from domain.llm_usage import LlmUsage
from domain.videos import Video, video_stream_id
from infra import provision
from infra.captions import CaptionError
from infra.eventstore import ConcurrencyError
from infra.llm import ChatProvider, ProviderError
from infra.media.clips import (
    caption_font,
    check_clip,
    clip_timeout,
    clip_tolerance_ms,
    cut_argv,
    render_argv,
    thumbnail_argv,
)
from infra.media.ffmpeg import MediaError, run_killable, scrub
from infra.media.probe import probe
from infra.settings import Settings
from infra.storage import Storage, storage_for
from infra.vision.faces import face_samples
from infra.vision.models import VisionUnavailable
from services.jobs.context import ItemDone, JobContext, JobHandlers
from services.jobs.errors import PermanentJobError
from services.jobs.transcripts import read_transcript

# Staging files of clip work are named clip-<job id>-<what>-<random>: deleted when the clip is done
# or has failed; a worker killed meanwhile leaves them to the storage's sweep of old staging files.
STAGING_LABEL = "clip"


def staging_label(job_id: UUID, what: str) -> str:
    """The staging file label of one job's clip work: whose leftovers they are is in the name."""
    return f"{STAGING_LABEL}-{job_id.hex}-{what}"
THUMBNAIL_AT_MS = 1000  # the thumbnail's frame: a second in (past a fade-in), or the clip's middle if shorter


class ClipFault(Exception):
    """The test-only failure of a clip's first attempt (``clip_fail_once``)."""


class ClipWork:
    """What the clip handlers of one worker share: settings, storage and the ffmpeg slots."""

    def __init__(self, settings: Settings, storage: Storage | None = None) -> None:
        self.settings = settings
        self.storage = storage or storage_for(settings)
        self.provider = ChatProvider.from_settings(settings)  # reads a detection's prompt, when configured
        self.slots = asyncio.Semaphore(settings.worker_ffmpeg_processes)
        faults = settings.clip_fail_once if settings.mode != "production" else ""
        self.fail_once = frozenset(x.strip() for x in faults.split(",") if x.strip())

    def timeout(self, duration_ms: int) -> float:
        return clip_timeout(duration_ms, self.settings.clip_timeout_base_s,
                            self.settings.clip_timeout_per_second)

    async def run(self, args: list[str], duration_ms: int, what: str) -> None:
        await run_killable(args, self.timeout(duration_ms), what, self.slots)

    async def unnamed_channels(self, ctx: JobContext, source: Path, video: Video) -> int | None:
        """The audio channels to mix down, when the file names no layout for them (probed: the
        upload did not record them)."""
        if video.audio_codec is None:
            return None
        return (await ctx.run_blocking(partial(probe, demuxer=video.demuxer), source)).unnamed_channels

    def discard(self, *keys: str) -> None:
        for key in keys:
            self.storage.delete(key)

    # ---- what every job of the flow loads

    async def load(self, ctx: JobContext) -> tuple[ClipRender, Video]:
        render = await ctx.store.fetch_for_writing(render_stream_id(ctx.job_id))
        if not isinstance(render, ClipRender):
            raise PermanentJobError("the job's clips are not recorded")
        video = await self.video(ctx, render.video_id)
        return render, video

    async def video(self, ctx: JobContext, video_id: int) -> Video:
        video = await ctx.store.fetch_for_writing(video_stream_id(video_id))
        if not isinstance(video, Video) or video.workspace_id != ctx.workspace_id:
            raise PermanentJobError(f"video {video_id} not found")
        if not self.storage.exists(video.storage_key):
            raise PermanentJobError(f"the media file of video {video_id} is missing from storage")
        if not video.demuxer:
            raise PermanentJobError(f"video {video_id} was stored before its container was recorded; upload it again")
        return video

    def key(self, ctx: JobContext, clip_id: str, suffix: str) -> str:
        """Where a clip's file goes: its job's folder, a name made of the clip id (never the
        client's text as it is) and the attempt, so that two attempts never write one file."""
        return f"clips/{ctx.workspace_id}/{ctx.job_id}/{clip_slug(clip_id)}.{ctx.attempt}{suffix}"

    def check_fault(self, ctx: JobContext, clip_id: str) -> None:
        if clip_id in self.fail_once and ctx.attempt == 1:
            raise ClipFault(f"clip {clip_id} failed on purpose on its first attempt (test setting clip_fail_once)")

    def failure_events(self, render: ClipRender, ctx: JobContext):
        def events(clip_id: str, message: str) -> list:
            render.record_failed(clip_id, attempt=ctx.attempt, error_message=message)
            return list(render.collect_events())

        return events

    async def store(self, ctx: JobContext, staged: Path, key: str) -> None:
        await ctx.run_blocking(self.storage.commit, staged, key)


# ------------------------------------------------------------------------------------ video_clip


def _tolerance(video, fmt: str) -> int:
    """How far the written clip may last from its range: a frame of the source for a picture."""
    has_picture = fmt != "mp3" and video.video_codec is not None
    return clip_tolerance_ms(frame_ms(video.frame_rate) if has_picture else None)


async def cut_video_clip(ctx: JobContext, work: ClipWork) -> dict:
    render, video = await work.load(ctx)
    [clip] = render.clips
    fmt = render.format

    async def cut(clip_id: str) -> ItemDone:
        work.check_fault(ctx, clip_id)
        await ctx.progress(10, f"cutting the clip ({fmt})")
        duration = clip["end_ms"] - clip["start_ms"]
        staged = work.storage.staging_path(staging_label(ctx.job_id, "cut"))
        key = work.key(ctx, clip_id, f".{fmt}")
        try:
            source = await ctx.run_blocking(work.storage.path, video.storage_key)
            mix = await work.unnamed_channels(ctx, source, video)
            await work.run(cut_argv(source, video.demuxer, clip["start_ms"],
                                    clip["end_ms"], fmt, staged, has_video=video.video_codec is not None,
                                    has_audio=video.audio_codec is not None, mix=mix),
                           duration, "cutting the clip")
            made = await ctx.run_blocking(partial(check_clip, tolerance_ms=_tolerance(video, fmt)),
                                          staged, fmt, duration)
            await work.store(ctx, staged, key)
        finally:
            work.storage.discard(staged)
        render.record_rendered(clip_id, attempt=ctx.attempt, file_key=key, thumbnail_key=None,
                               duration_ms=made.duration_ms, size_bytes=made.size_bytes, width=made.width,
                               height=made.height)
        return ItemDone({"file_key": key, "format": fmt, "duration_ms": made.duration_ms,
                         "size_bytes": made.size_bytes}, list(render.collect_events()), lambda: work.discard(key))

    results = await ctx.run_items([clip["id"]], cut, failure_events=work.failure_events(render, ctx), progress=(10, 95))
    return dict(results[clip["id"]])


# ------------------------------------------------------------------------------------ clip_render


async def render_clips(ctx: JobContext, work: ClipWork) -> dict:
    render, video = await work.load(ctx)
    chosen = template(render.template_id or 0)
    if chosen is None:
        raise PermanentJobError(f"template {render.template_id} does not exist")
    await ctx.progress(2, "reading the transcript")
    try:
        segments, _ = await ctx.run_blocking(read_transcript, work.storage, video,
                                             work.settings.media_timeout(video.duration_ms))
    except (CaptionError, MediaError) as exc:
        raise PermanentJobError(f"reading the transcript: {scrub(str(exc))}") from exc
    await ctx.run_blocking(provision.ensure, "fonts-dejavu-core")
    order = [c["id"] for c in render.clips]

    async def make(clip_id: str) -> ItemDone:
        clip = render.clip(clip_id)
        position = order.index(clip_id) + 1
        await ctx.progress(max(ctx.job.progress, 3), f"rendering clip {position} of {len(order)}")
        work.check_fault(ctx, clip_id)
        return await _render_one(ctx, work, render, video, chosen, clip, segments)

    results = await ctx.run_items(order, make, failure_events=work.failure_events(render, ctx), progress=(5, 99))
    return {"rendered": len(results), "template_id": chosen.id}


async def _render_one(ctx: JobContext, work: ClipWork, render: ClipRender, video: Video, chosen: Template,
                      clip: dict, segments: list) -> ItemDone:
    start, end = clip["start_ms"], clip["end_ms"]
    duration = end - start
    source = await ctx.run_blocking(work.storage.path, video.storage_key)
    staged = {name: work.storage.staging_path(staging_label(ctx.job_id, name))
              for name in ("render", "thumbnail", "captions", "cover")}
    clip_key = work.key(ctx, clip["id"], ".mp4")
    thumbnail_key = work.key(ctx, clip["id"], ".jpg")
    try:
        framing = await _framing(ctx, work, video, chosen, start, end)
        captions = caption_pages(segments, start, end, chosen)
        font = caption_font()
        title = title_layout(chosen, clip.get("title") or "", font)
        cover = title_layout(chosen, clip.get("thumbnail_title") or clip.get("title") or "", font, cover=True)
        title_ms = min(duration, int(chosen.title_seconds * 1000))
        staged["captions"].write_text(ass_script(chosen, captions, title, font=font, title_ms=title_ms),
                                      encoding="utf-8")
        staged["cover"].write_text(ass_script(chosen, [], font=font, centre=cover), encoding="utf-8")
        mix = await work.unnamed_channels(ctx, source, video)
        await work.run(render_argv(source, video.demuxer, start, end, chosen, staged["captions"],
                                   staged["render"], has_audio=video.audio_codec is not None, framing=framing,
                                   mix=mix),
                       duration, "rendering the clip")
        made = await ctx.run_blocking(partial(check_clip, size=(chosen.width, chosen.height),
                                              tolerance_ms=_tolerance(video, "mp4")), staged["render"], "mp4", duration)
        at = start + min(THUMBNAIL_AT_MS, duration // 2)
        await work.run(thumbnail_argv(source, video.demuxer, at, chosen, staged["cover"], staged["thumbnail"],
                                      framing=framing.still((at - start) / 1000) if framing else None),
                       1000, "making the thumbnail")
        if not staged["thumbnail"].is_file() or staged["thumbnail"].stat().st_size == 0:
            raise MediaError("making the thumbnail: ffmpeg wrote no image")
        await work.store(ctx, staged["render"], clip_key)
        await work.store(ctx, staged["thumbnail"], thumbnail_key)
    except BaseException:
        work.discard(clip_key, thumbnail_key)
        raise
    finally:
        for path in staged.values():
            work.storage.discard(path)
    render.record_rendered(clip["id"], attempt=ctx.attempt, file_key=clip_key, thumbnail_key=thumbnail_key,
                           duration_ms=made.duration_ms, size_bytes=made.size_bytes, width=made.width,
                           height=made.height, framing=framing.summary() if framing else None)
    return ItemDone({"file_key": clip_key, "thumbnail_key": thumbnail_key, "duration_ms": made.duration_ms,
                     "size_bytes": made.size_bytes}, list(render.collect_events()),
                    lambda: work.discard(clip_key, thumbnail_key))


async def _framing(ctx: JobContext, work: ClipWork, video: Video, chosen: Template, start: int,
                   end: int) -> Framing | None:
    """Where a face-following template's window goes (None for the other templates): the faces of
    the range sampled and planned (``domain.clip_framing``), or the centre crop, with its reason,
    when the picture is too small or its frames cannot be read in time."""
    if chosen.reframe != "follow_face":
        return None
    if not video.width or not video.height or min(video.width, video.height) < MIN_SOURCE_SIDE:
        return fallback(f"the picture is smaller than {MIN_SOURCE_SIDE} pixels: no face to follow")
    try:
        source = await ctx.run_blocking(work.storage.path, video.storage_key)
        async with work.slots:  # its ffmpeg run counts among the worker's
            track = await ctx.run_blocking(partial(face_samples, timeout=work.timeout(end - start)),
                                           source, video.demuxer, start, end)
    except MediaError as exc:
        return fallback(scrub(str(exc)))
    except VisionUnavailable as exc:  # no face detector on this machine: the centre crop, and why
        return fallback(f"face tracking is unavailable: {scrub(str(exc))}")
    src_w, src_h = oriented((video.width, video.height), track.frame_size)
    return plan_framing(track.samples, src_w, src_h, chosen.width, chosen.height)


# ------------------------------------------------------------------------------------ clip_detection


async def _article_graph(ctx: JobContext, video_id: int, article_job_id: UUID) -> dict:
    """The content graph the article's analysis recorded on the video (``VideoGraphRecorded``)."""
    for ev in reversed(await ctx.store.read_stream(video_stream_id(video_id))):
        if ev.type == "VideoGraphRecorded" and ev.data.get("job_id") == str(article_job_id):
            return ev.data["graph"]
    raise PermanentJobError("the content graph the article was written from is not recorded")


async def detect_clips(ctx: JobContext, work: ClipWork) -> dict:
    detection = await ctx.store.fetch_for_writing(detection_stream_id(ctx.job_id))
    if not isinstance(detection, ClipDetection):
        raise PermanentJobError("the detection request is not recorded")
    article_job_id = UUID(ctx.params["article_job_id"])
    article = await ctx.store.fetch_for_writing(article_stream_for_job(article_job_id))
    if not isinstance(article, Article):
        raise PermanentJobError(f"article {detection.article_id} not found")
    video = await work.video(ctx, detection.video_id)
    await ctx.progress(10, "reading the transcript and the content graph")
    graph = await _article_graph(ctx, video.video_id, article_job_id)
    try:
        segments, _ = await ctx.run_blocking(read_transcript, work.storage, video,
                                             work.settings.media_timeout(video.duration_ms))
    except (CaptionError, MediaError) as exc:
        raise PermanentJobError(f"reading the transcript: {scrub(str(exc))}") from exc
    sentences = await ctx.run_blocking(split_sentences, segments, article.language or video.language)
    await ctx.checkpoint()
    await ctx.progress(40, "detecting clips")
    options = detection.options
    request = DetectionRequest(
        target_ms=detection.target_duration_seconds * 1000, requested_clip_count=options["requested_clip_count"],
        analysis_mode=options["analysis_mode"], prompt=options.get("prompt"),
        protect_sentence_boundaries=options["protect_sentence_boundaries"],
        duration_margin_enabled=options["duration_margin_enabled"],
        duration_margin_percent=options["duration_margin_percent"],
        allow_shorter_duration=options["allow_shorter_duration"],
        allow_longer_duration=options["allow_longer_duration"])
    rated = None
    if request.prompt and work.provider is not None:
        await ctx.progress(55, "rating the candidate clips for the prompt (provider)")
        windows = await ctx.run_blocking(shortlist, sentences, graph, request)
        if windows:
            rated = await _provider_ratings(ctx, work.provider, request.prompt, windows)
        await ctx.checkpoint()
    found = await ctx.run_blocking(detect, sentences, graph, request, rated)
    detection.record(found.clips, found.shortfall_reason, found.signals)
    ctx.record_with_completion(list(detection.collect_events()))
    return {"clips": len(found.clips), "shortfall_reason": found.shortfall_reason}


DETECT_OPERATION = "clips.detect"  # LlmUsageRecorded.operation of the prompt's ratings (GET /usage/llm)


async def _provider_ratings(ctx: JobContext, provider: ChatProvider, prompt: str,
                            windows: list[dict]) -> dict[tuple[int, int], int]:
    """The provider's relevance of each window to the prompt. Its usage is recorded at once (the
    tokens are spent whatever happens next); a failure or an answer that is not the ratings fails
    the job with the reason, refunded, rather than pass the offline matching off as the provider's."""
    try:
        completion = await provider.complete(rating_messages(prompt, windows))
    except ProviderError as exc:
        raise PermanentJobError(f"the provider that reads the prompt failed: {exc}; no clip was detected") from None
    usage = LlmUsage.record(call_key=f"{ctx.job_id}:{DETECT_OPERATION}:attempt-{ctx.attempt}",
                            workspace_id=ctx.workspace_id, environment=ctx.environment, operation=DETECT_OPERATION,
                            prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                            job_id=ctx.job_id)
    try:
        await ctx.save_now(usage)
    except ConcurrencyError:
        pass  # this call is recorded already
    if completion.finish_reason == "length":
        raise PermanentJobError("the provider's ratings were cut at its length limit; no clip was detected")
    try:
        return parse_ratings(completion.content, windows)
    except InvalidRatings as exc:
        raise PermanentJobError(f"the provider's ratings were refused: {exc}; no clip was detected") from None


def register_clip_jobs(handlers: JobHandlers, settings: Settings, storage: Storage | None = None) -> JobHandlers:
    """Add the three clip job types to ``handlers`` (one ``ClipWork``: its ffmpeg slots are the worker's)."""
    work = ClipWork(settings, storage)

    async def video_clip(ctx: JobContext) -> dict:
        return await cut_video_clip(ctx, work)

    async def clip_render(ctx: JobContext) -> dict:
        return await render_clips(ctx, work)

    async def clip_detection(ctx: JobContext) -> dict:
        return await detect_clips(ctx, work)

    handlers.register(VIDEO_CLIP_JOB)(video_clip)
    handlers.register(RENDER_JOB)(clip_render)
    handlers.register(DETECTION_JOB)(clip_detection)
    return handlers
