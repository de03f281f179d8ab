"""Speech through the configured provider, on the real servers: a talk without captions is sent
window by window to a fake OpenAI-compatible provider over a real socket, and the analysis goes on
from the provider's words; the transcript's source names the provider and its model, never the key."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from services.application.videos import AnalysisOptions, RequestAnalysis
from services.jobs.speech import ProviderRecogniser, recogniser_for
from tests import fake_asr
from tests.fake_asr import FakeSpeechProvider
from tests.helpers import handle
from tests.media_factory import make_spoken_talk
from tests.support.pipeline import job_finished, start_pipeline, wait_for
from tests.support.speech_jobs import analysis_worker, items, speech_settings, upload

KEY = "sk-asr-analysis-5e0d7a31"


@pytest.fixture(scope="module")
def talk(tmp_path_factory):
    return make_spoken_talk(tmp_path_factory.mktemp("speech-provider"))


@pytest.fixture
async def fake():
    provider = await FakeSpeechProvider().start()
    yield provider
    await provider.stop()


async def test_a_talk_is_transcribed_by_the_configured_provider(fast, store, pool, background, talk, fake):
    fake.answer(fake_asr.words("the fake provider heard solar panels in this window"))
    settings = speech_settings(fast, asr_base_url=fake.base_url, asr_model="whisper-fake", asr_api_key=SecretStr(KEY),
                               asr_retry_backoff_s=0.01)
    recogniser = recogniser_for(settings)
    assert isinstance(recogniser, ProviderRecogniser)
    start_pipeline(settings, background)
    ws, video, _ = await upload(store, settings, talk["video"])
    background.start(analysis_worker(settings, pool, recogniser).run)
    job, _, _, _ = await handle(store, RequestAnalysis(ws, video_id=video.video_id, environment="sandbox",
        options=AnalysisOptions(outputs={"article": True})))

    done = await wait_for(lambda: job_finished(store, job.id), timeout=300, what="analysis finished")

    assert done.status == "completed", done.error_message
    source = done.result["transcript_source"]
    assert (source["kind"], source["engine"], source["host"], source["model"], source["language"]) == (
        "speech", "provider", "127.0.0.1", "whisper-fake", "en")
    assert source["windows"] >= 3 and source["words"] == 9 * source["windows"]
    assert len(fake.requests) == source["windows"] + 1  # the first window once more to name the language
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in fake.requests)
    assert "language" not in fake.requests[0]["form"] and fake.requests[1]["form"]["language"] == ["en"]
    # each window is told what the windows before it were heard as (the first, nothing)
    assert "prompt" not in fake.requests[1]["form"]
    assert fake.requests[2]["form"]["prompt"] == ["the fake provider heard solar panels in this window"]
    recorded = await items(store, job.id)
    assert len(recorded) == source["windows"] and all(kind == "JobItemCompleted" for kind, _, _ in recorded)
    graph = (await store.fetch_for_writing(video.id)).graph
    assert graph["transcriptSource"] == source
    text = " ".join(s["text"] for s in graph["transcript"])
    assert text.count("the fake provider heard solar panels in this window") == source["windows"]
    first = graph["transcript"][0]
    assert abs(first["startMs"] - talk["starts_ms"][0]) < 1500  # offset by the window's start in the video
    assert KEY not in repr(done.result) and KEY not in repr(graph)
