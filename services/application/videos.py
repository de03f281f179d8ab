"""Videos: ingest an upload (probe, measure, store, ``VideoUploaded``) and queue its analysis."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any, Literal
from uuid import UUID

from domain.analysis.language import guess_language
from domain.base import DomainError
from domain.captions import check_captions_fit
from domain.languages import CODES, DEFAULT_LANGUAGE, supported
from domain.media import Media, media_stream_id
from domain.pricing import MediaWork, analysis_price, speech_ms, vision_ms
from domain.videos import (
    ANALYZE_JOB,
    Video,
    billable_duration_ms,
    check_duration,
    check_published_at,
    video_stream_id,
)
from infra.captions import CaptionError, read_caption_upload
from services.application.articles import invalid_field, provider_needed
from services.application.context import Context, with_retries
from services.application.jobs import QueueJob, queue_job
from services.application.ports import FileStore, MediaInspector
from services.application.results import AnalysisQueued, LinksRevoked, Saved

log = logging.getLogger("vaeo.videos")


@dataclass(frozen=True)
class IngestVideo:
    """An upload staged at ``staged`` (a path), with what the client said of it."""

    workspace_id: UUID
    environment: str
    staged: Path
    filename: str
    name: str | None = None
    description: str | None = None
    language: str | None = None
    media_id: int | None = None
    captions: bytes | None = None
    published_at: datetime | None = None


@dataclass(frozen=True)
class ChangeVideoDescription:
    workspace_id: UUID
    environment: str
    video_id: int
    description: str | None


WritingStyle = Literal["auto", "journalistic", "narrative", "analytical", "tutorial", "conversational",
                       "documentary", "interview"]
AnalysisMode = Literal["standard", "behavioral"]
QualityProfile = Literal["standard", "premium"]
TranscriptSource = Literal["auto", "speech"]


@dataclass(frozen=True, kw_only=True)
class AnalysisOptions:
    """What an analysis is asked for, with the interface's defaults (the API's body is checked
    against the same literals). ``outputs`` names the parts asked for (``article``, ``transcript``,
    ``chapters``: true or false); ``language`` None is the video's own; ``transcript_source``
    ``speech`` recognises the audio even where the video has captions; ``analysis_mode``
    ``behavioral`` adds the voice, the turns and the picture."""

    outputs: Mapping[str, bool] = field(default_factory=dict)
    writing_style: WritingStyle = "auto"
    analysis_mode: AnalysisMode = "standard"
    quality_profile: QualityProfile = "standard"
    language: str | None = None
    transcript_source: TranscriptSource = "auto"

    def params(self) -> dict[str, Any]:
        """The options as the job's parameters record them (JSON values)."""
        return {"outputs": dict(self.outputs), "writing_style": self.writing_style,
                "analysis_mode": self.analysis_mode, "quality_profile": self.quality_profile,
                "language": self.language, "transcript_source": self.transcript_source}


@dataclass(frozen=True)
class RequestAnalysis:
    """Analyse a video with ``options``."""

    workspace_id: UUID
    environment: str
    video_id: int
    options: AnalysisOptions = AnalysisOptions()
    webhook_url: str | None = None


async def ingest_video(command: IngestVideo, ctx: Context) -> Saved[Video]:
    """Probe a staged upload, measure it, move it (and its captions) into storage, append ``VideoUploaded``.

    The probe (the media port, ``ctx.app.media``) accepts only the whitelisted containers; a declared duration over
    the application's maximum is refused before the file is read further; then every packet is read
    (bounded by the maximum) to measure how long it really plays, which is the duration recorded,
    priced and analysed (``billable_duration_ms``). The stored file is named by the service, with
    the accepted container's extension; the client's file name only gives the default name.

    Every refusal (not media or not an accepted container: 415; unreadable, damaged, too long: 400;
    bad captions or media id: 400) and every failure after the files were moved deletes them:
    nothing half-stored remains. The staged file is gone when this returns or raises. Captions are
    parsed in a thread, and must fit the media's measured duration (``domain.captions``).

    A thumbnail (the media port's ``poster``: a frame, or an audio file's waveform) is stored beside
    the media for the lists that show the video; a media ffmpeg makes no picture of is uploaded
    all the same, without one. ``published_at`` (when the video went out on its site) must lie
    between 1970 and ``now``; None stands for the upload's time. ``language`` None: the captions'
    language when they say clearly which of the seven (``guess_language``), else ``DEFAULT_LANGUAGE``.
    """
    c, storage, media, now = command, ctx.app.storage, ctx.app.media, ctx.now()
    assert storage is not None and media is not None, "an upload needs the file store and the media port"
    workspace_id, environment, captions, language = c.workspace_id, c.environment, c.captions, c.language
    media_id, published_at = c.media_id, c.published_at
    staged = Path(c.staged)
    stored_keys: list[str] = []
    try:
        limit_ms = ctx.app.max_duration_ms
        info, duration_ms = await _measured(media, staged, limit_ms)
        cues, captions_ext = 0, None
        if captions is not None:
            cues, captions_ext, guessed = await _read_captions(captions, duration_ms, guess=language is None)
            language = language or guessed  # not given: the captions' own language, else the default
        language = language or DEFAULT_LANGUAGE
        if media_id is not None:
            await ctx.load_in(media_stream_id(media_id), Media, workspace_id, environment, "media", media_id)
        if published_at is not None:
            check_published_at(published_at, now)
        video_id = await ctx.next_id("video_id_seq")
        suffix = media.extension(info.demuxer)  # never the client's extension
        folder = f"videos/{workspace_id}/{video_id}"
        source_key = f"{folder}/source{suffix}"
        captions_key = f"{folder}/captions{captions_ext}" if captions_ext else None
        size = staged.stat().st_size
        await asyncio.to_thread(storage.commit, staged, source_key)
        stored_keys.append(source_key)
        if captions_key and captions is not None:  # a key only for captions given
            await asyncio.to_thread(storage.write_bytes, captions_key, captions)
            stored_keys.append(captions_key)
        thumbnail_key = await _store_thumbnail(storage, media, source_key, f"{folder}/thumbnail.jpg", info,
                                               duration_ms)
        if thumbnail_key:
            stored_keys.append(thumbnail_key)
        video = Video.upload(
            video_id=video_id, workspace_id=workspace_id, environment=environment,
            name=c.name or PurePosixPath(c.filename or "").stem or f"video {video_id}", storage_key=source_key,
            size_bytes=size, duration_ms=duration_ms, media_id=media_id, description=c.description,
            language=language, captions_key=captions_key, width=info.width, height=info.height,
            frame_rate=info.frame_rate, video_codec=info.video_codec, audio_codec=info.audio_codec,
            subtitle_tracks=sum(1 for t in info.subtitle_tracks if t.text_based), caption_cues=cues,
            demuxer=info.demuxer, max_duration_ms=limit_ms, published_at=published_at,
            thumbnail_key=thumbnail_key, now=now)
        position = await ctx.save(video, workspace_id=workspace_id)
        stored_keys.clear()
        return Saved(video, position)
    finally:
        staged.unlink(missing_ok=True)
        for key in stored_keys:
            try:  # off the event loop: on an object store, a delete is a request
                await asyncio.to_thread(storage.delete, key)
            except Exception as exc:  # the store went away meanwhile: the first failure is the answer
                log.warning("%s not deleted after a failed upload: %s", key, exc)


async def _measured(media: MediaInspector, staged: Path, limit_ms: int) -> tuple[Any, int]:
    """The staged media probed (whitelisted containers only) and how long it really plays: a
    declared duration past the maximum is refused unread, then every packet is read (bounded)."""
    info = await asyncio.to_thread(media.probe, staged)
    check_duration(info.duration_ms, limit_ms)  # a declared 400 h is refused unread
    measured_ms = await asyncio.to_thread(media.measure, staged, info.demuxer, limit_ms)
    return info, billable_duration_ms(info.duration_ms, measured_ms)


async def _read_captions(captions: bytes, duration_ms: int, *, guess: bool) -> tuple[int, str, str | None]:
    """The uploaded captions' cue count, file extension and, with ``guess``, their language (as
    guessed from their text), once they are read (WebVTT or SRT) and fit the media's measured
    duration."""
    try:  # parsing 5 MiB of captions takes seconds: never on the event loop
        segments, captions_ext = await asyncio.to_thread(read_caption_upload, captions)
    except CaptionError as exc:
        raise DomainError(f"the captions file is not WebVTT or SRT: {exc}", field="captions") from None
    if not segments:
        raise DomainError("the captions file holds no caption", field="captions")
    check_captions_fit(segments, duration_ms)  # the measured duration: a header can lie
    guessed = None
    if guess:  # in a thread: the first guess of a process loads the seven stop-word lists (~1 s)
        guessed = await asyncio.to_thread(guess_language, " ".join(s.text for s in segments[:200]))
    return len(segments), captions_ext, guessed


async def _store_thumbnail(storage: FileStore, media: MediaInspector, source_key: str, key: str, info: Any,
                           duration_ms: int) -> str | None:
    """The thumbnail's storage key once stored; None when ffmpeg makes no picture of this media
    (the upload goes on without one: a picture is not what the upload is for)."""
    source = await asyncio.to_thread(storage.path, source_key)  # an object store's cached copy
    picture = await asyncio.to_thread(lambda: media.poster(source, info.demuxer, duration_ms,
                                                           has_video=info.has_video, mix=info.unnamed_channels))
    if picture is None:
        return None
    await asyncio.to_thread(storage.write_bytes, key, picture)
    return key


async def change_video_description(command: ChangeVideoDescription, ctx: Context) -> Saved[Video]:
    """Replace a video's description (``VideoDescriptionChanged``); position None when it is the
    description already (nothing is recorded)."""
    c = command

    async def attempt() -> Saved[Video]:
        video = await ctx.load_in(video_stream_id(c.video_id), Video, c.workspace_id, c.environment, "video",
                                  c.video_id)
        if not video.change_description(c.description):
            return Saved(video, None)
        return Saved(video, await ctx.save(video, workspace_id=c.workspace_id))

    return await with_retries(attempt)


@dataclass(frozen=True)
class RevokePublicLinks:
    """End every public link of a video's files (``VideoPublicLinksRevoked``)."""

    workspace_id: UUID
    environment: str
    video_id: int


async def revoke_public_links(command: RevokePublicLinks, ctx: Context) -> LinksRevoked:
    """Move the video's public links to a new generation: every link made before answers 404.
    ``(generation, position)``."""
    c = command

    async def attempt() -> LinksRevoked:
        video = await ctx.load_in(video_stream_id(c.video_id), Video, c.workspace_id, c.environment, "video",
                                  c.video_id)
        generation = video.revoke_public_links()
        return LinksRevoked(generation, await ctx.save(video, workspace_id=c.workspace_id))

    return await with_retries(attempt)


async def request_analysis(command: RequestAnalysis, ctx: Context) -> AnalysisQueued:
    """Queue the analysis job of a video and charge its price in the same append (402 when short).

    Sandbox keys are never charged (``credits`` 0 in the job's params): their work is free and
    their failures refund nothing. ``options.language`` None means the video's own language (the
    one given at upload, ``fr`` when none was); ``language_given`` records whether the request
    named it (speech is recognised in a named language, else its language is detected). Speech
    recognition is charged when it will run: ``transcript_source`` ``speech``, or a video with
    neither a captions file nor an embedded subtitle track (``speech_ms``: the audio decoded,
    bounded by the application's ``speech_max_ms``). ``analysis_mode`` ``behavioral`` of a video
    with a picture adds the frames seen (``vision_max_ms`` at most). ``quality_profile`` ``premium`` needs the
    language model provider: without one it is refused (503 ``provider_not_configured``, as a
    translation is) before anything is written or charged, rather than charged and refunded when
    its job fails. Returns (job, video, price, position).
    """
    workspace_id, environment, video_id = command.workspace_id, command.environment, command.video_id
    video = await ctx.load_in(video_stream_id(video_id), Video, workspace_id, environment, "video", video_id)
    asked = command.options
    if asked.quality_profile == "premium" and not ctx.app.provider_configured:
        raise provider_needed("a premium analysis (quality_profile premium)")
    language = supported(asked.language or video.language)
    if language is None:  # a video recorded with a language the service does not write
        raise invalid_field("body.language", "unsupported_language",
                            f"the video's language is not one the service analyses and writes; name one of "
                            f"{', '.join(CODES)} with language")
    options = {**asked.params(), "language_given": bool(asked.language), "language": language}
    recognises = asked.transcript_source == "speech" or not (video.captions_key or video.subtitle_tracks)
    audio_ms = speech_ms(video.duration_ms, ctx.app.speech_max_ms) if recognises and video.audio_codec else 0
    picture_ms = vision_ms(video.duration_ms, ctx.app.vision_max_ms, video.width is not None) if (
        asked.analysis_mode == "behavioral") else 0
    price = 0 if environment == "sandbox" else analysis_price(video.duration_ms, asked.quality_profile, audio_ms,
                                                              picture_ms)
    job, position = await queue_job(QueueJob(workspace_id, ANALYZE_JOB, environment=environment,
                                             params={**options, "video_id": video_id}, credits=price,
                                             charge_reason=f"analysis of video {video_id}",
                                             webhook_url=command.webhook_url,
                                             work=MediaWork(decoded_ms=video.duration_ms)), ctx)
    return AnalysisQueued(job, video, price, position)
