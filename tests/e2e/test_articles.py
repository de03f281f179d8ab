"""The article operations end to end: the real processes (api, relay, projector, worker,
dispatcher), real media analysed by ffmpeg, the language model provider as a fake speaking the
Chat Completions protocol over a socket (tests/fake_llm.py), webhooks received over HTTPS and
verified by the independent Standard Webhooks verifier.

PUT (read-your-writes, every 400 and 404), scores with the rubric's evidence, the graph of the
article's own analysis, each export parsed by a real parser (ETag/304, downloads, the thumbnail
and the video behind their signed URLs, ``export.ready`` once), translation and its failures
(refunded, nothing half stored), the translations list, regeneration in each style, 402 with
nothing written, 404 for another workspace's article and 403 per scope on every route.
"""

from __future__ import annotations

import asyncio
import json

import html5lib
import pytest
from markdown_it import MarkdownIt
from pyld import jsonld

from infra.media.posters import jpeg_size
from services.api.routes import ROUTES
from tests import fake_llm
from tests.fake_llm import FakeProvider
from tests.media_factory import make_interview
from tests.support.api_videos import events_of, follow, upload
from tests.support.exports import HTML, _nodes, _value, offline_loader
from tests.support.service import Client, running_service, spawn, start_api
from tests.support.stack import env_for
from tests.support.webhooks import Receiver, TestCA, verify, wait_until

ALLOW = "127.0.0.40/29"
ARTICLE_ROUTES = [r for r in ROUTES if r.path.startswith("/articles/{id}")]
STYLES = ("auto", "journalistic", "narrative", "analytical", "tutorial", "conversational")


@pytest.fixture(scope="module")
async def provider():
    fake = await FakeProvider().start()
    yield fake
    await fake.stop()


@pytest.fixture(scope="module")
def ca(tmp_path_factory) -> TestCA:
    return TestCA(tmp_path_factory.mktemp("ca"))


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory, provider, ca):
    env = {"VAEO_LLM_BASE_URL": provider.base_url, "VAEO_LLM_MODEL": "fake-model", "VAEO_LLM_TIMEOUT_S": "2",
           "VAEO_LLM_MAX_ATTEMPTS": "2", "VAEO_LLM_RETRY_BACKOFF_S": "0.05",
           "VAEO_WEBHOOK_TEST_ALLOW": ALLOW, "VAEO_WEBHOOK_EXTRA_CA_FILE": str(ca.ca_file),
           "VAEO_WEBHOOK_RETRY_SCHEDULE_S": "[0, 0.3, 0.3]", "VAEO_DISPATCHER_POLL_INTERVAL_S": "0.05"}
    logs = tmp_path_factory.mktemp("logs")
    async with running_service(stack_settings, template_db, logs, processes=("relay", "projector", "worker"),
                               apis=1, **env) as svc:
        svc.procs["dispatcher"] = spawn("dispatcher", dict(env_for(svc.settings), **env,
                                                           VAEO_DISPATCHER_GROUP=svc.settings.consumer_group_prefix
                                                           + "dispatcher"), logs)
        # An API process of a deployment without a language model provider.
        bare, svc.procs["api-bare"] = await start_api(svc.settings, svc.http, logs, name="api-bare",
                                                      **{**env, "VAEO_LLM_BASE_URL": "", "VAEO_LLM_MODEL": ""})
        svc.bare = bare  # type: ignore[attr-defined]
        yield svc


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict:
    return make_interview(tmp_path_factory.mktemp("articles"))


async def analyzed(service, media, **workspace) -> tuple:
    """A workspace whose interview video was analysed: (workspace, video id, article id)."""
    ws = await service.workspace(**workspace)
    status, uploaded = await upload(ws.client, media["video"], captions=media["vtt"])
    assert status == 201, uploaded
    r = await ws.client.post(f"/videos/{uploaded['data']['id']}/analyze", {"writing_style": "conversational"})
    assert r.status == 202, r.body
    job, _ = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "completed" and job["article_id"], job
    return ws, uploaded["data"]["id"], job["article_id"]


@pytest.fixture(scope="module")
async def corpus(service, media) -> dict:
    """The workspaces the tests share, analysed side by side: main (credits to spare), poor (the
    analysis took its last credit), enterprise (compute included in the plan)."""
    main, poor, enterprise = await asyncio.gather(
        analyzed(service, media, credits=100), analyzed(service, media, credits=1),
        analyzed(service, media, plan="enterprise", credits=5))
    return {"main": main, "poor": poor, "enterprise": enterprise, "other": await service.workspace()}


@pytest.fixture
async def receiver(ca):
    hooks = await Receiver(ca, "127.0.0.41").start()
    yield hooks
    await hooks.stop()


def bare_client(service, key: str) -> Client:
    return Client(service.http, service.bare, key)


async def credits_used(client) -> int:
    return (await client.get("/credits")).data["used"]


# ---------------------------------------------------------------------------- workspace and scope


async def test_every_article_route_is_404_for_another_workspace_and_403_without_its_scope(service, corpus):
    (ws, _, article), other = corpus["main"], corpus["other"]
    sandbox = service.client(await service.key(ws, ["*"], environment="sandbox"))
    for route in ARTICLE_ROUTES:
        path = route.path.replace("{id}", str(article))
        # valid requests, answered 404 for a workspace or environment without the article
        body = {"PUT": {"custom_name": "x"}, "POST": {"target_language": "en"} if path.endswith("translate")
                else {}}.get(route.method)
        for stranger in (other.client, sandbox):
            r = await stranger.call(route.method, path.replace("{format}", "html"), body)
            assert r.status == 404 and r.error["code"] == "not_found", (route.path, r.body)
            assert r.error["details"] == {"id": str(article)}, (route.path, r.body)
        # requests that stop at validation once authorised (a 400, never a 403), so that nothing is written
        harmless = {"PUT": {}, "POST": {"target_language": "fr"} if path.endswith("translate")
                    else {"language": "en"}}.get(route.method)
        path = path.replace("{format}", "pdf")
        everything_else = sorted({r.scope for r in ROUTES if r.scope and r.scope not in ("*", route.scope)})
        denied = await service.client(await service.key(ws, everything_else)).call(route.method, path, harmless)
        assert denied.status == 403 and denied.error["details"]["required"] == route.scope, (route.path, denied.body)
        allowed = await service.client(await service.key(ws, [route.scope])).call(route.method, path, harmless)
        assert allowed.status in (200, 400), (route.path, allowed.body)
    missing = await ws.client.get("/articles/999999/scores")
    assert missing.status == 404 and missing.error["details"] == {"id": "999999"}


# ------------------------------------------------------------------------------------------- PUT


async def test_put_renames_and_attaches_with_read_your_writes(service, corpus):
    ws, _, article = corpus["main"]
    original = (await ws.client.get(f"/articles/{article}")).data
    media = await ws.client.post("/medias", {"name": "Podcast season 2"})
    renamed = await ws.client.call("PUT", f"/articles/{article}", {"custom_name": "Fusion, the interview",
                                                                   "media_id": media.data["id"]})
    assert renamed.status == 200 and renamed.data == {"id": article, "updated": True}, renamed.body
    assert renamed.headers["X-Read-Your-Writes"] == "applied"
    detail = (await ws.client.get(f"/articles/{article}")).data
    assert (detail["title"], detail["custom_name"], detail["original_title"]) == (
        "Fusion, the interview", "Fusion, the interview", original["original_title"])
    assert detail["media_id"] == media.data["id"] and detail["updated_at"] > original["updated_at"]
    [item] = [a for a in (await ws.client.get("/articles")).data if a["id"] == article]
    assert item["title"] == "Fusion, the interview" and item["media_id"] == media.data["id"]

    count = len(await events_of(service, ws.id, "ArticleRenamed", "ArticleMediaAttached"))
    same = await ws.client.call("PUT", f"/articles/{article}", {"custom_name": "Fusion, the interview",
                                                                "media_id": media.data["id"]})
    assert same.status == 200 and same.data == {"id": article, "updated": False}
    assert len(await events_of(service, ws.id, "ArticleRenamed", "ArticleMediaAttached")) == count == 2

    foreign = await corpus["other"].client.post("/medias", {"name": "not yours"})
    sandbox = service.client(await service.key(ws, ["articles:create"], environment="sandbox"))
    sandboxed = await sandbox.post("/medias", {"name": "sandbox media"})
    for media_id in (foreign.data["id"], sandboxed.data["id"], 2_000_000_000):
        r = await ws.client.call("PUT", f"/articles/{article}", {"media_id": media_id})
        assert r.status == 404 and r.error["details"] == {"id": str(media_id), "field": "media_id"}, r.body
        assert str(media_id) in r.error["message"]

    for body, field, rule in [({}, "body", "missing"), ({"custom_name": 5}, "body.custom_name", "string_type"),
                              ({"media_id": "1"}, "body.media_id", "int_type"),
                              ({"media_id": 0}, "body.media_id", "greater_than_equal"),
                              ({"media_id": None}, "body.media_id", "int_type"),
                              ({"custom_name": "   "}, "body.custom_name", "string_pattern_mismatch"),
                              ({"custom_name": "x" * 501}, "body.custom_name", "string_too_long"),
                              ({"title": "x"}, "body.title", "extra_forbidden")]:
        r = await ws.client.call("PUT", f"/articles/{article}", body)
        assert r.status == 400 and r.error["code"] == "validation_error", (body, r.body)
        assert {"field": field, "rule": rule} in [{k: f[k] for k in ("field", "rule")} for f in
                                                  r.error["details"]["fields"]], (body, r.body)
    assert len(await events_of(service, ws.id, "ArticleRenamed", "ArticleMediaAttached")) == 2

    cleared = await ws.client.call("PUT", f"/articles/{article}", {"custom_name": None})
    assert cleared.data == {"id": article, "updated": True}
    detail = (await ws.client.get(f"/articles/{article}")).data
    assert detail["custom_name"] is None and detail["title"] == original["original_title"]


# ---------------------------------------------------------------------------------- scores, graph


async def test_scores_report_the_recorded_scores_and_the_rubric_with_its_evidence(service, corpus):
    ws, _, article = corpus["main"]
    detail = (await ws.client.get(f"/articles/{article}")).data
    r = await ws.client.get(f"/articles/{article}/scores")
    assert r.status == 200, r.body
    scores = r.data
    assert (scores["article_id"], scores["aeo_score"], scores["geo_score"]) == (article, detail["aeo_score"],
                                                                               detail["geo_score"])
    assert scores["composite_score"] == round(0.7 * scores["geo_score"] + 0.3 * scores["aeo_score"], 1)
    assert scores["composite_score"] == detail["composite_score"]
    assert scores["verdicts"] == {"geo_well_structured_for_citation": scores["geo_score"] >= 70,
                                  "aeo_answers_common_queries_directly": scores["aeo_score"] >= 75}
    assert set(scores["geo_summary"]) == {"main_entities", "main_topics", "user_intents_answered", "key_facts"}
    assert "ITER" in scores["geo_summary"]["main_entities"] and scores["geo_summary"]["key_facts"]
    rubric = scores["rubric"]
    assert rubric["version"] == rubric["scored_with_version"] == detail["rubric_version"] == 2
    assert rubric["matches_recorded"] is True and rubric["geo_score"] == scores["geo_score"]
    names = [c["name"] for c in rubric["geo"]] + [c["name"] for c in rubric["aeo"]]
    assert names == ["statistics", "quotations", "cited_sources", "fluency", "technical_terms", "citable_facts",
                     "question_headings", "concise_answers", "faq", "structured_data", "definitions",
                     "intents_answered"]
    criteria = {c["name"]: c for c in rubric["geo"] + rubric["aeo"] + rubric["geo_penalties"]}
    assert any("milliards" in e["figure"] for e in criteria["statistics"]["evidence"])
    assert any("ITER" in e["source"] for e in criteria["cited_sources"]["evidence"])
    assert {q["speaker"] for q in criteria["quotations"]["evidence"]} <= {"Alice", "Bob"}
    assert criteria["keyword_stuffing"]["weight"] == 25 and criteria["keyword_stuffing"]["evidence"]


async def test_the_graph_is_the_one_of_the_articles_own_analysis(service, corpus, media):
    ws, video, article = corpus["main"]
    first = await ws.client.get(f"/articles/{article}/graph")
    assert first.status == 200 and first.data == (await ws.client.get(f"/videos/{video}/graph")).data
    assert {"claims", "entities", "searchIntents", "clipMoments", "summary"} <= set(first.data)
    assert all({"id", "text", "confidence", "startMs"} <= set(c) for c in first.data["claims"])
    again = await ws.client.post(f"/videos/{video}/analyze", {"analysis_mode": "behavioral",
                                                               "outputs": {"article": False}})
    assert (await follow(ws.client, again.data["job_id"]))[0]["status"] == "completed"
    assert "behavioral" in (await ws.client.get(f"/videos/{video}/graph")).data
    assert (await ws.client.get(f"/articles/{article}/graph")).data == first.data  # still its own


async def test_an_article_without_a_stored_graph_points_to_the_analysis(service, corpus):
    from uuid import uuid4

    from domain.articles import Article

    ws, video, article = corpus["main"]
    source = (await ws.client.get(f"/articles/{article}")).data
    orphan_id = await service.store.next_id("article_id_seq")
    orphan = Article(article_id=orphan_id, workspace_id=ws.id, environment="production", job_id=uuid4(),
                     video_id=video, media_id=None, title="orphan", language="fr", writing_style="journalistic",
                     aeo_score=1, geo_score=1, composite_score=1.0, keywords_primary=[], has_transcript=True,
                     content=source["content"], markdown="# orphan\n")
    await service.store.save(orphan, workspace_id=ws.id)
    for _ in range(100):
        r = await ws.client.get(f"/articles/{orphan_id}/graph")
        if r.status == 404 and r.error["code"] == "analysis_not_found":
            break
        await asyncio.sleep(0.05)
    assert r.error["code"] == "analysis_not_found", r.body
    assert f"POST /v1/videos/{video}/analyze" in r.error["message"]
    scores = (await ws.client.get(f"/articles/{orphan_id}/scores")).data
    assert scores["rubric"] is None and scores["geo_score"] == 1


# ----------------------------------------------------------------------------------------- exports


async def _fetch(service, url: str, headers: dict | None = None):
    async with service.http.get(url, headers=headers or {}) as resp:  # no key: a signed URL is its credential
        return resp.status, dict(resp.headers), await resp.read()


async def test_each_export_parses_and_export_ready_is_sent_once_per_format(service, corpus, receiver):
    ws, video, article = corpus["main"]
    hook = await ws.client.post("/webhooks", {"url": receiver.url(), "events": ["export.ready"]})
    assert hook.status == 201, hook.body
    base = f"/articles/{article}/export"
    expected_types = {"html": "text/html; charset=utf-8", "markdown": "text/markdown; charset=utf-8",
                      "txt": "text/plain; charset=utf-8", "json": "application/json",
                      "schema": "application/ld+json", "opengraph": "text/html; charset=utf-8"}
    bodies = {}
    for name, ctype in expected_types.items():
        r = await ws.client.get(f"{base}/{name}")
        assert r.status == 200 and r.headers["Content-Type"] == ctype, (name, r.headers)
        raw = r.body if isinstance(r.body, bytes) else json.dumps(r.body).encode()
        bodies[name] = raw
        etag = r.headers["ETag"]
        again = await ws.client.get(f"{base}/{name}", headers={"If-None-Match": etag})
        assert again.status == 304 and again.body is None and again.headers["ETag"] == etag, name
        download = await ws.client.get(f"{base}/{name}", params={"download": "1"})
        disposition = download.headers["Content-Disposition"]
        assert disposition.startswith("attachment; filename=\"") and f"-{article}." in disposition, disposition

    doc = html5lib.HTMLParser(strict=True).parse(bodies["html"].decode())
    assert doc.find(f".//{HTML}article") is not None
    chapters = [a.get("href") for a in doc.find(f".//{HTML}nav").iter(f"{HTML}a")]
    assert chapters and all("#t=" in h for h in chapters)
    rendered = html5lib.parse(MarkdownIt("commonmark").render(bodies["markdown"].decode()))
    assert len(list(rendered.iter(f"{HTML}h1"))) == 1 and list(rendered.iter(f"{HTML}h2"))
    assert not bodies["txt"].decode().startswith("#") and "<" not in bodies["txt"].decode()[:200]
    structured = json.loads(bodies["json"])
    assert structured["id"] == article and structured["chapters"] and structured["key_facts"]
    schema = json.loads(bodies["schema"])
    expanded = jsonld.expand(schema, {"documentLoader": offline_loader})
    [video_object] = _nodes(expanded, "VideoObject")
    for prop in ("name", "thumbnailUrl", "uploadDate", "description", "duration", "contentUrl"):
        assert _value(video_object, prop), prop
    assert _nodes(video_object, "Clip") and _nodes(video_object, "SeekToAction") and _nodes(expanded, "FAQPage")
    tags = {e.get("property") or e.get("name"): e.get("content")
            for e in html5lib.HTMLParser(strict=True).parseFragment(bodies["opengraph"].decode())
            if isinstance(e.tag, str)}
    assert tags["og:type"] == "video.other" and tags["og:video:type"] == "video/mp4"
    assert (tags["og:video:width"], tags["og:video:height"]) == ("320", "240")

    # the thumbnail is a real frame of the video, and the video plays, behind their signed URLs
    status, headers, poster = await _fetch(service, _value(video_object, "thumbnailUrl"))
    assert status == 200 and headers["Content-Type"] == "image/jpeg" and jpeg_size(poster) == (320, 240)
    assert tags["og:image"] == _value(video_object, "thumbnailUrl")
    status, headers, first_bytes = await _fetch(service, _value(video_object, "contentUrl"), {"Range": "bytes=0-99"})
    assert status == 206 and len(first_bytes) == 100

    unknown = await ws.client.get(f"{base}/pdf")
    assert unknown.status == 400 and sorted(unknown.error["details"]["allowed"]) == sorted(expected_types)
    assert all(name in unknown.error["message"] for name in expected_types)

    await wait_until(lambda: len(receiver.hits) >= len(expected_types), what="six export.ready deliveries")
    await asyncio.sleep(1)  # the second exports of each format must add nothing
    delivered = [verify(hook.data["secret"], hit) for hit in receiver.hits]
    assert sorted(d["data"]["format"] for d in delivered) == sorted(expected_types)
    assert all(d["type"] == "export.ready" and d["data"]["article_id"] == article for d in delivered)
    html_ready = next(d["data"] for d in delivered if d["data"]["format"] == "html")
    assert html_ready["url"].startswith("http") and html_ready["url"].endswith(f"/v1/articles/{article}/export/html")
    assert html_ready["environment"] == "production" and "path" not in html_ready


async def test_an_export_follows_a_change_of_its_videos_description(service, media):
    """The video's description is an input of the exports that show it: a PATCH of it makes a new
    export with a new ETag at once, and the ETag of the old copy no longer answers 304."""
    ws, video, article = await analyzed(service, media, credits=100)
    before = {}
    for name in ("json", "schema"):
        r = await ws.client.get(f"/articles/{article}/export/{name}")
        assert r.status == 200, r.body
        before[name] = r.headers["ETag"]
    changed = await ws.client.call("PATCH", f"/videos/{video}", {"description": "A description set afterwards."})
    assert changed.status == 200, changed.body
    for name in ("json", "schema"):
        r = await ws.client.get(f"/articles/{article}/export/{name}", headers={"If-None-Match": before[name]})
        assert r.status == 200, (name, r.status)
        assert r.headers["ETag"] != before[name], name
        text = r.body if isinstance(r.body, bytes) else json.dumps(r.body).encode()
        assert b"A description set afterwards." in text, name


# ------------------------------------------------------------------------------------- translation


async def test_a_translation_through_the_provider_becomes_an_article_of_its_own(service, corpus, provider, receiver):
    ws, _, article = corpus["main"]
    hook = await ws.client.post("/webhooks", {"url": receiver.url("/articles"), "events": ["article.translated"]})
    job_secret = (await ws.client.get("/webhooks/job-secret")).data["secret"]
    used = await credits_used(ws.client)
    provider.answer(fake_llm.translation("EN: "))
    r = await ws.client.post(f"/articles/{article}/translate", {"target_language": "en",
                                                                "webhook_url": receiver.url("/job")})
    assert r.status == 202, r.body
    assert (r.data["target_language"], r.data["type"], r.data["status"]) == ("en", "translate_article", "pending")
    listed = (await ws.client.get(f"/articles/{article}/translations")).data  # read-your-writes
    assert [(t["job_id"], t["language"], t["article_id"]) for t in listed][:1] == [(r.data["job_id"], "en", None)]
    job, _ = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "completed" and job["article_id"], job
    assert await credits_used(ws.client) == used + r.data["credits_charged"] and r.data["credits_charged"] >= 1

    source = (await ws.client.get(f"/articles/{article}")).data
    translated = (await ws.client.get(f"/articles/{job['article_id']}")).data
    assert (translated["language"], translated["origin"], translated["source_article_id"],
            translated["source_language"]) == ("en", "translation", article, "fr")
    assert translated["original_title"] == "EN: " + source["content"]["title"]
    assert [s["startMs"] for s in translated["content"]["sections"]] == [s["startMs"] for s in
                                                                          source["content"]["sections"]]
    assert all(p["text"].startswith("EN: ") for s in translated["content"]["sections"] for p in s["paragraphs"])
    assert [f["claimId"] for f in translated["content"]["key_facts"]] == [f["claimId"] for f in
                                                                           source["content"]["key_facts"]]
    assert translated["markdown"].startswith("# EN: ")
    [item] = [t for t in (await ws.client.get(f"/articles/{article}/translations")).data
              if t["job_id"] == r.data["job_id"]]
    assert (item["status"], item["article_id"], item["title"], item["language"]) == (
        "completed", translated["id"], translated["title"], "en")
    assert item["completed_at"] and item["requested_at"] <= item["completed_at"]
    assert (await ws.client.get(f"/articles/{translated['id']}/scores")).data["rubric"]["matches_recorded"]
    assert (await ws.client.get(f"/articles/{translated['id']}/graph")).status == 200

    await wait_until(lambda: len(receiver.hits) >= 2, what="article.translated and job.completed")
    [announced] = [verify(hook.data["secret"], h) for h in receiver.hits
                   if json.loads(h.body)["type"] == "article.translated"]
    assert announced["data"]["id"] == translated["id"] and announced["data"]["source_article_id"] == article
    assert announced["data"]["language"] == "en" and announced["data"]["environment"] == "production"
    [done] = [verify(job_secret, h) for h in receiver.hits if json.loads(h.body)["type"] == "job.completed"]
    assert done["data"]["id"] == r.data["job_id"] and done["data"]["article_id"] == translated["id"]
    usage = (await ws.client.get("/usage/llm")).data["operations"]
    assert any(o["operation"] == "article.translate" and o["calls"] == 1 for o in usage)


async def test_a_provider_written_article_is_regenerated_by_the_provider(service, corpus, provider):
    ws, _, article = corpus["main"]
    provider.answer(fake_llm.translation("ES: "))
    asked = await ws.client.post(f"/articles/{article}/translate", {"target_language": "es"})
    translated_id = (await follow(ws.client, asked.data["job_id"]))[0]["article_id"]
    refused = await bare_client(service, ws.key).post(f"/articles/{translated_id}/regenerate", {})
    assert refused.status == 503 and refused.error["code"] == "provider_not_configured", refused.body
    provider.answer(fake_llm.article())
    r = await ws.client.post(f"/articles/{translated_id}/regenerate", {"writing_style": "analytical"})
    assert r.status == 202 and r.data["compute_billing"] == {"enabled": True, "estimated_credits": 2}, r.body
    job, _ = await follow(ws.client, r.data["job_id"])
    async with service.pool.acquire() as conn:
        steps = [s for (s,) in await conn.fetch("SELECT data->>'step' FROM events WHERE stream_id = $1::uuid AND "
                                                "type = 'JobProgressed' ORDER BY version", r.data["job_id"])]
    assert job["status"] == "completed" and "writing the article (provider)" in steps, (job, steps)
    assert job["result"]["engine"] == "provider" and job["result"]["graph_rebuilt_exactly"] is True
    new = (await ws.client.get(f"/articles/{job['article_id']}")).data
    assert (new["language"], new["origin"], new["source_article_id"]) == ("es", "regeneration", translated_id)
    assert new["content"]["engine"] == "provider" and new["content"]["introduction"] == fake_llm.INTRO
    [request] = [r["body"] for r in provider.requests
                 if r["body"]["response_format"]["json_schema"]["name"] == "article"]
    system = request["messages"][0]["content"]
    assert "Write in Spanish" in system and "figures" in system
    assert new["content"]["written"]["article"] == {"by": "model"}
    usage = (await ws.client.get("/usage/llm")).data["operations"]
    assert any(o["operation"] == "article.regenerate" and o["calls"] >= 1 for o in usage)


async def test_translation_requests_are_refused_before_anything_is_written(service, corpus):
    ws, _, article = corpus["main"]
    jobs = len((await ws.client.get("/jobs", params={"limit": "100"})).data)
    used = await credits_used(ws.client)
    for body, field, rule in [({"target_language": "fr"}, "body.target_language", "not_the_article_language"),
                              ({"target_language": "xx"}, "body.target_language", "literal_error"),
                              ({}, "body.target_language", "missing"),
                              ({"target_language": "en", "extra": 1}, "body.extra", "extra_forbidden")]:
        r = await ws.client.post(f"/articles/{article}/translate", body)
        assert r.status == 400, (body, r.body)
        assert (r.error["details"]["fields"][0]["field"], r.error["details"]["fields"][0]["rule"]) == (field, rule)
    refused = await ws.client.post(f"/articles/{article}/translate", {"target_language": "en",
                                                                     "webhook_url": "https://10.0.0.7/hook"})
    assert refused.status == 400 and refused.error["code"] == "destination_refused"
    none = await bare_client(service, ws.key).post(f"/articles/{article}/translate", {"target_language": "en"})
    assert none.status == 503 and none.error["code"] == "provider_not_configured", none.body
    assert "VAEO_LLM_BASE_URL" in none.error["details"]["settings"] and "nothing was queued" in none.error["message"]
    assert len((await ws.client.get("/jobs", params={"limit": "100"})).data) == jobs
    assert await credits_used(ws.client) == used


def _drop_a_section(answer: dict) -> dict:
    return {**answer, "sections": answer["sections"][:-1]}


TRANSLATION_FAILURES = {
    "server_error": ([fake_llm.status(500, "overloaded")], "the translation provider failed: the provider answered "
                                                           "500 Internal Server Error: overloaded (after 2 attempts)"),
    "not_json": ([fake_llm.content("Here is your translation.")], "answer was refused: the answer is not JSON"),
    "a_section_dropped": ([fake_llm.translation("EN: ", alter=_drop_a_section)], "answer was refused: the answer has"),
    "cut_at_length": ([fake_llm.content('{"title": "EN', finish_reason="length")], "cut at its length limit"),
}


@pytest.mark.parametrize("failure", list(TRANSLATION_FAILURES))
async def test_a_failed_translation_is_refunded_and_stores_nothing(service, corpus, provider, failure):
    ws, _, article = corpus["main"]
    steps, message = TRANSLATION_FAILURES[failure]
    provider.answer(*steps)
    used = await credits_used(ws.client)
    translated_before = len(await events_of(service, ws.id, "ArticleTranslated"))
    r = await ws.client.post(f"/articles/{article}/translate", {"target_language": "de"})
    assert r.status == 202, r.body
    job, _ = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "failed" and message in job["error_message"], job
    assert "no translation was stored" in job["error_message"] and job["article_id"] is None
    assert len(await events_of(service, ws.id, "ArticleTranslated")) == translated_before
    refunds = [e["data"] for e in await events_of(service, ws.id, "CreditsRefunded")]
    assert any(f["job_id"] == r.data["job_id"] and f["amount"] == r.data["credits_charged"] for f in refunds)
    async with service.pool.acquire() as conn:  # the refund commits with the failure, in one transaction
        transactions = await conn.fetch("SELECT DISTINCT xmin::text FROM events WHERE (stream_id = $1::uuid AND "
                                        "type = 'JobFailed') OR (type = 'CreditsRefunded' AND data->>'job_id' = $2)",
                                        r.data["job_id"], r.data["job_id"])
    assert len(transactions) == 1
    assert await credits_used(ws.client) == used
    [item] = [t for t in (await ws.client.get(f"/articles/{article}/translations")).data
              if t["job_id"] == r.data["job_id"]]
    assert (item["status"], item["article_id"], item["title"]) == ("failed", None, None)
    assert message in item["error_message"]


# ------------------------------------------------------------------------------------- regeneration


async def test_regeneration_in_each_style_writes_a_new_article_and_keeps_the_previous(service, corpus, receiver):
    ws, _, article = corpus["main"]
    hook = await ws.client.post("/webhooks", {"url": receiver.url("/generated"), "events": ["article.generated"]})
    before = (await ws.client.get(f"/articles/{article}")).data
    used = await credits_used(ws.client)
    queued = []
    for style in STYLES:
        r = await ws.client.post(f"/articles/{article}/regenerate", {"writing_style": style})
        assert r.status == 202, r.body
        assert r.data["compute_billing"] == {"enabled": True, "estimated_credits": 1}
        assert (r.data["type"], r.data["status"]) == ("regenerate_article", "pending")
        queued.append((style, r.data["job_id"]))
    assert await credits_used(ws.client) == used + len(STYLES)
    regenerated = []
    for style, job_id in queued:
        job, steps = await follow(ws.client, job_id)
        assert job["status"] == "completed" and job["article_id"] not in (None, article), job
        assert job["result"]["graph_rebuilt_exactly"] is True and job["result"]["source_article_id"] == article
        new = (await ws.client.get(f"/articles/{job['article_id']}")).data
        assert (new["origin"], new["source_article_id"]) == ("regeneration", article)
        assert new["writing_style"] == job["result"]["writing_style"]
        assert style == "auto" or new["writing_style"] == style
        assert new["content"]["requested_style"] == style and new["content"]["engine"] == "offline"
        assert (await ws.client.get(f"/articles/{new['id']}/graph")).data == (
            await ws.client.get(f"/articles/{article}/graph")).data
        regenerated.append(new)
    assert len({a["markdown"] for a in regenerated}) >= 4  # the styles write differently
    after = (await ws.client.get(f"/articles/{article}")).data
    assert {k: v for k, v in after.items() if k != "updated_at"} == {k: v for k, v in before.items()
                                                                     if k != "updated_at"}
    await wait_until(lambda: len([h for h in receiver.hits if h.body and b"article.generated" in h.body])
                     >= len(STYLES), what="article.generated of each regeneration")
    generated = [verify(hook.data["secret"], h) for h in receiver.hits if b"article.generated" in h.body]
    assert {g["data"]["id"] for g in generated} == {a["id"] for a in regenerated}
    assert all(g["data"]["origin"] == "regeneration" and g["data"]["source_article_id"] == article for g in generated)


async def test_regeneration_402_writes_nothing_and_plans_with_compute_included_pay_nothing(service, corpus):
    poor, _, article = corpus["poor"]
    events = len(await events_of(service, poor.id, "JobQueued", "CreditsCharged"))
    r = await poor.client.post(f"/articles/{article}/regenerate", {"writing_style": "tutorial"})
    assert r.status == 402 and r.error["code"] == "insufficient_credits", r.body
    assert r.error["details"] == {"required": 1, "balance": 0}
    assert len(await events_of(service, poor.id, "JobQueued", "CreditsCharged")) == events
    assert len((await poor.client.get("/jobs")).data) == 1  # the analysis only

    rich, _, enterprise_article = corpus["enterprise"]
    used = await credits_used(rich.client)
    free = await rich.client.post(f"/articles/{enterprise_article}/regenerate", {"writing_style": "narrative"})
    assert free.status == 202 and free.data["compute_billing"] == {"enabled": False, "estimated_credits": 0}
    assert (await follow(rich.client, free.data["job_id"]))[0]["status"] == "completed"
    assert await credits_used(rich.client) == used

    ws, _, main_article = corpus["main"]
    other_language = await ws.client.post(f"/articles/{main_article}/regenerate", {"language": "en"})
    assert other_language.status == 400 and other_language.error["details"]["fields"][0]["field"] == "body.language"
    assert "translate" in other_language.error["message"]
    bad = await ws.client.post(f"/articles/{main_article}/regenerate", {"writing_style": "epic"})
    assert bad.status == 400 and bad.error["details"]["fields"][0]["rule"] == "literal_error"


async def test_the_canonical_address_is_an_https_url_without_credentials(service, corpus):
    ws, _, article = corpus["main"]
    base = f"/articles/{article}/export"
    good = "https://blog.example.com/posts/renovation?ref=a@b#top"  # an @ in the query is no userinfo
    r = await ws.client.get(f"{base}/html", params={"url": good})
    assert r.status == 200, r.body
    page = html5lib.HTMLParser(strict=True).parse(r.body.decode())
    assert [link.get("href") for link in page.iter(f"{HTML}link") if link.get("rel") == "canonical"] == [good]
    for bad in ("http://blog.example.com/posts/renovation",  # not https
                "https://editor:secret@blog.example.com/posts/renovation",  # a user and a password
                "https://editor@blog.example.com/posts/renovation",
                "https://blog.example.com\\@evil.example/x"):  # a backslash some parsers take for a slash
        for name in ("html", "schema"):
            r = await ws.client.get(f"{base}/{name}", params={"url": bad})
            assert r.status == 400 and r.error["code"] == "validation_error", (bad, r.body)
            assert [f["field"] for f in r.error["details"]["fields"]] == ["query.url"], r.body
            assert "secret" not in json.dumps(r.body)  # the credential is not echoed


# ------------------------------------------------------------------------- addresses that last


def _urls(schema: dict) -> tuple[str, str]:
    expanded = jsonld.expand(schema, {"documentLoader": offline_loader})
    [video_object] = _nodes(expanded, "VideoObject")
    return _value(video_object, "contentUrl"), _value(video_object, "thumbnailUrl")


async def test_exports_link_public_links_that_outlive_signed_urls_until_revoked(service, corpus, tmp_path):
    """With no address given, an export links the video and its poster through public links: no
    export shows a signed URL; a public link still works on an API whose clock (the settings clock)
    is two days on, where the video's signed URL has expired; revoking the video's links makes every
    earlier one a 404 and the next export shows new ones that work."""
    ws, video, article = corpus["enterprise"]
    base = f"/articles/{article}/export"
    for name in ("html", "opengraph", "schema", "json", "markdown"):
        r = await ws.client.get(f"{base}/{name}")
        body = r.body if isinstance(r.body, bytes) else json.dumps(r.body).encode()
        assert r.status == 200 and b"/v1/files/" not in body and b"/v1/public/" in body, name
        shown = "public_link" if name != "markdown" else "none"  # markdown shows no poster
        assert r.headers["X-Export-Url-Kinds"] == f"page=export, video=public_link, thumbnail={shown}", name
    r = await ws.client.get(f"{base}/schema")
    content_url, thumbnail_url = _urls(r.body)
    signed = (await ws.client.get(f"/videos/{video}")).data["source_url"]
    assert "/v1/files/" in signed and (await _fetch(service, signed, {"Range": "bytes=0-9"}))[0] == 206

    later, proc = await start_api(service.settings, service.http, tmp_path, name="api-two-days-on",
                                  VAEO_CLOCK_OFFSET_S=str(2 * 86400))
    try:
        def there(url: str) -> str:
            return later + "/" + url.split("/v1/", 1)[1]

        assert (await _fetch(service, there(signed), {"Range": "bytes=0-9"}))[0] == 404  # expired there
        status, headers, first = await _fetch(service, there(content_url), {"Range": "bytes=0-99"})
        assert status == 206 and len(first) == 100 and headers["Cache-Control"].startswith("public")
        status, headers, poster = await _fetch(service, there(thumbnail_url))
        assert status == 200 and headers["Content-Type"] == "image/jpeg" and jpeg_size(poster) == (320, 240)

        other = await corpus["other"].client.call("DELETE", f"/videos/{video}/public-links")
        assert other.status == 404, other.body
        revoked = await ws.client.call("DELETE", f"/videos/{video}/public-links")
        assert revoked.status == 200 and revoked.data == {"video_id": video, "generation": 1}, revoked.body
        for url in (content_url, thumbnail_url):
            assert (await _fetch(service, url))[0] == 404
            assert (await _fetch(service, there(url)))[0] == 404
        assert len(await events_of(service, ws.id, "VideoPublicLinksRevoked")) == 1
        new_content, new_thumbnail = _urls((await ws.client.get(f"{base}/schema")).body)
        assert {new_content, new_thumbnail}.isdisjoint({content_url, thumbnail_url})
        assert (await _fetch(service, there(new_content), {"Range": "bytes=0-9"}))[0] == 206
        assert (await _fetch(service, there(new_thumbnail)))[0] == 200
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    for forged in (content_url[:-3] + "AAA", signed.replace("/v1/files/", "/v1/public/"), "x" * 60):
        url = forged if forged.startswith("http") else f"{service.base}/public/{forged}"
        assert (await _fetch(service, url))[0] == 404, forged


async def test_published_addresses_given_per_export_or_stored_on_the_article(service, corpus):
    """Addresses a person published: stored on the article (PUT published_urls) they replace the
    service's own in every export; given with one export they win over the stored ones; the
    export says which kind each URL is; null returns to the public links; a URL a page could not
    hold as it is (a quote, a bracket, a space, a password) is a 400 naming the field."""
    ws, video, article = corpus["poor"]
    base = f"/articles/{article}/export"
    page, file_url, thumb = ("https://blog.example.com/posts/fusion", "https://cdn.example.com/v/fusion.mp4",
                             "https://cdn.example.com/v/fusion.jpg")
    stored = await ws.client.call("PUT", f"/articles/{article}", {"published_urls": {
        "page_url": page, "video_url": file_url, "thumbnail_url": thumb}})
    assert stored.status == 200 and stored.data == {"id": article, "updated": True}, stored.body
    r = await ws.client.get(f"{base}/schema")
    assert r.headers["X-Export-Url-Kinds"] == "page=article, video=article, thumbnail=article"
    assert _urls(r.body) == (file_url, thumb) and b"/v1/public/" not in json.dumps(r.body).encode()
    tags = {e.get("property"): e.get("content") for e in html5lib.HTMLParser(strict=True).parseFragment(
        (await ws.client.get(f"{base}/opengraph")).body.decode()) if isinstance(e.tag, str)}
    assert (tags["og:url"], tags["og:video"], tags["og:image"]) == (page, file_url, thumb)
    same = await ws.client.call("PUT", f"/articles/{article}", {"published_urls": {
        "page_url": page, "video_url": file_url, "thumbnail_url": thumb}})
    assert same.data == {"id": article, "updated": False}

    embed = "https://player.example.com/embed/fusion"
    r = await ws.client.get(f"{base}/schema", params={"embed_url": embed, "url": "https://news.example.org/f"})
    assert r.headers["X-Export-Url-Kinds"] == "page=request, video=article, thumbnail=article"
    [video_object] = _nodes(jsonld.expand(r.body, {"documentLoader": offline_loader}), "VideoObject")
    assert _value(video_object, "embedUrl") == embed and _value(video_object, "contentUrl") == file_url

    for bad in ('https://cdn.example.com/v/a"b.mp4', "https://cdn.example.com/v/[1].mp4",
                "https://cdn.example.com/v/a b.mp4", "https://u:secret@cdn.example.com/v.mp4", "http://cdn.example.com/v"):
        put = await ws.client.call("PUT", f"/articles/{article}", {"published_urls": {"video_url": bad}})
        assert put.status == 400 and put.error["details"]["fields"][0]["field"] == "body.published_urls.video_url"
        get = await ws.client.get(f"{base}/html", params={"thumbnail_url": bad})
        assert get.status == 400 and get.error["details"]["fields"][0]["field"] == "query.thumbnail_url"
        assert "secret" not in json.dumps(put.body) + json.dumps(get.body)
    unknown = await ws.client.call("PUT", f"/articles/{article}", {"published_urls": {"audio_url": file_url}})
    assert unknown.status == 400 and unknown.error["details"]["fields"][0]["rule"] == "extra_forbidden"

    cleared = await ws.client.call("PUT", f"/articles/{article}", {"published_urls": None})
    assert cleared.data == {"id": article, "updated": True}
    r = await ws.client.get(f"{base}/schema")
    assert r.headers["X-Export-Url-Kinds"] == "page=export, video=public_link, thumbnail=public_link"
    assert all("/v1/public/" in url for url in _urls(r.body))
