"""A cancellation during the speech-finding pass stops it there, on the real servers and ffmpeg.

The pass over four hours of audio (decoding and the voice activity detector, block by block) takes
about half a minute on two quiet cores, more on a loaded machine. The job is cancelled as soon as
its ffmpeg runs: that ffmpeg must be gone, and the job cancelled, well before the pass could have
ended (the deadline below is half the pass's time on a quiet machine); before, the pass ran to its
end behind the cancelled job, its ffmpeg and the worker's thread busy all along.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from services.application.jobs import CancelJob
from services.jobs.speech import LocalRecogniser
from tests.helpers import handle
from tests.media_factory import ffmpeg_processes, run
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.speech_jobs import analyse_video, analysis_worker, speech_settings, steps, upload

pytestmark = pytest.mark.slow

HOURS = 4  # the longest audio speech is looked for in (asr_max_duration_s)
STOPPED_WITHIN_S = 15.0


@pytest.fixture(scope="module")
def long_silence(tmp_path_factory):
    path = tmp_path_factory.mktemp("cancel") / "four-hours.flac"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", str(HOURS * 3600),
         "-c:a", "flac", str(path)], timeout=600)
    return path


async def test_a_cancellation_stops_the_speech_finding_pass_and_its_ffmpeg(fast, store, pool, background,
                                                                         long_silence):
    settings = speech_settings(fast)
    start_pipeline(settings, background)
    ws, video, storage = await upload(store, settings, long_silence)
    assert video.duration_ms == HOURS * 3600 * 1000
    source = str(storage.path(video.storage_key))
    background.start(analysis_worker(settings, pool, LocalRecogniser(settings)).run)
    job = await analyse_video(store, ws, video)

    async def finding_speech():
        in_step = any(step == "finding speech in the audio" for step, _ in await steps(store, job.id))
        return in_step and ffmpeg_processes(source)

    await wait_for(finding_speech, timeout=120, what="the speech-finding pass's ffmpeg running")
    await handle(store, CancelJob(ws, job_id=job.id))
    cancelled_at = time.monotonic()
    while ffmpeg_processes(source) or not await job_finished(store, job.id):
        assert time.monotonic() - cancelled_at < STOPPED_WITHIN_S, "the pass went on after the cancellation"
        await asyncio.sleep(0.1)
    assert (await job_finished(store, job.id)).status == "cancelled"
    assert not any(step and step.startswith("recognising") for step, _ in await steps(store, job.id))
