"""A public link's answer takes the same work whatever its token: a revoked link (genuine once, its
video real) and a forged or malformed token each make one lookup of a video's stream, one query,
then the same 404. Counted, not timed: what each path does is what its time would tell
(``tests/benchmarks/bench_public_links.py`` prints the times)."""

from __future__ import annotations

import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from infra.file_urls import public_link
from services.api.app import build_app
from services.api.base import STORE
from services.application.videos import RevokePublicLinks
from tests.helpers import handle
from tests.support.seeded_article import seeded


class Counted:
    """The app's store, its stream lookups and their queries counted."""

    def __init__(self, store) -> None:
        self.lookups: list[tuple] = []
        self.queries = 0
        fetch_latest, read_many_after = store.fetch_latest, store._read_many_after

        async def counted_fetch(*stream_ids):
            self.lookups.append(stream_ids)
            return await fetch_latest(*stream_ids)

        async def counted_read(*args):
            self.queries += 1
            return await read_many_after(*args)

        store.fetch_latest, store._read_many_after = counted_fetch, counted_read

    def reset(self) -> None:
        self.lookups.clear()
        self.queries = 0


@pytest.fixture
async def app(settings, store, tmp_path):
    ws, video, _, _ = await seeded(settings, store, tmp_path)
    client = TestClient(TestServer(build_app(settings)))
    await client.start_server()
    try:
        yield client, ws, video
    finally:
        await client.close()


async def test_a_revoked_link_and_a_forged_one_cost_the_same_lookup(app, settings, store):
    client, ws, video = app
    revoked = public_link(settings, ws, video.storage_key, video.video_id, video.public_links_generation)
    await handle(store, RevokePublicLinks(ws, "production", video.video_id))
    token = revoked.rsplit("/", 1)[1]
    forged = token[:20] + ("A" if token[20] != "A" else "B") + token[21:]  # same length, fails the tag
    counted = Counted(client.server.app[STORE])
    seen = {}
    for name, candidate in (("revoked", token), ("forged", forged), ("malformed", "not-a-token"),
                            ("revoked again", token), ("forged again", forged)):
        counted.reset()
        async with client.get(f"/v1/public/{candidate}") as resp:
            answer = orjson.loads(await resp.read())
        seen[name] = (resp.status, answer, len(counted.lookups), counted.queries)

    assert {status for status, *_ in seen.values()} == {404}
    assert len({orjson.dumps(answer) for _, answer, *_ in seen.values()}) == 1  # the same words
    assert {name: (lookups, queries) for name, (_, _, lookups, queries) in seen.items()} == {
        name: (1, 1) for name in seen}, seen
