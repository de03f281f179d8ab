"""The statements of the videos, content_graphs and articles read models, run on PostgreSQL: applying
a video's history again (a redelivery the runner would skip, a replay) or an older event after a
newer one leaves the read models as they were."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from domain.articles import Article
from domain.jobs import Job
from domain.videos import ANALYZE_JOB, Video
from projections import articles, content_graph, videos
from services.processes.projector.runner import execute_statements
from tests.helpers import snapshot
from tests.support.projection_events import WORKSPACE, stored
from tests.support.video_aggregates import GRAPH

PROJECTIONS = [videos.projection, content_graph.projection, articles.projection]
JOB_A, JOB_B = uuid.uuid4(), uuid.uuid4()


def history() -> list:
    """Upload; job A queued and completed with its analysis and article; job B queued, then failed."""
    video = Video.upload(video_id=41, workspace_id=WORKSPACE, environment="production", name="Fusion",
                         storage_key="k", size_bytes=1, duration_ms=30_000, caption_cues=3)
    job_a = Job.queue(job_id=JOB_A, workspace_id=WORKSPACE, job_type=ANALYZE_JOB, params={"video_id": 41})
    job_b = Job.queue(job_id=JOB_B, workspace_id=WORKSPACE, job_type=ANALYZE_JOB, params={"video_id": 41})
    article = Article(article_id=7, workspace_id=WORKSPACE, environment="production", job_id=JOB_A, video_id=41,
                      media_id=None, title="Fusion", language="fr", writing_style="interview", aeo_score=61,
                      geo_score=74, composite_score=70.1, keywords_primary=["fusion"], has_transcript=True,
                      content={"title": "Fusion"}, markdown="# Fusion\n")
    uploaded = stored(video)
    queued_a = stored(job_a)
    job_a.start(1, "w")
    video.record_analysis(job_id=JOB_A, graph=GRAPH, analysis_mode="standard", article_id=7)
    job_a.complete({}, 7)
    done_a = [*stored(video), *stored(article), *stored(job_a)]
    queued_b = stored(job_b)
    job_b.start(1, "w")
    job_b.fail("boom")
    failed_b = stored(job_b)
    events = [*uploaded, *queued_a, *done_a, *queued_b, *failed_b]
    return [dataclasses.replace(ev, position=i) for i, ev in enumerate(events, start=1)]


async def apply(pool, events) -> None:
    async with pool.acquire() as conn, conn.transaction():
        for ev in events:
            for projection in PROJECTIONS:
                await execute_statements(conn, projection.apply(ev))


async def state(pool) -> dict:
    return {"videos": await snapshot(pool, "videos", "id"),
            "content_graphs": await snapshot(pool, "content_graphs", "video_stream_id"),
            "articles": await snapshot(pool, "articles", "id")}


async def test_the_history_applied_gives_the_expected_read_models(pool):
    await apply(pool, history())

    now = await state(pool)
    [video] = now["videos"]
    assert (video["status"], video["last_job_id"], video["last_article_id"]) == ("analyzed", JOB_B, 7)
    assert video["analyzed_at"] is not None and video["version"] == 3
    [graph] = now["content_graphs"]
    assert (graph["job_id"], graph["graph"], graph["version"]) == (JOB_A, GRAPH, 2)
    [article] = now["articles"]
    assert (article["id"], article["job_id"], article["title"]) == (7, JOB_A, "Fusion")


@pytest.mark.parametrize("replayed", ["everything", "each_event_twice", "the_queued_jobs", "the_analysis"])
async def test_applying_events_again_changes_nothing(pool, replayed: str):
    events = history()
    await apply(pool, events)
    before = await state(pool)

    again = {"everything": events, "each_event_twice": [ev for ev in events for _ in (1, 2)],
             "the_queued_jobs": [ev for ev in events if ev.type == "JobQueued"],
             "the_analysis": [ev for ev in events if ev.type in ("VideoGraphRecorded", "VideoAnalyzed",
                                                                  "ArticleGenerated")]}[replayed]
    await apply(pool, again)

    assert await state(pool) == before


async def test_an_older_analysis_applied_after_a_newer_one_is_ignored(pool):
    video = Video.upload(video_id=42, workspace_id=WORKSPACE, environment="production", name="n", storage_key="k",
                         size_bytes=1, duration_ms=1000)
    video.record_analysis(job_id=JOB_A, graph={"claims": [{"id": "old"}]}, analysis_mode="standard", article_id=None)
    video.record_analysis(job_id=JOB_B, graph={"claims": [{"id": "new"}]}, analysis_mode="standard", article_id=8)
    uploaded, old_graph, old_summary, new_graph, new_summary = stored(video)

    await apply(pool, [uploaded, new_graph, new_summary, old_graph, old_summary])

    [graph] = (await state(pool))["content_graphs"]
    assert (graph["job_id"], graph["graph"], graph["version"]) == (JOB_B, {"claims": [{"id": "new"}]}, 4)
    [row] = (await state(pool))["videos"]
    assert (row["last_article_id"], row["version"]) == (8, 5)


async def test_the_extremes_the_domain_accepts_are_stored_by_the_videos_projection(pool):
    """No accepted upload can stop the projection: the largest values Video.upload accepts fit the
    columns (a duration over 2^31-1 ms used to be accepted and then fail the integer column)."""
    from domain.videos import INT32_MAX, INT64_MAX, MAX_DIMENSION, MAX_DURATION_MS, MAX_FRAME_RATE

    video = Video.upload(video_id=INT32_MAX, workspace_id=WORKSPACE, environment="production", name="long",
                         storage_key="k", size_bytes=INT64_MAX, duration_ms=MAX_DURATION_MS, media_id=INT32_MAX,
                         width=MAX_DIMENSION, height=MAX_DIMENSION, frame_rate=MAX_FRAME_RATE,
                         subtitle_tracks=INT32_MAX, caption_cues=INT32_MAX, demuxer="matroska")
    await apply(pool, stored(video))

    [row] = await snapshot(pool, "videos", "id")
    assert (row["id"], row["duration_ms"], row["size_bytes"], row["width"], row["frame_rate"]) == (
        INT32_MAX, MAX_DURATION_MS, INT64_MAX, MAX_DIMENSION, MAX_FRAME_RATE)
