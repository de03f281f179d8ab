"""The videos, content_graphs and articles read models are pure: a stored event in, replay-safe SQL
statements out (creations ``ON CONFLICT``, changes guarded by the stream version or the state)."""

from __future__ import annotations

import uuid

import pytest

from domain.articles import Article, article_stream_for_job
from domain.jobs import Job
from domain.videos import ANALYZE_JOB, Video, video_stream_id
from infra.codec import StoredEvent
from projections import ALL, articles, content_graph, videos
from tests.support.projection_events import T0, WORKSPACE, stored
from tests.support.video_aggregates import GRAPH, JOB_A

PROJECTIONS = [videos.projection, content_graph.projection, articles.projection]


def video_events(*commands, **overrides) -> list[StoredEvent]:
    args = {"video_id": 41, "workspace_id": WORKSPACE, "environment": "sandbox", "name": "Fusion",
            "storage_key": "videos/w/41/source.mp4", "size_bytes": 1234, "duration_ms": 30_500, "width": 320,
            "height": 240, "frame_rate": 25.0, "video_codec": "h264", "audio_codec": "aac", "caption_cues": 8}
    args.update(overrides)
    video = Video.upload(**args)
    for command in commands:
        command(video)
    return stored(video)


def analysed(job_id: uuid.UUID = JOB_A, article_id: int | None = 7):
    return lambda v: v.record_analysis(job_id=job_id, graph=GRAPH, analysis_mode="standard", article_id=article_id)


def job_events(job_type: str = ANALYZE_JOB, params: dict | None = None, *commands) -> tuple[Job, list[StoredEvent]]:
    job = Job.queue(job_id=JOB_A, workspace_id=WORKSPACE, job_type=job_type,
                    params={"video_id": 41, "credits": 1} if params is None else params)
    for command in commands:
        command(job)
    return job, stored(job)


def article_event(**overrides) -> StoredEvent:
    args = {"article_id": 7, "workspace_id": WORKSPACE, "environment": "production", "job_id": JOB_A,
            "video_id": 41, "media_id": 3, "title": "Fusion", "language": "fr", "writing_style": "interview",
            "aeo_score": 61, "geo_score": 74, "composite_score": 70.1, "keywords_primary": ["fusion", "iter"],
            "has_transcript": True, "content": {"title": "Fusion"}, "markdown": "# Fusion\n"}
    args.update(overrides)
    [event] = stored(Article(**args))
    return event


def only(statements: list) -> tuple[str, tuple]:
    [(sql, args)] = statements
    return " ".join(sql.split()), args


# ---- videos


def test_video_uploaded_inserts_the_record_once() -> None:
    [ev] = video_events()

    sql, args = only(videos.projection.apply(ev))

    assert sql.startswith("INSERT INTO videos") and sql.endswith("ON CONFLICT (id) DO NOTHING")
    assert "'uploaded'" in sql
    assert args == (41, video_stream_id(41), WORKSPACE, "sandbox", None, "Fusion", None, "fr", 30_500, 320, 240,
                    25.0, 1234, "h264", "aac", True, ev.recorded_at, 1, "videos/w/41/source.mp4", None)


def test_the_files_a_get_shows_are_in_the_record() -> None:
    """What GET /videos/{id} and an export need of the write side (where the files are stored, the
    public links' generation) is written into the read model, so those GETs read no stream."""
    [ev] = video_events(thumbnail_key="poster-41.jpg")
    sql, args = only(videos.projection.apply(ev))
    columns = sql.split("(", 2)[1].split(")")[0].replace(" ", "").split(",")
    assert columns[-2:] == ["storage_key", "thumbnail_key"] and sql.count("$") == len(args)
    assert args[-2:] == ("videos/w/41/source.mp4", "poster-41.jpg")

    revoked = video_events(lambda v: v.revoke_public_links(), lambda v: v.revoke_public_links())[-1]
    sql, args = only(videos.projection.apply(revoked))
    assert "links_generation = $3" in sql and "version < $2" in sql
    assert args == (video_stream_id(41), 3, 2)


@pytest.mark.parametrize(("cues", "tracks", "has_transcript"), [(0, 0, False), (0, 2, True), (5, 0, True)])
def test_video_uploaded_says_whether_a_transcript_came_with_it(cues: int, tracks: int, has_transcript: bool) -> None:
    [ev] = video_events(caption_cues=cues, subtitle_tracks=tracks)

    _, args = only(videos.projection.apply(ev))

    assert args[15] is has_transcript


def test_an_analyze_job_queued_marks_its_video_analyzing() -> None:
    job, [queued] = job_events()

    sql, args = only(videos.projection.apply(queued))

    assert sql == ("UPDATE videos SET status = 'analyzing', last_job_id = $2, job_position = $4 "
                   "WHERE id = $1 AND workspace_id = $3 AND job_position < $4")
    # another workspace's video of that id is never touched; a JobQueued applied before changes nothing
    assert args == (41, job.id, WORKSPACE, queued.position)


@pytest.mark.parametrize(("job_type", "params"), [("clip_render", {"video_id": 41}), (ANALYZE_JOB, {}),
                                                  (ANALYZE_JOB, {"credits": 2})])
def test_other_jobs_leave_the_videos_alone(job_type: str, params: dict) -> None:
    _, [queued] = job_events(job_type, params)

    assert videos.projection.apply(queued) == []


def test_video_analyzed_is_guarded_by_the_stream_version() -> None:
    _, recorded, analyzed = video_events(analysed(article_id=7))

    sql, args = only(videos.projection.apply(analyzed))

    assert sql.startswith("UPDATE videos SET status = 'analyzed'")
    assert sql.endswith("WHERE stream_id = $1 AND version < $2")  # a replayed or older analysis is a no-op
    assert args == (video_stream_id(41), 3, analyzed.recorded_at, 7)
    assert videos.projection.apply(recorded) == []  # a captioned video's graph is the content_graphs read model's


@pytest.mark.parametrize(("source", "has_transcript_now"), [
    ({"kind": "speech", "engine": "faster-whisper", "model": "tiny.en", "words": 90}, True),
    ({"kind": "speech", "engine": "faster-whisper", "model": "tiny.en", "words": 0, "note": "no speech"}, False),
    ({"kind": "captions"}, False),
    ("captions", False),  # a graph recorded before the source was an object
])
def test_a_video_whose_speech_was_recognised_has_a_transcript(source, has_transcript_now: bool) -> None:
    record = lambda v: v.record_analysis(job_id=JOB_A, graph={**GRAPH, "transcriptSource": source},  # noqa: E731
                                         analysis_mode="standard", article_id=7)
    _, recorded, _ = video_events(record, caption_cues=0)
    statements = videos.projection.apply(recorded)
    if not has_transcript_now:
        assert statements == []
        return
    sql, args = only(statements)
    assert sql == "UPDATE videos SET has_transcript = true WHERE stream_id = $1 AND NOT has_transcript"
    assert args == (video_stream_id(41),)


@pytest.mark.parametrize("end", [lambda j: j.cancel(), lambda j: (j.start(1, "w"), j.fail("boom"))],
                         ids=["cancelled", "failed"])
def test_the_end_of_an_analysis_without_result_returns_the_video_to_its_last_state(end) -> None:
    job, events = job_events(ANALYZE_JOB, None, end)

    sql, args = only(videos.projection.apply(events[-1]))

    assert "status = CASE WHEN analyzed_at IS NULL THEN 'uploaded' ELSE 'analyzed' END" in sql
    # only while this job is the video's last one and still running: a later job's state is kept
    assert sql.endswith("WHERE last_job_id = $1 AND status = 'analyzing'")
    assert args == (job.id,)


def test_job_progress_and_completion_do_not_touch_the_videos() -> None:
    _, events = job_events(ANALYZE_JOB, None, lambda j: j.start(1, "w"), lambda j: j.report_progress(5, "x"),
                           lambda j: j.complete({}, 7))

    assert [videos.projection.apply(ev) for ev in events[1:]] == [[], [], []]


# ---- content_graphs


def test_the_graph_is_upserted_and_a_replay_cannot_go_back() -> None:
    _, recorded, analyzed = video_events(analysed())

    sql, args = only(content_graph.projection.apply(recorded))

    assert sql.startswith("INSERT INTO content_graphs")
    assert "ON CONFLICT (video_stream_id) DO UPDATE SET" in sql
    assert sql.endswith("WHERE content_graphs.version < EXCLUDED.version")
    assert args == (video_stream_id(41), WORKSPACE, str(JOB_A), GRAPH, recorded.recorded_at, 2)
    assert content_graph.projection.apply(analyzed) == []


def test_a_later_analysis_carries_a_higher_version_so_it_replaces_the_graph() -> None:
    events = video_events(analysed(JOB_A), analysed(uuid.UUID(int=0xB)))
    graphs = [ev for ev in events if ev.type == "VideoGraphRecorded"]

    versions = [only(content_graph.projection.apply(ev))[1][5] for ev in graphs]

    assert versions == [2, 4]


# ---- articles


def test_article_generated_inserts_the_article_once() -> None:
    ev = article_event()

    sql, args = only(articles.projection.apply(ev))

    assert sql.startswith("INSERT INTO articles") and sql.endswith("ON CONFLICT (id) DO NOTHING")
    assert args == (7, article_stream_for_job(JOB_A), WORKSPACE, "production", str(JOB_A), 41, 3, "Fusion", "fr",
                    "interview", 61, 74, 70.1, ["fusion", "iter"], True, {"title": "Fusion"}, "# Fusion\n",
                    ev.recorded_at, 1, "analysis", None, None, str(JOB_A), 2)


def test_an_article_without_video_or_media_stores_nulls() -> None:
    _, args = only(articles.projection.apply(article_event(video_id=None, media_id=None)))

    assert (args[5], args[6]) == (None, None)


# ---- what every one of them declares


@pytest.mark.parametrize(("projection", "handled", "tables", "ordering"), [
    (videos.projection, {"VideoUploaded", "JobQueued", "VideoAnalyzed", "JobFailed", "JobCancelled",
                         "VideoDescriptionChanged", "VideoGraphRecorded", "VideoPublicLinksRevoked"}, ["videos"],
     "strict"),
    (content_graph.projection, {"VideoGraphRecorded"}, ["content_graphs"], "per_stream"),
    (articles.projection, {"ArticleGenerated", "ArticleTranslated", "ArticleRenamed", "ArticleMediaAttached",
                           "ArticlePublishedUrlsSet"}, ["articles"], "per_stream"),
], ids=lambda p: getattr(p, "name", None))
def test_each_declares_its_events_tables_teardown_and_ordering(projection, handled: set, tables: list,
                                                               ordering: str) -> None:
    assert set(projection.handlers) == handled and projection.default is None
    assert projection.tables == tables and projection.teardown == [f"TRUNCATE {tables[0]}"]
    assert projection.ordering == ordering and ALL[projection.name] is projection
    assert all(stmt.lstrip().startswith(("CREATE", "ALTER")) and "IF NOT EXISTS" in stmt for stmt in projection.ddl)


@pytest.mark.parametrize("projection", PROJECTIONS, ids=lambda p: p.name)
def test_events_they_do_not_handle_give_no_statements(projection) -> None:
    _, job_stream = job_events(ANALYZE_JOB, None, lambda j: j.start(1, "w"), lambda j: j.complete({}, 7))
    candidates = [*video_events(analysed()), article_event(), *job_stream]
    unhandled = [ev for ev in candidates if ev.type not in projection.handlers]

    assert unhandled
    for ev in unhandled:
        assert projection.apply(ev) == []
    ev = StoredEvent(position=1, stream_id=uuid.uuid4(), stream_type="Future", version=1, workspace_id=WORKSPACE,
                     type="SomethingNew", schema=1, data={}, meta={}, recorded_at=T0)
    assert projection.apply(ev) == []
