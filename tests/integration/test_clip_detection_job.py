"""The clip_detection job on the real servers, with its prompt read offline or by a provider (the
fake OpenAI-compatible server of the tests, over a socket): the clips it records, the tracking
read model, the provider's ratings steering the choice, its tokens recorded, and a provider
failure failing the job clearly and refunding it."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from domain.pricing import detection_price
from services.application.clips import RequestDetection
from services.jobs.clips import register_clip_jobs
from services.jobs.context import JobHandlers
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from services.processes.worker import Worker
from tests.fake_llm import FakeProvider, completion, status
from tests.helpers import handle, wait_projected
from tests.support.pipeline import job_finished, wait_for
from tests.support.seeded_article import seeded

KEYWORD = "pompe à chaleur"


@pytest.fixture
async def provider():
    fake = await FakeProvider().start()
    yield fake
    await fake.stop()


def rate_the_keyword() -> object:
    """A provider that rates 100 the candidate whose text says the keyword last, 0 the others."""

    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        candidates = json.loads(body["messages"][-1]["content"])["candidates"]
        chosen = [c["id"] for c in candidates if KEYWORD in c["text"]][-1:]
        ratings = [{"id": c["id"], "relevance": 100 if c["id"] in chosen else 0} for c in candidates]
        return web.json_response(completion(json.dumps({"ratings": ratings})))

    return step


async def run_detection(settings, store, pool, background, ws, video, article, storage, prompt: str | None):
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["jobs", "scheduler", "clip_jobs"]))
    background.start(Worker(settings, register_clip_jobs(JobHandlers(), settings, storage), pool=pool).run)
    request = {"article_id": 3, "template_id": 1, "target_duration_seconds": 30, "requested_clip_count": 3,
               "analysis_mode": "multimodal", "prompt": prompt, "protect_sentence_boundaries": True,
               "duration_margin_enabled": True, "duration_margin_percent": 10, "allow_shorter_duration": True,
               "allow_longer_duration": False}
    job, reused, price, _ = await handle(store, RequestDetection(ws, "production", **request))
    assert (reused, price) == (False, detection_price(video.duration_ms))
    done = await wait_for(lambda: job_finished(store, job.id), timeout=60, what="detection finished")
    return done


async def detected(store, job_id) -> dict:
    from domain.clips import detection_stream_id

    return next(e.data for e in await store.read_stream(detection_stream_id(job_id)) if e.type == "ClipsDetected")


async def test_offline_the_prompt_terms_steer_and_the_tracking_shows_the_clips(fast, store, pool, background,
                                                                               tmp_path):
    ws, video, article, storage = await seeded(fast, store, tmp_path)
    done = await run_detection(fast, store, pool, background, ws, video, article, storage, KEYWORD)
    assert done.status == "completed", done.error_message
    found = await detected(store, done.id)
    assert found["signals"][-1] == "prompt:terms" and 1 <= len(found["clips"]) <= 3
    assert "matches the prompt" in found["clips"][0]["rationale"].lower()
    await wait_projected(fast, pool, ["clip_jobs"])
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT * FROM clip_jobs WHERE job_id = $1", done.id)
    assert (row["status"], row["progress"], row["type"], row["article_id"]) == ("completed", 100, "clip_detection", 3)
    assert row["clips"] == found["clips"] and row["credits_refunded"] == 0
    assert row["credits_charged"] == detection_price(video.duration_ms) == 3  # 22 minutes: three started tens


async def test_a_configured_provider_rates_the_windows_for_the_prompt(fast, store, pool, background, tmp_path,
                                                                     provider):
    provider.answer(rate_the_keyword())
    settings = fast.model_copy(update={"llm_base_url": provider.base_url, "llm_model": "fake-model"})
    ws, video, article, storage = await seeded(settings, store, tmp_path)
    done = await run_detection(settings, store, pool, background, ws, video, article, storage,
                               "le passage sur la pompe à chaleur")
    assert done.status == "completed", done.error_message
    [call] = provider.requests
    candidates = json.loads(call["body"]["messages"][-1]["content"])["candidates"]
    favourite = [c for c in candidates if KEYWORD in c["text"]][-1]
    found = await detected(store, done.id)
    best = found["clips"][0]
    assert (best["start_ms"] / 1000, best["end_ms"] / 1000) == pytest.approx((favourite["from_s"], favourite["to_s"]),
                                                                             abs=0.05)
    assert "provider rates it 100/100" in best["rationale"] and found["signals"][-1] == "prompt:provider"
    async with pool.acquire() as conn:
        recorded = await conn.fetch("SELECT data FROM events WHERE type = 'LlmUsageRecorded'")
    assert [(r["data"]["operation"], r["data"]["job_id"]) for r in recorded] == [("clips.detect", str(done.id))]


async def test_a_failing_provider_fails_the_detection_clearly_and_refunds_it(fast, store, pool, background, tmp_path,
                                                                            provider):
    provider.answer(status(500, "the model is overloaded"))
    settings = fast.model_copy(update={"llm_base_url": provider.base_url, "llm_model": "fake-model",
                                       "llm_max_attempts": 2, "llm_retry_backoff_s": 0.05})
    ws, video, article, storage = await seeded(settings, store, tmp_path)
    done = await run_detection(settings, store, pool, background, ws, video, article, storage, KEYWORD)
    assert done.status == "failed" and done.attempts == 1
    assert done.error_message.startswith("the provider that reads the prompt failed: the provider answered 500")
    assert "no clip was detected" in done.error_message
    assert (await store.fetch_for_writing(ws)).credits_used == 0
