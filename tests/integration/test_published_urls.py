"""Published addresses through the aiohttp app in-process, on real PostgreSQL and Kafka with the
projector: an address holding a bidi control or an invisible character, or a port outside 1-65535,
is a 400 naming the field (``published_urls`` and ``?url=`` alike) and is never printed; one stored
before the rule was what it is is not printed by the exports either."""

from __future__ import annotations

import asyncio
import time
from urllib.parse import quote

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from domain.articles import Article
from services.api.app import build_app
from services.application.keys import IssueKey
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from tests.helpers import handle
from tests.support.seeded_article import seeded

BAD = {
    "arabic letter mark": "https://cdn.example.com/v/\u061cfusion.mp4",
    "right-to-left override": "https://cdn.example.com/v/\u202egpj.mp4",
    "first strong isolate": "https://cdn.example.com/v.mp4?t=\u2068x",
    "left-to-right mark": "https://cdn.example.com/v.mp4#\u200e",
    "zero width space": "https://cdn.example.com/v/\u200bfusion.mp4",
    "port 99999": "https://cdn.example.com:99999/v.mp4",
    "port 0": "https://cdn.example.com:0/v.mp4",
}


@pytest.fixture
async def api(settings, store, pool, tmp_path, background):
    fast = settings.model_copy(update={"read_your_writes_timeout_s": 2.0})
    ws, _, article, _ = await seeded(fast, store, tmp_path)
    issued = await handle(store, IssueKey(ws, name="all", scopes=["*"], environment="production"))
    background.start(Relay(fast).run)
    background.start(lambda stop: run_projector(fast, stop, ["articles", "videos"]))
    client = TestClient(TestServer(build_app(fast)))
    await client.start_server()
    try:
        yield client, {"Authorization": f"Bearer {issued.key}"}, ws, article
    finally:
        await client.close()


async def _export(client, headers, query: str = "", timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while True:  # the projector applies the seeded article a moment after it starts
        async with client.get(f"/v1/articles/3/export/opengraph{query}", headers=headers) as resp:
            body = await resp.read()
            if resp.status != 404 or time.monotonic() > deadline:
                return resp.status, body, resp.headers.get("X-Export-Url-Kinds")
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("name", list(BAD))
async def test_a_bidi_control_an_invisible_character_or_a_port_out_of_range_is_refused(api, name):
    client, headers, _, _ = api
    address = BAD[name]
    async with client.put("/v1/articles/3", data=orjson.dumps({"published_urls": {"page_url": address}}),
                          headers={**headers, "Content-Type": "application/json"}) as resp:
        answer = orjson.loads(await resp.read())
    assert resp.status == 400 and answer["error"]["code"] == "validation_error", answer
    assert answer["error"]["details"]["fields"][0]["field"] == "body.published_urls.page_url"

    status, body, _ = await _export(client, headers, f"?url={quote(address, safe='')}")
    answer = orjson.loads(body)
    assert status == 400 and answer["error"]["details"]["fields"][0]["field"] == "query.url", answer


async def test_an_address_stored_before_the_rule_is_not_printed(api, store):
    client, headers, ws, article = api
    stored: Article = await store.fetch_for_writing(article.id)
    # As a PUT took it before the rule: straight to the aggregate, past the API.
    stored.set_published_urls({"page_url": BAD["arabic letter mark"], "video_url": BAD["port 99999"]})
    await store.save(stored, workspace_id=ws)
    deadline = time.monotonic() + 30
    while True:
        status, body, kinds = await _export(client, headers)
        if status == 200 and "\u061c" not in body.decode() and kinds and "page=export" in kinds:
            break
        assert time.monotonic() < deadline, (status, kinds, body[:300])
        await asyncio.sleep(0.2)
    text = body.decode()
    assert "99999" not in text and "\u061c" not in text
    assert kinds == "page=export, video=public_link, thumbnail=none", kinds
