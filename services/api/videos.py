"""Videos: upload (extension), list, detail, analyze, and the analysis reads.

``POST /videos`` (scope ``analyses:create``: uploading is the first half of an analysis, and
``videos:read`` only reads) takes ``multipart/form-data``: ``file`` (required, the media),
``captions`` (optional, WebVTT or SRT), ``name``, ``media_id``, ``language`` (default: the captions' language, else fr),
``description``, ``published_at`` (when the video went out on its site, ISO 8601 with a timezone;
default the upload's time). ``PATCH /videos/{id}`` (an extension) replaces the description. The
media is streamed to a staging file (never held in memory), probed with ffprobe and moved into
storage only once accepted; a refusal leaves nothing behind. Limits: the
media ``VAEO_VIDEO_MAX_BYTES`` (2 GiB by default), captions ``VAEO_CAPTIONS_MAX_BYTES`` (5 MiB): 413.

The analysis reads answer 404 ``analysis_not_found`` until an analysis has completed (run
``POST /videos/{id}/analyze``). Another workspace's or environment's video answers 404 like a
missing one. See docs/videos.md for every record.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal
from uuid import UUID

import orjson
from aiohttp import web
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from domain.analysis.model import Segment
from domain.languages import CODES, TAG_PATTERN
from domain.resources import VideoRecord
from domain.videos import estimated_duration_seconds, video_stream_id
from infra.captions import transcript_srt, transcript_webvtt
from infra.file_urls import signed_url
from infra.storage import storage_for
from projections import content_graph_queries as graphs
from projections import videos_queries as queries
from services.api.base import SETTINGS, ApiError, Call, Route, integer_id
from services.api.errors import found, validation_error
from services.api.models import NAME_PATTERN, TEXT_PATTERN, Language, Name, Text
from services.api.uploads import Upload, check_upload_request, read_upload
from services.application import videos as commands

# ------------------------------------------------------------------------------------ models


class UploadFields(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name(500) | None = None
    description: Text(5000) | None = None
    # Omitted: the captions' language when they say clearly which of the seven, else fr.
    language: Language() | None = None
    media_id: int | None = Field(default=None, ge=1, le=2_147_483_647)
    published_at: AwareDatetime | None = None


class VideoUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: Text(5000) | None = Field(description="the new description; null or blank: none")


class VideoResponse(BaseModel):
    data: VideoRecord


class Pagination(BaseModel):
    limit: int
    offset: int
    has_more: bool


class VideoList(BaseModel):
    data: list[VideoRecord]
    pagination: Pagination


class VideosQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    limit: int = Field(default=20, ge=1, le=100, description="page size, 1 to 100")
    offset: int = Field(default=0, ge=0, le=1_000_000_000, description="videos to skip, newest first")


class Outputs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    article: bool = True
    transcript: bool = False
    chapters: bool = False


class AnalyzeVideo(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outputs: Outputs = Field(default_factory=Outputs)
    writing_style: commands.WritingStyle = "auto"
    # behavioral: also what the voice and turns show and what the person in the picture does (its frames
    # seen window by window; priced per started minute of picture).
    analysis_mode: commands.AnalysisMode = "standard"
    quality_profile: commands.QualityProfile = "standard"
    # Omitted: the video's language (given at upload, or the captions', else fr).
    language: Language() | None = None
    # Omitted (auto): captions, else an embedded text track, else the speech recognised from the audio;
    # "speech": recognise the audio even when the video has captions.
    transcript_source: commands.TranscriptSource = "auto"
    webhook_url: str | None = Field(default=None, min_length=8, max_length=2048, pattern=r"^https://[^\s\u0000]+$")


class AnalyzeResult(BaseModel):
    job_id: UUID
    status: str
    type: str
    estimated_duration_seconds: int
    credits_charged: int = Field(description="extension: credits charged for this analysis (0 for sandbox keys)")


class AnalyzeResponse(BaseModel):
    data: AnalyzeResult


class ListResponse(BaseModel):
    data: list[dict[str, Any]]


class ObjectResponse(BaseModel):
    data: dict[str, Any]


# ------------------------------------------------------------------------------------ helpers


def _record(r) -> dict:
    return {"id": r["id"], "media_id": r["media_id"], "name": r["name"], "description": r["description"],
            "language": r["language"], "duration_seconds": round(r["duration_ms"] / 1000, 3), "width": r["width"],
            "height": r["height"], "frame_rate": r["frame_rate"], "size_bytes": r["size_bytes"],
            "status": r["status"], "has_transcript": r["has_transcript"], "analyzed_at": r["analyzed_at"],
            "created_at": r["created_at"], "last_job_id": r["last_job_id"], "article_id": r["last_article_id"]}


def video_id_of(call: Call) -> int:
    return integer_id(call.path("id"), "video")


# ------------------------------------------------------------------------------------ handlers


@dataclass
class _Staged:
    """An upload read to its staging file (``stage_upload``), and the digest of what it held."""

    path: Any
    upload: Upload
    digest: str


async def stage_upload(call: Call) -> dict:
    """Read the multipart body: the media to a staging file (discarded once the call is answered),
    the rest kept on the call (``call.prepared``). Returns what identifies the upload (the digest of
    its parts), which an ``Idempotency-Key`` is bound to: the route's ``fingerprint``."""
    settings = call.app[SETTINGS]
    check_upload_request(call.request, settings)
    storage = storage_for(settings)
    staged = storage.staging_path(str(call.workspace_id))
    call.cleanups.append(partial(storage.discard, staged))
    digest = hashlib.sha256()
    upload = await read_upload(call.request, settings, staged, digest)
    digest.update(orjson.dumps([upload.filename, upload.captions and hashlib.sha256(upload.captions).hexdigest(),
                                upload.fields], option=orjson.OPT_SORT_KEYS))
    call.prepared = _Staged(staged, upload, digest.hexdigest())
    return {"upload": call.prepared.digest}


async def upload_video(call: Call) -> dict:
    settings = call.app[SETTINGS]
    if call.prepared is None:
        await stage_upload(call)
    staged, upload = call.prepared.path, call.prepared.upload
    if staged.stat().st_size == 0:
        raise ApiError(400, "unreadable_media", "the uploaded file is empty", {"field": "file"})
    try:
        form = UploadFields.model_validate({k: v for k, v in upload.fields.items() if v != ""})
    except ValidationError as exc:
        raise validation_error(exc, "body") from None
    video, position = await call.context.handle(commands.IngestVideo(
        call.workspace_id, call.environment, staged, filename=upload.filename, name=form.name,
        description=form.description, language=form.language, media_id=form.media_id,
        captions=upload.captions, published_at=form.published_at))
    await call.read_your_writes("videos", position)
    row = await queries.one(call.pool, video.video_id, call.workspace_id, call.environment)
    source_url = signed_url(settings, call.workspace_id, video.storage_key)
    if row is not None:
        return {"data": _record(row) | {"source_url": source_url}}
    return {"data": {"id": video.video_id, "media_id": video.media_id, "name": video.name,
                     "description": video.description, "language": video.language,
                     "duration_seconds": round(video.duration_ms / 1000, 3), "width": video.width,
                     "height": video.height, "frame_rate": video.frame_rate, "size_bytes": video.size_bytes,
                     "status": "uploaded", "has_transcript": video.has_transcript, "analyzed_at": None,
                     "created_at": video.created_on, "last_job_id": None, "article_id": None,
                     "source_url": source_url}}


async def list_videos(call: Call) -> dict:
    q: VideosQuery = call.query
    rows = await queries.page(call.pool, call.workspace_id, call.environment, q.limit + 1, q.offset)
    return {"data": [_record(r) for r in rows[:q.limit]],
            "pagination": {"limit": q.limit, "offset": q.offset, "has_more": len(rows) > q.limit}}


async def get_video(call: Call) -> dict:
    video_id = video_id_of(call)
    row = found(await queries.one(call.pool, video_id, call.workspace_id, call.environment), "video", video_id)
    storage_key = row["storage_key"]
    if storage_key is None:  # a row written before the read model had it (projections.videos), until rebuilt
        [video] = await call.store.fetch_latest(video_stream_id(video_id))  # read only
        storage_key = video.storage_key if video else None
    source_url = signed_url(call.app[SETTINGS], call.workspace_id, storage_key) if storage_key else None
    return {"data": _record(row) | {"source_url": source_url}}


async def update_video(call: Call) -> dict:
    body: VideoUpdate = call.body
    video_id = video_id_of(call)
    video, position = await call.context.handle(commands.ChangeVideoDescription(
        call.workspace_id, call.environment, video_id, description=body.description))
    if position is not None:
        await call.read_your_writes("videos", position)
        await call.read_your_writes("revival_candidates", position)
    # None: the read model has not seen the upload yet
    row = found(await queries.one(call.pool, video_id, call.workspace_id, call.environment), "video", video_id)
    return {"data": _record(row) | {"source_url": signed_url(call.app[SETTINGS], call.workspace_id,
                                                                video.storage_key)}}


class PublicLinksRevoked(BaseModel):
    video_id: int
    generation: int = Field(description="the video's new link generation: every public link made before is a 404")


class PublicLinksRevokedResponse(BaseModel):
    data: PublicLinksRevoked


async def revoke_public_links(call: Call) -> dict:
    video_id = video_id_of(call)
    generation, position = await call.context.handle(commands.RevokePublicLinks(
        call.workspace_id, call.environment, video_id))
    await call.read_your_writes("videos", position)
    return {"data": {"video_id": video_id, "generation": generation}}


async def analyze_video(call: Call) -> dict:
    body: AnalyzeVideo = call.body
    video_id = video_id_of(call)
    options = commands.AnalysisOptions(
        outputs=body.outputs.model_dump(), writing_style=body.writing_style, analysis_mode=body.analysis_mode,
        quality_profile=body.quality_profile, language=body.language, transcript_source=body.transcript_source)
    job, video, price, position = await call.context.handle(commands.RequestAnalysis(
        call.workspace_id, call.environment, video_id, options=options, webhook_url=body.webhook_url))
    await call.read_your_writes("jobs", position)
    return {"data": {"job_id": job.id, "status": job.status, "type": job.job_type,
                     "estimated_duration_seconds": estimated_duration_seconds(video.duration_ms),
                     "credits_charged": price}}


async def _graph(call: Call) -> dict:
    video_id = video_id_of(call)
    row = await graphs.of_video(call.pool, video_id, call.workspace_id, call.environment)
    if row is None:
        found(await queries.one(call.pool, video_id, call.workspace_id, call.environment), "video", video_id)
        raise ApiError(404, "analysis_not_found",
                       f"video {video_id} has not been analysed yet: run POST /v1/videos/{video_id}/analyze "
                       f"and wait for the job to complete", {"id": str(video_id)})
    return row["graph"]


def _member(name: str, default: Any):
    async def read(call: Call) -> dict:
        graph = await _graph(call)
        return {"data": graph.get(name, default)}

    return read


async def get_claims(call: Call) -> dict:
    return await _member("claims", [])(call)


async def get_entities(call: Call) -> dict:
    return await _member("entities", [])(call)


async def get_intents(call: Call) -> dict:
    return await _member("searchIntents", [])(call)


async def get_moments(call: Call) -> dict:
    return await _member("clipMoments", [])(call)


async def get_topics(call: Call) -> dict:
    return await _member("topics", [])(call)


async def get_visual_elements(call: Call) -> dict:
    return await _member("visualElements", [])(call)


async def get_audio_elements(call: Call) -> dict:
    return await _member("audioElements", [])(call)


async def get_narrative(call: Call) -> dict:
    graph = await _graph(call)
    parts = graph.get("narrative", [])
    return {"data": {"parts": parts, "structure": [p.get("part") for p in parts],
                     "chapters": graph.get("chapters", []), "speakers": graph.get("speakers", {})}}


async def get_video_graph(call: Call) -> dict:
    return {"data": await _graph(call)}


class TranscriptQuery(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal["vtt", "srt", "json"] = Field(default="vtt", description="vtt (WebVTT), srt or json")
    download: int = Field(default=0, ge=0, le=1, description="1: Content-Disposition attachment with a file name")


TRANSCRIPT_TYPES = {"vtt": "text/vtt; charset=utf-8", "srt": "application/x-subrip; charset=utf-8",
                    "json": "application/json"}


class TranscriptSegment(BaseModel):
    startMs: int  # noqa: N815  (the graph's names)
    endMs: int  # noqa: N815
    text: str
    speaker: str | None


class Transcript(BaseModel):
    transcript_source: dict[str, Any] | None = Field(description="how the text was obtained (captions or speech)")
    language: str | None
    segments: list[TranscriptSegment]


class TranscriptResponse(BaseModel):
    """``?format=json``; the other formats are text (``describe_transcript``)."""

    data: Transcript


async def get_transcript(call: Call) -> web.Response | dict:
    """The transcript of the latest analysis: the recognised speech of a video without captions (or
    the caption segments when that analysis asked for ``outputs.transcript``)."""
    q: TranscriptQuery = call.query
    video_id = video_id_of(call)
    graph = await _graph(call)
    if not graph.get("transcript"):
        raise ApiError(404, "transcript_not_found",
                       f"the latest analysis of video {video_id} kept no transcript: it is kept when the speech was "
                       f"recognised, or when the analysis asked for outputs.transcript", {"id": str(video_id)})
    segments = [Segment(int(s["startMs"]), int(s["endMs"]), str(s["text"]), s.get("speaker"))
                for s in graph["transcript"]]
    if q.format == "json":
        return {"data": {"transcript_source": graph.get("transcriptSource"), "language": graph.get("language"),
                         "segments": [s.to_dict() for s in segments]}}
    body = transcript_webvtt(segments) if q.format == "vtt" else transcript_srt(segments)
    headers = {"Content-Type": TRANSCRIPT_TYPES[q.format], "X-Content-Type-Options": "nosniff",
               "Cache-Control": "private, no-cache"}
    if q.download:
        headers["Content-Disposition"] = f'attachment; filename="video-{video_id}-transcript.{q.format}"'
    return web.Response(text=body, headers=headers)


_READ_ERRORS = (404,)
ROUTES = [
    Route("POST", "/videos", upload_video, scope="analyses:create", tag="Videos", status=201, response=VideoResponse,
          writes=True, errors=(400, 404, 413, 415), fingerprint=stage_upload,
          summary="Extension: upload a video (multipart/form-data: file, captions, name, media_id, language, "
                  "description); 415 not media or not an accepted container, 400 unreadable or longer than "
                  "the maximum duration, 413 over the size limit"),
    Route("GET", "/videos", list_videos, scope="videos:read", tag="Videos", query=VideosQuery, response=VideoList,
          summary="The caller's environment's videos, newest first (limit 1-100, offset)"),
    Route("GET", "/videos/{id}", get_video, scope="videos:read", tag="Videos", response=VideoResponse,
          errors=_READ_ERRORS, summary="One video record"),
    Route("PATCH", "/videos/{id}", update_video, scope="analyses:create", tag="Videos", body=VideoUpdate,
          response=VideoResponse, writes=True, errors=(404,),
          summary="Extension: replace the video's description (VideoDescriptionChanged); revival candidates "
                  "decided on the previous one become stale"),
    Route("DELETE", "/videos/{id}/public-links", revoke_public_links, scope="analyses:create", tag="Videos",
          response=PublicLinksRevokedResponse, writes=True, errors=(404,),
          summary="Extension: revoke every public link (/v1/public/...) of the video's file and poster "
                  "(VideoPublicLinksRevoked); exports made afterwards show new links"),
    Route("POST", "/videos/{id}/analyze", analyze_video, scope="analyses:create", tag="Videos", status=202,
          body=AnalyzeVideo, response=AnalyzeResponse, writes=True, errors=(402, 404, 429),
          summary="Queue the analysis job; credits charged at once (402 insufficient_credits); sandbox keys "
                  "are free within a daily quota (429 sandbox_quota_exceeded)"),
    Route("GET", "/videos/{id}/claims", get_claims, scope="analyses:read", tag="Videos", response=ListResponse,
          errors=_READ_ERRORS, summary="Claims of the latest analysis (404 until analyzed)"),
    Route("GET", "/videos/{id}/entities", get_entities, scope="analyses:read", tag="Videos", response=ListResponse,
          errors=_READ_ERRORS, summary="Named entities of the latest analysis"),
    Route("GET", "/videos/{id}/intents", get_intents, scope="analyses:read", tag="Videos", response=ListResponse,
          errors=_READ_ERRORS, summary="Search intents of the latest analysis"),
    Route("GET", "/videos/{id}/moments", get_moments, scope="analyses:read", tag="Videos", response=ListResponse,
          errors=_READ_ERRORS, summary="Clip moments of the latest analysis"),
    Route("GET", "/videos/{id}/narrative", get_narrative, scope="analyses:read", tag="Videos",
          response=ObjectResponse, errors=_READ_ERRORS,
          summary="Narrative structure (hook, context, development, conclusion), chapters and speakers"),
    Route("GET", "/videos/{id}/topics", get_topics, scope="analyses:read", tag="Videos", response=ListResponse,
          errors=_READ_ERRORS, summary="Topics of the latest analysis"),
    Route("GET", "/videos/{id}/visual-elements", get_visual_elements, scope="analyses:read", tag="Videos",
          response=ListResponse, errors=_READ_ERRORS,
          summary="Shots between scene changes; after an analysis_mode=behavioral analysis, first one 'behaviour' "
                  "element per signal of what the person in the picture does (summary, shares, timeline)"),
    Route("GET", "/videos/{id}/audio-elements", get_audio_elements, scope="analyses:read", tag="Videos",
          response=ListResponse, errors=_READ_ERRORS, summary="Silences, speech, music and loudness"),
    Route("GET", "/videos/{id}/transcript", get_transcript, scope="analyses:read", tag="Videos",
          query=TranscriptQuery, response=TranscriptResponse, errors=_READ_ERRORS,
          summary="Extension: the transcript of the latest analysis (the recognised speech of a video without "
                  "captions) as WebVTT (?format=vtt, the default), SRT or JSON; 404 transcript_not_found when "
                  "that analysis kept none"),
    Route("GET", "/videos/{id}/graph", get_video_graph, scope="analyses:read", tag="Videos",
          response=ObjectResponse, errors=_READ_ERRORS, summary="The whole Content Graph of the latest analysis"),
]


def describe_transcript(document: dict) -> dict:
    """The transcript's text formats beside its JSON one in the generated document (the route
    table knows JSON answers only); JSON stays first, the form a client generator reads."""
    op = document.get("paths", {}).get("/videos/{id}/transcript", {}).get("get")
    if op is not None:
        content = op["responses"]["200"].setdefault("content", {})
        for fmt, kind in TRANSCRIPT_TYPES.items():
            if fmt != "json":
                content.setdefault(kind.split(";")[0], {"schema": {"type": "string", "description": fmt}})
    return document


def describe_upload(document: dict) -> dict:
    """Add the multipart body of POST /videos to the generated document (the route table knows JSON bodies only)."""
    op = document.get("paths", {}).get("/videos", {}).get("post")
    if op is not None and "requestBody" not in op:
        op["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": {
            "type": "object", "required": ["file"], "additionalProperties": False,
            "properties": {
                "file": {"type": "string", "format": "binary", "description": "the media (video or audio)"},
                "captions": {"type": "string", "format": "binary", "description": "WebVTT or SRT captions"},
                "name": {"type": "string", "minLength": 1, "maxLength": 500, "pattern": NAME_PATTERN},
                "media_id": {"type": "integer", "minimum": 1},
                "language": {"type": "string", "minLength": 2, "maxLength": 35, "pattern": TAG_PATTERN,
                             "description": "one of " + ", ".join(CODES) + ", as a tag in any case (en-US "
                                            "names en); default: the captions' language, else fr"},
                "description": {"type": "string", "maxLength": 5000, "pattern": TEXT_PATTERN},
                "published_at": {"type": "string", "format": "date-time",
                                 "description": "when the video went out on its site (with a timezone); default "
                                                "the upload's time"},
            }}}}}
    return document
