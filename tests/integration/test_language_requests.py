"""Every ``language`` the API takes, driven through the aiohttp app in-process on real PostgreSQL and
Kafka: a language the service does not analyse and write is a 400 ``validation_error`` (field
``body.language``, rule ``unsupported_language``) before anything is charged, queued or stored; a
tag of a supported language in another case or with a region (``EN``, ``en-US``) is that language.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp.test_utils import TestClient, TestServer

from services.api.app import build_app
from services.application.keys import IssueKey
from tests.helpers import handle
from tests.integration.test_clip_detection_job import seeded
from tests.media_factory import make_sound

UNSUPPORTED = ["xx", "zh", "zh-Hans", "eng", "en_US"]


@pytest.fixture(scope="module")
def sound(tmp_path_factory) -> Path:
    return make_sound(tmp_path_factory.mktemp("media"), "tone.mp4", "sine=frequency=220:sample_rate=8000", 2.0)


@dataclass
class Api:
    client: TestClient
    token: str
    store: Any
    pool: Any
    workspace_id: Any

    async def send(self, path: str, *, json: Any = None, form: aiohttp.FormData | None = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {self.token}"}
        if json is not None:
            headers["Content-Type"] = "application/json"
        async with self.client.post(f"/v1{path}", data=form if form is not None else orjson.dumps(json),
                                    headers=headers) as resp:
            return resp.status, orjson.loads(await resp.read())

    async def written(self) -> dict[str, int]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch("SELECT type, count(*) AS n FROM events WHERE workspace_id = $1 GROUP BY type",
                                    self.workspace_id)
        return {r["type"]: r["n"] for r in rows}


@pytest.fixture
async def api(settings, store, pool, tmp_path):
    fast = settings.model_copy(update={"read_your_writes_timeout_s": 0.2})
    ws, _, _, _ = await seeded(fast, store, tmp_path)
    issued = await handle(store, IssueKey(ws, name="all", scopes=["*"], environment="production"))
    client = TestClient(TestServer(build_app(fast)))
    await client.start_server()
    try:
        yield Api(client, issued.key, store, pool, ws)
    finally:
        await client.close()


def _refused(status: int, answer: dict) -> bool:
    fields = answer.get("error", {}).get("details", {}).get("fields", [])
    return status == 400 and answer["error"]["code"] == "validation_error" and \
        [(f["field"], f["rule"]) for f in fields] == [("body.language", "unsupported_language")]


@pytest.mark.parametrize("language", UNSUPPORTED)
async def test_an_analysis_in_a_language_the_service_does_not_write_is_refused_before_any_charge(api, language):
    before = await api.written()

    status, answer = await api.send("/videos/7/analyze", json={"language": language})

    assert _refused(status, answer), (status, answer)
    assert await api.written() == before  # nothing queued, nothing charged


@pytest.mark.parametrize("language", ["EN", "en-US", "En-gb"])
async def test_an_analysis_in_a_tag_of_a_supported_language_is_that_language(api, language):
    status, answer = await api.send("/videos/7/analyze", json={"language": language})

    assert status == 202, answer
    job = await api.store.fetch_for_writing(answer["data"]["job_id"])
    assert job.params["language"] == "en" and job.params["language_given"] is True


async def test_an_upload_a_media_and_a_regeneration_follow_the_same_rule(api, sound):
    before = await api.written()
    for language in UNSUPPORTED:
        form = aiohttp.FormData()
        form.add_field("file", sound.read_bytes(), filename="tone.mp4", content_type="video/mp4")
        form.add_field("language", language)
        assert _refused(*await api.send("/videos", form=form)), language
        assert _refused(*await api.send("/medias", json={"name": "Season 1", "language": language})), language
        assert _refused(*await api.send("/articles/3/regenerate", json={"language": language})), language
    assert await api.written() == before

    form = aiohttp.FormData()
    form.add_field("file", sound.read_bytes(), filename="tone.mp4", content_type="video/mp4")
    form.add_field("language", "DE-at")
    status, uploaded = await api.send("/videos", form=form)
    assert status == 201 and uploaded["data"]["language"] == "de", uploaded
    status, media = await api.send("/medias", json={"name": "Staffel 1", "language": "de-DE"})
    assert status == 200, media
    async with api.pool.acquire() as conn:
        recorded = await conn.fetchval("SELECT data->>'language' FROM events WHERE workspace_id = $1 "
                                       "AND type = 'MediaCreated'", api.workspace_id)
    assert recorded == "de"


async def test_a_video_recorded_in_another_language_is_analysed_only_in_one_the_request_names(api):
    """A video stored before the rule with a language the service does not write: its analysis
    without a language is refused up front; naming one analyses it in that language."""
    from domain.videos import Video

    old = Video.upload(video_id=8, workspace_id=api.workspace_id, environment="production", name="old",
                       storage_key=f"videos/{api.workspace_id}/8/source.mp4", size_bytes=10, duration_ms=60_000,
                       language="xx", demuxer="mov", audio_codec="aac", caption_cues=3,
                       captions_key=f"videos/{api.workspace_id}/8/captions.vtt")
    await api.store.save(old, workspace_id=api.workspace_id)
    before = await api.written()

    assert _refused(*await api.send("/videos/8/analyze", json={}))
    assert await api.written() == before
    status, answer = await api.send("/videos/8/analyze", json={"language": "it"})
    assert status == 202, answer
