"""Video and Article aggregates (given events, when a command, then events) and the analysis's pure
policies: price, estimate, stream ids."""

from __future__ import annotations

import pytest
from eventsourcing.domain import Aggregate

from domain.articles import Article, article_stream_for_job
from domain.base import PUBLISHED, DomainError, deterministic_id
from domain.pricing import analysis_price
from domain.videos import (
    ANALYZE_JOB,
    MediaTooLarge,
    UnreadableMedia,
    UnsupportedMedia,
    Video,
    estimated_duration_seconds,
    video_stream_id,
)
from infra.codec import EventRegistry
from tests.support.projection_events import stored
from tests.support.video_aggregates import GRAPH, JOB_A, JOB_B, WORKSPACE, uploaded


def then(agg: Aggregate) -> list[Aggregate.Event]:
    return list(agg.collect_events())


# ---- pure policies


@pytest.mark.parametrize(("duration_ms", "profile", "credits"), [
    (1, "standard", 1), (30_000, "standard", 1), (60_000, "standard", 1), (60_001, "standard", 2),
    (600_000, "standard", 10), (600_000, "premium", 20), (1, "premium", 2), (0, "standard", 1),
])
def test_analysis_costs_a_credit_per_started_minute_doubled_for_premium(duration_ms: int, profile: str,
                                                                        credits: int) -> None:
    assert analysis_price(duration_ms, profile) == credits


@pytest.mark.parametrize(("duration_ms", "seconds"), [(1, 6), (25_000, 6), (25_001, 7), (600_000, 29)])
def test_the_estimate_is_a_floor_plus_a_25th_of_the_duration(duration_ms: int, seconds: int) -> None:
    assert estimated_duration_seconds(duration_ms) == seconds


def test_stream_ids_are_deterministic_and_distinct() -> None:
    assert video_stream_id(41) == video_stream_id(41) == deterministic_id("video", 41)
    assert video_stream_id(41) != video_stream_id(42)
    assert article_stream_for_job(JOB_A) == article_stream_for_job(JOB_A) != article_stream_for_job(JOB_B)
    assert article_stream_for_job(JOB_A) != JOB_A


@pytest.mark.parametrize(("error", "code", "status"), [
    (UnsupportedMedia, "unsupported_media_type", 415), (UnreadableMedia, "unreadable_media", 400),
    (MediaTooLarge, "payload_too_large", 413),
])
def test_media_refusals_are_domain_errors_with_their_code(error: type[DomainError], code: str, status: int) -> None:
    refused = error("no", reason="x")
    assert isinstance(refused, DomainError)
    assert (refused.code, refused.status, refused.details) == (code, status, {"reason": "x"})


# ---- Video


def test_upload_records_video_uploaded_with_the_probed_metadata() -> None:
    video = Video.upload(video_id=41, workspace_id=WORKSPACE, environment="sandbox", name="  Fusion  ",
                         storage_key="videos/w/41/source.mp4", size_bytes=1234, duration_ms=30_500, media_id=3,
                         description="d", language="en", captions_key="videos/w/41/captions.vtt", width=320,
                         height=240, frame_rate=25.0, video_codec="h264", audio_codec="aac", subtitle_tracks=1,
                         caption_cues=8)

    [event] = then(video)

    assert type(event).__name__ == "Uploaded" and event.originator_id == video_stream_id(41) == video.id
    assert (event.video_id, event.workspace_id, event.environment, event.name) == (41, WORKSPACE, "sandbox", "Fusion")
    assert (event.media_id, event.description, event.language) == (3, "d", "en")
    assert (event.storage_key, event.captions_key) == ("videos/w/41/source.mp4", "videos/w/41/captions.vtt")
    assert (event.size_bytes, event.duration_ms, event.width, event.height, event.frame_rate) == (
        1234, 30_500, 320, 240, 25.0)
    assert (event.video_codec, event.audio_codec, event.subtitle_tracks, event.caption_cues) == ("h264", "aac", 1, 8)
    assert video.analyzed_by == [] and video.has_transcript


def test_upload_defaults_language_and_optional_metadata() -> None:
    video = uploaded()

    assert (video.language, video.media_id, video.captions_key, video.width, video.frame_rate) == (
        "fr", None, None, None, None)
    assert (video.subtitle_tracks, video.caption_cues, video.has_transcript) == (0, 0, False)


@pytest.mark.parametrize(("cues", "tracks", "expected"), [(0, 0, False), (3, 0, True), (0, 1, True), (2, 2, True)])
def test_a_transcript_comes_from_captions_or_a_subtitle_track(cues: int, tracks: int, expected: bool) -> None:
    assert uploaded(caption_cues=cues, subtitle_tracks=tracks).has_transcript is expected


@pytest.mark.parametrize(("overrides", "error", "field"), [
    ({"name": ""}, DomainError, "name"),
    ({"name": "   "}, DomainError, "name"),
    ({"duration_ms": 0}, UnreadableMedia, None),
    ({"duration_ms": -5}, UnreadableMedia, None),
])
def test_upload_refuses_a_video_without_name_or_duration(overrides: dict, error: type, field: str | None) -> None:
    with pytest.raises(error) as refused:
        uploaded(**overrides)

    assert refused.value.details.get("field") == field


def test_record_analysis_records_the_graph_then_a_small_summary() -> None:
    video = uploaded()

    video.record_analysis(job_id=JOB_A, graph=GRAPH, analysis_mode="behavioral", article_id=7)
    recorded, analyzed = then(video)

    assert (type(recorded).__name__, type(analyzed).__name__) == ("GraphRecorded", "Analyzed")
    assert (recorded.job_id, recorded.graph) == (JOB_A, GRAPH)
    assert (recorded.originator_version, analyzed.originator_version) == (2, 3)
    assert (analyzed.job_id, analyzed.analysis_mode, analyzed.article_id) == (JOB_A, "behavioral", 7)
    assert analyzed.geo_readiness_score == 62.0 and isinstance(analyzed.geo_readiness_score, float)
    assert analyzed.counts == {"claims": 2, "entities": 1, "searchIntents": 0, "clipMoments": 3, "topics": 1,
                               "chapters": 0, "visualElements": 2, "audioElements": 1}
    assert video.analyzed_by == [JOB_A]


def test_a_job_records_its_analysis_once_and_a_later_job_again() -> None:
    video = uploaded()
    video.record_analysis(job_id=JOB_A, graph=GRAPH, analysis_mode="standard", article_id=None)
    then(video)

    video.record_analysis(job_id=JOB_A, graph={}, analysis_mode="standard", article_id=None)
    assert then(video) == []

    video.record_analysis(job_id=JOB_B, graph={}, analysis_mode="standard", article_id=None)
    _, analyzed = then(video)
    assert analyzed.geo_readiness_score == 0.0 and set(analyzed.counts.values()) == {0}
    assert video.analyzed_by == [JOB_A, JOB_B] and video.version == 5


def test_a_video_replayed_from_its_stored_events_is_the_same() -> None:
    video = Video.upload(video_id=9, workspace_id=WORKSPACE, environment="production", name="n",
                         storage_key="k", size_bytes=1, duration_ms=1000, caption_cues=2)
    video.record_analysis(job_id=JOB_A, graph=GRAPH, analysis_mode="standard", article_id=3)

    replayed = EventRegistry().reconstruct(stored(video))

    assert isinstance(replayed, Video) and replayed.id == video_stream_id(9) and replayed.version == 3
    assert (replayed.name, replayed.duration_ms, replayed.has_transcript) == ("n", 1000, True)
    assert replayed.analyzed_by == [JOB_A]  # a stored job id comes back as a UUID: the once-guard holds
    replayed.record_analysis(job_id=JOB_A, graph=GRAPH, analysis_mode="standard", article_id=3)
    assert then(replayed) == []


# ---- Article


def article(**overrides) -> Article:
    args = {"article_id": 7, "workspace_id": WORKSPACE, "environment": "production", "job_id": JOB_A,
            "video_id": 41, "media_id": None, "title": "Fusion", "language": "fr", "writing_style": "interview",
            "aeo_score": 61, "geo_score": 74, "composite_score": 70.1, "keywords_primary": ["fusion", "iter"],
            "has_transcript": True, "content": {"title": "Fusion", "sections": []}, "markdown": "# Fusion\n"}
    args.update(overrides)
    return Article(**args)


def test_an_article_is_generated_on_the_stream_of_its_job() -> None:
    written = article()

    [event] = then(written)

    assert type(event).__name__ == "Generated" and written.id == article_stream_for_job(JOB_A)
    assert (event.article_id, event.job_id, event.video_id, event.title, event.writing_style) == (
        7, JOB_A, 41, "Fusion", "interview")
    assert (event.aeo_score, event.geo_score, event.composite_score) == (61, 74, 70.1)
    assert (event.keywords_primary, event.content, event.markdown) == (
        ["fusion", "iter"], {"title": "Fusion", "sections": []}, "# Fusion\n")


def test_a_second_article_of_the_same_job_is_the_same_stream() -> None:
    """A job can never store two articles: both would be version 1 of one stream (the append conflicts)."""
    first, second = article(article_id=7), article(article_id=8)

    [a], [b] = then(first), then(second)

    assert a.originator_id == b.originator_id and a.originator_version == b.originator_version == 1


def test_an_article_replayed_from_its_stored_event_is_the_same() -> None:
    replayed = EventRegistry().reconstruct(stored(article()))

    assert isinstance(replayed, Article) and replayed.article_id == 7 and replayed.content["title"] == "Fusion"
    assert replayed.keywords_primary == ["fusion", "iter"] and replayed.composite_score == 70.1


def test_video_and_article_events_are_published_under_their_stable_names() -> None:
    assert {name: (PUBLISHED[name][0].__qualname__, PUBLISHED[name][2])
            for name in ("VideoUploaded", "VideoGraphRecorded", "VideoAnalyzed", "ArticleGenerated")} == {
        "VideoUploaded": ("Video.Uploaded", "Video"), "VideoGraphRecorded": ("Video.GraphRecorded", "Video"),
        "VideoAnalyzed": ("Video.Analyzed", "Video"), "ArticleGenerated": ("Article.Generated", "Article")}
    assert ANALYZE_JOB == "analyze_video"
