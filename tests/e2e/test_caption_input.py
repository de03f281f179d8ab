"""Hostile captions over HTTP on the real processes: a NUL (and other control characters) in an
uploaded caption file is dropped, so the analysis completes and stores a clean transcript; cues
the media cannot hold are refused with 400 and nothing is stored."""

from __future__ import annotations

import aiohttp
import orjson
import pytest

from domain.analysis import Segment
from infra.captions import to_webvtt
from tests.media_factory import make_interview
from tests.support.api_videos import events_of, follow, storage_files


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return make_interview(tmp_path_factory.mktemp("caption-input"))


async def upload(client, video: bytes, captions: bytes):
    form = aiohttp.FormData()
    form.add_field("file", video, filename="interview.mp4", content_type="video/mp4")
    form.add_field("captions", captions, filename="captions.vtt", content_type="text/vtt")
    async with client.http.post(client.base + "/videos", data=form,
                                headers={"Authorization": f"Bearer {client.key}"}) as resp:
        return resp.status, orjson.loads(await resp.read())


async def test_a_nul_in_captions_is_dropped_and_the_analysis_completes(service, media):
    ws = await service.workspace(credits=10)
    vtt = media["vtt"].read_text()
    first_line = media["cues"][0][2]
    speaker = media["cues"][0][3]
    poisoned = vtt.replace(first_line, first_line[:5] + "\x00" + first_line[5:] + "\x07", 1)
    poisoned = poisoned.replace(f"<v {speaker}>", f"<v {speaker[:2]}\x00{speaker[2:]}>", 1)
    assert "\x00" in poisoned
    status, body = await upload(ws.client, media["video"].read_bytes(), poisoned.encode())
    assert status == 201, body
    vid = body["data"]["id"]
    r = await ws.client.post(f"/videos/{vid}/analyze", {"outputs": {"article": True, "transcript": True}})
    assert r.status == 202, r.body
    job, _ = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "completed", job
    graph = (await ws.client.get(f"/videos/{vid}/graph")).data
    transcript = graph["transcript"]
    assert transcript[0]["text"] == first_line and transcript[0]["speaker"] == speaker
    dumped = orjson.dumps(graph)  # JSON writes control characters as \u00XX escapes
    assert b"\\u0000" not in dumped and b"\\u0007" not in dumped


async def test_captions_the_media_cannot_hold_are_refused(service, media):
    ws = await service.workspace()
    late = media["vtt"].read_text() + "\n99:00:00.000 --> 99:00:02.000\n<v Intrus>Une autre vidéo.\n"
    status, body = await upload(ws.client, media["video"].read_bytes(), late.encode())
    assert status == 400, body
    assert body["error"]["code"] == "invalid_request" and body["error"]["details"]["field"] == "captions"
    assert body["error"]["details"]["cues_after_end"] == 1
    crowded = to_webvtt([Segment(k * 5, k * 5 + 4, f"mot {k}") for k in range(2000)])  # 2,000 cues in 10 s
    status, body = await upload(ws.client, media["video"].read_bytes(), crowded.encode())
    assert status == 400 and body["error"]["details"]["cues"] == 2000, body
    assert await events_of(service, ws.id, "VideoUploaded") == []
    assert storage_files(service, ws.id) == []
