"""The service's processes on the S3 backend (the test stack's real SeaweedFS), as two machines
would run them: the API and the worker each with a local read cache of its own and a local storage
directory that must stay empty. A real talk (ffmpeg and espeak-ng) is uploaded with its captions,
analysed, cut into a clip; the clip comes back through its signed URL with ranges, the article's
schema export links the video and its poster, and every file is an object of the bucket. Then an
API whose object store is unreachable answers 503 with the error envelope, naming neither the
store's address nor its secret."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from infra.storage_s3 import S3Storage
from tests.media_factory import make_interview
from tests.support.api_videos import upload
from tests.support.clip_media import wait_job
from tests.support.service import running_service, spawn, start_api
from tests.support.stack import BUILD_TIMEOUT, env_for, s3_env, s3_settings

pytestmark = BUILD_TIMEOUT


def first_value(document, name: str):
    """The first value of property ``name`` anywhere in a JSON document (depth first)."""
    if isinstance(document, dict):
        if name in document:
            found = document[name]
            return found[0] if isinstance(found, list) else found
        document = list(document.values())
    for item in document if isinstance(document, list) else ():
        found = first_value(item, name)
        if found is not None:
            return found
    return None


def files_under(root: Path) -> list[Path]:
    return [Path(folder) / name for folder, _, names in os.walk(root) for name in names]


@pytest.fixture(scope="module")
async def svc(object_store, template_db, tmp_path_factory):
    root = tmp_path_factory.mktemp("s3")
    store_settings = s3_settings(object_store, root / "lister-cache")
    machines = {name: {"VAEO_MEDIA_CACHE_DIR": str(root / f"{name}-cache"),
                       "VAEO_STORAGE_DIR": str(root / f"{name}-disk")} for name in ("api", "worker")}
    async with running_service(object_store, template_db, tmp_path_factory.mktemp("logs"),
                               processes=("relay", "projector"), apis=1, **s3_env(store_settings),
                               **machines["api"]) as service:
        env = dict(env_for(service.settings), **s3_env(store_settings), **machines["worker"])
        service.procs["worker"] = spawn("worker", env, service.logs)
        service.root = root  # type: ignore[attr-defined]
        service.bucket = S3Storage.from_settings(store_settings)  # type: ignore[attr-defined]
        service.store_settings = store_settings  # type: ignore[attr-defined]
        yield service
        service.bucket.close()


async def test_a_talk_lives_in_the_bucket_and_is_served_from_it(svc, tmp_path):
    media = make_interview(tmp_path)
    ws = await svc.workspace(credits=10_000)
    status, body = await upload(ws.client, media["video"], captions=media["vtt"])
    assert status == 201, body
    video_id = body["data"]["id"]
    r = await ws.client.post(f"/videos/{video_id}/analyze", {})
    assert r.status == 202, r.body
    analysed = await wait_job(ws.client, r.data["job_id"])
    assert analysed["status"] == "completed", analysed
    r = await ws.client.post(f"/videos/{video_id}/clips", {"start_ms": 1_000, "end_ms": 4_000, "format": "mp4"})
    assert r.status == 202, r.body
    cut = await wait_job(ws.client, r.data["job_id"])
    assert cut["status"] == "completed", cut

    # the clip through its signed URL: whole, a range (206), a range past its end (416, the envelope)
    url, size = cut["result"]["url"], cut["result"]["size_bytes"]
    async with svc.http.get(url) as resp:
        assert resp.status == 200 and resp.headers["Accept-Ranges"] == "bytes"
        whole, etag = await resp.read(), resp.headers["ETag"]
    assert len(whole) == size and whole[4:8] == b"ftyp"
    async with svc.http.get(url, headers={"Range": "bytes=100-1123"}) as resp:
        assert resp.status == 206 and resp.headers["Content-Range"] == f"bytes 100-1123/{size}"
        assert await resp.read() == whole[100:1124] and resp.headers["ETag"] == etag
    async with svc.http.get(url, headers={"Range": "bytes=-50"}) as resp:
        assert resp.status == 206 and await resp.read() == whole[-50:]
    async with svc.http.get(url, headers={"Range": f"bytes={size}-"}) as resp:
        assert resp.status == 416 and resp.headers["Content-Range"] == f"bytes */{size}"
        assert (await resp.json())["error"]["code"] == "range_not_satisfiable"
    async with svc.http.get(url, headers={"If-None-Match": etag}) as resp:
        assert resp.status == 304

    # the article's schema export links the video and its poster, both served from the bucket
    schema = await ws.client.get(f"/articles/{analysed['article_id']}/export/schema")
    assert schema.status == 200, schema.body
    async with svc.http.get(first_value(schema.body, "thumbnailUrl")) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"] == "image/jpeg"
        assert (await resp.read())[:2] == b"\xff\xd8"
    async with svc.http.get(first_value(schema.body, "contentUrl"), headers={"Range": "bytes=0-99"}) as resp:
        assert resp.status == 206 and await resp.read() == media["video"].read_bytes()[:100]

    # every file is an object of the bucket
    keys = set(svc.bucket.list_keys(f"videos/{ws.id}/")) | set(svc.bucket.list_keys(f"clips/{ws.id}/"))
    folder = f"videos/{ws.id}/{video_id}"
    assert {f"{folder}/source.mp4", f"{folder}/captions.vtt", f"{folder}/thumbnail.jpg"} <= keys, keys
    clip_keys = [k for k in keys if k.startswith(f"clips/{ws.id}/{r.data['job_id']}/")]
    assert len(clip_keys) == 1 and clip_keys[0].endswith(".mp4"), keys
    assert svc.bucket.read_range(f"{folder}/source.mp4", 0, 1 << 30) == media["video"].read_bytes()

    # nothing of the media on either machine's disk but their caches; the worker fetched the
    # source from the bucket (another machine's upload), and no staging file is left behind
    root: Path = svc.root
    for machine in ("api", "worker"):
        assert files_under(root / f"{machine}-disk") == [], machine
        assert files_under(root / f"{machine}-cache" / "staging") == [], machine
        assert files_under(root / f"{machine}-cache" / "tmp") == [], machine
    source = media["video"].read_bytes()
    assert any(p.read_bytes() == source for p in files_under(root / "worker-cache" / "objects"))
    secret = svc.store_settings.s3_secret_access_key.get_secret_value()
    for log in svc.logs.glob("*.log"):  # the store's secret in no process' log
        assert secret not in log.read_text(errors="replace"), log.name
    for key in keys:  # the tests' bucket outlives the run
        svc.bucket.delete(key)


async def test_an_unreachable_store_answers_503_with_the_envelope(svc, tmp_path):
    ws = await svc.workspace(credits=1_000)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    endpoint = f"http://127.0.0.1:{closed}"
    env = dict(s3_env(svc.store_settings), VAEO_S3_ENDPOINT_URL=endpoint, VAEO_S3_TIMEOUT_S="2",
               VAEO_S3_MAX_ATTEMPTS="1", VAEO_MEDIA_CACHE_DIR=str(tmp_path / "cache"),
               VAEO_STORAGE_DIR=str(tmp_path / "disk"))
    base, proc = await start_api(svc.settings, svc.http, svc.logs, name="api-store-down", **env)
    svc.procs["api-store-down"] = proc
    client = svc.client(ws.key).__class__(svc.http, base, ws.key)
    media = make_interview(tmp_path)
    status, body = await upload(client, media["video"])
    assert status == 503, body
    assert body["error"]["code"] == "unavailable" and "object store" in body["error"]["message"]
    secret = svc.store_settings.s3_secret_access_key.get_secret_value()
    shown = str(body)
    assert str(closed) not in shown and secret not in shown and "Traceback" not in shown
    # a signed URL of a file of the bucket, on the API that cannot reach it: 503 too, not 404 nor 500
    good = await upload(ws.client, media["video"])
    assert good[0] == 201, good[1]
    path = good[1]["data"]["source_url"].split("/v1", 1)[1]
    async with svc.http.get(base + path, headers={"Range": "bytes=0-9"}) as resp:
        assert resp.status == 503
        assert (await resp.json())["error"]["code"] == "unavailable"
    log = (svc.logs / "api-store-down.log").read_text()
    assert secret not in log and "Traceback" not in log
    for key in svc.bucket.list_keys(f"videos/{ws.id}/"):
        svc.bucket.delete(key)
