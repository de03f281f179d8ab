"""Thumbnails made with ffmpeg through the whitelisted argument builder: a frame of a video, the
waveform of an audio file, JPEG either way, and a refusal (MediaError) for what is not media."""

from __future__ import annotations

import pytest

from infra.media.ffmpeg import MediaError
from infra.media.posters import thumbnail
from infra.media.probe import probe
from tests.media_factory import run


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("thumbnails")
    video, audio = root / "clip.mp4", root / "voice.mp3"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=320x240:r=10:d=6", "-c:v", "libx264",
         "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(video)])
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=300:duration=4", str(audio)])
    return {"video": video, "audio": audio}


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_a_thumbnail_is_a_jpeg_of_the_media(files, kind):
    info = probe(files[kind])
    picture = thumbnail(files[kind], info.demuxer, info.duration_ms, has_video=info.has_video, width=160)
    assert picture[:2] == b"\xff\xd8" and picture[-2:] == b"\xff\xd9" and len(picture) > 500


def test_no_picture_is_a_media_error(files, tmp_path):
    silent = tmp_path / "silent.mp4"
    silent.write_bytes(files["video"].read_bytes()[:2000])  # cut short: no frame to decode
    with pytest.raises(MediaError):
        thumbnail(silent, "mov", 6000, has_video=True)


async def test_the_analysis_makes_the_poster_of_a_video_uploaded_without_one(fast, store, pool, background, tmp_path):
    """A video recorded before posters were made at upload has none: its analysis job makes it (the
    write side), so that its article's exports, which never run ffmpeg, show it."""
    from domain.videos import ANALYZE_JOB, Video
    from infra.media.posters import jpeg_size, poster_key
    from infra.storage import LocalStorage
    from services.application.videos import AnalysisOptions, RequestAnalysis
    from services.application.workspaces import CreateWorkspace
    from services.jobs.analysis import run_analysis
    from services.jobs.context import JobHandlers
    from services.processes.worker import Worker
    from tests.helpers import handle
    from tests.media_factory import make_captioned_video, podcast_cues
    from tests.support.pipeline import job_finished, start_pipeline, wait_for

    made = make_captioned_video(tmp_path, 4, podcast_cues(4, max_chars=200))
    storage = LocalStorage.from_settings(fast)
    ws, _ = await handle(store, CreateWorkspace(name="w", plan="pro", credits=1000, rate_limit=1000))
    folder = f"videos/{ws}/41"
    storage.write_bytes(f"{folder}/source.mp4", made["video"].read_bytes())
    storage.write_bytes(f"{folder}/captions.vtt", made["vtt"].read_bytes())
    video = Video.upload(video_id=41, workspace_id=ws, environment="production", name="old", demuxer="mov",
                         storage_key=f"{folder}/source.mp4", size_bytes=made["video"].stat().st_size,
                         duration_ms=made["duration_ms"], captions_key=f"{folder}/captions.vtt", caption_cues=3,
                         width=160, height=120, frame_rate=5.0, video_codec="h264", audio_codec="aac")
    assert video.thumbnail_key is None
    await store.save(video, workspace_id=ws)
    handlers = JobHandlers()

    @handlers.register(ANALYZE_JOB)
    async def analyse(ctx):
        return await run_analysis(ctx, fast, storage)

    start_pipeline(fast, background)
    background.start(Worker(fast, handlers, pool=pool).run)
    job, _, _, _ = await handle(store, RequestAnalysis(ws, "production", 41, AnalysisOptions(
        outputs={"article": True}, language="fr")))
    done = await wait_for(lambda: job_finished(store, job.id), timeout=120, what="analysis finished")
    assert done.status == "completed", done.error_message
    key = poster_key(ws, 41, None)
    assert storage.exists(key) and jpeg_size(storage.read_range(key, 0, 65_536)) == (160, 120)
