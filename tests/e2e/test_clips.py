"""Clips end to end on the real processes (api, relay, projector, worker, dispatcher) and real
media: the simple clip in each format probed with ffprobe, the templates, detection on a talk
whose sentence times are known, renders with a template (progressive results, a clip failing
once and retried alone, aspect ratio, duration and burned captions checked on the output; a
face-following render of a real portrait, with the framing each clip took),
kill -9 of the worker in the middle of a render, cancellation between clips, the webhooks, and
every refusal.

The service runs with ``VAEO_CLIP_FAIL_ONCE=fails-once``: a clip with that id fails its first
attempt on purpose (a test setting that production mode ignores), which is how a clip is made to
fail once here.
"""

from __future__ import annotations

import asyncio
import base64
import subprocess
import time
import uuid
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit
from uuid import UUID

import numpy as np
import pytest

from infra.storage import STAGING, LocalStorage, storage_root
from infra.vision.faces import FaceDetector
from services.jobs.clips import staging_label
from tests.face_media import captions, face_video
from tests.media_factory import make_interview, run
from tests.support.api_videos import upload
from tests.support.clip_media import download, ffprobe, gray_frame, render_clip, talk_source, track, wait_job
from tests.support.service import running_service, spawn
from tests.support.stack import env_for
from tests.support.webhooks import Receiver, TestCA, verify, wait_until

FAILS_ONCE = "fails-once"
ALLOW = "127.0.0.40/30"


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("clips")
    made = make_interview(root)
    silent = root / "silent.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=green:s=160x120:r=25:d=3", "-c:v", "libx264",
         "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(silent)])
    return made | {"silent": silent}


@pytest.fixture(scope="module")
async def svc(stack_settings, template_db, tmp_path_factory):
    ca = TestCA(tmp_path_factory.mktemp("ca"))
    logs = tmp_path_factory.mktemp("logs")
    async with running_service(
            stack_settings, template_db, logs, processes=("relay", "projector", "worker", "dispatcher"), apis=1,
            VAEO_CLIP_FAIL_ONCE=FAILS_ONCE, VAEO_JOB_RETRY_BACKOFF_S="0.3", VAEO_WORKER_LEASE_S="3",
            VAEO_WEBHOOK_TEST_ALLOW=ALLOW, VAEO_WEBHOOK_EXTRA_CA_FILE=str(ca.ca_file),
            VAEO_WEBHOOK_RETRY_SCHEDULE_S="[0, 0.3, 0.3]", VAEO_DISPATCHER_POLL_INTERVAL_S="0.05") as service:
        service.ca = ca  # type: ignore[attr-defined]
        service.env = {"VAEO_CLIP_FAIL_ONCE": FAILS_ONCE, "VAEO_JOB_RETRY_BACKOFF_S": "0.3",  # type: ignore
                       "VAEO_WORKER_LEASE_S": "3"}
        yield service


@pytest.fixture(scope="module")
async def talk(svc, media) -> dict:
    """A workspace with the interview uploaded (with its captions) and analysed into an article."""
    ws = await svc.workspace(credits=10_000)
    status, body = await upload(ws.client, media["video"], captions=media["vtt"])
    assert status == 201, body
    video_id = body["data"]["id"]
    r = await ws.client.post(f"/videos/{video_id}/analyze", {})
    assert r.status == 202, r.body
    job = await wait_job(ws.client, r.data["job_id"])
    assert job["status"] == "completed", job
    duration_ms = round((await ws.client.get(f"/videos/{video_id}")).data["duration_seconds"] * 1000)
    return {"ws": ws, "video_id": video_id, "article_id": job["article_id"], "cues": media["cues"],
            "duration_ms": duration_ms}


async def clip_events(svc, job_id: str, *types: str) -> list[dict]:
    async with svc.pool.acquire() as conn:
        rows = await conn.fetch("SELECT type, data FROM events WHERE type = ANY($1) AND data->>'job_id' = $2 "
                                "ORDER BY position", list(types), job_id)
    return [{"type": r["type"], **r["data"]} for r in rows]


# ------------------------------------------------------------------------------------ simple clip


@pytest.mark.parametrize(("fmt", "codecs"), [("mp4", {"h264", "aac"}), ("webm", {"vp9", "opus"}), ("mp3", {"mp3"})])
async def test_a_simple_clip_is_cut_frame_accurately_in_each_format(svc, talk, fmt, codecs, tmp_path):
    ws, video_id = talk["ws"], talk["video_id"]
    start, end = 5_217, 12_454
    credits_before = (await ws.client.get("/credits")).data["used"]
    r = await ws.client.post(f"/videos/{video_id}/clips", {"start_ms": start, "end_ms": end, "format": fmt})
    assert r.status == 202, r.body
    assert set(r.data) >= {"job_id", "status", "type"} and r.data["type"] == "video_clip"
    assert r.data["status"] == "pending" and r.data["credits_charged"] == 1
    job = await wait_job(ws.client, r.data["job_id"])
    assert job["status"] == "completed", job
    result = job["result"]
    assert set(result) == {"url", "format", "duration_ms", "size_bytes"}
    assert result["format"] == fmt and abs(result["duration_ms"] - (end - start)) <= 50
    path = await download(svc.http, result["url"], tmp_path / f"clip.{fmt}")
    assert path.stat().st_size == result["size_bytes"]
    probed = ffprobe(path)
    assert {s["codec_name"] for s in probed["streams"]} == codecs
    assert abs(float(probed["format"]["duration"]) * 1000 - (end - start)) <= 50
    if fmt == "mp4":  # +faststart: the moov box comes before the media data
        head = path.read_bytes()[:4096]
        assert head.find(b"moov") != -1 and (head.find(b"mdat") == -1 or head.find(b"moov") < head.find(b"mdat"))
    rendered = await clip_events(svc, r.data["job_id"], "ClipRendered")
    assert len(rendered) == 1 and rendered[0]["format"] == fmt
    assert (await ws.client.get("/credits")).data["used"] == credits_before + 1


async def test_a_simple_clip_announces_itself_and_its_end_to_the_webhooks(svc, talk, tmp_path):
    ws, video_id = talk["ws"], talk["video_id"]
    receiver = await Receiver(svc.ca, address="127.0.0.42").start()
    try:
        hook = await ws.client.post("/webhooks", {"url": f"https://127.0.0.42:{receiver.port}/hooks",
                                                  "events": ["clip.generated"]})
        assert hook.status == 201, hook.body
        job_secret = (await ws.client.get("/webhooks/job-secret")).data["secret"]
        r = await ws.client.post(f"/videos/{video_id}/clips", {
            "start_ms": 1_000, "end_ms": 3_000, "format": "webm",
            "webhook_url": f"https://127.0.0.42:{receiver.port}/job-end"})
        assert r.status == 202, r.body
        assert (await wait_job(ws.client, r.data["job_id"]))["status"] == "completed"
        await wait_until(lambda: len(receiver.hits) >= 2, 30, "two deliveries")
        by_type = {}
        for hit in receiver.hits:  # job.completed comes only to webhook_url (signed with the job secret)
            secret = job_secret if b'"job.completed"' in hit.body else hook.data["secret"]
            body = verify(secret, hit)
            by_type[body["type"]] = body["data"]
        assert set(by_type) == {"clip.generated", "job.completed"}
        assert by_type["clip.generated"]["job_id"] == r.data["job_id"]
        assert by_type["clip.generated"]["format"] == "webm" and by_type["clip.generated"]["clip_id"] == "clip"
        assert by_type["job.completed"]["type"] == "video_clip"
        assert by_type["job.completed"]["result"]["format"] == "webm"
        # the payloads' signed URLs download the clip, no key needed, and name no storage key; the
        # dispatcher writes them under its VAEO_PUBLIC_BASE_URL (here the default, the API's own
        # port 8080), the test's APIs listen on ports of their own: the same path is fetched there
        urls = [by_type["clip.generated"]["url"], by_type["job.completed"]["result"]["url"]]
        assert all(u.startswith("http://127.0.0.1:8080/v1/files/") for u in urls), urls
        api = svc.base.removesuffix("/v1")
        hooked = await download(svc.http, api + urlsplit(urls[0]).path, tmp_path / "hooked.webm")
        ended = await download(svc.http, api + urlsplit(urls[1]).path, tmp_path / "ended.webm")
        assert hooked.read_bytes() == ended.read_bytes() and hooked.read_bytes()[:4] == b"\x1a\x45\xdf\xa3"
    finally:
        await receiver.stop()


async def test_simple_clip_refusals(svc, talk, media):
    ws, video_id = talk["ws"], talk["video_id"]
    duration = talk["duration_ms"]
    for body, field in [({"start_ms": 5000, "end_ms": 5000}, "body.end_ms"),
                        ({"start_ms": 6000, "end_ms": 5000}, "body.end_ms"),
                        ({"start_ms": 0, "end_ms": duration + 1}, "body.end_ms"),
                        ({"start_ms": -1, "end_ms": 5000}, "body.start_ms"),
                        ({"start_ms": 0, "end_ms": 0}, "body.end_ms"),
                        ({"end_ms": 5000}, "body.start_ms"),
                        ({"start_ms": 0, "end_ms": 5000, "format": "gif"}, "body.format"),
                        ({"start_ms": 0, "end_ms": 5000, "speed": 2}, "body.speed"),
                        ({"start_ms": "0", "end_ms": 5000}, "body.start_ms")]:
        r = await ws.client.post(f"/videos/{video_id}/clips", body)
        assert r.status == 400, (body, r.body)
        assert field in [f["field"] for f in r.error["details"]["fields"]], (body, r.body)
    refused = await ws.client.post(f"/videos/{video_id}/clips", {"start_ms": 0, "end_ms": 5000,
                                                                 "webhook_url": "https://127.0.0.1/hook"})
    assert refused.status == 400 and refused.error["code"] == "destination_refused"
    status, body = await upload(ws.client, media["silent"])
    assert status == 201, body
    silent = body["data"]["id"]
    r = await ws.client.post(f"/videos/{silent}/clips", {"start_ms": 0, "end_ms": 1000, "format": "mp3"})
    assert r.status == 400 and r.error["details"]["fields"][0]["field"] == "body.format", r.body
    r = await ws.client.post(f"/videos/{silent}/clips", {"start_ms": 0, "end_ms": 1000})
    assert r.status == 202, r.body
    # Waited for, so that its end is not delivered to a later test's webhook of this workspace.
    assert (await wait_job(ws.client, r.data["job_id"]))["status"] == "completed"
    other = await svc.workspace()
    for path in (f"/videos/{video_id}/clips", "/videos/999999/clips", "/videos/abc/clips"):
        r = await other.client.post(path, {"start_ms": 0, "end_ms": 1000})
        assert r.status == 404 and r.error["code"] == "not_found", (path, r.body)
    reader = ws.client.with_key(await svc.key(ws, ["videos:read", "jobs:read"]))
    r = await reader.post(f"/videos/{video_id}/clips", {"start_ms": 0, "end_ms": 1000})
    assert r.status == 403 and r.error["details"]["required"] == "clips:create"


# ------------------------------------------------------------------------------------ templates


async def test_templates_are_the_system_ones_with_one_default_and_a_preview(svc):
    ws = await svc.workspace()
    r = await ws.client.get("/production/templates")
    assert r.status == 200, r.body
    templates = r.data
    assert {t["format"] for t in templates} >= {"9:16", "1:1", "16:9"}
    assert sum(t["is_default"] for t in templates) == 1
    for t in templates:
        assert isinstance(t["id"], int) and t["name"] and 5 <= t["target_duration_seconds"] <= 180
        assert (t["is_system"], t["is_customized"], t["thumbnail_available"]) == (True, False, True)
        w, h = (int(x) for x in t["format"].split(":"))
        assert t["width"] * h == t["height"] * w
        header, _, payload = t["thumbnail_url"].partition(",")
        assert header == "data:image/svg+xml;base64"
        assert base64.b64decode(payload).startswith(b"<svg")
    reader = ws.client.with_key(await svc.key(ws, ["jobs:read"]))
    assert (await reader.get("/production/templates")).status == 403


# ------------------------------------------------------------------------------------ detection


def _inside_speech(t_ms: int, cues: list) -> bool:
    return any(start < t_ms < end for start, end, _, _ in cues)


async def test_detection_proposes_sentence_bounded_clips_within_the_duration_bounds(svc, talk):
    ws, article_id = talk["ws"], talk["article_id"]
    body = {"article_id": article_id, "template_id": 1, "target_duration_seconds": 8, "requested_clip_count": 5,
            "prompt": "ITER plasma"}
    r = await ws.client.post("/production/clips/detect", body)
    assert r.status == 202, r.body
    assert (r.data["type"], r.data["reused"]) == ("clip_detection", False)
    assert r.data["status"] == "queued"
    tracking = await track(ws.client, r.data["job_id"])
    assert tracking["status"] == "completed", tracking
    assert (tracking["type"], tracking["article_id"], tracking["template_id"]) == ("clip_detection", article_id, 1)
    assert tracking["target_duration_seconds"] == 8 and tracking["progress"] == 100
    clips = tracking["clips"]
    assert 1 <= len(clips) <= 5
    if len(clips) < 5:
        assert "5 were asked" in tracking["shortfall_reason"]
    ranges = sorted((c["start_ms"], c["end_ms"]) for c in clips)
    assert all(a[1] <= b[0] for a, b in zip(ranges, ranges[1:], strict=False)), "clips overlap"
    for c in clips:
        assert set(c) == {"id", "title", "thumbnail_title", "start_ms", "end_ms", "duration_ms", "viral_score",
                          "rationale"}
        assert 7_200 <= c["duration_ms"] <= 8_000 and c["duration_ms"] == c["end_ms"] - c["start_ms"]
        assert not _inside_speech(c["start_ms"], talk["cues"]) and not _inside_speech(c["end_ms"], talk["cues"])
        assert 0 <= c["viral_score"] <= 100 and c["rationale"] and len(c["title"]) <= 180
    assert "ITER" in " ".join(c["title"] + c["rationale"] for c in clips)
    assert tracking["credits_used"] == 1
    again = await ws.client.post("/production/clips/detect", dict(reversed(list(body.items()))))
    assert again.status == 202 and (again.data["job_id"], again.data["reused"]) == (r.data["job_id"], True)
    assert again.data["credits_charged"] == 0
    other = await ws.client.post("/production/clips/detect", {**body, "requested_clip_count": 4})
    assert other.status == 202 and other.data["reused"] is False and other.data["job_id"] != r.data["job_id"]
    assert (await track(ws.client, other.data["job_id"]))["status"] == "completed"
    longer = await track(ws.client, (await ws.client.post("/production/clips/detect", {
        **body, "target_duration_seconds": 10, "allow_longer_duration": True, "allow_shorter_duration": False,
        "duration_margin_percent": 20, "prompt": None}
    )).data["job_id"])
    assert longer["status"] == "completed" and longer["clips"]
    assert all(10_000 <= c["duration_ms"] <= 12_000 for c in longer["clips"])


async def test_detection_refusals(svc, talk):
    ws, article_id = talk["ws"], talk["article_id"]
    base = {"article_id": article_id, "template_id": 1}
    for extra, field in [({"target_duration_seconds": 4}, "body.target_duration_seconds"),
                         ({"target_duration_seconds": 181}, "body.target_duration_seconds"),
                         ({"requested_clip_count": 0}, "body.requested_clip_count"),
                         ({"requested_clip_count": 51}, "body.requested_clip_count"),
                         ({"analysis_mode": "smell"}, "body.analysis_mode"),
                         ({"prompt": "x" * 501}, "body.prompt"),
                         ({"duration_margin_percent": 51}, "body.duration_margin_percent"),
                         ({"protect_sentence_boundaries": "yes"}, "body.protect_sentence_boundaries"),
                         ({"article_id": 0}, "body.article_id"),
                         ({"template_id": 0}, "body.template_id"),
                         ({"colour": "red"}, "body.colour")]:
        r = await ws.client.post("/production/clips/detect", {**base, **extra})
        assert r.status == 400, (extra, r.body)
        assert field in [f["field"] for f in r.error["details"]["fields"]], (extra, r.body)
    r = await ws.client.post("/production/clips/detect", {"template_id": 1})
    assert r.status == 400 and r.error["details"]["fields"][0]["field"] == "body.article_id"
    for body in ({**base, "article_id": 999_999}, {**base, "template_id": 99}):
        r = await ws.client.post("/production/clips/detect", body)
        assert r.status == 404 and r.error["code"] == "not_found", r.body
    other = await svc.workspace()
    assert (await other.client.post("/production/clips/detect", base)).status == 404
    reader = ws.client.with_key(await svc.key(ws, ["production:read", "jobs:read"]))
    assert (await reader.post("/production/clips/detect", base)).status == 403


# ------------------------------------------------------------------------------------ render


async def test_a_render_shows_each_clip_at_once_retries_the_failed_one_alone_and_fires_webhooks(svc, talk,
                                                                                                tmp_path):
    ws, article_id = talk["ws"], talk["article_id"]
    receiver = await Receiver(svc.ca, address="127.0.0.41").start()
    try:
        hook = await ws.client.post("/webhooks", {"url": f"https://127.0.0.41:{receiver.port}/hooks",
                                                  "events": ["clip.generated", "job.completed"]})
        assert hook.status == 201, hook.body
        secret = hook.data["secret"]
        clips = [render_clip("first", 5_000, 8_407, thumbnail_title="Bonjour"),
                 render_clip(FAILS_ONCE, 12_460, 15_207), render_clip("third", 15_207, 19_138)]
        credits_before = (await ws.client.get("/credits")).data["used"]
        r = await ws.client.post("/production/clips/render", {"article_id": article_id, "template_id": 1,
                                                              "clips": clips})
        assert r.status == 202, r.body
        assert (r.data["type"], r.data["reused"], r.data["credits_charged"]) == ("clip_render", False, 6)
        job_id = r.data["job_id"]
        counts: list[int] = []
        failed_seen: list[dict] = []

        def seen(tracking: dict) -> None:
            if not counts or counts[-1] != len(tracking["rendered_clips"]):
                counts.append(len(tracking["rendered_clips"]))
            failed_seen.extend(tracking["failed_clips"])

        tracking = await track(svc.client(ws.key), job_id, every=seen)
        assert tracking["status"] == "completed", tracking
        assert counts[-1] == 3 and all(b - a == 1 for a, b in zip(counts, counts[1:], strict=False)), counts
        assert len(counts) >= 3, counts  # seen growing one by one, not all at the end
        assert tracking["failed_clips"] == [] and tracking["attempts"] == 2 and tracking["error"] is None
        assert tracking["credits_used"] == 6
        assert (await ws.client.get("/credits")).data["used"] == credits_before + 6
        if failed_seen:
            assert {f["clip_id"] for f in failed_seen} == {FAILS_ONCE}
        rendered = await clip_events(svc, job_id, "ClipRendered", "ClipRenderFailed")
        assert [(e["type"], e["clip_id"], e["attempt"]) for e in rendered] == [
            ("ClipRendered", "first", 1), ("ClipRenderFailed", FAILS_ONCE, 1), ("ClipRendered", "third", 1),
            ("ClipRendered", FAILS_ONCE, 2)]
        by_id = {c["clip_id"]: c for c in tracking["rendered_clips"]}
        assert set(by_id) == {"first", FAILS_ONCE, "third"}

        # The output: 9:16, the range's duration, captions burned at a caption time.
        first = await download(svc.http, by_id["first"]["url"], tmp_path / "first.mp4")
        probed = ffprobe(first)
        video = next(s for s in probed["streams"] if s["codec_type"] == "video")
        assert (video["width"], video["height"], video["codec_name"]) == (720, 1280, "h264")
        assert abs(float(probed["format"]["duration"]) * 1000 - 3_407) <= 50
        caption_at = 2.0  # 7.0 s into the video: Alice's first line is being spoken
        clip_frame = gray_frame(first, caption_at, w=720, h=1280)
        source_frame = gray_frame(Path(talk_source(svc, talk)), 5.0 + caption_at,
                                  "scale=720:1280:force_original_aspect_ratio=increase,crop=720:1280", w=720, h=1280)
        bottom = slice(720 * 900, 720 * 1200)  # where the captions are
        diff = sum(abs(a - b) for a, b in zip(clip_frame[bottom], source_frame[bottom], strict=True))
        assert diff / (720 * 300) > 2, "no captions burned at a caption time"
        staging = LocalStorage(storage_root(svc.settings)).root / STAGING
        leftovers = list(staging.glob(staging_label(UUID(job_id), "*")))
        assert not leftovers, "a render left staging files behind"
        thumb = await download(svc.http, by_id["first"]["thumbnail_url"], tmp_path / "first.jpg")
        assert thumb.read_bytes()[:2] == b"\xff\xd8"
        assert (ffprobe(thumb)["streams"][0]["width"], ffprobe(thumb)["streams"][0]["height"]) == (720, 1280)

        # Webhooks: one clip.generated per clip, then job.completed, each verified.
        await wait_until(lambda: len(receiver.hits) >= 4, 30, "four deliveries")
        await asyncio.sleep(0.5)
        # The workspace's other jobs may end while the hook is registered: only this job's count.
        bodies = [b for b in (verify(secret, hit) for hit in receiver.hits)
                  if job_id in (b["data"].get("job_id"), b["data"].get("id"))]
        types = Counter(b["type"] for b in bodies)
        assert types == {"clip.generated": 3, "job.completed": 1}, types
        generated = [b["data"] for b in bodies if b["type"] == "clip.generated"]
        assert sorted(d["clip_id"] for d in generated) == sorted(["first", FAILS_ONCE, "third"])
        assert all(d["job_id"] == job_id and d["environment"] == "production" for d in generated)
        again = await ws.client.post("/production/clips/render", {"article_id": article_id, "template_id": 1,
                                                                  "clips": clips})
        assert (again.data["job_id"], again.data["reused"], again.data["credits_charged"]) == (job_id, True, 0)
    finally:
        await receiver.stop()


async def test_a_face_following_render_records_the_path_it_chose_for_each_clip(svc, tmp_path_factory, tmp_path):
    """Template 5 on a video whose speaker (a real portrait) jumps from the left third to the right
    third, then leaves: the clip with the speaker follows the face (found again inside the
    downloaded clip), the clip without anybody falls back to the centre crop, and the tracking
    object, the events and clip.generated's payload say which path each clip took."""
    root = tmp_path_factory.mktemp("speaker")
    video = face_video(root, "speaker.mp4", 10, [("if(lt(t,3),100,780)", 160, 400, "lt(t,6)")])
    ws = await svc.workspace(credits=1_000)
    status, body = await upload(ws.client, video, captions=captions(root, 10))
    assert status == 201, body
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})
    job = await wait_job(ws.client, r.data["job_id"])
    assert job["status"] == "completed", job
    clips = [render_clip("speaker", 0, 6_000), render_clip("nobody", 6_500, 9_500)]
    r = await ws.client.post("/production/clips/render", {"article_id": job["article_id"], "template_id": 5,
                                                          "clips": clips})
    assert r.status == 202 and r.data["credits_charged"] == 4, r.body  # priced like every template render
    tracking = await track(ws.client, r.data["job_id"])
    assert tracking["status"] == "completed", tracking
    by_id = {c["clip_id"]: c for c in tracking["rendered_clips"]}
    followed, fallback = by_id["speaker"]["framing"], by_id["nobody"]["framing"]
    assert (followed["mode"], followed["faces"], followed["samples"], followed["reason"]) == ("follow_face", 1, 30,
                                                                                             None)
    assert followed["faces_seen_pct"] >= 90 and 2 <= followed["keyframes"] <= 30
    assert (fallback["mode"], fallback["faces"], fallback["faces_seen_pct"], fallback["keyframes"]) == (
        "centre_fallback", 0, 0, 0)
    assert "0 % of the sampled frames" in fallback["reason"]
    events = await clip_events(svc, r.data["job_id"], "ClipRendered")
    assert {e["clip_id"]: e["framing"] for e in events} == {"speaker": followed, "nobody": fallback}

    out = await download(svc.http, by_id["speaker"]["url"], tmp_path / "speaker.mp4")
    assert (by_id["speaker"]["width"], by_id["speaker"]["height"]) == (720, 1280)
    detector = FaceDetector()
    try:
        for at in (1.0, 5.5):  # before the jump, and once the window has followed it
            frame = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-ss", str(at), "-i", str(out), "-frames:v",
                                    "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-"], capture_output=True,
                                   check=True, timeout=30).stdout
            [face] = detector.faces(np.frombuffer(frame, np.uint8).reshape(1280, 720, 3))
            assert 0.25 <= face.x <= 0.75, (at, face)
    finally:
        detector.close()

    # A one-pixel video: no face to look for, the centre crop, and the clip is made all the same.
    pixel = root / "pixel.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=red:s=16x16:r=25:d=4", "-f", "lavfi", "-i",
         "sine=d=4", "-vf", "scale=1:1", "-c:v", "libx264", "-pix_fmt", "yuv444p", "-c:a", "aac", "-shortest",
         str(pixel)])
    status, body = await upload(ws.client, pixel, captions=captions(root, 4, "pixel.vtt"))
    assert status == 201 and (body["data"]["width"], body["data"]["height"]) == (1, 1), body
    job = await wait_job(ws.client, (await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})).data["job_id"])
    assert job["status"] == "completed", job
    r = await ws.client.post("/production/clips/render", {"article_id": job["article_id"], "template_id": 6,
                                                          "clips": [render_clip("pixel", 0, 3_000)]})
    tracking = await track(ws.client, r.data["job_id"])
    assert tracking["status"] == "completed", tracking
    [clip] = tracking["rendered_clips"]
    assert (clip["width"], clip["height"], clip["framing"]["mode"]) == (720, 720, "centre_fallback")
    assert "smaller than 32 pixels" in clip["framing"]["reason"] and clip["framing"]["samples"] == 0


async def test_render_refusals(svc, talk):
    ws, article_id = talk["ws"], talk["article_id"]
    base = {"article_id": article_id, "template_id": 1}
    ok = render_clip("a", 1000, 6000)
    for clips, field in [([], "body.clips"),
                         ([render_clip(f"c{k}", 0, 5000) for k in range(51)], "body.clips"),
                         ([{**ok, "id": "x" * 101}], "body.clips.0.id"),
                         ([{**ok, "title": "t" * 181}], "body.clips.0.title"),
                         ([{**ok, "thumbnail_title": "t" * 181}], "body.clips.0.thumbnail_title"),
                         ([{**ok, "rationale": "r" * 501}], "body.clips.0.rationale"),
                         ([{**ok, "start_ms": -1}], "body.clips.0.start_ms"),
                         ([{**ok, "end_ms": 0}], "body.clips.0.end_ms"),
                         ([{**ok, "duration_ms": 0}], "body.clips.0.duration_ms"),
                         ([{**ok, "viral_score": 101}], "body.clips.0.viral_score"),
                         ([{**ok, "end_ms": 900}], "body.clips.0.end_ms"),
                         ([{**ok, "end_ms": talk["duration_ms"] + 1, "duration_ms": talk["duration_ms"] - 999}],
                          "body.clips.0.end_ms"),
                         ([{**ok, "duration_ms": 5100}], "body.clips.0.duration_ms"),
                         ([ok, ok], "body.clips.1.id"),
                         ([{**ok, "colour": "red"}], "body.clips.0.colour"),
                         ([{k: v for k, v in ok.items() if k != "title"}], "body.clips.0.title")]:
        r = await ws.client.post("/production/clips/render", {**base, "clips": clips})
        assert r.status == 400, (field, r.body)
        assert field in [f["field"] for f in r.error["details"]["fields"]], (field, r.body)
    within_a_frame = await ws.client.post("/production/clips/render", {**base, "clips": [{**ok, "duration_ms": 5039}]})
    assert within_a_frame.status == 202, within_a_frame.body
    for body in ({**base, "article_id": 999_999, "clips": [ok]}, {**base, "template_id": 99, "clips": [ok]}):
        assert (await ws.client.post("/production/clips/render", body)).status == 404
    reader = ws.client.with_key(await svc.key(ws, ["production:read", "jobs:read"]))
    assert (await reader.post("/production/clips/render", {**base, "clips": [ok]})).status == 403


async def test_kill_minus_nine_of_the_worker_mid_render_resumes_and_renders_each_clip_once(svc, talk):
    ws, article_id = talk["ws"], talk["article_id"]
    clips = [render_clip(f"k{k}", 1000 + 5000 * k, 5800 + 5000 * k) for k in range(5)]
    r = await ws.client.post("/production/clips/render", {"article_id": article_id, "template_id": 3,
                                                          "clips": clips})
    assert r.status == 202, r.body
    job_id = r.data["job_id"]

    async def one_rendered() -> bool:
        return len(await clip_events(svc, job_id, "ClipRendered")) >= 1

    deadline = time.monotonic() + 60
    while not await one_rendered():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    worker = svc.procs["worker"]
    worker.kill()  # SIGKILL, in the middle of the render
    worker.wait()
    svc.procs["worker"] = spawn("worker", {**env_for(svc.settings), **svc.env}, svc.logs, label="worker-2")
    tracking = await track(ws.client, job_id, timeout=120)
    assert tracking["status"] == "completed", tracking
    rendered = await clip_events(svc, job_id, "ClipRendered")
    assert sorted(e["clip_id"] for e in rendered) == sorted(c["id"] for c in clips)  # each exactly once
    assert tracking["attempts"] == 2 and len(tracking["rendered_clips"]) == 5
    for clip in tracking["rendered_clips"]:
        assert (clip["width"], clip["height"]) == (720, 720)


async def test_cancellation_is_observed_between_clips_and_refunds_the_clips_not_rendered(svc, talk):
    ws, article_id = talk["ws"], talk["article_id"]
    clips = [render_clip(f"x{k}", 1000 + 5000 * k, 5000 + 5000 * k) for k in range(6)]
    credits_before = (await ws.client.get("/credits")).data["used"]
    r = await ws.client.post("/production/clips/render", {"article_id": article_id, "template_id": 4,
                                                          "clips": clips})
    assert r.status == 202 and r.data["credits_charged"] == 12, r.body
    job_id = r.data["job_id"]
    deadline = time.monotonic() + 60
    while not await clip_events(svc, job_id, "ClipRendered"):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    cancelled = await ws.client.delete(f"/jobs/{job_id}")
    assert cancelled.status == 200 and cancelled.data["status"] == "cancelled"
    tracking = await track(ws.client, job_id)
    assert tracking["status"] == "cancelled" and tracking["completed_at"]
    rendered = await clip_events(svc, job_id, "ClipRendered")
    await asyncio.sleep(2)  # a worker still rendering a clip stops there: its clip is not recorded
    assert await clip_events(svc, job_id, "ClipRendered") == rendered  # nothing rendered after the cancellation
    assert 1 <= len(rendered) < 6
    tracking = (await ws.client.get(f"/production/clips/jobs/{job_id}")).data
    assert tracking["credits_used"] == 2 * len(rendered)
    assert (await ws.client.get("/credits")).data["used"] == credits_before + 2 * len(rendered)


async def test_tracking_refusals(svc, talk):
    ws = talk["ws"]
    for job_id, status in [("a" * 15, 400), ("a" * 161, 400), ("x" * 36, 404), (str(uuid.uuid4()), 404)]:
        r = await ws.client.get(f"/production/clips/jobs/{job_id}")
        assert r.status == status, (job_id, r.body)
        if status == 400:
            assert r.error["details"]["fields"][0]["field"] == "path.jobId"
    r = await ws.client.post(f"/videos/{talk['video_id']}/clips", {"start_ms": 0, "end_ms": 1000})
    job_id = r.data["job_id"]
    assert (await ws.client.get(f"/production/clips/jobs/{job_id}")).status == 200
    other = await svc.workspace()
    assert (await other.client.get(f"/production/clips/jobs/{job_id}")).status == 404
    no_jobs = ws.client.with_key(await svc.key(ws, ["clips:create"]))
    assert (await no_jobs.get(f"/production/clips/jobs/{job_id}")).status == 403
    analysis = await ws.client.get("/jobs")
    analyze_job = next(j["id"] for j in analysis.data if j["type"] == "analyze_video")
    assert (await ws.client.get(f"/production/clips/jobs/{analyze_job}")).status == 404  # not a clip job

