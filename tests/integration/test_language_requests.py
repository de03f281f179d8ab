"""Every ``language`` the API takes, driven through the aiohttp app in-process on real PostgreSQL and
Kafka (the ``api`` fixture of the integration conftest, as ``test_idempotent_routes``): a language
the service does not analyse and write is a 400 ``validation_error`` (field ``body.language``, rule
``unsupported_language``) before anything is charged, queued or stored; a tag of a supported
language in another case or with a region (``EN``, ``en-US``) is that language.
"""

from __future__ import annotations

import pytest

from domain.videos import Video
from tests.support.api_harness import Api

UNSUPPORTED = ["xx", "zh", "zh-Hans", "eng", "en_US"]


def _refused(status: int, answer: dict, headers: dict | None = None) -> bool:
    fields = answer.get("error", {}).get("details", {}).get("fields", [])
    return status == 400 and answer["error"]["code"] == "validation_error" and \
        [(f["field"], f["rule"]) for f in fields] == [("body.language", "unsupported_language")]


@pytest.mark.parametrize("language", UNSUPPORTED)
async def test_an_analysis_in_a_language_the_service_does_not_write_is_refused_before_any_charge(api: Api, language):
    before, credits = await api.written(), await api.balance()

    status, answer, _ = await api.post("/videos/7/analyze", {"language": language}, None)

    assert _refused(status, answer), (status, answer)
    assert await api.written() == before and await api.balance() == credits  # nothing queued, nothing charged


@pytest.mark.parametrize("language", ["EN", "en-US", "En-gb"])
async def test_an_analysis_in_a_tag_of_a_supported_language_is_that_language(api: Api, language):
    status, answer, _ = await api.post("/videos/7/analyze", {"language": language}, None)

    assert status == 202, answer
    job = await api.store.fetch_for_writing(answer["data"]["job_id"])
    assert job.params["language"] == "en" and job.params["language_given"] is True


async def test_an_upload_a_media_and_a_regeneration_follow_the_same_rule(api: Api):
    before = await api.written()
    for language in UNSUPPORTED:
        assert _refused(*await api.post("/videos", {"language": language}, None)), language
        assert _refused(*await api.post("/medias", {"name": "Season 1", "language": language}, None)), language
        assert _refused(*await api.post("/articles/3/regenerate", {"language": language}, None)), language
    assert await api.written() == before

    status, uploaded, _ = await api.post("/videos", {"language": "DE-at"}, None)
    assert status == 201 and uploaded["data"]["language"] == "de", uploaded
    status, media, _ = await api.post("/medias", {"name": "Staffel 1", "language": "de-DE"}, None)
    assert status == 200, media
    async with api.pool.acquire() as conn:
        recorded = await conn.fetchval("SELECT data->>'language' FROM events WHERE workspace_id = $1 "
                                       "AND type = 'MediaCreated'", api.workspace_id)
    assert recorded == "de"


async def test_a_video_recorded_in_another_language_is_analysed_only_in_one_the_request_names(api: Api):
    """A video stored before the rule with a language the service does not write: its analysis
    without a language is refused up front; naming one analyses it in that language."""
    old = Video.upload(video_id=8, workspace_id=api.workspace_id, environment="production", name="old",
                       storage_key=f"videos/{api.workspace_id}/8/source.mp4", size_bytes=10, duration_ms=60_000,
                       language="xx", demuxer="mov", audio_codec="aac", caption_cues=3,
                       captions_key=f"videos/{api.workspace_id}/8/captions.vtt")
    await api.store.save(old, workspace_id=api.workspace_id)
    before = await api.written()

    assert _refused(*await api.post("/videos/8/analyze", {}, None))
    assert await api.written() == before
    status, answer, _ = await api.post("/videos/8/analyze", {"language": "it"}, None)
    assert status == 202, answer
