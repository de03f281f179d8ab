"""quality_profile=premium end to end: the real processes, the worker configured with an
OpenAI-compatible provider that is a fake speaking the protocol over a socket (tests/fake_llm.py).

Success: upload, analyze premium, the job completes, the article, the graph and the result show
the provider's texts and what it wrote, GET /usage/llm shows each call's tokens. Answers that fail
their checks (not JSON, cut at the length limit, too long) cost only their parts, which keep the
offline text with the reason; the job completes. A provider that does not answer (5xx retried to
the bound, 401, timeout, connection refused, a body that is not the protocol's), at any of its
calls: the job fails with a message naming the cause, the charge is refunded in the failing
append, and nothing of the analysis (graph, article) is stored. The API key shows nowhere.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from domain.analysis.premium import PARTS
from tests import fake_llm
from tests.fake_llm import FakeProvider
from tests.media_factory import make_interview, run
from tests.support.api_videos import events_of, follow, upload
from tests.support.credits import credits_used, same_transaction
from tests.support.service import running_service

KEY = "sk-e2e-secret-7d1f4b9c2e"
TIMEOUT_S = 1.5


@pytest.fixture(scope="module")
async def provider():
    fake = await FakeProvider().start()
    yield fake
    await fake.stop()


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory, provider):
    env = {"VAEO_LLM_BASE_URL": provider.base_url, "VAEO_LLM_API_KEY": KEY, "VAEO_LLM_MODEL": "fake-model",
           "VAEO_LLM_TIMEOUT_S": str(TIMEOUT_S), "VAEO_LLM_MAX_ATTEMPTS": "3", "VAEO_LLM_RETRY_BACKOFF_S": "0.05"}
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"), apis=1, **env) as svc:
        yield svc


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict:
    return make_interview(tmp_path_factory.mktemp("premium"))


async def analyze_premium(service, media, **body):
    ws = await service.workspace(credits=10)
    status, uploaded = await upload(ws.client, media["video"], captions=media["vtt"])
    assert status == 201, uploaded
    r = await ws.client.post(f"/videos/{uploaded['data']['id']}/analyze",
                             {"quality_profile": "premium", "writing_style": "journalistic", **body})
    assert r.status == 202 and r.data["credits_charged"] == 2, r.body
    job, _ = await follow(ws.client, r.data["job_id"])
    return ws, uploaded["data"]["id"], job


async def llm_usage(client, timeout: float = 10, operations: int = 1) -> dict:
    """GET /usage/llm once the llm_usage read model has calls of ``operations`` operations."""
    deadline = asyncio.get_running_loop().time() + timeout
    while len((usage := (await client.get("/usage/llm")).data)["operations"]) < operations:
        assert asyncio.get_running_loop().time() < deadline, "no LLM usage recorded"
        await asyncio.sleep(0.05)
    return usage


async def assert_key_shows_nowhere(service) -> None:
    async with service.pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM events WHERE data::text LIKE $1 OR meta::text LIKE $1",
                                   f"%{KEY}%") == 0
        for table in ("jobs", "articles", "content_graphs", "llm_usage"):
            assert await conn.fetchval(f"SELECT count(*) FROM {table} t WHERE t::text LIKE $1", f"%{KEY}%") == 0
    for log in service.logs.iterdir():
        assert KEY not in log.read_text(errors="replace"), log.name


async def test_a_premium_analysis_gets_the_providers_texts_and_records_its_usage(service, provider, media):
    provider.answer(fake_llm.status(429, "slow down", headers={"Retry-After": "0"}), fake_llm.article())

    ws, video_id, job = await analyze_premium(service, media, language="fr")

    assert job["status"] == "completed", job
    assert len(provider.requests) == 4  # the 429 was retried once; then the article and the descriptions
    outline, article_call, descriptions = provider.requests[1:]
    assert outline["headers"]["Authorization"] == f"Bearer {KEY}"
    for request, name in ((outline, "video_outline"), (article_call, "article"), (descriptions, "descriptions")):
        body = request["body"]
        assert body["model"] == "fake-model" and body["max_tokens"] > 0
        assert body["response_format"]["type"] == "json_schema", body["response_format"]
        assert body["response_format"]["json_schema"]["name"] == name
    assert job["result"]["written"] == {part: {"by": "model"} for part in PARTS}
    article = (await ws.client.get(f"/articles/{job['article_id']}")).data
    assert article["title"] == fake_llm.TITLE and article["language"] == "fr"
    content = article["content"]
    assert content["engine"] == "provider" and content["introduction"] == fake_llm.INTRO
    assert content["summary"] == fake_llm.SUMMARY and content["written"] == job["result"]["written"]
    assert content["descriptions"] == {"short": fake_llm.SHORT, "long": fake_llm.LONG}
    assert content["sections"][0]["paragraphs"][0]["text"].startswith("PROVIDER-PARAGRAPH 1")
    graph = (await ws.client.get(f"/videos/{video_id}/graph")).data
    assert graph["written"] == job["result"]["written"]
    claim_ids = {c["id"] for c in graph["claims"]}
    assert content["key_facts"] and all(f["claimId"] in claim_ids for f in content["key_facts"])
    assert len(content["sections"]) == max(1, len(graph["chapters"]))
    assert fake_llm.INTRO in article["markdown"] and "PROVIDER-CONCLUSION." in article["markdown"]
    usage = await llm_usage(ws.client, operations=3)
    names = {"analysis.enrich": "Analysis enrichment", "article.write": "Article writing",
             "descriptions.complete": "Platform descriptions"}
    assert sorted(usage["operations"], key=lambda o: o["operation"]) == [
        {"operation": op, "name": name, "calls": 1, "promptTokens": fake_llm.PROMPT_TOKENS,
         "completionTokens": fake_llm.COMPLETION_TOKENS,
         "totalTokens": fake_llm.PROMPT_TOKENS + fake_llm.COMPLETION_TOKENS} for op, name in sorted(names.items())]
    assert (await ws.client.get("/credits")).data["used"] == 2
    assert await events_of(service, ws.id, "CreditsRefunded") == []
    await assert_key_shows_nowhere(service)


async def test_answers_that_fail_their_checks_fall_back_part_by_part_and_say_why(service, provider, media):
    provider.answer(fake_llm.premium(outline=lambda a: "Here is your outline: ...",
                                     article=lambda a: ('{"introduction": "Fus', "length"),
                                     descriptions=lambda a: json.dumps({**a, "short": "x" * 400})))

    ws, video_id, job = await analyze_premium(service, media, language="en")

    assert job["status"] == "completed", job
    written = job["result"]["written"]
    assert {part: o["by"] for part, o in written.items()} == {part: "offline" for part in PARTS}
    assert "the answer is not JSON" in written["title"]["reason"] and written["title"] == written["chapter_titles"]
    assert written["article"]["reason"] == written["faq"]["reason"] == "the answer was cut at its length limit"
    assert "the short description is 400 characters long" in written["descriptions"]["reason"]
    article = (await ws.client.get(f"/articles/{job['article_id']}")).data
    content = article["content"]
    assert content["written"] == written and "descriptions" not in content
    assert fake_llm.INTRO not in article["markdown"] and fake_llm.TITLE != article["title"]
    graph = (await ws.client.get(f"/videos/{video_id}/graph")).data
    assert graph["written"] == written
    assert len(await events_of(service, ws.id, "LlmUsageRecorded")) == 3  # every answer cost its tokens
    assert (await ws.client.get("/credits")).data["used"] == 2


FAILURES = {
    "server_error": ([fake_llm.status(500, "the model is overloaded")], 3,
                     "the provider failed writing the title, summary and chapters: the provider answered 500 "
                     "Internal Server Error: the model is overloaded (after 3 attempts)"),
    "wrong_key": ([fake_llm.status(401, f"Incorrect API key provided: {KEY}")], 1,
                  "the provider answered 401 Unauthorized: Incorrect API key provided: ***"),
    "timeout": ([fake_llm.slow(TIMEOUT_S + 2)], 3, f"did not answer within {TIMEOUT_S:g} s (after 3 attempts)"),
    "refused": ([fake_llm.article()], 0, "could not connect to the provider at 127.0.0.1:"),
    "not_the_protocol": ([fake_llm.raw(200, "<html>upstream gateway</html>")], 1,
                         "the provider's answer is not a Chat Completions response"),
    "article_call_fails": ([fake_llm.article(), fake_llm.status(503, "gone")], 4,
                           "the provider failed writing the article: the provider answered 503"),
}


@pytest.mark.parametrize("failure", list(FAILURES))
async def test_a_provider_that_does_not_answer_fails_the_job_refunds_and_stores_nothing(service, provider, media,
                                                                                         failure: str):
    steps, requests, message = FAILURES[failure]
    provider.answer(*steps)
    if failure == "refused":
        await provider.stop()
    try:
        ws, video_id, job = await analyze_premium(service, media)
    finally:
        if failure == "refused":
            await provider.start()

    assert job["status"] == "failed", job
    assert message in job["error_message"] and "nothing of the analysis was stored" in job["error_message"], job
    assert job["article_id"] is None
    assert len(provider.requests) == requests
    [refund] = [e["data"] for e in await events_of(service, ws.id, "CreditsRefunded")]
    assert refund["amount"] == 2 and refund["job_id"] == job["id"]
    assert await same_transaction(service, ws.id, "JobFailed", "CreditsRefunded")
    await credits_used(ws.client, 0)
    assert await events_of(service, ws.id, "ArticleGenerated", "VideoGraphRecorded", "VideoAnalyzed",
                           "JobCompleted") == []
    assert (await ws.client.get(f"/videos/{video_id}/graph")).status == 404
    assert (await ws.client.get("/articles")).data == []
    # an answered call cost its tokens, recorded at once, though the job then failed; a failed request none
    assert len(await events_of(service, ws.id, "LlmUsageRecorded")) == (1 if failure == "article_call_fails" else 0)
    assert KEY not in job["error_message"]


async def test_premium_without_a_transcript_fails_before_the_provider_and_refunds(service, provider,
                                                                                   tmp_path_factory):
    provider.answer(fake_llm.article())
    ws = await service.workspace(credits=10)
    tone = tmp_path_factory.mktemp("tone") / "tone.mp4"  # no captions, no subtitle track, and no speech
    run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=3",
         "-f", "lavfi", "-i", "sine=frequency=440:duration=3", "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(tone)])
    status, uploaded = await upload(ws.client, tone)
    assert status == 201 and uploaded["data"]["has_transcript"] is False, uploaded
    r = await ws.client.post(f"/videos/{uploaded['data']['id']}/analyze", {"quality_profile": "premium"})
    # one minute doubled for premium, and one of speech: the video has no captions, so its audio is read first
    assert r.status == 202 and r.data["credits_charged"] == 3, r.body
    job, _ = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "failed" and "has none" in job["error_message"] and job["result"] is None, job
    assert provider.requests == []
    [refund] = [e["data"] for e in await events_of(service, ws.id, "CreditsRefunded")]
    assert refund["amount"] == 3
    await credits_used(ws.client, 0)
    assert await events_of(service, ws.id, "ArticleGenerated", "VideoAnalyzed") == []
