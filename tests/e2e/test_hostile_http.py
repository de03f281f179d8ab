"""Hostile input at the HTTP edge, against the real API process: what an attacker sends before
any resource is touched. Each case is a 4xx in the error envelope with an ``X-Request-Id``, never
a 500 nor aiohttp's plain text; no credential is echoed or logged; stalled and cut bodies end;
a workspace's concurrent analyses are not refused by each other's charge; sandbox work is free
within a daily quota.

Raw requests go over a plain socket: the cases are bytes an HTTP client library would refuse to
send (a NUL in a header, bytes that are not UTF-8, a header line over 8 KiB).
"""

from __future__ import annotations

import asyncio
import gzip
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import orjson
import pytest

from infra.storage import STAGING, LocalStorage
from tests.media_factory import run
from tests.support.service import running_service

BODY_TIMEOUT_S = 1.0
SANDBOX_QUOTA = 3
SANDBOX_CLIP_MAX_S, SANDBOX_CLIP_SECONDS, SANDBOX_DECODED_SECONDS = 2, 5, 15


@pytest.fixture(scope="module")
async def edge(stack_settings, template_db, tmp_path_factory):
    """One API process with short body timeouts and a small sandbox quota; no worker (the jobs
    queued here need not run)."""
    logs = tmp_path_factory.mktemp("logs")
    async with running_service(stack_settings, template_db, logs, processes=("relay", "projector"), apis=1,
                               VAEO_API_BODY_TIMEOUT_S=str(BODY_TIMEOUT_S),
                               VAEO_API_UPLOAD_IDLE_TIMEOUT_S=str(BODY_TIMEOUT_S),
                               VAEO_SANDBOX_DAILY_JOBS=str(SANDBOX_QUOTA),
                               VAEO_SANDBOX_CLIP_MAX_S=str(SANDBOX_CLIP_MAX_S),
                               VAEO_SANDBOX_DAILY_CLIP_SECONDS=str(SANDBOX_CLIP_SECONDS),
                               VAEO_SANDBOX_DAILY_DECODED_SECONDS=str(SANDBOX_DECODED_SECONDS)) as svc:
        yield svc


def _tone(folder: Path, seconds: int) -> Path:
    path = folder / f"tone-{seconds}s.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=8000:duration={seconds}",
         str(path)])
    return path


@pytest.fixture(scope="module")
def long_tone(tmp_path_factory) -> Path:
    return _tone(tmp_path_factory.mktemp("media"), 10)


@pytest.fixture(scope="module")
def tone(tmp_path_factory) -> Path:
    return _tone(tmp_path_factory.mktemp("media"), 1)


def _address(svc) -> tuple[str, int]:
    url = urlsplit(svc.base)
    return url.hostname, url.port


def send_raw(svc, data: bytes, *, timeout: float = 10.0, close_after_send: bool = False) -> bytes:
    """Send bytes, read until the server closes (or ``timeout``)."""
    with socket.create_connection(_address(svc), timeout=timeout) as sock:
        sock.sendall(data)
        if close_after_send:
            return b""
        out = b""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            out += chunk
            if b"\r\n\r\n" in out and _complete(out):
                break
        return out


def _complete(response: bytes) -> bool:
    head, _, body = response.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":", 1)[1])
    return False


def parse(response: bytes) -> tuple[int, dict[str, str], dict]:
    head, _, body = response.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    pairs = (line.decode("latin-1").partition(":") for line in lines[1:])
    headers = {k.strip().lower(): v.strip() for k, _, v in pairs}
    return status, headers, orjson.loads(body)


def get(path: str, *headers: bytes) -> bytes:
    return b"GET " + path.encode() + b" HTTP/1.1\r\nHost: t\r\n" + b"".join(h + b"\r\n" for h in headers) + \
        b"Connection: close\r\n\r\n"


def multipart(key: str, part_headers: bytes, content: bytes = b"x") -> bytes:
    boundary = b"----hostile"
    body = (b"--" + boundary + b"\r\n" + part_headers + b"\r\n\r\n" + content + b"\r\n--" + boundary + b"--\r\n")
    return (b"POST /v1/videos HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + key.encode() +
            b"\r\nContent-Type: multipart/form-data; boundary=" + boundary + b"\r\nContent-Length: " +
            str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)


# ------------------------------------------------------------------- credentials and parsing


async def test_malformed_requests_answer_the_envelope_and_never_echo_or_log_the_key(edge):
    ws = await edge.workspace()
    key = ws.key.encode()
    cases = {
        "NUL in Authorization": get("/v1/me", b"Authorization: Bearer " + key + b"\x00x"),
        "header line over 8 KiB": get("/v1/me", b"Authorization: Bearer " + key + b"a" * 9000),
        "key with bytes that are not UTF-8": get("/v1/me", b"Authorization: Bearer " + key + b"\xe9\xff"),
        "two Authorization headers": get("/v1/me", b"Authorization: Bearer " + key, b"Authorization: Bearer " + key),
        "NUL in a part's file name": multipart(ws.key, b'Content-Disposition: form-data; name="file"; '
                                                       b'filename="a\x00' + key + b'.mp4"'),
        "part header line over 8 KiB": multipart(ws.key, b'Content-Disposition: form-data; name="file"; '
                                                         b'filename="' + key * 200 + b'.mp4"'),
        "part name not UTF-8": multipart(ws.key, b'Content-Disposition: form-data; name="f\xffile"; filename="a"'),
        "Content-Encoding not ASCII": (b"POST /v1/medias HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + key +
                                       b"\r\nContent-Encoding: g\xe9zip\r\nContent-Type: application/json\r\n"
                                       b"Content-Length: 2\r\nConnection: close\r\n\r\n{}"),
    }
    expected = {"NUL in Authorization": 400, "header line over 8 KiB": 400, "key with bytes that are not UTF-8": 401,
                "two Authorization headers": 400, "NUL in a part's file name": 400,
                "part header line over 8 KiB": 400, "part name not UTF-8": 400, "Content-Encoding not ASCII": 415}
    for name, data in cases.items():
        response = await asyncio.to_thread(send_raw, edge, data)
        status, headers, body = parse(response)
        assert status == expected[name], (name, response[:400])
        assert set(body) == {"error"} and {"code", "message", "details"} <= set(body["error"]), name
        assert "x-request-id" in headers, name
        assert key not in response and key[13:] not in response, name
    await asyncio.sleep(0.5)  # let the process flush its log lines
    for log in edge.logs.iterdir():
        text = log.read_bytes()
        assert key[13:] not in text, f"{log.name} holds the key"


async def test_unicode_digits_are_not_ids(edge):
    ws = await edge.workspace()
    for path in ("/videos/%C2%B2", "/videos/%E2%91%A0", "/articles/%C2%B2", "/videos/%D9%A1%D9%A2/claims",
                 "/articles/%D9%A1%D9%A2"):
        reply = await ws.client.get(path)
        assert reply.status == 404, (path, reply.body)
        assert reply.error["details"]["id"] not in ("12", "2", "1"), path


# ---------------------------------------------------------------------------- strict values


async def test_lax_types_and_invisible_names_are_refused(edge):
    ws = await edge.workspace()
    c = ws.client
    for bad in ("1", True, 1.5):
        reply = await c.post("/keys", {"name": "k", "scopes": ["videos:read"], "expiresInDays": bad})
        assert reply.status == 400 and reply.error["details"]["fields"][0]["field"] == "body.expiresInDays", bad
    # An integral number is an integer, as JSON Schema says; a string or a boolean is not.
    assert (await c.post("/keys", {"name": "k", "scopes": ["videos:read"], "expiresInDays": 30.0})).status == 201
    for bad in ("+5", "1_0", " 5", "5.0", "٥"):
        reply = await c.get("/videos", params={"limit": bad})
        assert reply.status == 400 and reply.error["details"]["fields"][0]["field"] == "query.limit", bad
    assert (await c.get("/videos", params={"limit": "5"})).status == 200
    reply = await c.post("/videos/1/analyze", {"outputs": {"article": "yes"}})
    assert reply.status == 400 and reply.error["details"]["fields"][0]["field"] == "body.outputs.article"
    reply = await c.post("/medias", {"name": "ok", "colour": "red"})
    assert reply.status == 400 and reply.error["details"]["fields"][0]["field"] == "body.colour"
    for invisible in ("\u200b\u200b", "\u3164", "\u2800", "\u00ad", "\u202e\u200d", "\u0301", "a\u0007b"):
        reply = await c.post("/medias", {"name": invisible})
        assert reply.status == 400 and reply.error["details"]["fields"][0]["field"] == "body.name", repr(invisible)
        reply = await c.post("/keys", {"name": invisible, "scopes": ["videos:read"]})
        assert reply.status == 400, repr(invisible)
    assert (await c.post("/medias", {"name": "Émission n°\u00a03 \u2014 l\u2019été"})).status == 200


async def test_a_long_file_name_gives_a_bounded_video_name(edge, tone):
    ws = await edge.workspace()
    form = aiohttp.FormData()
    form.add_field("file", tone.read_bytes(), filename="n" * 5000 + ".wav", content_type="audio/wav")
    async with edge.http.post(edge.base + "/videos", data=form,
                              headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        body = await resp.json()
        assert resp.status == 201, body
    assert 1 <= len(body["data"]["name"]) <= 255


# ----------------------------------------------------------------------- bodies that amplify


async def test_content_coded_uploads_are_refused_and_json_is_bounded_decoded(edge, tone):
    ws = await edge.workspace()
    staging = LocalStorage.from_settings(edge.settings).root / STAGING
    before = set(staging.iterdir()) if staging.is_dir() else set()
    boundary = "zz"
    # A real WAV file followed by 20 MB of zeros (a WAV reader stops at its data chunk): media a
    # prober accepts, in a request of less than 100 KB.
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"z.wav\"\r\n\r\n".encode()
            + tone.read_bytes() + b"\0" * 20_000_000 + f"\r\n--{boundary}--\r\n".encode())
    packed = gzip.compress(body)
    assert len(packed) < 100_000
    reply = await ws.client.call("POST", "/videos", data=packed, headers={
        "Content-Type": f"multipart/form-data; boundary={boundary}", "Content-Encoding": "gzip"})
    assert reply.status == 415 and reply.error["code"] == "unsupported_media_type"
    after = set(staging.iterdir()) if staging.is_dir() else set()
    assert not [p for p in after - before if p.name.startswith(str(ws.id))]
    # A JSON body is bounded after decoding: 2 MiB of JSON in 2 KiB of gzip is a 413.
    big = gzip.compress(orjson.dumps({"name": "x" * 2_097_152}))
    reply = await ws.client.call("POST", "/medias", data=big, headers={
        "Content-Type": "application/json", "Content-Encoding": "gzip"})
    assert reply.status == 413, reply.body


# --------------------------------------------------------------------- stalled and cut bodies


def _stall(svc, head: bytes, partial_body: bytes) -> tuple[float, float, bytes]:
    """Send the head and part of the body, then nothing: how long until the server answers, and
    until it closes the connection."""
    with socket.create_connection(_address(svc), timeout=30) as sock:
        sock.sendall(head + partial_body)
        started = time.monotonic()
        answered = None
        out = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return answered, time.monotonic() - started, out
            answered = answered or time.monotonic() - started
            out += chunk


async def test_stalled_bodies_time_out_and_leave_no_staging_file(edge):
    ws = await edge.workspace()
    key = ws.key.encode()
    head = (b"POST /v1/medias HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + key +
            b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
    answered, closed, response = await asyncio.to_thread(_stall, edge, head, b'{"name": "sta')
    status, _, body = parse(response)
    assert status == 408 and body["error"]["code"] == "request_timeout"
    print(f"answered after {answered:.2f} s, closed after {closed:.2f} s")
    assert answered < BODY_TIMEOUT_S + 5 and closed < BODY_TIMEOUT_S + 8  # it closed by itself, the client never did

    boundary = b"st"
    upload_head = (b"POST /v1/videos HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + key +
                   b"\r\nContent-Type: multipart/form-data; boundary=" + boundary +
                   b"\r\nContent-Length: 1000000\r\n\r\n")
    part = (b"--" + boundary + b'\r\nContent-Disposition: form-data; name="file"; filename="s.mp4"\r\n\r\n'
            + b"\1" * 5000)
    answered, closed, response = await asyncio.to_thread(_stall, edge, upload_head, part)
    print(f"upload answered after {answered:.2f} s, closed after {closed:.2f} s")
    assert answered < BODY_TIMEOUT_S + 5 and closed < BODY_TIMEOUT_S + 8
    status, _, body = parse(response)
    assert status == 408 and body["error"]["code"] == "request_timeout"
    staging = LocalStorage.from_settings(edge.settings).root / STAGING
    assert not [p for p in staging.iterdir() if p.name.startswith(str(ws.id))]


def test_an_upload_trickled_below_the_minimum_rate_is_refused():
    from services.api.uploads import UploadClock

    now = [0.0]
    clock = UploadClock(idle_s=30, min_rate=1000, now=lambda: now[0])
    for _ in range(59):  # 100 bytes a second: fine during the first minute
        now[0] += 1
        clock.count(100)
    now[0] += 2
    with pytest.raises(Exception) as refused:
        clock.count(100)
    assert getattr(refused.value, "status", None) == 408
    fast = UploadClock(idle_s=30, min_rate=1000, now=lambda: now[0])
    for _ in range(120):
        now[0] += 1
        fast.count(5000)  # well above the rate: never refused


async def test_a_client_that_disconnects_mid_body_is_an_abort_not_an_outage(edge, tone):
    ws = await edge.workspace()
    key = ws.key.encode()
    json_head = (b"POST /v1/medias HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + key +
                 b"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    boundary = b"cut"
    upload_head = (b"POST /v1/videos HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + key +
                   b"\r\nContent-Type: multipart/form-data; boundary=" + boundary +
                   b"\r\nContent-Length: 10000000\r\n\r\n" + b"--" + boundary +
                   b'\r\nContent-Disposition: form-data; name="file"; filename="c.wav"\r\n\r\n' + tone.read_bytes())
    for data in (json_head + b'{"name": "cut', upload_head):
        await asyncio.to_thread(send_raw, edge, data, close_after_send=True)
    await asyncio.sleep(1.0)
    async with edge.http.get(edge.base.removesuffix("/v1") + "/metrics") as resp:
        metrics = await resp.text()
    aborted = [line for line in metrics.splitlines() if line.startswith("vaeo_http_requests_total")
               and 'status="499"' in line]
    assert aborted, metrics[:2000]
    assert not [line for line in metrics.splitlines() if 'status="503"' in line]
    log = (edge.logs / "api.log").read_text()
    assert "unreachable" not in log
    staging = LocalStorage.from_settings(edge.settings).root / STAGING
    assert not [p for p in staging.iterdir() if p.name.startswith(str(ws.id))]


# ------------------------------------------------------------------------- charges and quota


async def _upload(svc, key: str, path: Path) -> int:
    form = aiohttp.FormData()
    form.add_field("file", path.read_bytes(), filename=path.name, content_type="audio/wav")
    async with svc.http.post(svc.base + "/videos", data=form, headers={"Authorization": f"Bearer {key}"}) as resp:
        body = await resp.json()
        assert resp.status == 201, body
        return body["data"]["id"]


async def test_concurrent_analyses_of_one_workspace_are_all_charged_once(edge, tone):
    ws = await edge.workspace(credits=1000)
    videos = await asyncio.gather(*(_upload(edge, ws.key, tone) for _ in range(30)))
    replies = await asyncio.gather(*(ws.client.post(f"/videos/{v}/analyze", {}) for v in videos))
    assert [r.status for r in replies] == [202] * 30, [r.body for r in replies if r.status != 202][:3]
    async with edge.pool.acquire() as conn:
        charges = await conn.fetchval(
            "SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'CreditsCharged'", ws.id)
    assert charges == 30
    balance = (await ws.client.get("/credits")).data
    assert balance["used"] == 60, balance  # each: one minute, and one of speech (the tone has no captions)


async def test_sandbox_work_is_free_within_a_daily_quota(edge, tone):
    ws = await edge.workspace(credits=1000)
    sandbox = ws.client.with_key(await edge.key(ws, ["*"], environment="sandbox"))
    video = await _upload(edge, sandbox.key, tone)
    replies = await asyncio.gather(*(sandbox.post(f"/videos/{video}/analyze", {}) for _ in range(SANDBOX_QUOTA + 4)))
    statuses = sorted(r.status for r in replies)
    assert statuses == [202] * SANDBOX_QUOTA + [429] * 4, statuses
    refused = next(r for r in replies if r.status == 429)
    assert refused.error["code"] == "sandbox_quota_exceeded"
    assert refused.error["details"] == {"limit": "jobs", "quota": SANDBOX_QUOTA}
    assert all(r.data["credits_charged"] == 0 for r in replies if r.status == 202)
    # Production keeps its own account: charged, never counted against the sandbox quota.
    produced = await _upload(edge, ws.key, tone)
    assert (await ws.client.post(f"/videos/{produced}/analyze", {})).status == 202
    async with edge.pool.acquire() as conn:
        queued = await conn.fetchval("SELECT count(*) FROM events WHERE workspace_id = $1 AND type = 'JobQueued'",
                                     ws.id)
    assert queued == SANDBOX_QUOTA + 1


async def test_sandbox_work_is_bounded_by_size_not_only_by_count(edge, long_tone):
    ws = await edge.workspace(credits=0)
    sandbox = ws.client.with_key(await edge.key(ws, ["*"], environment="sandbox"))
    video = await _upload(edge, sandbox.key, long_tone)  # 10 s
    # One clip longer than a sandbox clip may last: 400, whatever the day's budget.
    too_long = await sandbox.post(f"/videos/{video}/clips", {"start_ms": 0, "end_ms": 3000, "format": "mp3"})
    assert too_long.status == 400, too_long.body
    assert too_long.error["details"]["fields"][0]["rule"] == "too_long"
    assert too_long.error["details"]["max_ms"] == SANDBOX_CLIP_MAX_S * 1000
    # Clips within the maximum add up to the day's clip seconds (5): the third 2 s clip passes it.
    replies = [await sandbox.post(f"/videos/{video}/clips", {"start_ms": k * 2000, "end_ms": k * 2000 + 2000,
                                                              "format": "mp3"}) for k in range(3)]
    assert [r.status for r in replies] == [202, 202, 429], [r.body for r in replies]
    assert replies[2].error["code"] == "sandbox_quota_exceeded"
    assert replies[2].error["details"] == {"limit": "clip_seconds", "quota": SANDBOX_CLIP_SECONDS}
    # A production key of the same workspace is not bounded by the sandbox's size (it pays: 402 here).
    paid = await ws.client.post(f"/videos/{await _upload(edge, ws.key, long_tone)}/clips",
                                {"start_ms": 0, "end_ms": 3000, "format": "mp3"})
    assert paid.status == 402, paid.body


async def test_sandbox_analyses_are_bounded_by_the_media_they_decode(edge, long_tone):
    ws = await edge.workspace(credits=0)
    sandbox = ws.client.with_key(await edge.key(ws, ["*"], environment="sandbox"))
    video = await _upload(edge, sandbox.key, long_tone)  # 10 s decoded per analysis; 15 s a day
    first = await sandbox.post(f"/videos/{video}/analyze", {})
    second = await sandbox.post(f"/videos/{video}/analyze", {})
    assert (first.status, second.status) == (202, 429), (first.body, second.body)
    assert second.error["details"] == {"limit": "decoded_seconds", "quota": SANDBOX_DECODED_SECONDS}
