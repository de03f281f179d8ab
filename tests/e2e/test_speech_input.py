"""A talk uploaded WITHOUT captions, end to end on the real processes: its speech is recognised
(the local model), and everything that follows a transcript follows: claims and chapters, an
article and its markdown export, the transcript as WebVTT / SRT / JSON, a rendered clip whose
captions are burned from the recognised words, clip detection, the revival candidate and its
completed description, and the assistant reading the video's claims."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import wait_projected
from tests.media_factory import make_spoken_talk
from tests.support.api_videos import follow, upload
from tests.support.clip_media import download, ffprobe, gray_frame, render_clip, talk_source, track


@pytest.fixture(scope="module")
def spoken(tmp_path_factory) -> dict:
    return make_spoken_talk(tmp_path_factory.mktemp("spoken"))


async def test_a_talk_without_captions_gets_its_transcript_and_everything_that_follows(service, spoken, tmp_path):
    ws = await service.workspace(credits=50)
    media = await ws.client.post("/medias", {"name": "Heat pumps"})
    assert media.status == 200, media.body
    status, body = await upload(ws.client, spoken["video"], media_id=str(media.data["id"]),
                                description="A short talk about heat pumps.")
    assert status == 201 and body["data"]["has_transcript"] is False, body
    vid = body["data"]["id"]
    r = await ws.client.post(f"/videos/{vid}/analyze", {"language": "en", "outputs": {"transcript": True}})
    minutes = -(-spoken["duration_ms"] // 60_000)
    assert r.status == 202 and r.data["credits_charged"] == 2 * minutes, r.body  # analysis + speech
    job, steps = await follow(ws.client, r.data["job_id"], timeout=300)
    assert job["status"] == "completed" and job["article_id"], job
    assert any(s.startswith("recognising speech: window 1 of") for s in steps), steps
    result = job["result"]
    assert result["transcript_source"]["kind"] == "speech"
    assert result["transcript_source"]["engine"] == "faster-whisper"
    assert result["transcript_source"]["model"] == "base"
    assert result["claims"] > 0 and result["chapters"] >= 1, result

    graph = (await ws.client.get(f"/videos/{vid}/graph")).data
    assert (await ws.client.get(f"/videos/{vid}")).data["has_transcript"] is True  # its speech is one now
    assert graph["transcriptSource"] == result["transcript_source"] and graph["transcript"]
    vtt = await ws.client.http.get(f"{ws.client.base}/videos/{vid}/transcript",
                                   headers={"Authorization": f"Bearer {ws.client.key}"})
    text = await vtt.text()
    assert vtt.status == 200 and vtt.headers["Content-Type"].startswith("text/vtt"), text
    assert text.startswith("WEBVTT") and "electricity" in text.lower()
    srt = await ws.client.http.get(f"{ws.client.base}/videos/{vid}/transcript?format=srt",
                                   headers={"Authorization": f"Bearer {ws.client.key}"})
    assert srt.status == 200 and (await srt.text()).startswith("1\n00:00:0")
    as_json = await ws.client.get(f"/videos/{vid}/transcript?format=json")
    assert as_json.status == 200 and as_json.data["segments"] == graph["transcript"]
    bad = await ws.client.get(f"/videos/{vid}/transcript?format=docx")
    assert bad.status == 400 and bad.error["code"] == "validation_error", bad.body

    article_id = job["article_id"]
    markdown = await ws.client.http.get(f"{ws.client.base}/articles/{article_id}/export/markdown",
                                        headers={"Authorization": f"Bearer {ws.client.key}"})
    assert markdown.status == 200 and "electricity" in (await markdown.text()).lower()

    # A clip of the first line, its captions burned from the recognised words.
    first = graph["transcript"][0]
    start, end = max(0, first["startMs"] - 500), first["endMs"] + 1500
    r = await ws.client.post("/production/clips/render", {"article_id": article_id, "template_id": 1,
                                                          "clips": [render_clip("spoken", start, end)]})
    assert r.status == 202, r.body
    tracking = await track(ws.client, r.data["job_id"], timeout=300)
    assert tracking["status"] == "completed" and len(tracking["rendered_clips"]) == 1, tracking
    clip = await download(service.http, tracking["rendered_clips"][0]["url"], tmp_path / "clip.mp4")
    probed = ffprobe(clip)
    assert abs(float(probed["format"]["duration"]) * 1000 - (end - start)) <= 100
    at = (first["startMs"] + 600 - start) / 1000  # the first words are being spoken
    talk = {"ws": ws, "video_id": vid}
    clip_frame = gray_frame(clip, at, w=720, h=1280)
    source_frame = gray_frame(Path(talk_source(service, talk)), start / 1000 + at,
                              "scale=720:1280:force_original_aspect_ratio=increase,crop=720:1280", w=720, h=1280)
    bottom = slice(720 * 900, 720 * 1200)  # where the captions are
    diff = sum(abs(a - b) for a, b in zip(clip_frame[bottom], source_frame[bottom], strict=True))
    assert diff / (720 * 300) > 2, "no captions burned while the recognised words are spoken"

    # Clip detection proposes moments of the recognised speech.
    spoken_span = (graph["transcript"][0]["startMs"], graph["transcript"][-1]["endMs"])
    r = await ws.client.post("/production/clips/detect", {"article_id": article_id, "template_id": 1,
                                                          "target_duration_seconds": 8, "requested_clip_count": 2})
    assert r.status == 202, r.body
    detected = await track(ws.client, r.data["job_id"], timeout=300)
    assert detected["status"] == "completed" and detected["clips"], detected
    assert all(spoken_span[0] - 1000 <= c["start_ms"] < c["end_ms"] <= spoken_span[1] + 1000
               for c in detected["clips"]), (detected["clips"], spoken_span)

    # The revival candidate, and a description completed from what was said.
    await wait_projected(service.settings, service.pool, ["revival_candidates"])
    [candidate] = [c for c in (await ws.client.get("/production/revival/candidates")).data if c["video_id"] == vid]
    r = await ws.client.post("/production/descriptions/complete", {
        "media_id": candidate["media_id"], "article_id": article_id, "candidate_id": candidate["id"],
        "platforms": ["videosite_long"], "idempotency_key": "speech-talk-description"})
    assert r.status == 200, r.body
    [draft] = r.data["drafts"]
    assert any(word in draft["completed_description"].lower() for word in ("heat", "electricity", "insulation")), draft

    # The assistant reads the claims found in the speech.
    r = await ws.client.post("/agent/chat", {"message": f"show the claims of video {vid}"})
    assert r.status == 200, r.body
    assert [(a["name"], a["status"]) for a in r.data["actions"]][:1] == [("get_claims", "ok")], r.data
