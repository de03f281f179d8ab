"""A clip request names an article the moment its analysis completed: the API finds the article by
its id in the event store, not in the ``articles`` read model, so a detection or a render asked
before any projection has applied the article is accepted (202), not a 404. No projector runs
here at all: the read model never learns of the article."""

from __future__ import annotations

import orjson
from aiohttp.test_utils import TestClient, TestServer

from services.api.app import build_app
from services.application.keys import IssueKey
from tests.helpers import handle
from tests.support.seeded_article import seeded


async def test_a_clip_render_right_after_the_analysis_is_accepted_while_the_read_model_lags(settings, store, pool,
                                                                                             tmp_path):
    fast = settings.model_copy(update={"read_your_writes_timeout_s": 0.2})
    ws, video, article, _ = await seeded(fast, store, tmp_path)
    issued = await handle(store, IssueKey(ws, name="clips", scopes=["*"], environment="production"))
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM articles WHERE id = $1", article.article_id) == 0
    client = TestClient(TestServer(build_app(fast)))
    await client.start_server()
    try:
        headers = {"Authorization": f"Bearer {issued.key}", "Content-Type": "application/json"}
        clip = {"id": "a", "title": "Le début", "start_ms": 0, "end_ms": 20_000, "duration_ms": 20_000}
        body = {"article_id": article.article_id, "template_id": 1, "clips": [clip]}
        async with client.post("/v1/production/clips/render", data=orjson.dumps(body), headers=headers) as resp:
            answer = orjson.loads(await resp.read())
            assert resp.status == 202, answer
        assert answer["data"]["type"] == "clip_render" and answer["data"]["reused"] is False
        detect = {"article_id": article.article_id, "template_id": 1}
        async with client.post("/v1/production/clips/detect", data=orjson.dumps(detect), headers=headers) as resp:
            assert resp.status == 202, await resp.read()
        missing = {**body, "article_id": article.article_id + 1000}
        async with client.post("/v1/production/clips/render", data=orjson.dumps(missing), headers=headers) as resp:
            refused = orjson.loads(await resp.read())
            assert resp.status == 404 and refused["error"]["code"] == "not_found", refused
    finally:
        await client.close()
