"""The premium path, translation and the assistant against a real language model: the real
processes configured with the test stack's llama.cpp server (``llm_server``: SmolLM2-135M-Instruct,
on the CPU, with no network). Each runs end to end once.

A 135M model writes poor text, so these tests hold the contract, not the prose: every part of a
premium analysis is either the model's and passes the checks, or the offline text with a reason;
a translation is either a whole article of the source's shape or refused and refunded; the
assistant answers, and its usage is recorded. The failures a provider can have (timeouts, 429, cut
answers) are the fake's tests (test_premium_articles, test_agent_provider, test_articles).
"""

from __future__ import annotations

import asyncio

import pytest

from domain.analysis.premium import PARTS
from domain.analysis.premium_checks import (
    MOVE_WINDOW_MS,
    Grounds,
    check_distinct,
    check_grounded,
    check_language,
    check_text,
)
from domain.platforms import PLATFORMS, description_kind, measure
from tests.media_factory import LECTURE_LINES, lecture_cues, make_captioned_video
from tests.support.agent_talk import chat
from tests.support.api_videos import events_of, follow, upload
from tests.support.service import running_service
from tests.support.stack import LLAMA_BUILD_TIMEOUT

pytestmark = [LLAMA_BUILD_TIMEOUT, pytest.mark.slow]  # a build on a fresh machine, then a model on the CPU
MODEL_SECONDS = 2400  # a whole premium analysis on two busy cores, at worst


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory, llm_server):
    # a ceiling on every answer keeps a 135M model on a busy CPU within minutes; an answer cut there is
    # a part that falls back (or a translation refused), which is the contract these tests hold
    env = {"VAEO_LLM_BASE_URL": llm_server.base_url, "VAEO_LLM_MODEL": llm_server.model,
           "VAEO_LLM_TIMEOUT_S": "900", "VAEO_LLM_MAX_ATTEMPTS": "1", "VAEO_LLM_MAX_OUTPUT_TOKENS": "400"}
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"), apis=1, **env) as svc:
        yield svc


@pytest.fixture(scope="module")
async def lecture(service, tmp_path_factory):
    """The English lecture's first two parts (two minutes, four chapters) uploaded and analysed in
    the standard profile (the offline texts), then in the premium profile: (workspace, video id,
    standard (job, article, graph), premium (job, article, graph))."""
    media = make_captioned_video(tmp_path_factory.mktemp("lecture"), 125, lecture_cues(LECTURE_LINES[:20]))
    ws = await service.workspace(credits=100)
    status, uploaded = await upload(ws.client, media["video"], captions=media["vtt"], name="Clean energy lecture")
    assert status == 201, uploaded
    video_id = uploaded["data"]["id"]
    runs = []
    for profile in ("standard", "premium"):
        r = await ws.client.post(f"/videos/{video_id}/analyze", {"quality_profile": profile, "language": "en",
                                                                 "outputs": {"transcript": True}})
        assert r.status == 202, r.body
        job, _ = await follow(ws.client, r.data["job_id"], timeout=MODEL_SECONDS)
        assert job["status"] == "completed", job
        article = (await ws.client.get(f"/articles/{job['article_id']}")).data
        graph = (await ws.client.get(f"/videos/{video_id}/graph")).data
        runs.append((job, article, graph))
    return ws, video_id, runs[0], runs[1]


def grounds_of(graph: dict) -> Grounds:
    return Grounds.of("en", [s["text"] for s in graph["transcript"]],
                      {c["id"]: c["text"] for c in graph["claims"]})


async def test_every_part_of_a_premium_analysis_is_the_models_and_checked_or_offline_with_a_reason(lecture):
    ws, _, (_, standard, standard_graph), (job, article, graph) = lecture
    written = job["result"]["written"]
    content = article["content"]

    assert set(written) == set(PARTS) and content["written"] == written == graph["written"]
    for part, outcome in written.items():
        assert outcome["by"] in ("model", "offline"), (part, outcome)
        assert outcome["by"] == "model" or (isinstance(outcome.get("reason"), str) and outcome["reason"]), outcome
    by = {part: outcome["by"] for part, outcome in written.items()}
    print(f"\nwritten by SmolLM2-135M: {written}\ntitle: {article['title']!r}")
    grounds = grounds_of(graph)

    if by["title"] == "model":
        check_text("the title", article["title"], max_chars=100, min_chars=3, one_line=True)
        check_grounded("the title", [article["title"]], grounds)
    else:
        assert article["title"] == standard["title"]
    if by["summary"] == "model":
        check_grounded("the summary", [content["summary"]], grounds)
        check_language("the summary", [content["summary"]], "en")
    else:
        assert content["summary"] and standard["content"]["introduction"].startswith(content["summary"])
    titles = [c["title"] for c in graph["chapters"]]
    if by["chapter_titles"] == "model":
        check_distinct("the chapter titles", titles)
        assert all(0 < len(t) <= 80 for t in titles)
    else:
        assert titles == [c["title"] for c in standard_graph["chapters"]]
    starts, offline_starts = ([c["startMs"] for c in g["chapters"]] for g in (graph, standard_graph))
    if by["chapter_starts"] == "model":
        assert starts[0] == 0 and starts == sorted(set(starts))
        assert all(abs(a - b) <= MOVE_WINDOW_MS for a, b in zip(starts, offline_starts, strict=True))
    else:
        assert starts == offline_starts
    if by["article"] == "model":
        check_grounded("the article", [content["introduction"], content["conclusion"]], grounds)
        assert {f["claimId"] for f in content["key_facts"]} <= {c["id"] for c in graph["claims"]}
    else:
        assert content["introduction"] == standard["content"]["introduction"]
    assert all(f["question"].endswith("?") for f in content["faq"]) or by["faq"] == "offline"
    assert ("descriptions" in content) == (by["descriptions"] == "model")
    for kind, text in (content.get("descriptions") or {}).items():
        assert all(measure(text, p.unit) <= p.max_length for p in PLATFORMS.values() if description_kind(p) == kind)

    usage = await wait_usage(ws.client, {"analysis.enrich", "article.write", "descriptions.complete"})
    print("tokens by operation:", {o["operation"]: (o["promptTokens"], o["completionTokens"]) for o in usage})


async def credits_used(client) -> int:
    return (await client.get("/credits")).data["used"]


async def wait_usage(client, operations: set[str], timeout: float = 20) -> list[dict]:
    """GET /usage/llm once it holds ``operations``, each with the token counts the server gave."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        usage = (await client.get("/usage/llm")).data["operations"]
        if operations <= {o["operation"] for o in usage}:
            assert all(o["promptTokens"] > 0 and o["completionTokens"] > 0 for o in usage
                       if o["operation"] in operations), usage  # the server's own counts
            return usage
        assert asyncio.get_running_loop().time() < deadline, usage
        await asyncio.sleep(0.1)


async def test_a_translation_by_the_model_is_a_whole_article_or_refused_and_refunded(service, lecture):
    ws, _, (_, standard, _), _ = lecture
    used = await credits_used(ws.client)

    r = await ws.client.post(f"/articles/{standard['id']}/translate", {"target_language": "fr"})
    assert r.status == 202, r.body
    job, _ = await follow(ws.client, r.data["job_id"], timeout=MODEL_SECONDS)

    if job["status"] == "completed":
        translated = (await ws.client.get(f"/articles/{job['article_id']}")).data
        assert translated["language"] == "fr" and translated["content"]["engine"] == "provider"
        assert [len(s["paragraphs"]) for s in translated["content"]["sections"]] == [
            len(s["paragraphs"]) for s in standard["content"]["sections"]]
        assert await credits_used(ws.client) == used + r.data["credits_charged"]
    else:
        assert job["status"] == "failed" and "no translation was stored" in job["error_message"], job
        assert await credits_used(ws.client) == used
        assert await events_of(service, ws.id, "ArticleTranslated") == []
    await wait_usage(ws.client, {"article.translate"})


async def test_the_assistant_answers_with_the_model_and_records_its_usage(service, lecture):
    ws = lecture[0]

    r = await chat(ws.client, "How many credits do I have left?")

    assert r.status == 200, r.body
    assert isinstance(r.data["reply"], str) and r.data["reply"].strip()
    assert all(a["status"] in ("ok", "failed", "refused") for a in r.data["actions"]), r.data["actions"]
    await wait_usage(ws.client, {"agent.chat"})
