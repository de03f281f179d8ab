"""The download suite of signed file URLs, run by ``tests/e2e/test_files.py`` (local disk) and
``tests/e2e/test_files_on_s3.py`` (S3): each of them defines the ``service`` fixture these tests
use and imports the suite whole.

Signed file URLs over real HTTP: a real media is uploaded, the video record's ``source_url`` is
fetched without a key (whole, by ranges, HEAD, conditional), and every token that grants nothing
(tampered, expired, another workspace's key swapped in, a file deleted since, a path traversal,
an unknown token) answers the same 404 envelope.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import socket
import time
import uuid

import aiohttp
import orjson
import pytest

from infra.file_urls import encode_token, issue_token, public_link, signing_key, verify
from infra.storage import storage_for
from tests.media_factory import run
from tests.support.api_videos import upload
from tests.support.service import start_api


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """Two seconds of a test pattern and a tone, as mp4 (a few tens of kilobytes)."""
    path = tmp_path_factory.mktemp("files") / "clip.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=320x240:r=25:d=2",
         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=2",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest",
         "-movflags", "+faststart", str(path)])
    return path


async def _video(service, ws, clip) -> dict:
    status, body = await upload(ws.client, clip)
    assert status == 201, body
    video_id = body["data"]["id"]
    deadline = time.monotonic() + 30
    while True:  # the detail reads the projection
        r = await ws.client.get(f"/videos/{video_id}")
        if r.status == 200:
            return r.data | {"upload_source_url": body["data"]["source_url"]}
        assert time.monotonic() < deadline, r.body
        await asyncio.sleep(0.1)


async def fetch(service, url: str, method: str = "GET", headers: dict | None = None):
    async with service.http.request(method, url, headers=headers or {}) as resp:
        return resp.status, resp.headers, await resp.read()


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


def key_of(settings, token: str) -> str:
    """The storage key a token seals (only the service key opens it)."""
    return verify(settings, token).storage_key


async def test_source_url_downloads_the_media_without_a_key(service, clip):
    ws = await service.workspace()
    video = await _video(service, ws, clip)
    data = clip.read_bytes()
    url = video["source_url"]
    origin = service.base.removesuffix("/v1")
    assert url.startswith(origin + "/v1/files/"), url  # absolute, on the API's own address by default
    assert video["upload_source_url"].startswith(origin + "/v1/files/")

    status, headers, body = await fetch(service, url)  # no Authorization header
    assert status == 200
    assert body == data
    assert headers["Content-Type"] == "video/mp4"
    assert headers["Content-Length"] == str(len(data))
    assert headers["Accept-Ranges"] == "bytes"
    assert headers["ETag"].startswith('"') and "X-Request-Id" in headers
    assert "X-RateLimit-Limit" not in headers  # public: no workspace window is spent

    status, head_headers, head_body = await fetch(service, url, "HEAD")
    assert (status, head_body) == (200, b"")
    assert head_headers["Content-Length"] == str(len(data))
    assert head_headers["Content-Type"] == "video/mp4" and head_headers["Accept-Ranges"] == "bytes"
    assert head_headers["ETag"] == headers["ETag"]

    status, _, body = await fetch(service, url, headers={"If-None-Match": headers["ETag"]})
    assert (status, body) == (304, b"")

    # The upload's answer carries one too, and it fetches the same bytes.
    status, _, body = await fetch(service, video["upload_source_url"])
    assert (status, body) == (200, data)


async def test_range_requests(service, clip):
    ws = await service.workspace()
    url = (await _video(service, ws, clip))["source_url"]
    data = clip.read_bytes()
    size = len(data)
    mid = size // 2
    cases = {
        "bytes=0-99": (0, 99),  # the first bytes
        f"bytes={mid}-{mid + 1000}": (mid, mid + 1000),  # the middle
        "bytes=-500": (size - 500, size - 1),  # a suffix
        f"bytes={size - 300}-": (size - 300, size - 1),  # open-ended
        f"bytes={size - 10}-{size + 5000}": (size - 10, size - 1),  # past the end: clamped
        "bytes=0-" + "9" * 30: (0, size - 1),  # an end of any length: clamped too
        "bytes=" + "0" * 30 + "5-9": (5, 9),  # leading zeros are still the number
        "bytes=-" + "9" * 30: (0, size - 1),  # a suffix longer than the file: all of it
    }
    for header, (start, end) in cases.items():
        status, headers, body = await fetch(service, url, headers={"Range": header})
        assert status == 206, header
        assert headers["Content-Range"] == f"bytes {start}-{end}/{size}", header
        assert headers["Content-Length"] == str(end - start + 1), header
        assert body == data[start:end + 1], header
        assert headers["Content-Type"] == "video/mp4"

    status, headers, body = await fetch(service, url, "HEAD", headers={"Range": "bytes=0-99"})
    assert (status, headers["Content-Range"], headers["Content-Length"], body) == (206, f"bytes 0-99/{size}", "100",
                                                                                    b"")

    for unsatisfiable in (f"bytes={size}-", f"bytes={size + 10}-{size + 20}", "bytes=-0", "bytes=" + "9" * 30 + "-"):
        status, headers, body = await fetch(service, url, headers={"Range": unsatisfiable})
        assert status == 416, unsatisfiable
        assert headers["Content-Range"] == f"bytes */{size}"
        assert orjson.loads(body)["error"]["code"] == "range_not_satisfiable"

    # If-Range naming another version: the whole file, not the range.
    status, _, body = await fetch(service, url, headers={"Range": "bytes=0-9", "If-Range": '"another"'})
    assert (status, body) == (200, data)


async def test_every_token_that_grants_nothing_is_the_same_404(service, clip):
    ws, other = await service.workspace(), await service.workspace()
    mine, theirs, doomed = (await _video(service, ws, clip), await _video(service, other, clip),
                            await _video(service, ws, clip))
    settings = service.settings
    origin = service.base.removesuffix("/v1") + "/v1/files/"
    token, their_token = token_of(mine["source_url"]), token_of(theirs["source_url"])
    my_key, their_key = key_of(settings, token), key_of(settings, their_token)
    key = signing_key(settings.secret_key)
    future = int(time.time()) + 3600
    middle = len(token) // 2

    # A file deleted since its URL was made.
    doomed_key = key_of(settings, token_of(doomed["source_url"]))
    storage_for(settings).delete(doomed_key)

    refused = {
        "tampered signature": token[:-2] + ("AA" if not token.endswith("AA") else "BB"),
        "tampered ciphertext": token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1:],
        "expired": issue_token(settings, ws.id, my_key, expires_in=-1),
        "spliced with another workspace's token": token[:middle] + their_token[middle:],
        "sealed with another service key": encode_token(signing_key("ab" * 32), ws.id, my_key, future),
        "a public link's token": public_link(settings, ws.id, my_key, mine["id"], 0).rsplit("/", 1)[1],
        "other workspace's key, signed for mine": encode_token(key, ws.id, their_key, future),
        "deleted file": token_of(doomed["source_url"]),
        "traversal, signed": encode_token(key, ws.id, f"videos/{ws.id}/../../../../etc/passwd", future),
        "staging file, signed": encode_token(key, ws.id, f".staging/{ws.id}/x", future),
        "traversal in the path": "..%2F..%2F..%2Fetc%2Fpasswd",
        "unknown": base64.urlsafe_b64encode(uuid.uuid4().bytes * 5).rstrip(b"=").decode(),
        "garbage": "not-a-token",
    }
    answers = {}
    for reason, bad in refused.items():
        for method in ("GET", "HEAD"):
            status, headers, body = await fetch(service, origin + bad, method)
            assert status == 404, (reason, method, status)
            if method == "GET":
                assert headers["Content-Type"].startswith("application/json"), reason
                answers[reason] = orjson.loads(body)
    assert all(answer == {"error": {"code": "not_found", "message": "file not found (the link may have expired)",
                                    "details": {}}} for answer in answers.values()), answers

    # The same URLs still work for what they grant: nothing above was refused for another reason.
    assert (await fetch(service, mine["source_url"]))[0] == 200
    assert (await fetch(service, theirs["source_url"]))[0] == 200


async def test_a_path_that_is_no_token_never_reaches_the_storage(service):
    async with aiohttp.ClientSession() as http:
        for raw in ("/v1/files/../../etc/passwd", "/v1/files/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
                    "/v1/files/..%2f..%2f..%2fetc%2fpasswd", "/v1/files/%00"):
            async with http.get(service.base.removesuffix("/v1") + raw,
                                skip_auto_headers=("Accept-Encoding",)) as resp:
                body = await resp.read()
                assert resp.status in (404, 401), (raw, resp.status)  # a normalised path may land on /v1/etc/...
                assert b"root:" not in body


async def test_a_large_file_streams_and_a_client_that_leaves_ends_it_cleanly(service):
    """64 MiB, stored under the workspace's folder and fetched whole (streamed, never buffered), then
    again by clients that hang up after the first chunk: the API logs no error and keeps serving."""
    ws = await service.workspace()
    storage = storage_for(service.settings)
    storage_key = f"exports/{ws.id}/big/archive.bin"
    block = bytes(range(256)) * 4096  # 1 MiB
    staged = storage.staging_path("test")
    with open(staged, "wb") as f:
        for _ in range(64):
            f.write(block)
    storage.commit(staged, storage_key)
    try:
        await _fetch_whole_then_leave(service, issue_token(service.settings, ws.id, storage_key), block)
    finally:
        storage.delete(storage_key)


async def _fetch_whole_then_leave(service, token: str, block: bytes) -> None:
    url = service.base.removesuffix("/v1") + "/v1/files/" + token

    async with service.http.get(url) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "application/octet-stream"
        assert resp.headers["Content-Length"] == str(64 * len(block))
        received, digest = 0, hashlib.sha256()
        async for chunk in resp.content.iter_chunked(1 << 20):
            received += len(chunk)
            digest.update(chunk)
    assert received == 64 * len(block)
    assert digest.hexdigest() == hashlib.sha256(block * 64).hexdigest()

    for _ in range(5):
        async with aiohttp.ClientSession() as http:  # its own connection, closed mid-body
            async with http.get(url) as resp:
                assert resp.status == 200
                await resp.content.read(65536)
    await asyncio.sleep(0.5)
    status, _, body = await fetch(service, url, headers={"Range": "bytes=-4"})
    assert (status, body) == (206, block[-4:])
    log = (service.logs / "api.log").read_text()
    assert "Traceback" not in log and "Error handling request" not in log and '"level":"error"' not in log, log[-3000:]


SEND_TIMEOUT_S = 2.0


@pytest.fixture(scope="module")
async def strict(service):
    """An API process of the same service with two downloads per address and a 2 s send timeout."""
    base, service.procs["api-strict"] = await start_api(
        service.settings, service.http, service.logs, name="api-strict",
        VAEO_FILE_DOWNLOADS_PER_ADDRESS="2", VAEO_FILE_SEND_TIMEOUT_S=str(SEND_TIMEOUT_S))
    return base.removesuffix("/v1")


def _stored(service, ws, name: str, mib: int) -> str:
    """A file of ``mib`` MiB stored under the workspace's folder; its storage key."""
    storage = storage_for(service.settings)
    key = f"exports/{ws.id}/big/{name}"
    staged = storage.staging_path("test")
    with open(staged, "wb") as f:
        for _ in range(mib):
            f.write(bytes(range(256)) * 4096)
    storage.commit(staged, key)
    return key


def _reader_that_reads_nothing(origin: str, path: str) -> socket.socket:
    """A raw connection with a tiny receive buffer that asks for ``path`` and then reads nothing
    but the start of the answer (the status line)."""
    host, port = origin.removeprefix("http://").split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    assert sock.recv(12) == b"HTTP/1.1 200"
    return sock


async def test_downloads_per_address_are_limited_and_a_third_gets_429(service, strict):
    ws = await service.workspace()
    key = _stored(service, ws, "limited.bin", 16)
    path = "/v1/files/" + issue_token(service.settings, ws.id, key)
    holders = []
    try:
        for _ in range(2):
            holders.append(await asyncio.to_thread(_reader_that_reads_nothing, strict, path))
        status, headers, body = await fetch(service, strict + path)
        assert status == 429, status
        error = orjson.loads(body)["error"]
        assert error["code"] == "too_many_downloads" and error["details"]["limit"] == 2, error
        assert int(headers["Retry-After"]) >= 1
        head_status, _, _ = await fetch(service, strict + path, "HEAD")  # no body, no slot
        assert head_status == 200
    finally:
        for sock in holders:
            sock.close()
    deadline = time.monotonic() + 20
    while True:  # the slots are given back when the holders leave
        status, _, body = await fetch(service, strict + path, headers={"Range": "bytes=-4"})
        if status == 206:
            break
        assert status == 429 and time.monotonic() < deadline, status
        await asyncio.sleep(0.2)
    storage_for(service.settings).delete(key)


async def test_a_client_that_reads_nothing_is_disconnected_after_the_send_timeout(service, strict):
    ws = await service.workspace()
    size_mib = 16  # more than the kernel's buffers of both ends hold
    key = _stored(service, ws, "stalled.bin", size_mib)
    path = "/v1/files/" + issue_token(service.settings, ws.id, key)
    sock = await asyncio.to_thread(_reader_that_reads_nothing, strict, path)
    try:
        await asyncio.sleep(SEND_TIMEOUT_S * 4)  # generous: the server acts after SEND_TIMEOUT_S

        def drain() -> tuple[int, str]:
            received = 0
            while True:
                try:
                    data = sock.recv(1 << 20)
                except ConnectionResetError:
                    return received, "reset"
                except TimeoutError:
                    return received, "still open"
                if not data:
                    return received, "closed"
                received += len(data)

        received, end = await asyncio.to_thread(drain)
        assert end in ("reset", "closed") and received < size_mib << 20, (received, end)
        status, _, body = await fetch(service, strict + path, headers={"Range": "bytes=-4"})  # the API still serves
        assert status == 206 and len(body) == 4
    finally:
        sock.close()
        storage_for(service.settings).delete(key)
    log = (service.logs / "api-strict.log").read_text()
    assert "Traceback" not in log and '"level":"error"' not in log, log[-3000:]
