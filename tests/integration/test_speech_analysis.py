"""Speech as the transcript, on the real servers: a video without captions is recognised window by
window (each window a job item), and the analysis goes on from the recognised words."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter

import pytest

from domain.analysis.speech import words_text
from infra.asr import AsrError
from services.application.jobs import CancelJob
from services.application.videos import AnalysisOptions, RequestAnalysis
from services.jobs.speech import LocalRecogniser
from tests.helpers import handle
from tests.media_factory import TALK_LINES, make_spoken_talk
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.speech_jobs import (
    WHOLE_WINDOWS,
    analyse_video,
    analysis_worker,
    items,
    speech_settings,
    steps,
    upload,
)
from tests.support.stack import ROOT, env_for

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def talk(tmp_path_factory):
    return make_spoken_talk(tmp_path_factory.mktemp("speech"))


@pytest.fixture(scope="module")
def short_talk(tmp_path_factory):
    """The talk's first four lines: three windows of 8 s, enough for the tests of the windows'
    retries, cancellation, resumption and language, at about half the recognition's CPU."""
    return make_spoken_talk(tmp_path_factory.mktemp("speech"), TALK_LINES[:4], name="short.mp4")


async def test_a_talk_without_captions_is_recognised_window_by_window_and_analysed(fast, store, pool, background,
                                                                                   talk):
    settings = speech_settings(fast)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, talk["video"])
    background.start(analysis_worker(settings, pool, LocalRecogniser(settings)).run)
    job = await analyse_video(store, ws, video)
    done = await wait_for(lambda: job_finished(store, job.id), timeout=300, what="analysis finished")
    assert done.status == "completed", done.error_message
    source = done.result["transcript_source"]
    assert source["kind"] == "speech" and source["engine"] == "faster-whisper" and source["model"] == "base"
    assert source["language"] == "en" and source["windows"] >= 3 and source["words"] > 40
    recorded = await items(store, job.id)
    assert len(recorded) == source["windows"] and all(kind == "JobItemCompleted" for kind, _, _ in recorded)
    window_steps = [s for s, _ in await steps(store, job.id) if s and s.startswith("recognising speech")]
    assert window_steps[0] == f"recognising speech: window 1 of {source['windows']}"
    assert done.result["claims"] > 0 and done.article_id is not None
    graph = (await store.fetch_for_writing(video.id)).graph
    assert graph["transcriptSource"] == source
    text = " ".join(s["text"] for s in graph["transcript"]).lower()
    assert all(word in text for word in ("sunlight", "electricity", "gigawatts", "battery")), text
    first = graph["transcript"][0]
    assert abs(first["startMs"] - talk["starts_ms"][0]) < 700  # the words keep their place in the video


class Flaky(LocalRecogniser):
    """Fails the second window on the first attempt (the window, not the job, is retried)."""

    def __init__(self, settings, on_window=None):
        super().__init__(settings)
        self.calls: list[tuple[int, int]] = []
        self.prompts: list[str] = []
        self.on_window = on_window

    async def recognise(self, path, demuxer, window, language, prompt=""):
        self.calls.append(window)
        self.prompts.append(prompt)
        if self.on_window is not None:
            await self.on_window(len(self.calls))
        if len(self.calls) == 2:
            raise AsrError("the recogniser stumbled")
        return await super().recognise(path, demuxer, window, language, prompt)


async def test_a_failed_window_is_retried_alone(fast, store, pool, background, short_talk):
    settings = speech_settings(fast)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, short_talk["video"])
    recogniser = Flaky(settings)
    background.start(analysis_worker(settings, pool, recogniser).run)
    job = await analyse_video(store, ws, video)
    done = await wait_for(lambda: job_finished(store, job.id), timeout=300, what="analysis finished")
    assert done.status == "completed" and done.attempts == 2, done.error_message
    recorded = await items(store, job.id)
    failed = [(item, attempt) for kind, item, attempt in recorded if kind == "JobItemFailed"]
    completed = Counter(item for kind, item, _ in recorded if kind == "JobItemCompleted")
    assert len(failed) == 1 and failed[0][1] == 1
    assert set(completed.values()) == {1} and failed[0][0] in completed
    # every window recognised once, but the one that failed, twice
    assert len(recogniser.calls) == len(completed) + 1
    assert Counter(recogniser.calls).most_common(1)[0][1] == 2
    # the attempt stopped at the failed window (none after it was tried), and the next one told
    # it exactly what it had been told: the text of the window before it, as recorded
    assert recogniser.calls[1] == recogniser.calls[2] and recogniser.prompts[1] == recogniser.prompts[2] != ""
    first = next(e.data["result"] for e in await store.read_stream(job.id) if e.type == "JobItemCompleted")
    assert recogniser.prompts[1] == words_text(first["words"])


async def test_cancellation_stops_between_windows(fast, store, pool, background, short_talk):
    settings = speech_settings(fast)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, short_talk["video"])
    job_ids = []

    async def cancel_at_first(n):
        if n == 1:
            await handle(store, CancelJob(ws, job_id=job_ids[0]))

    recogniser = Flaky(settings, on_window=cancel_at_first)
    background.start(analysis_worker(settings, pool, recogniser).run)
    job = await analyse_video(store, ws, video)
    job_ids.append(job.id)
    done = await wait_for(lambda: job_finished(store, job.id), timeout=120, what="job cancelled")
    assert done.status == "cancelled"
    await wait_for(lambda: _quiet(store, job.id), timeout=30, what="worker stopped")
    assert len(recogniser.calls) == 1  # no window after the cancellation
    assert all(kind != "JobItemCompleted" for kind, _, _ in await items(store, job.id))


async def _quiet(store, job_id):
    import asyncio

    before = len(await store.read_stream(job_id))
    await asyncio.sleep(1.0)
    return len(await store.read_stream(job_id)) == before


async def test_kill_minus_nine_resumes_without_recognising_finished_windows_again(fast, store, pool, background,
                                                                                  short_talk, tmp_path):
    settings = speech_settings(fast)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, short_talk["video"])
    # the killed worker's lease must lapse for the next one to take the job: 5 s, not so short that a busy
    # machine's late heartbeat loses it while the worker lives
    env = dict(env_for(settings), VAEO_WORKER_LEASE_S="5", VAEO_JOB_RETRY_BACKOFF_S="0.1",
               VAEO_WORKER_POLL_INTERVAL_S="0.05", VAEO_ASR_WINDOW_S="8")

    def spawn():
        log = (tmp_path / "worker.log").open("ab")
        return subprocess.Popen([sys.executable, "-m", "services.cli", "worker"], env=env, cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    job = await analyse_video(store, ws, video)
    first = spawn()
    try:
        async def one_window_done():
            return any(kind == "JobItemCompleted" for kind, _, _ in await items(store, job.id))

        await wait_for(one_window_done, timeout=180, what="a first window recognised")
        first.send_signal(signal.SIGKILL)
        first.wait()
        finished_first = [item for kind, item, _ in await items(store, job.id) if kind == "JobItemCompleted"]
        second = spawn()
        try:
            done = await wait_for(lambda: job_finished(store, job.id), timeout=300, what="job completed")
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    assert done.status == "completed" and done.attempts == 2, done.error_message
    completed = [(item, attempt) for kind, item, attempt in await items(store, job.id) if kind == "JobItemCompleted"]
    assert len(completed) == len({item for item, _ in completed}) == done.result["transcript_source"]["windows"]
    assert all(attempt == 1 for item, attempt in completed if item in finished_first)
    # the second attempt's steps name only the windows the first did not finish
    second_steps = [s for s, a in await steps(store, job.id) if s and s.startswith("recognising") and a == 2]
    assert len(second_steps) == len(completed) - len(finished_first)


async def _analysed_without_language(fast, store, pool, background, talk, **more):
    settings = speech_settings(fast, **more)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, talk["video"])
    background.start(analysis_worker(settings, pool, LocalRecogniser(settings)).run)
    job, _, _, _ = await handle(store, RequestAnalysis(ws, video_id=video.video_id, environment="sandbox",
        options=AnalysisOptions(outputs={"article": True})))
    return await wait_for(lambda: job_finished(store, job.id), timeout=300, what="analysis finished")


async def test_an_unsure_language_is_refused_with_a_clear_message(fast, store, pool, background, short_talk):
    done = await _analysed_without_language(fast, store, pool, background, short_talk,
                                            asr_language_min_probability=0.9999)
    assert done.status == "failed" and done.attempts == 1
    assert done.error_message.startswith("could not tell which language is spoken (best guess en at 0.9")
    assert "`language` in the request" in done.error_message


async def test_the_language_is_detected_when_the_request_names_none(fast, store, pool, background, short_talk):
    done = await _analysed_without_language(fast, store, pool, background, short_talk, **WHOLE_WINDOWS)
    assert done.status == "completed", done.error_message
    source = done.result["transcript_source"]
    assert source["language"] == "en" and source["language_probability"] >= 0.8 and source["model"] == "base"
    assert done.result["language"] == "en"  # the video said fr (its default); the analysis follows the speech
