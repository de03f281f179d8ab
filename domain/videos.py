"""Video: an uploaded media file (and its captions) that the analysis job turns into a Content Graph.

Ids are integers (as the interface numbers videos), allocated from ``video_id_seq`` in the upload command. The
stream holds ``VideoUploaded`` (the probed metadata and where the files are stored), then per
analysis ``VideoGraphRecorded`` (the whole Content Graph, for the read models) and ``VideoAnalyzed``
(a small summary: what webhook subscribers of ``video.analyzed`` receive). The two are appended
together; the graph is kept out of ``VideoAnalyzed`` so that deliveries stay small.

Pricing (pure policy, docs/videos.md): an analysis costs one credit per started minute of video,
twice that with ``quality_profile=premium``; sandbox keys are never charged. The minutes are those
the service measured of the accepted bytes (``billable_duration_ms``), never a header's word alone,
and the analysis reads no more than that.

Bounds: every value of ``VideoUploaded`` that a read model stores is checked here before the event
exists (``Video.upload``), so that no accepted upload can stop a projection: the duration is at
most ``MAX_DURATION_MS`` (12 h, 400 ``media_too_long`` beyond), ids and counts fit a PostgreSQL
``integer``, sizes a ``bigint``, dimensions and frame rates are those of real video.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, aggregate, deterministic_id, schema_change
from domain.languages import DEFAULT_LANGUAGE

WRITING_STYLES = ("auto", "journalistic", "narrative", "analytical", "tutorial", "conversational", "documentary",
                  "interview")
ANALYSIS_MODES = ("standard", "behavioral")
QUALITY_PROFILES = ("standard", "premium")
ANALYZE_JOB = "analyze_video"
# Seconds of work per second of video, measured (docs/analysis.md: 10 min of 720p in 20.9 s), plus setup.
ESTIMATE_RATIO = 1 / 25
ESTIMATE_FLOOR_S = 5

# The longest media accepted (a setting may lower it, never raise it): 12 h is longer than any
# recording the analysis is meant for, and keeps every duration well inside an int32 of ms.
MAX_DURATION_MS = 12 * 3600 * 1000
# A container's duration is trusted when the packets end within this of it (the last packet's own
# length, an audio priming delay); beyond, the packets' measure is the duration.
DURATION_TOLERANCE_MS = 1000
INT32_MAX = 2 ** 31 - 1
INT64_MAX = 2 ** 63 - 1
MAX_DIMENSION = 65_535  # pixels: no codec encodes more (H.264/HEVC/AV1 stop far below)
MAX_FRAME_RATE = 1000.0
MAX_CODEC_NAME = 64
MAX_DESCRIPTION = 5000  # characters: the upload's own bound on a description
# A publication date is when the video went out on its site: never before the first day of Unix
# time (no video site is older), never after its upload (a little clock skew between the client
# and us allowed).
EARLIEST_PUBLICATION = datetime(1970, 1, 1, tzinfo=UTC)
PUBLICATION_SKEW = timedelta(minutes=5)


class UnsupportedMedia(DomainError):
    code = "unsupported_media_type"
    status = 415


class UnreadableMedia(DomainError):
    code = "unreadable_media"
    status = 400


class MediaTooLarge(DomainError):
    code = "payload_too_large"
    status = 413


class MediaTooLong(DomainError):
    code = "media_too_long"
    status = 400


def max_duration_ms(setting_s: float | None = None) -> int:
    """The maximum in force: the setting (seconds) when given, never above ``MAX_DURATION_MS``."""
    if setting_s is None or setting_s <= 0:
        return MAX_DURATION_MS
    return min(MAX_DURATION_MS, int(setting_s * 1000))


def check_duration(duration_ms: int, limit_ms: int = MAX_DURATION_MS) -> None:
    """400 ``media_too_long`` above the maximum (checked on the header before measuring, and on
    the measure), 400 ``unreadable_media`` when there is nothing to play."""
    if duration_ms > min(limit_ms, MAX_DURATION_MS):
        limit_ms = min(limit_ms, MAX_DURATION_MS)
        raise MediaTooLong(f"the media lasts longer than the maximum of {limit_ms / 1000:g} seconds",
                           max_duration_seconds=limit_ms / 1000, field="file")
    if duration_ms <= 0:
        raise UnreadableMedia("the media has no duration")


def billable_duration_ms(declared_ms: int, measured_ms: int) -> int:
    """The duration an upload is priced and analysed by: the container's own figure when the
    packets the service read end within ``DURATION_TOLERANCE_MS`` of it, else the packets' end.

    A header can state anything: a playlist or an edited header declaring half a second around ten
    minutes of packets is priced ten minutes, one declaring hours around three seconds, three
    seconds. Agreeing figures keep the header's exact value (the measure ends on the last
    packet's start, a frame away from the true end, and must not tip a 60.0 s video into a
    second minute)."""
    if abs(measured_ms - declared_ms) <= DURATION_TOLERANCE_MS:
        return declared_ms
    return measured_ms


def video_stream_id(video_id: int) -> UUID:
    return deterministic_id("video", video_id)


def estimated_duration_seconds(duration_ms: int) -> int:
    return int(ESTIMATE_FLOOR_S + math.ceil(duration_ms / 1000 * ESTIMATE_RATIO))


def _check_int(field_name: str, value: object, low: int, high: int) -> None:
    """An integer in [low, high]: the range of the read model's column, or of the media's reality."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise UnreadableMedia(f"{field_name} {value!r} is out of range ({low} to {high})", field=field_name)


schema_change("VideoUploaded", 1, """Adds `demuxer`, the container format the upload's probe accepted, which every
    later ffmpeg run of the file is held to. A schema 1 upload has none: the worker probes its file again, against
    the same list of accepted formats.""", added={"demuxer": None})
schema_change("VideoUploaded", 2, """Adds `published_at`, when the video went out on its site (null: the upload's
    own time, the event's `recorded_at`, stands for it), and `thumbnail_key`, the stored picture that lists show
    (null: none was made). Schema 2 uploads had neither.""", added={"published_at": None, "thumbnail_key": None})


def check_published_at(published_at: datetime | None, now: datetime) -> None:
    """A publication date with a timezone, from 1970 to the upload (400 otherwise)."""
    if published_at is None:
        return
    if published_at.tzinfo is None:
        raise DomainError("published_at needs a timezone (an ISO 8601 time such as 2021-05-04T10:00:00Z)",
                          field="published_at")
    if not EARLIEST_PUBLICATION <= published_at <= now + PUBLICATION_SKEW:
        raise DomainError("published_at must be between 1970 and the upload: a video is published before it is "
                          "uploaded here", field="published_at")


@aggregate("Video")
class Video(Aggregate):
    class Uploaded(Aggregate.Created):
        """An upload was accepted: the facts measured from the file (the duration it is priced and analysed by, the
        container forced on every later ffmpeg run, size, codecs, captions) and the storage keys the service chose.

        Read by the `videos` read model (GET /videos), the `revival_candidates` read model (a candidate's video, its
        description, thumbnail and age); the dispatcher (the `video.uploaded` webhook); the analysis job loads the
        video's stream for its file and container."""

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
        # The demuxer the upload's probe accepted (infra.media.ffmpeg.CONTAINERS), forced on every later
        # ffmpeg run. Schema 1 events have none: the worker probes the file again, whitelisted.
        demuxer: str | None
        # When the video went out on its site (None: the upload's time, the event's recorded_at),
        # and the stored picture of the video that lists show (None: none could be made).
        published_at: datetime | None
        thumbnail_key: str | None
        schema_version = 3

    class DescriptionChanged(Aggregate.Event):
        """The video's description was replaced (its revision counts the changes): the text revival completes, so a
        candidate reviewed or selected on the previous one becomes stale.

        Read by the `videos` read model (the description) and the `revival_candidates` read model."""

        published_as = "VideoDescriptionChanged"
        description: str | None
        revision: int

    class GraphRecorded(Aggregate.Event):
        """The whole content graph of one analysis (claims, entities, intents, moments, chapters, speakers, media
        elements): the material every analysis route serves, appended with the job's `JobCompleted`.

        Read by the `content_graphs` read model (GET /videos/{id}/graph and the claims, entities, ... routes), the
        `revival_candidates` read model (what the analysis found counts in a candidate's score), the
        `analysis_graphs` read model (GET /articles/{id}/graph: the graph of the analysis an article came from) and
        the `videos` read model (a video whose speech was recognised has a transcript)."""

        published_as = "VideoGraphRecorded"
        job_id: UUID
        graph: dict[str, Any]

    class Analyzed(Aggregate.Event):
        """The outcome of one analysis of the video (mode, counts, GEO readiness score, article id), with the video's
        environment: what a customer is notified of, apart from the graph itself.

        Read by the `videos` read model (status `analyzed`), the `revival_candidates` read model (a new analysis makes
        an open candidate stale); the dispatcher (the `video.analyzed` webhook)."""

        published_as = "VideoAnalyzed"
        schema_version = 2  # 2: environment (None only when upcast from 1: the analysis job's JobQueued has it)
        job_id: UUID
        analysis_mode: str
        article_id: int | None
        geo_readiness_score: float
        counts: dict[str, Any]
        environment: str | None

    class PublicLinksRevoked(Aggregate.Event):
        """Every public link of the video's files (its file and its poster, ``/v1/public/...``) made so far stops
        working: the video's link generation moves to ``generation``, and exports made from now on show links of the
        new generation.

        Read by the public file route (it compares a link's generation with the video's) and the `videos` read model
        (the video's version, which an export's cache key holds)."""

        published_as = "VideoPublicLinksRevoked"
        generation: int
        environment: str

    @staticmethod
    def create_id(video_id: int) -> UUID:
        return video_stream_id(video_id)

    @event(Uploaded)
    def __init__(self, video_id: int, workspace_id: UUID, environment: str, media_id: int | None, name: str,
                 description: str | None, language: str, storage_key: str, captions_key: str | None,
                 size_bytes: int, duration_ms: int, width: int | None, height: int | None,
                 frame_rate: float | None, video_codec: str | None, audio_codec: str | None, subtitle_tracks: int,
                 caption_cues: int, demuxer: str | None, published_at: datetime | None = None,
                 thumbnail_key: str | None = None):
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
        self.demuxer = demuxer
        self.published_at = published_at
        self.thumbnail_key = thumbnail_key
        self.analyzed_by: list[UUID] = []
        self.description_revision = 0
        self.last_analysis_job_id: UUID | None = None
        self.graph: dict[str, Any] | None = None  # the latest analysis' Content Graph
        self.article_id: int | None = None  # the latest article, and the job that wrote it
        self.article_job_id: UUID | None = None

    @classmethod
    def upload(cls, *, video_id: int, workspace_id: UUID, environment: str, name: str, storage_key: str,
               size_bytes: int, duration_ms: int, media_id: int | None = None, description: str | None = None,
               language: str = DEFAULT_LANGUAGE, captions_key: str | None = None, width: int | None = None,
               height: int | None = None, frame_rate: float | None = None, video_codec: str | None = None,
               audio_codec: str | None = None, subtitle_tracks: int = 0, caption_cues: int = 0,
               demuxer: str | None = None, max_duration_ms: int = MAX_DURATION_MS,
               published_at: datetime | None = None, thumbnail_key: str | None = None,
               now: datetime | None = None) -> Video:
        if not name.strip():
            raise DomainError("name must not be empty", field="name")
        check_duration(duration_ms, max_duration_ms)
        _check_int("video_id", video_id, 1, INT32_MAX)
        if media_id is not None:
            _check_int("media_id", media_id, 1, INT32_MAX)
        _check_int("size_bytes", size_bytes, 1, INT64_MAX)
        for field_name, value in (("width", width), ("height", height)):
            if value is not None:
                _check_int(field_name, value, 1, MAX_DIMENSION)
        if frame_rate is not None and (isinstance(frame_rate, bool) or not isinstance(frame_rate, (int, float))
                                       or not 0 < frame_rate <= MAX_FRAME_RATE):
            raise UnreadableMedia(f"the frame rate {frame_rate!r} is not a video's", field="frame_rate")
        _check_int("subtitle_tracks", subtitle_tracks, 0, INT32_MAX)
        _check_int("caption_cues", caption_cues, 0, INT32_MAX)
        for field_name, codec in (("video_codec", video_codec), ("audio_codec", audio_codec), ("demuxer", demuxer)):
            if codec is not None and (not codec.isprintable() or len(codec) > MAX_CODEC_NAME):
                raise UnreadableMedia(f"the {field_name} is not a codec or container name", field=field_name)
        if published_at is not None:
            check_published_at(published_at, now or published_at)
        return cls(video_id=video_id, workspace_id=workspace_id, environment=environment, media_id=media_id,
                   name=name.strip(), description=description, language=language, storage_key=storage_key,
                   captions_key=captions_key, size_bytes=size_bytes, duration_ms=duration_ms, width=width,
                   height=height, frame_rate=frame_rate, video_codec=video_codec, audio_codec=audio_codec,
                   subtitle_tracks=subtitle_tracks, caption_cues=caption_cues, demuxer=demuxer,
                   published_at=published_at, thumbnail_key=thumbnail_key)

    @property
    def public_links_generation(self) -> int:
        """The generation of the video's public links (0 until they are first revoked)."""
        return getattr(self, "_public_links_generation", 0)

    def revoke_public_links(self) -> int:
        """End every public link of the video's files; the new generation."""
        self._public_links_revoked(generation=self.public_links_generation + 1, environment=self.environment)
        return self.public_links_generation

    @event(PublicLinksRevoked)
    def _public_links_revoked(self, generation: int, environment: str) -> None:
        self._public_links_generation = generation

    @property
    def has_transcript(self) -> bool:
        """Captions came with the upload, or the file carries a subtitle track."""
        return self.caption_cues > 0 or self.subtitle_tracks > 0

    def change_description(self, description: str | None) -> bool:
        """Replace the description (None or blank: none). False, and nothing recorded, when it is
        the description already."""
        description = description if description and description.strip() else None
        if description is not None and len(description) > MAX_DESCRIPTION:
            raise DomainError(f"the description is longer than {MAX_DESCRIPTION} characters", field="description")
        if description == self.description:
            return False
        self._description_changed(description=description, revision=self.description_revision + 1)
        return True

    @event(DescriptionChanged)
    def _description_changed(self, description: str | None, revision: int) -> None:
        self.description = description
        self.description_revision = revision

    def record_analysis(self, *, job_id: UUID, graph: dict[str, Any], analysis_mode: str,
                        article_id: int | None) -> None:
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
    def _graph_recorded(self, job_id: UUID, graph: dict[str, Any]) -> None:
        self.analyzed_by.append(job_id)
        self.graph = graph

    @event(Analyzed)
    def _analyzed(self, job_id: UUID, analysis_mode: str, article_id: int | None, geo_readiness_score: float,
                  counts: dict[str, Any], environment: str | None) -> None:
        self.last_analysis_job_id = job_id
        if article_id is not None:
            self.article_id, self.article_job_id = article_id, job_id


schema_change("VideoAnalyzed", 1, """Adds `environment` (`production` or `sandbox`), so that the event reaches the
    webhooks of its environment alone.""", added={"environment": None},
    needs="""`environment` is null when upcast from schema 1: it is the `environment` of the analysis job's
    `JobQueued` (the event whose `stream_id` is this event's `data.job_id`), which is also the video's (its
    `VideoUploaded`, same `stream_id` as this event).""")
