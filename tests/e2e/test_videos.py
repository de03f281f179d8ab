"""Videos end to end on the real processes: upload, analyze, follow the job, read every analysis
route and the article; 402 when credits are short; premium without a provider is refused before any charge;
cancellation during analysis refunds and records nothing; corrupt uploads leave nothing behind.

The media is made here: red until 4.0 s then blue (a hard cut), a 440 Hz tone until 3.0 s, silence
until 5.0 s, then two espeak-ng voices reading the lines of a two-speaker WebVTT file whose cue
times are the real lengths of the synthesised lines.
"""

from __future__ import annotations

import asyncio
import sys
import time

import aiohttp
import orjson
import pytest

from infra.storage import LocalStorage
from tests.media_factory import CUT_S, SPEECH_START_S, TONE_END_S, make_interview, make_sound, run
from tests.support.api_videos import events_of, follow, storage_files, upload
from tests.support.service import start_api, stop_all
from tests.support.stack import ROOT, env_for

CUT_MS, TONE_END_MS, SPEECH_START_MS = int(CUT_S * 1000), int(TONE_END_S * 1000), int(SPEECH_START_S * 1000)

READS = ["claims", "entities", "intents", "moments", "narrative", "topics", "visual-elements", "audio-elements",
         "graph"]


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("videos")
    made = make_interview(root)
    # Ten minutes, tiny: long enough that a cancellation lands while the media passes run.
    long_video = root / "long.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=160x120:r=10:d=600",
         "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000:duration=600",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
         str(long_video)])
    truncated = root / "truncated.mp4"
    truncated.write_bytes(made["video"].read_bytes()[:3000])
    return made | {"long": long_video, "truncated": truncated}


# ------------------------------------------------------------------------------------ the whole path


async def test_upload_analyze_and_read_every_route(service, media):
    ws = await service.workspace(credits=100)
    other = await service.workspace()
    status, body = await upload(ws.client, media["video"], captions=media["vtt"], name="Fusion", language="fr",
                                description="deux voix")
    assert status == 201, body
    video = body["data"]
    vid = video["id"]
    assert (video["width"], video["height"], video["frame_rate"]) == (320, 240, 25.0)
    assert abs(video["duration_seconds"] * 1000 - media["duration_ms"]) <= 150
    assert video["has_transcript"] is True and video["status"] == "uploaded" and video["name"] == "Fusion"
    assert (await ws.client.get(f"/videos/{vid}")).data["description"] == "deux voix"
    listed = await ws.client.get("/videos", params={"limit": "1"})
    assert [v["id"] for v in listed.data] == [vid] and listed.body["pagination"]["has_more"] is False
    assert (await ws.client.get("/videos", params={"limit": "101"})).status == 400
    assert (await other.client.get(f"/videos/{vid}")).status == 404
    for read in READS:
        r = await ws.client.get(f"/videos/{vid}/{read}")
        assert r.status == 404 and r.error["code"] == "analysis_not_found" and "analyze" in r.error["message"]

    r = await ws.client.post(f"/videos/{vid}/analyze", {
        "outputs": {"article": True, "transcript": True, "chapters": True}, "writing_style": "interview",
        "analysis_mode": "behavioral", "quality_profile": "standard", "language": "fr"})
    assert r.status == 202, r.body
    assert r.data["type"] == "analyze_video" and r.data["status"] == "pending"
    # one credit for the analysis, one for the behavioural analysis of its picture (a started minute each)
    assert r.data["estimated_duration_seconds"] > 0 and r.data["credits_charged"] == 2
    refused = await other.client.post(f"/videos/{vid}/analyze", {})
    # Another workspace's video is missing, and the 404 names the id the client sent.
    assert refused.status == 404 and refused.error["details"]["id"] == str(vid), refused.body
    job, steps = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "completed", job
    assert job["progress"] == 100 and isinstance(job["article_id"], int)
    assert job["result"]["video_id"] == vid  # article_id has its own field
    assert job["result"]["transcript_source"] == {"kind": "captions"} and job["result"]["claims"] > 0
    assert "article_skipped" not in job["result"]
    assert (await ws.client.get("/credits")).data["used"] == 2

    reads = {}
    for read in READS:
        reply = await ws.client.get(f"/videos/{vid}/{read}")
        assert reply.status == 200, (read, reply.body)
        reads[read] = reply.data
        assert (await other.client.get(f"/videos/{vid}/{read}")).status == 404
    cues = media["cues"]
    assert reads["claims"]
    for claim in reads["claims"]:
        assert {"id", "text", "confidence", "startMs"} <= set(claim)
        assert any(a <= claim["startMs"] < b for a, b, _, _ in cues), claim
    assert any(e["name"] == "ITER" and e["mentions"] >= 2 for e in reads["entities"])
    assert all({"query", "relevance"} <= set(i) for i in reads["intents"])
    for m in reads["moments"]:
        assert 0 <= m["startMs"] < m["endMs"] <= media["duration_ms"] and "geoScore" in m
    assert [p["part"] for p in reads["narrative"]["parts"]] == ["hook", "context", "development", "conclusion"]
    speakers = {s["name"]: s for s in reads["narrative"]["speakers"]["speakers"]}
    for name in ("Alice", "Bob"):
        talk = sum(b - a for a, b, _, who in cues if who == name)
        assert abs(speakers[name]["talkTimeMs"] - talk) <= 5
    # the picture is red, then blue: the behavioural analysis says nobody is there, and measures nothing
    seen = {v["signal"]: v for v in reads["visual-elements"] if v["type"] == "behaviour"}
    assert seen["presence"]["description"] == "no person is visible", seen
    assert [(s["startMs"], s["value"]) for s in seen["gaze"]["timeline"]] == [(0, "not_visible")]
    assert abs(seen["gaze"]["timeline"][0]["endMs"] - media["duration_ms"]) < 200
    assert reads["graph"]["behavioral"]["unavailable"] == {}
    cuts = [v["startMs"] for v in reads["visual-elements"] if v.get("startMs", 0) > 0]
    assert any(abs(c - CUT_MS) <= 500 for c in cuts), reads["visual-elements"]
    silences = [a for a in reads["audio-elements"] if a.get("type") == "silence" or a.get("kind") == "silence"]
    assert any(a["startMs"] <= TONE_END_MS + 500 and a["endMs"] >= SPEECH_START_MS - 500 for a in silences), silences
    graph = reads["graph"]
    assert {"claims", "entities", "searchIntents", "clipMoments", "summary"} <= set(graph)
    assert isinstance(graph["summary"]["geoReadinessScore"], (int, float))
    assert graph["transcript"] and "chaptersText" in graph and "behavioral" in graph

    article = await ws.client.get(f"/articles/{job['article_id']}")
    assert article.status == 200, article.body
    assert article.data["title"] and article.data["has_content_graph"] is True
    assert article.data["writing_style"] == "interview" and article.data["markdown"].startswith("# ")
    assert article.body["_links"]["scores"] == f"/v1/articles/{job['article_id']}/scores"
    assert (await ws.client.get("/articles")).body["pagination"] == {"limit": 20, "offset": 0, "has_more": False}
    assert (await other.client.get(f"/articles/{job['article_id']}")).status == 404
    record = (await ws.client.get(f"/videos/{vid}")).data
    assert record["status"] == "analyzed" and record["analyzed_at"] and record["article_id"] == job["article_id"]
    types = [e["type"] for e in await events_of(service, ws.id, "VideoUploaded", "VideoGraphRecorded",
                                                     "VideoAnalyzed", "ArticleGenerated")]
    assert types == ["VideoUploaded", "VideoGraphRecorded", "VideoAnalyzed", "ArticleGenerated"]


async def test_402_when_credits_are_short_and_nothing_is_queued(service, media):
    ws = await service.workspace(credits=0)
    status, body = await upload(ws.client, media["video"], captions=media["vtt"])
    assert status == 201, body
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})
    assert r.status == 402 and r.error["code"] == "insufficient_credits", r.body
    assert r.error["details"] == {"required": 1, "balance": 0}
    assert await events_of(service, ws.id, "JobQueued", "CreditsCharged") == []
    sandbox = ws.client.with_key(await service.key(ws, ["*"], environment="sandbox"))
    status, body = await upload(sandbox, media["video"], captions=media["vtt"], language="en")
    r = await sandbox.post(f"/videos/{body['data']['id']}/analyze", {"outputs": {"article": False}})
    assert r.status == 202 and r.data["credits_charged"] == 0  # sandbox keys consume no credits
    [queued] = await events_of(service, ws.id, "JobQueued")
    params = orjson.loads(queued["data"])["params"] if isinstance(queued["data"], str) else queued["data"]["params"]
    assert params["language"] == "en"  # no language asked: the video's own, given at upload


async def test_premium_without_a_provider_is_refused_before_any_charge(service, media):
    """A premium analysis needs the language model provider: without one it is refused up front with
    the translation's refusal (503 provider_not_configured), nothing charged, no job queued."""
    ws = await service.workspace(credits=10)
    _, body = await upload(ws.client, media["video"], captions=media["vtt"])
    before = (await ws.client.get("/credits")).data
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {"quality_profile": "premium"})
    assert r.status == 503 and r.error["code"] == "provider_not_configured", r.body
    assert r.error["details"]["settings"] == ["VAEO_LLM_BASE_URL", "VAEO_LLM_MODEL"]
    assert (await ws.client.get("/credits")).data == before == {"balance": 10, "total": 10, "used": 0,
                                                                "plan": before["plan"]}
    assert await events_of(service, ws.id, "JobQueued", "CreditsCharged") == []
    assert (await ws.client.get("/jobs")).data == []


async def test_no_transcript_no_article(service, tmp_path):
    """Without captions, a text subtitle track or speech nothing said is known: the analysis
    completes with the media elements and says why there is no article (premium:
    tests/e2e/test_premium_articles)."""
    ws = await service.workspace(credits=10)
    tone = make_sound(tmp_path, "tone.mp4", "sine=frequency=440:sample_rate=16000", 12)
    status, body = await upload(ws.client, tone)  # no captions, no subtitle track, no speech
    assert status == 201 and body["data"]["has_transcript"] is False, body
    vid = body["data"]["id"]
    r = await ws.client.post(f"/videos/{vid}/analyze", {})
    assert r.status == 202 and r.data["credits_charged"] == 2, r.body  # the analysis and the speech recognition
    job, _ = await follow(ws.client, r.data["job_id"])
    assert job["status"] == "completed" and job["article_id"] is None, job
    assert "no transcript" in job["result"]["article_skipped"], job
    assert "no speech found in the audio" in job["result"]["article_skipped"]
    assert job["result"]["transcript_source"]["kind"] == "speech"
    assert job["result"]["transcript_source"]["windows"] == 0
    assert (await ws.client.get(f"/videos/{vid}/graph")).status == 200
    assert (await ws.client.get("/articles")).data == []
    assert await events_of(service, ws.id, "ArticleGenerated") == []
    assert (await ws.client.get("/credits")).data["used"] == 2  # the analysis and the audio decoded are priced


async def _until(fetch, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        rows = await fetch()
        if rows:
            return rows
        assert time.monotonic() < deadline, "nothing arrived"
        await asyncio.sleep(0.1)


async def test_cancellation_during_analysis_refunds_and_records_nothing(service, media):
    ws = await service.workspace(credits=100)
    status, body = await upload(ws.client, media["long"])
    assert status == 201, body
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})
    assert r.status == 202 and r.data["credits_charged"] == 20  # ten minutes, and their speech recognition
    job_id = r.data["job_id"]
    await follow(ws.client, job_id, until=("running", "completed", "failed", "cancelled"))
    cancelled = await ws.client.delete(f"/jobs/{job_id}")
    assert cancelled.status == 200, cancelled.body
    assert cancelled.data["status"] == "cancelled"
    await _until(lambda: events_of(service, ws.id, "CreditsRefunded"), timeout=120)
    job = (await ws.client.get(f"/jobs/{job_id}")).data
    assert job["status"] == "cancelled" and job["article_id"] is None
    assert await events_of(service, ws.id, "VideoAnalyzed", "ArticleGenerated", "JobCompleted") == []
    assert (await ws.client.get(f"/videos/{body['data']['id']}/graph")).status == 404


# ------------------------------------------------------------------------------------ refusals


async def test_corrupt_and_non_media_uploads_leave_nothing_behind(service, media):
    ws = await service.workspace()
    for path, allowed in ((media["truncated"], (400, 415)), (media["not_media"], (415,))):
        status, body = await upload(ws.client, path, captions=media["vtt"])
        assert status in allowed, body
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message", "details"}
        # ffprobe's words reach the client, the server's directories do not.
        assert str(LocalStorage.from_settings(service.settings).root) not in str(body), body
    status, body = await upload(ws.client, media["video"], captions=media["not_media"])
    assert status == 400 and body["error"]["details"]["field"] == "captions", body
    status, body = await upload(ws.client, media["video"], media_id="987654")
    assert status == 404 and body["error"]["details"]["id"] == "987654", body
    r = await ws.client.post("/videos", {"name": "x"})
    assert r.status == 415 and r.error["code"] == "unsupported_media_type"
    form = aiohttp.FormData(default_to_multipart=True)
    form.add_field("name", "no file")
    async with service.http.post(service.base + "/videos", data=form,
                                 headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        assert resp.status == 400
    assert await events_of(service, ws.id, "VideoUploaded") == []
    assert storage_files(service, ws.id) == []
    readonly = ws.client.with_key(await service.key(ws, ["videos:read"]))
    status, body = await upload(readonly, media["video"])
    assert status == 403 and body["error"]["details"]["required"] == "analyses:create"


async def test_upload_over_the_size_limit_is_413(service, media, tmp_path):
    base, proc = await start_api(service.settings, service.http, service.logs, name="api-small",
                                 VAEO_VIDEO_MAX_BYTES=str(media["video"].stat().st_size - 1))
    try:
        ws = await service.workspace()
        status, body = await upload(ws.client.__class__(service.http, base, ws.key), media["video"])
        assert status == 413 and body["error"]["code"] == "payload_too_large", body
        assert await events_of(service, ws.id, "VideoUploaded") == []
        assert storage_files(service, ws.id) == []
    finally:
        stop_all({"api-small": proc})


async def test_cli_videos_import(service, media):
    ws = await service.workspace()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", "videos", "import", str(media["video"]), "--captions",
        str(media["vtt"]), "--workspace", str(ws.id), "--name", "imported", env=env_for(service.settings),
        cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    video_id = orjson.loads(out)["video_id"]
    r = await _until_ok(ws.client, f"/videos/{video_id}")
    assert r.data["name"] == "imported" and r.data["has_transcript"] is True
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", "videos", "import", str(media["not_media"]), "--workspace", str(ws.id),
        env=env_for(service.settings), cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode == 1 and b"unsupported_media_type" in err


async def _until_ok(client, path: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while True:
        r = await client.get(path)
        if r.status == 200:
            return r
        assert time.monotonic() < deadline, r.body
        await asyncio.sleep(0.1)


# ------------------------------------------------------------------- a client generated from the contract


async def _until_done(get_job, client, job_id, timeout: float = 120):
    """Poll GET /jobs/{id} through the generated client until the job ends; the typed job."""
    deadline = time.monotonic() + timeout
    while True:
        r = await get_job.asyncio_detailed(str(job_id), client=client)
        assert r.status_code == 200 and type(r.parsed).__name__ == "JobResponse", r.content
        if r.parsed.data.status in ("completed", "failed", "cancelled"):
            return r.parsed.data
        assert time.monotonic() < deadline, r.parsed.data
        await asyncio.sleep(0.1)


async def test_a_client_generated_from_the_served_contract_runs_the_whole_path(service, media, tmp_path):
    """openapi-python-client generates a client from GET /v1/openapi.json as served, and that client
    alone uploads, analyses, follows the job, reads the graph, exports, cuts a clip and downloads it:
    every answer parsed into its generated type (the download's bytes too)."""
    from io import BytesIO

    from tests.openapi_client import generate, skipped

    served = await service.client().get("/openapi.json")
    pkg, printed = generate(served.body, tmp_path, "vaeo_e2e_client")
    assert not skipped(printed), printed
    models, types = (__import__(f"vaeo_e2e_client.{m}", fromlist=["*"]) for m in ("models", "types"))
    from vaeo_e2e_client.api.articles import export_article
    from vaeo_e2e_client.api.clips import create_video_clip
    from vaeo_e2e_client.api.files import download_file
    from vaeo_e2e_client.api.jobs import get_job
    from vaeo_e2e_client.api.videos import analyze_video, get_video_graph, upload_video

    ws = await service.workspace(credits=100)
    async with pkg.AuthenticatedClient(base_url=service.base, token=ws.key) as client, \
            pkg.Client(base_url=service.base) as anonymous:
        body = models.UploadVideoBody(
            file=types.File(payload=BytesIO(media["video"].read_bytes()), file_name="interview.mp4",
                            mime_type="video/mp4"),
            captions=types.File(payload=BytesIO(media["vtt"].read_bytes()), file_name="interview.vtt",
                                mime_type="text/vtt"),
            name="generated")
        r = await upload_video.asyncio_detailed(client=client, body=body)
        assert r.status_code == 201 and isinstance(r.parsed, models.VideoResponse), r.content
        video = r.parsed.data
        assert video.name == "generated" and video.has_transcript is True and video.status == "uploaded"

        r = await analyze_video.asyncio_detailed(str(video.id), client=client, body=models.AnalyzeVideo())
        assert r.status_code == 202 and isinstance(r.parsed, models.AnalyzeResponse), r.content
        job = await _until_done(get_job, client, r.parsed.data.job_id)
        assert job.status == "completed" and isinstance(job.article_id, int), job

        r = await get_video_graph.asyncio_detailed(str(video.id), client=client)
        assert r.status_code == 200 and isinstance(r.parsed, models.ObjectResponse), r.content
        graph = r.parsed.data.to_dict()
        assert {"claims", "entities", "summary"} <= set(graph) and graph["claims"]

        r = await export_article.asyncio_detailed(str(job.article_id), models.ExportArticleFormat.MARKDOWN,
                                                  client=client)
        assert r.status_code == 200 and isinstance(r.parsed, str) and r.parsed.startswith("# "), r.content

        start_ms, end_ms = 5_000, 7_000
        r = await create_video_clip.asyncio_detailed(str(video.id), client=client, body=models.VideoClipRequest(
            start_ms=start_ms, end_ms=end_ms, format_=models.VideoClipRequestFormat.MP4))
        assert r.status_code == 202 and isinstance(r.parsed, models.ClipJobCreatedResponse), r.content
        clip_job = await _until_done(get_job, client, r.parsed.data.job_id)
        assert clip_job.status == "completed", clip_job
        result = clip_job.result.to_dict()
        assert result["format"] == "mp4" and abs(result["duration_ms"] - (end_ms - start_ms)) <= 50

        token = result["url"].rsplit("/files/", 1)[1]
        r = await download_file.asyncio_detailed(token, client=anonymous)
        assert r.status_code == 200 and isinstance(r.parsed, types.File), r.content[:200]
        clip = r.parsed.payload.read()
        assert len(clip) == result["size_bytes"] and clip[4:8] == b"ftyp"  # an mp4 from its first box
        assert r.headers["Content-Type"] == "video/mp4"
        r = await download_file.asyncio_detailed(token, client=anonymous, range_="bytes=0-99")
        assert r.status_code == 206 and isinstance(r.parsed, types.File)
        assert r.parsed.payload.read() == clip[:100]
