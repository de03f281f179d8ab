"""Hostile media over HTTP against the real processes: only the uploaded bytes are ever read.

The corpus is made here with ffmpeg: HLS and concat playlists naming local files (a canary on the
host, and another workspace's stored upload, both carrying distinctive subtitle text), a playlist
inside an ``.mp4`` file name, one naming a missing relative segment, a huge declared duration,
truncated and zero-filled files, subtitle-only files, a 0-byte file. None is accepted, none gets
the canary's text back, no refusal quotes a path. A file whose header lies about its length is
priced by what the service measured; media longer than the maximum is refused 400; the stored
file is named by the service, whatever the client called it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import orjson
import pytest

from infra.storage import LocalStorage
from tests.media_factory import run
from tests.support.api_videos import events_of, follow, storage_files, upload
from tests.support.service import start_api, stop_all

CANARY = "Zanzibar quokka saxophone canary"  # the text that must never come back
HOST_CANARY = "Kilimanjaro narwhal bassoon canary"
REAL_S = 130  # the lying files really play 130 s: three started minutes


def _srt(text: str) -> str:
    return "".join(f"{k + 1}\n00:00:{2 * k:02d},000 --> 00:00:{2 * k + 1:02d},500\n{text} number {k}.\n\n"
                   for k in range(4))


def _mkv_with_duration(source: Path, target: Path, seconds: float) -> Path:
    """A copy of a Matroska file whose Segment Info Duration (ms, a big-endian double) says ``seconds``."""
    data = bytearray(source.read_bytes())
    at = data.find(b"\x44\x89\x88")  # the Duration element, 8-byte float
    assert at > 0
    data[at + 3:at + 11] = struct.pack(">d", seconds * 1000)
    target.write_bytes(bytes(data))
    return target


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("hostile")
    tiny = ["-f", "lavfi", "-i", "testsrc=s=64x48:r=5:d=10", "-f", "lavfi", "-i", "sine=sample_rate=8000:d=10"]
    enc = ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"]
    # The victims: a stored upload of another workspace and a file on the host, with subtitle text.
    for name, text in (("secret", CANARY), ("host_canary", HOST_CANARY)):
        (root / f"{name}.srt").write_text(_srt(text))
        run(["ffmpeg", "-nostdin", "-y", *tiny, "-i", str(root / f"{name}.srt"), "-map", "0", "-map", "1",
             "-map", "2", *enc, "-c:s", "srt", str(root / f"{name}.mkv")])
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=s=64x48:r=5:d={REAL_S}", "-f", "lavfi", "-i",
         f"sine=sample_rate=8000:d={REAL_S}", *enc, str(root / "long.mkv")])
    long = root / "long.mkv"
    run(["ffmpeg", "-nostdin", "-y", *tiny, *enc, "-movflags", "+faststart", str(root / "plain.mp4")])
    plain = (root / "plain.mp4").read_bytes()
    made = {
        "secret": root / "secret.mkv", "host_canary": root / "host_canary.mkv", "long": long,
        "lying_short": _mkv_with_duration(long, root / "lying_short.mkv", 0.5),
        "lying_long": _mkv_with_duration(long, root / "lying_long.mkv", 3 * 3600),
        "huge": _mkv_with_duration(long, root / "huge.mkv", 1e12),
        "plain": root / "plain.mp4",
    }
    # Damaged: cut in the middle (the index promises more), and the tail replaced by zeros (an
    # unfinished preallocated download).
    (root / "truncated.mkv").write_bytes(long.read_bytes()[:len(long.read_bytes()) // 2])
    (root / "zero_filled.mp4").write_bytes(plain[:len(plain) // 2] + bytes(len(plain) - len(plain) // 2))
    (root / "empty.mp4").write_bytes(b"")
    # Subtitles only: a Matroska holding one text track, and a bare SRT under a video's name.
    run(["ffmpeg", "-nostdin", "-y", "-i", str(root / "host_canary.srt"), "-c:s", "srt", str(root / "subs.mkv")])
    (root / "subs.mp4").write_text(_srt(HOST_CANARY))
    made |= {"truncated": root / "truncated.mkv", "zero_filled": root / "zero_filled.mp4",
             "empty": root / "empty.mp4", "subs_mkv": root / "subs.mkv", "subs_mp4": root / "subs.mp4",
             "host_srt": root / "host_canary.srt", "root": root}
    return made


def hls(*segments: str) -> str:
    return ("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n"
            + "".join(f"#EXTINF:3.0,\n{s}\n" for s in segments) + "#EXT-X-ENDLIST\n")


def concat(*files: str) -> str:
    return "ffconcat version 1.0\n" + "".join(f"file '{f}'\n" for f in files)


async def visible_after(ws, status: int, body) -> str:
    """Everything the uploader can read about the upload: if it was accepted, its analysis too
    (the transcript is asked for), which is where another file's subtitles came back."""
    seen = [orjson.dumps(body).decode()]
    if status == 201:
        vid = body["data"]["id"]
        r = await ws.client.post(f"/videos/{vid}/analyze", {"outputs": {"transcript": True}})
        seen.append(orjson.dumps(r.body).decode())
        if r.status == 202:
            job, _ = await follow(ws.client, r.data["job_id"], timeout=180)
            seen.append(orjson.dumps(job).decode())
            for read in ("graph", "claims"):
                seen.append(orjson.dumps((await ws.client.get(f"/videos/{vid}/{read}")).body).decode())
            if job.get("article_id"):
                seen.append(orjson.dumps((await ws.client.get(f"/articles/{job['article_id']}")).body).decode())
    return "\n".join(seen)


def assert_no_path(body, storage_root: Path) -> None:
    """A refusal's message and details quote no path at all: no slash, no backslash, no directory."""
    text = orjson.dumps(body["error"]).decode()
    assert "/" not in text and "\\\\" not in text, text  # not even a relative path
    assert str(storage_root) not in text and ".staging" not in text and ".part" not in text, text


async def test_playlists_and_non_media_are_refused_and_read_nothing(service, corpus, tmp_path):
    owner = await service.workspace(credits=100)
    attacker = await service.workspace(credits=1000)
    storage_root = LocalStorage.from_settings(service.settings).root

    # The victim: workspace A's upload, with its private subtitles, stored in the shared storage.
    status, body = await upload(owner.client, corpus["secret"])
    assert status == 201, body
    [victim] = [f for f in storage_files(service, owner.id) if f.name.startswith("source")]
    host = str(corpus["host_canary"])
    host_srt = str(corpus["host_srt"])

    staged_name = "missing-segment"
    attempts = {
        "hls naming another workspace's upload.m3u8": hls(str(victim)),
        "hls in an mp4 name.mp4": hls(str(victim), host),
        "hls of the host's subtitles.mp4": hls(host_srt),
        "hls with a missing relative segment.mp4": hls(f"{staged_name}/segment0.ts"),
        "concat naming local files.mp4": concat(str(victim), host),
        "concat as text.txt": concat(host),
    }
    for filename, content in attempts.items():
        path = tmp_path / filename
        path.write_text(content)
        status, body = await upload(attacker.client, path)
        seen = await visible_after(attacker, status, body)
        assert CANARY not in seen and HOST_CANARY not in seen, (filename, seen[:2000])
        assert status == 415 and body["error"]["code"] == "unsupported_media_type", (filename, body)
        assert_no_path(body, storage_root)

    for key, statuses in (("subs_mkv", (415,)), ("subs_mp4", (415,)), ("empty", (400,)), ("truncated", (400,)),
                          ("zero_filled", (400,)), ("huge", (400,))):
        status, body = await upload(attacker.client, corpus[key])
        seen = await visible_after(attacker, status, body)
        assert HOST_CANARY not in seen, (key, seen[:2000])
        assert status in statuses, (key, body)
        assert set(body["error"]) == {"code", "message", "details"}, body
        assert_no_path(body, storage_root)
    status, body = await upload(attacker.client, corpus["huge"])
    assert body["error"]["code"] == "media_too_long" and body["error"]["details"]["max_duration_seconds"] == 43200

    assert await events_of(service, attacker.id, "VideoUploaded") == []
    assert storage_files(service, attacker.id) == []
    assert not list((storage_root / ".staging").glob(f"{attacker.id}-*"))


async def test_a_header_lying_about_the_length_is_priced_by_the_measure(service, corpus):
    ws = await service.workspace(credits=1000)
    for key in ("lying_short", "lying_long"):
        status, body = await upload(ws.client, corpus[key])
        assert status == 201, body
        assert abs(body["data"]["duration_seconds"] - REAL_S) <= 1, (key, body)
        r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {"outputs": {"article": False}})
        # 130 s: three started minutes, and their speech
        assert r.status == 202 and r.data["credits_charged"] == 6, (key, r.body)
    job, _ = await follow(ws.client, r.data["job_id"], timeout=180)
    assert job["status"] == "completed", job
    audio = (await ws.client.get(f"/videos/{body['data']['id']}/audio-elements")).data
    assert max(a.get("endMs", 0) for a in audio) <= REAL_S * 1000 + 1000  # no more than what was priced


async def test_longer_than_the_maximum_is_refused_400_before_any_event(service, corpus):
    base, proc = await start_api(service.settings, service.http, service.logs, name="api-short-max",
                                 VAEO_MEDIA_MAX_DURATION_S="60")
    try:
        ws = await service.workspace()
        client = ws.client.__class__(service.http, base, ws.key)
        for key in ("long", "lying_short"):  # an honest header over the maximum, and one hiding it
            status, body = await upload(client, corpus[key])
            assert status == 400 and body["error"]["code"] == "media_too_long", (key, body)
            assert body["error"]["details"]["max_duration_seconds"] == 60
        status, body = await upload(client, corpus["plain"])
        assert status == 201, body  # 10 s is fine
        assert [e["type"] for e in await events_of(service, ws.id, "VideoUploaded")] == ["VideoUploaded"]
    finally:
        stop_all({"api-short-max": proc})


async def test_the_stored_file_is_named_by_the_service(service, corpus, tmp_path):
    ws = await service.workspace()
    disguised = tmp_path / "clip.m3u8"
    disguised.write_bytes(corpus["secret"].read_bytes())
    status, body = await upload(ws.client, disguised)
    assert status == 201, body
    assert body["data"]["name"] == "clip"
    names = sorted(f.name for f in storage_files(service, ws.id))
    # the accepted container's extension, not the client's; and the thumbnail the service made
    assert names == ["source.mkv", "thumbnail.jpg"], names
    [event] = await events_of(service, ws.id, "VideoUploaded")
    data = orjson.loads(event["data"]) if isinstance(event["data"], str) else event["data"]
    assert data["demuxer"] == "matroska" and data["storage_key"].endswith("/source.mkv")


async def test_a_video_recorded_before_the_demuxer_was_kept_is_probed_again_whitelisted(service, corpus):
    """Schema 1 of VideoUploaded has no demuxer: the worker identifies it again, among the accepted
    containers only, and the analysis reads the embedded track as before."""
    ws = await service.workspace(credits=10)
    status, body = await upload(ws.client, corpus["secret"])
    assert status == 201, body
    vid = body["data"]["id"]
    async with service.pool.acquire() as conn:
        await conn.execute("UPDATE events SET schema = 1, data = data - 'demuxer' "
                           "WHERE workspace_id = $1 AND type = 'VideoUploaded'", ws.id)
    r = await ws.client.post(f"/videos/{vid}/analyze", {"outputs": {"transcript": True, "article": False}})
    assert r.status == 202, r.body
    job, _ = await follow(ws.client, r.data["job_id"], timeout=180)
    assert job["status"] == "completed" and job["result"]["transcript_source"] == {"kind": "embedded"}, job
    transcript = (await ws.client.get(f"/videos/{vid}/graph")).data["transcript"]
    assert CANARY in " ".join(s["text"] for s in transcript)  # its own subtitles, of course
