"""Video: an uploaded media file (and its captions) that the analysis job turns into a Content Graph.

Ids are integers (spec, section 4), allocated from ``video_id_seq`` in the upload command. The
stream holds ``VideoUploaded`` (the probed metadata and where the files are stored), then per
analysis ``VideoGraphRecorded`` (the whole Content Graph, for the read models) and ``VideoAnalyzed``
(a small summary: what webhook subscribers of ``video.analyzed`` receive). The two are appended
together; the graph is kept out of ``VideoAnalyzed`` so that deliveries stay small.

Pricing (pure policy, docs/videos.md): an analysis costs one credit per started minute of video,
twice that with ``quality_profile=premium``; sandbox keys are never charged.
"""

from __future__ import annotations

import math
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, aggregate, deterministic_id

WRITING_STYLES = ("auto", "journalistic", "narrative", "analytical", "tutorial", "conversational", "documentary",
                  "interview")
ANALYSIS_MODES = ("standard", "behavioral")
QUALITY_PROFILES = ("standard", "premium")
ANALYZE_JOB = "analyze_video"
PREMIUM_FACTOR = 2
# Seconds of work per second of video, measured (docs/analysis.md: 10 min of 720p in 20.9 s), plus setup.
ESTIMATE_RATIO = 1 / 25
ESTIMATE_FLOOR_S = 5


class UnsupportedMedia(DomainError):
    code = "unsupported_media_type"
    status = 415


class UnreadableMedia(DomainError):
    code = "unreadable_media"
    status = 400


class MediaTooLarge(DomainError):
    code = "payload_too_large"
    status = 413


def video_stream_id(video_id: int) -> UUID:
    return deterministic_id("video", video_id)


def analysis_price(duration_ms: int, quality_profile: str = "standard") -> int:
    """Credits of one analysis: one per started minute (at least one), doubled for premium."""
    minutes = max(1, math.ceil(duration_ms / 60_000))
    return minutes * (PREMIUM_FACTOR if quality_profile == "premium" else 1)


def estimated_duration_seconds(duration_ms: int) -> int:
    return int(ESTIMATE_FLOOR_S + math.ceil(duration_ms / 1000 * ESTIMATE_RATIO))


@aggregate("Video")
class Video(Aggregate):
    class Uploaded(Aggregate.Created):
        published_as = "VideoUploaded"
        video_id: int
        workspace_id: UUID
        environment: str
        media_id: int | None
        name: str
        description: str | None
        language: str
        storage_key: str
        captions_key: str | None
        size_bytes: int
        duration_ms: int
        width: int | None
        height: int | None
        frame_rate: float | None
        video_codec: str | None
        audio_codec: str | None
        subtitle_tracks: int
        caption_cues: int

    class GraphRecorded(Aggregate.Event):
        published_as = "VideoGraphRecorded"
        job_id: UUID
        graph: dict

    class Analyzed(Aggregate.Event):
        """An analysis of the video is recorded (the ``video.analyzed`` webhook); carries the video's environment."""

        published_as = "VideoAnalyzed"
        schema_version = 2  # 2: environment (None only when upcast from 1: the analysis job's JobQueued has it)
        job_id: UUID
        analysis_mode: str
        article_id: int | None
        geo_readiness_score: float
        counts: dict
        environment: str | None

    @staticmethod
    def create_id(video_id: int) -> UUID:
        return video_stream_id(video_id)

    @event(Uploaded)
    def __init__(self, video_id: int, workspace_id: UUID, environment: str, media_id: int | None, name: str,
                 description: str | None, language: str, storage_key: str, captions_key: str | None,
                 size_bytes: int, duration_ms: int, width: int | None, height: int | None,
                 frame_rate: float | None, video_codec: str | None, audio_codec: str | None, subtitle_tracks: int,
                 caption_cues: int):
        self.video_id = video_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.media_id = media_id
        self.name = name
        self.description = description
        self.language = language
        self.storage_key = storage_key
        self.captions_key = captions_key
        self.size_bytes = size_bytes
        self.duration_ms = duration_ms
        self.width = width
        self.height = height
        self.frame_rate = frame_rate
        self.video_codec = video_codec
        self.audio_codec = audio_codec
        self.subtitle_tracks = subtitle_tracks
        self.caption_cues = caption_cues
        self.analyzed_by: list[UUID] = []

    @classmethod
    def upload(cls, *, video_id: int, workspace_id: UUID, environment: str, name: str, storage_key: str,
               size_bytes: int, duration_ms: int, media_id: int | None = None, description: str | None = None,
               language: str = "fr", captions_key: str | None = None, width: int | None = None,
               height: int | None = None, frame_rate: float | None = None, video_codec: str | None = None,
               audio_codec: str | None = None, subtitle_tracks: int = 0, caption_cues: int = 0) -> Video:
        if not name.strip():
            raise DomainError("name must not be empty", field="name")
        if duration_ms <= 0:
            raise UnreadableMedia("the media has no duration")
        return cls(video_id=video_id, workspace_id=workspace_id, environment=environment, media_id=media_id,
                   name=name.strip(), description=description, language=language, storage_key=storage_key,
                   captions_key=captions_key, size_bytes=size_bytes, duration_ms=duration_ms, width=width,
                   height=height, frame_rate=frame_rate, video_codec=video_codec, audio_codec=audio_codec,
                   subtitle_tracks=subtitle_tracks, caption_cues=caption_cues)

    @property
    def has_transcript(self) -> bool:
        """Captions came with the upload, or the file carries a subtitle track."""
        return self.caption_cues > 0 or self.subtitle_tracks > 0

    def record_analysis(self, *, job_id: UUID, graph: dict, analysis_mode: str, article_id: int | None) -> None:
        """The graph and the summary of one analysis job; a job records once (a retry is a no-op)."""
        if job_id in self.analyzed_by:
            return
        counts = {name: len(graph.get(name) or []) for name in
                  ("claims", "entities", "searchIntents", "clipMoments", "topics", "chapters", "visualElements",
                   "audioElements")}
        self._graph_recorded(job_id=job_id, graph=graph)
        self._analyzed(job_id=job_id, analysis_mode=analysis_mode, article_id=article_id,
                       geo_readiness_score=float(graph.get("summary", {}).get("geoReadinessScore", 0.0)),
                       counts=counts, environment=self.environment)

    @event(GraphRecorded)
    def _graph_recorded(self, job_id: UUID, graph: dict) -> None:
        self.analyzed_by.append(job_id)

    @event(Analyzed)
    def _analyzed(self, job_id: UUID, analysis_mode: str, article_id: int | None, geo_readiness_score: float,
                  counts: dict, environment: str | None) -> None:
        pass
