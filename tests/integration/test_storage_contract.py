"""The ``Storage`` contract, run on both implementations: ``LocalStorage`` on a directory and
``S3Storage`` on the test stack's real SeaweedFS (a bucket per test, no mock of S3). Then what only
the object store has: its multipart uploads (bounded memory, aborted when interrupted), its local
read cache (key plus version, LRU, never evicting a file in use) and its outages (``StorageUnavailable``)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.settings import Settings
from infra.stack import seaweedfs_credentials
from infra.storage import LocalStorage, Storage, StorageError, StorageUnavailable
from infra.storage_s3 import S3Storage
from tests.support.stack import BUILD_TIMEOUT, ROOT, env_for, s3_settings

MiB = 1024 * 1024

pytestmark = BUILD_TIMEOUT


def _s3(object_store: Settings, cache: Path, **overrides) -> S3Storage:
    return S3Storage.from_settings(s3_settings(object_store, cache, **overrides))


@pytest.fixture(params=["local", "s3"])
def storage(request, tmp_path: Path) -> Iterator[Storage]:
    if request.param == "local":
        yield LocalStorage(tmp_path / "root")
        return
    store = _s3(request.getfixturevalue("object_store"), tmp_path / "cache")
    yield store
    store.close()


def _key(name: str) -> str:
    return f"videos/{uuid.uuid4()}/1/{name}"


def test_put_get_range_stat_and_delete_twice(storage: Storage, tmp_path: Path):
    key = _key("captions.vtt")
    data = bytes(range(256)) * 40  # 10240 bytes
    assert not storage.exists(key)
    storage.write_bytes(key, data)
    assert storage.exists(key) and storage.size(key) == len(data)
    info = storage.stat(key)
    assert info.size == len(data) and info.etag == storage.stat(key).etag
    assert storage.read_range(key, 100, 10) == data[100:110]
    assert storage.read_range(key, len(data) - 4, 100) == data[-4:]  # fewer at the end
    assert storage.read_range(key, len(data) + 10, 5) == b""  # past the end: nothing
    opened = storage.open(key)
    try:
        assert opened.info.size == len(data)
        opened.reader.seek(5000)
        assert opened.reader.read(7) + opened.reader.read(3) == data[5000:5010]
        opened.reader.seek(0)
        assert opened.reader.read(len(data) + 50) == data
        assert opened.reader.read(10) == b""
    finally:
        opened.close()
    assert storage.path(key).read_bytes() == data  # a local file ffmpeg can read

    storage.write_bytes(key, data[::-1])  # replaced: another version, another ETag, new bytes
    assert storage.stat(key).etag != info.etag
    assert storage.path(key).read_bytes() == data[::-1]

    storage.delete(key)
    storage.delete(key)  # twice: no error
    assert not storage.exists(key)
    for read in (storage.stat, storage.open):
        with pytest.raises(FileNotFoundError):
            read(key)
    try:  # no local file of a missing key (the disk names the path it would have, the store says none)
        assert not storage.path(key).exists()
    except FileNotFoundError:
        pass
    storage.delete(_key("never-stored.mp4"))  # a key never stored: no error either


def test_commit_moves_a_staged_file_in_whole_and_refuses_bad_keys(storage: Storage):
    key = _key("source.mp4")
    staged = storage.staging_path("t")
    payload = os.urandom(3 * MiB + 17)
    staged.write_bytes(payload)
    storage.commit(staged, key)
    storage.discard(staged)  # what every caller does after: no error
    assert not staged.exists()
    assert storage.size(key) == len(payload)
    assert hashlib.sha256(storage.path(key).read_bytes()).digest() == hashlib.sha256(payload).digest()
    for bad in ("/etc/passwd", "a/../../b", ".staging/x", "a//b", "a\\b", ""):
        with pytest.raises(StorageError):
            storage.write_bytes(bad, b"x")
        with pytest.raises(StorageError):
            storage.stat(bad)
    assert storage.sweep_staging(3600.0) == 0
    storage.delete(key)


def test_a_large_upload_goes_in_parts_with_bounded_memory(object_store: Settings, tmp_path: Path):
    """96 MiB in 8 MiB parts: Python's allocations while committing stay within a few parts; the
    object is whole, and the staged file becomes its cached copy (no download for ffmpeg)."""
    store = _s3(object_store, tmp_path / "cache")
    staged = store.staging_path("big")
    digest = hashlib.sha256()
    with staged.open("wb") as f:
        for _ in range(96):
            block = os.urandom(MiB)
            digest.update(block)
            f.write(block)
    key = _key("source.mp4")
    tracemalloc.start()
    try:
        store.commit(staged, key)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * store.part_bytes, f"committing 96 MiB peaked at {peak / MiB:.1f} MiB of Python memory"
    assert store.size(key) == 96 * MiB
    cached = store.path(key)
    assert cached.is_relative_to(store.cache.objects)
    opened = store.open(key)
    try:
        whole = hashlib.sha256()
        while chunk := opened.reader.read(4 * MiB):
            whole.update(chunk)
    finally:
        opened.close()
    assert whole.digest() == digest.digest()  # read back from the store, not the cache
    store.delete(key)
    store.close()


async def test_an_interrupted_upload_is_aborted(object_store: Settings, tmp_path: Path):
    """In a bucket of its own (the sweep aborts every stale upload of its bucket: none of another test's)."""
    store = _s3(object_store, tmp_path / "cache", s3_part_bytes=5 * MiB, s3_bucket="vaeo-test-sweep")

    async def pending() -> list:
        client = await store.client()
        return (await client.list_multipart_uploads(Bucket=store.bucket)).get("Uploads", [])

    async def parts_sent() -> int:
        client = await store.client()
        sent = 0
        for u in await pending():
            listed = await client.list_parts(Bucket=store.bucket, Key=u["Key"], UploadId=u["UploadId"])
            sent += len(listed.get("Parts", []))
        return sent

    # an earlier run stopped midway may have left one: the bucket starts clean
    await asyncio.to_thread(store.sweep_staging, 3600.0, time.time() + 7200)
    assert await store.acall(pending()) == []
    staged = store.staging_path("cut")
    staged.write_bytes(os.urandom(60 * MiB))
    key = _key("source.mp4")
    upload = asyncio.create_task(store.acall(store._upload(staged, key), key))
    # cancelled once a part is sent, so the upload's id is known to the store: cancelled while the upload
    # is being created, the server may create it after the client gave up (the sweep below is for that)
    deadline = time.monotonic() + 60
    while not await store.acall(parts_sent()) and not upload.done() and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not upload.done(), "the upload ended before it could be interrupted"
    upload.cancel()
    with pytest.raises(asyncio.CancelledError):
        await upload
    # the abort runs on in the store's own loop after the caller's cancellation: poll, with a deadline
    deadline = time.monotonic() + 60
    while (left := await store.acall(pending())) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert left == []
    assert not store.exists(key)

    async def begin() -> None:  # a process killed mid-upload leaves one begun
        await (await store.client()).create_multipart_upload(Bucket=store.bucket, Key=key)

    await store.acall(begin())
    assert len(await store.acall(pending())) == 1
    await asyncio.to_thread(store.sweep_staging, 3600.0)  # too young: kept
    assert len(await store.acall(pending())) == 1
    await asyncio.to_thread(store.sweep_staging, 3600.0, time.time() + 7200)  # two hours on: aborted
    assert await store.acall(pending()) == []
    store.close()


def test_the_cache_is_bounded_and_never_evicts_a_file_in_use(object_store: Settings, tmp_path: Path):
    store = _s3(object_store, tmp_path / "cache", media_cache_max_bytes=3 * MiB, media_cache_in_use_s=0)
    keys = [_key(f"f{i}.mp4") for i in range(4)]
    for key in keys:
        store.write_bytes(key, os.urandom(MiB))
    held = store.path(keys[0]).open("rb")  # an ffmpeg reading it
    try:
        paths = [store.path(key) for key in keys]
        assert paths[0].exists(), "a file open by a process was evicted"
        assert store.cache.total_bytes() <= 3 * MiB
        assert not paths[1].exists()  # the least recently used one not in use went
        assert paths[2].exists() and paths[3].exists()
    finally:
        held.close()
    assert store.path(keys[1]).stat().st_size == MiB  # fetched again on demand
    assert store.cache.total_bytes() <= 3 * MiB
    store.write_bytes(keys[3], b"new")  # a new version: a new entry, the old one dropped
    assert store.path(keys[3]).read_bytes() == b"new"
    assert not paths[3].exists()
    assert not any(store.cache.tmp.iterdir())  # no half-downloaded file left
    for key in keys:
        store.delete(key)
    store.close()


def test_an_unreachable_store_is_storage_unavailable(object_store: Settings, tmp_path: Path):
    settings = s3_settings(object_store, tmp_path / "cache", s3_endpoint_url="http://127.0.0.1:9",
                           s3_timeout_s=2.0, s3_max_attempts=2)
    store = S3Storage.from_settings(settings)
    secret = settings.s3_secret_access_key.get_secret_value()
    for call in (lambda: store.stat(_key("a.mp4")), lambda: store.write_bytes(_key("a.vtt"), b"x")):
        with pytest.raises(StorageUnavailable) as caught:
            call()
        shown = str(caught.value) + repr(caught.value)
        assert "127.0.0.1" not in shown and ":9" not in shown and secret not in shown
        assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert secret not in repr(store)
    store.close()


def test_stack_up_with_the_s3_backend_runs_the_stacks_seaweedfs(object_store: Settings):
    """``vaeo stack up`` with ``VAEO_STORAGE_BACKEND=s3`` and no endpoint: the stack's SeaweedFS is
    up (here already, so nothing is started twice) and ``status`` reports it; no credential printed."""
    env = {k: v for k, v in env_for(object_store).items() if k not in ("VAEO_DATABASE_URL", "VAEO_KAFKA_BOOTSTRAP")}
    env.update({"VAEO_STACK_INSTANCE": "test", "VAEO_STACK_PG_PORT": "25433", "VAEO_STACK_KAFKA_PORT": "29092",
                "VAEO_STACK_S3_PORT": "28333", "VAEO_STORAGE_BACKEND": "s3"})
    if object_store.database_url or object_store.kafka_bootstrap:
        return  # external servers: no local stack to check
    access, secret = seaweedfs_credentials(object_store)
    for action in ("up", "status"):
        done = subprocess.run([sys.executable, "-m", "services.cli", "stack", action], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert secret not in done.stdout + done.stderr
        shown = json.loads(done.stdout)["object_store"]
        assert shown["backend"] == "s3" and shown["managed"] is True and shown["endpoint"] == "http://127.0.0.1:28333"
        assert shown["pid"] is not None and shown["log"].endswith("/test/logs/seaweedfs.log")
    assert json.loads(done.stdout).get("object_store_ready_seconds") is None  # status starts nothing
