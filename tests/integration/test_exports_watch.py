"""The first export of an article in a format, recorded on the write side: the GET that serves it
appends nothing and reports it in its telemetry record; the exports watch (a tracked reader of the
telemetry topic, in the worker process) appends the one ``ExportReady``, with the GET's request id,
however many first exports were reported before the read model learned of it."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer

from domain.articles import export_stream
from services.api.app import build_app
from services.application.keys import IssueKey
from services.processes.exports_watch import ExportsWatch
from services.processes.projector.runner import run_projector
from services.processes.relay import Relay
from tests.helpers import handle, wait_projected
from tests.support.pipeline import wait_for
from tests.support.seeded_article import seeded


async def test_a_first_export_is_recorded_once_by_the_watch_with_the_gets_request(settings, store, pool,
                                                                                  background, tmp_path):
    ws, _, article, _ = await seeded(settings, store, tmp_path)
    issued = await handle(store, IssueKey(ws, name="exports", scopes=["*"], environment="production"))
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["articles", "videos", "article_exports"]))
    await wait_projected(settings, pool, ["articles", "videos"])
    stream = export_stream(article.article_id, "markdown")

    async def recorded() -> list:
        return [e for e in await store.read_stream(stream) if e.type == "ExportReady"]

    client = TestClient(TestServer(build_app(settings)))
    await client.start_server()
    try:
        headers = {"Authorization": f"Bearer {issued.key}"}
        path = f"/v1/articles/{article.article_id}/export/markdown"
        requests = []
        for k in range(2):  # two first exports before anything is recorded: one event
            async with client.get(path, headers={**headers, "X-Request-Id": f"first-export-{k}"}) as resp:
                assert resp.status == 200, await resp.text()
                requests.append(resp.headers["ETag"])
        assert await recorded() == []  # the GETs appended nothing
        watch = ExportsWatch(settings)
        background.start(watch.run)
        [ready] = await wait_for(recorded, what="ExportReady")
        assert ready.meta["request_id"] == "first-export-0" and ready.data["etag"] == requests[0]
        assert ready.data["path"] == path and ready.data["format"] == "markdown"
        assert ready.data["environment"] == "production" and ready.data["bytes"] > 0
        await wait_projected(settings, pool, ["article_exports"])
        async with client.get(path, headers=headers) as resp:  # a later export reports nothing
            assert resp.status == 200
        await asyncio.sleep(1.0)
        assert len(await recorded()) == 1 and watch.appended == 1
    finally:
        await client.close()
