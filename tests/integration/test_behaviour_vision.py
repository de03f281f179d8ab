"""The behavioural analysis from the picture, with real pictures, real ffmpeg and the real MediaPipe
models: a real portrait placed where the test put it is found there, looking at the camera and
smiling; nobody is reported where nobody is; several faces give the largest; hostile videos (two
pixels, 240 fps) end clearly; the analysis needs no network; and the analysis job sees its video
window by window (job items: a failed window retried alone), its graph holding the timelines."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import uuid

import pytest

from domain.analysis.behavioral import SeenVideo, seen_profile
from domain.articles import article_stream_for_job
from domain.videos import ANALYZE_JOB
from infra.media.probe import probe
from infra.storage import LocalStorage
from infra.vision.behaviour import see_window
from infra.vision.frames import sample_frames
from services.application.jobs import CancelJob
from services.application.videos import AnalysisOptions, IngestVideo, RequestAnalysis
from services.jobs import vision
from services.jobs.analysis import run_analysis
from services.jobs.context import JobHandlers
from services.processes.worker import Worker
from tests.helpers import handle
from tests.media_factory import run
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.stack import ROOT
from tests.vision_media import make_scenes_video

pytestmark = pytest.mark.slow
FPS = 3.0


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    root = tmp_path_factory.mktemp("vision")
    return {
        "sides": make_scenes_video(root, "sides.mp4", [("left", 2), ("right", 2), ("black", 2)]),
        "mirrored": make_scenes_video(root, "mirrored.mp4", [("left", 2), ("right", 2)], vf="hflip"),
        "distances": make_scenes_video(root, "distances.mp4", [("medium", 1), ("close", 1), ("crowd", 1)]),
        "two-pixels": make_scenes_video(root, "two.mp4", [("left", 1)], size=(2, 2)),
        "240fps": make_scenes_video(root, "fast.mp4", [("left", 2)], fps=240),
        "one-pixel": one_pixel(root / "one.mkv"),
    }


def one_pixel(path):
    """A one-pixel video (FFV1 in Matroska: H.264 needs even sizes)."""
    run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "color=white:s=16x16:r=25:d=1",
         "-vf", "scale=1:1", "-c:v", "ffv1", str(path)])
    return path


def seen(path, fps=FPS, max_side=960):
    info = probe(path)
    rows = see_window(path, info.demuxer, 0, info.duration_ms, fps=fps, max_side=max_side, max_frames=200,
                      timeout=120)
    return rows, seen_profile(SeenVideo(tuple(rows), fps, info.duration_ms), info.duration_ms)


def values(profile, signal):
    return [(s["startMs"], s["endMs"], s["value"]) for s in profile[signal]["timeline"]]


def test_a_portrait_left_then_right_then_nobody(videos):
    rows, profile = seen(videos["sides"])
    assert [r["t"] for r in rows] == [round(k * 1000 / FPS) for k in range(18)]  # 3 frames a second
    assert values(profile, "presence") == [(0, 4000, "person"), (4000, 6000, "no_person")]
    assert profile["proxemics"]["placementTimeline"] == [
        {"startMs": 0, "endMs": 2000, "value": "left"}, {"startMs": 2000, "endMs": 4000, "value": "right"},
        {"startMs": 4000, "endMs": 6000, "value": "not_visible"}]
    # she faces the camera, smiling, shoulders level; nothing is said of the black seconds
    assert values(profile, "gaze") == [(0, 4000, "camera"), (4000, 6000, "not_visible")]
    assert values(profile, "expression") == [(0, 4000, "smiling"), (4000, 6000, "not_visible")]
    assert values(profile, "posture") == [(0, 4000, "upright"), (4000, 6000, "not_visible")]
    assert values(profile, "proxemics") == [(0, 4000, "far"), (4000, 6000, "not_visible")]  # a 420 px portrait
    assert values(profile, "gestures")[-1] == (4000, 6000, "not_visible")
    assert profile["gestures"]["shares"]["still"] >= 80  # a still picture: no gesture invented
    assert profile["gaze"]["summary"] == "looks at the camera 100 % of the time the face is visible"
    assert profile["presence"]["summary"] == "a person is visible 67 % of the analysed time"
    assert profile["expression"]["summary"] == "smiling 100 % of the time the face is visible"
    assert all(r["faces"] == 1 for r in rows[:12]) and all(r["faces"] == 0 for r in rows[12:])


def test_the_mirrored_video_has_her_on_the_other_side(videos):
    _, profile = seen(videos["mirrored"])
    assert [s["value"] for s in profile["proxemics"]["placementTimeline"]] == ["right", "left"]
    assert values(profile, "gaze") == [(0, 4000, "camera")] and values(profile, "posture") == [(0, 4000, "upright")]


def test_distance_follows_the_size_of_the_face_and_the_largest_of_several_faces_is_analysed(videos):
    rows, profile = seen(videos["distances"])
    assert values(profile, "proxemics") == [(0, 1000, "medium"), (1000, 2000, "close"), (2000, 3000, "far")]
    assert [r["faces"] for r in rows] == [1, 1, 1, 1, 1, 1, 4, 4, 4]
    assert values(profile, "presence")[-1] == (2000, 3000, "several_faces")
    # the four corners hold a face each; the largest (top left) is the one measured
    assert [s["value"] for s in profile["proxemics"]["placementTimeline"]] == ["center", "left"]
    assert "several faces in view 33 %" in profile["presence"]["summary"]


def test_hostile_videos_end_clearly(videos):
    for name in ("two-pixels", "one-pixel"):
        rows, profile = seen(videos[name])
        assert len(rows) == 3 and {r["presence"] for r in rows} == {"no_person"}, name
        assert profile["presence"]["summary"] == "no person is visible"
        assert profile["gaze"]["summary"] == "the face is never visible: gaze not measured"
    rows, _ = seen(videos["240fps"])  # the sampling rate caps the frames: 2 s give 6, not 480
    assert len(rows) == 6 and {r["placement"] for r in rows} == {"left"}
    frames = list(sample_frames(videos["240fps"], "mov", 0, 2000, fps=FPS, max_side=320, max_frames=4))
    assert len(frames) == 4 and frames[0].image.shape == (180, 320, 3)  # bounded in count and size
    tiny = next(iter(sample_frames(videos["two-pixels"], "mov", 0, 1000, fps=FPS, max_side=960)))
    assert tiny.image.shape == (2, 2, 3)  # never scaled up


NO_NETWORK = """
import socket, sys
from infra.media.probe import probe
from infra.vision.behaviour import see_window
path = sys.argv[1]
try:
    socket.create_connection(("1.1.1.1", 443), timeout=2)
    print("network reachable"); sys.exit(3)
except OSError:
    pass
info = probe(path)
rows = see_window(path, info.demuxer, 0, 2000, fps=1, max_side=960, max_frames=4, timeout=60)
print(",".join(r["gaze"] for r in rows))
"""


def test_the_analysis_needs_no_network(videos):
    """The models load and see under ``unshare -rn``: a network namespace with no interface up, so
    any download would fail (the script first proves a connection fails)."""
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("unshare -rn is not permitted on this machine")
    done = subprocess.run(["unshare", "-rn", sys.executable, "-c", NO_NETWORK, str(videos["sides"])],
                          capture_output=True, text=True, timeout=180, cwd=ROOT, env={"PYTHONPATH": str(ROOT),
                                                                                      "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "camera,camera"


CAPTIONS = b"WEBVTT\n\n00:00.000 --> 00:03.000\nHello, this is a talk about space flight and training.\n"


# The worker tests' lease (1.5 s) can lapse while a busy machine delays a heartbeat, and the job is then claimed
# again (one attempt more): these tests count attempts and need no lease to end, so theirs lasts.
STEADY_LEASE = {"worker_lease_s": 30.0}


async def _analysis(store, pool, background, settings, path):
    """A sandbox video with captions, a worker running the analysis, and its behavioural analysis queued."""
    start_pipeline(settings, background)
    storage = LocalStorage.from_settings(settings)
    staged = storage.staging_path("test")
    staged.write_bytes(path.read_bytes())
    ws = uuid.uuid4()
    video, _ = await handle(store, IngestVideo(ws, staged=staged, environment="sandbox", filename=path.name,
                                               captions=CAPTIONS, language="en"), storage=storage)
    handlers = JobHandlers()

    @handlers.register(ANALYZE_JOB)
    async def analyse(ctx):
        return await run_analysis(ctx, settings, storage, None, None)

    background.start(Worker(settings, handlers, pool=pool).run)
    options = AnalysisOptions(outputs={"article": True}, language="en", analysis_mode="behavioral")
    job, _, _, _ = await handle(store, RequestAnalysis(ws, video_id=video.video_id, environment="sandbox",
                                                       options=options))
    return ws, video, job


async def _items(store, job_id):
    return [(e.type, e.data["item_id"], e.data["attempt"]) for e in await store.read_stream(job_id)
            if e.type in ("JobItemCompleted", "JobItemFailed")]


async def test_the_analysis_job_sees_each_window_as_an_item_and_retries_a_failed_one_alone(
        fast, store, pool, background, videos, monkeypatch):
    calls = []
    real = vision._see

    def flaky(path, demuxer, start, end, settings_):
        calls.append(start)
        if len(calls) == 2:
            raise RuntimeError("the window stumbled")
        return real(path, demuxer, start, end, settings_)

    monkeypatch.setattr(vision, "_see", flaky)
    settings = fast.model_copy(update={"vision_window_s": 5, **STEADY_LEASE})
    _, video, job = await _analysis(store, pool, background, settings, videos["sides"])
    done = await wait_for(lambda: job_finished(store, job.id), timeout=180, what="analysis finished")
    assert done.status == "completed" and done.attempts == 2, done.error_message
    assert calls == [0, 5000, 5000]  # the second window failed, and only it was seen again
    assert await _items(store, job.id) == [("JobItemCompleted", "vision-00000-0-5000", 1),
                                           ("JobItemFailed", "vision-00001-5000-6000", 1),
                                           ("JobItemCompleted", "vision-00001-5000-6000", 2)]
    graph = (await store.fetch_for_writing(video.id)).graph
    profile = graph["behavioral"]["vision"]
    assert profile["sampling"] == {"fps": 3.0, "frames": 18, "analysedMs": 6000, "durationMs": 6000}
    assert [s["value"] for s in profile["presence"]["timeline"]] == ["person", "no_person"]
    assert graph["behavioral"]["unavailable"] == {}
    behaviour = [e for e in graph["visualElements"] if e["type"] == "behaviour"]
    assert [e["signal"] for e in behaviour] == ["presence", "gaze", "expression", "posture", "gestures",
                                                "laterality", "proxemics", "rhythm"]
    assert behaviour[1]["description"] == "looks at the camera 100 % of the time the face is visible"
    article = await store.fetch_for_writing(article_stream_for_job(job.id))
    assert "## On screen" in article.markdown
    assert "- Looks at the camera 100 % of the time the face is visible." in article.markdown


async def test_a_cancelled_behavioural_analysis_stops_between_two_windows(fast, store, pool, background, videos,
                                                                           monkeypatch):
    seeing, release, calls = threading.Event(), threading.Event(), []
    real = vision._see

    def gated(path, demuxer, start, end, settings_):
        calls.append(start)
        seeing.set()
        release.wait(30)
        return real(path, demuxer, start, end, settings_)

    monkeypatch.setattr(vision, "_see", gated)
    settings = fast.model_copy(update={"vision_window_s": 5, **STEADY_LEASE})
    ws, video, job = await _analysis(store, pool, background, settings, videos["sides"])
    await wait_for(lambda: asyncio.sleep(0, seeing.is_set()), timeout=60, what="the first window is being seen")
    await handle(store, CancelJob(ws, job_id=job.id))
    release.set()
    done = await wait_for(lambda: job_finished(store, job.id), timeout=60, what="analysis cancelled")
    assert done.status == "cancelled" and calls == [0]  # the second window was never seen
    assert ("JobItemCompleted", "vision-00001-5000-6000", 1) not in await _items(store, job.id)
    assert (await store.fetch_for_writing(video.id)).graph is None  # nothing of the analysis recorded
