"""503 when PostgreSQL or Kafka is unreachable (nothing half-written), 500 without a traceback.

Each test starts its own API process against a broken dependency; the shared ``service`` of
the other modules is never disturbed.
"""

from __future__ import annotations

import asyncio
import subprocess
import time

import aiohttp
import pytest

from infra.codec import EventRegistry
from infra.eventstore_postgres import PostgresEventStore
from services.application.workspaces import CreateWorkspace
from tests.helpers import handle
from tests.support.service import Client, free_port, spawn, stop_all
from tests.support.stack import env_for


async def _start_api(settings, tmp_path, **env) -> tuple[str, subprocess.Popen]:
    port = free_port()
    proc = spawn("api", dict(env_for(settings), VAEO_API_PORT=str(port), **env), tmp_path)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:  # listening is enough: /healthz may be 503 on purpose
            assert proc.poll() is None, (tmp_path / "api.log").read_text()
            try:
                async with http.get(base + "/healthz"):
                    return base + "/v1", proc
            except aiohttp.ClientError:
                await asyncio.sleep(0.1)
    raise TimeoutError("API not listening")


@pytest.fixture
async def http():
    async with aiohttp.ClientSession() as session:
        yield session


async def test_postgres_unreachable_is_503_unavailable(settings, tmp_path, http):
    dead = f"postgresql://postgres@127.0.0.1:{free_port()}/vaeo"
    base, proc = await _start_api(settings, tmp_path, VAEO_DATABASE_URL=dead)
    try:
        client = Client(http, base, "service_live_" + "A" * 43)
        for method, path, body in (("GET", "/me", None), ("POST", "/medias", {"name": "x"}), ("GET", "/jobs", None)):
            r = await client.call(method, path, body)
            assert r.status == 503, r.body
            assert r.body["error"]["code"] == "unavailable"
            assert r.body["error"]["details"]["dependency"] == "PostgreSQL"
            assert r.headers["X-Request-Id"]
    finally:
        stop_all({"api": proc})


async def test_kafka_unreachable_refuses_commands_with_503_and_nothing_written_reads_still_work(
        settings, store, tmp_path, http):
    ws, issued = await handle(store, CreateWorkspace(name="k", plan="free", credits=10, rate_limit=1000))
    base, proc = await _start_api(settings, tmp_path, VAEO_KAFKA_BOOTSTRAP=f"127.0.0.1:{free_port()}")
    try:
        client = Client(http, base, issued.key)
        head = await store.head()
        r = await client.post("/medias", {"name": "lost?"})
        assert r.status == 503, r.body
        assert r.body["error"]["code"] == "unavailable" and r.body["error"]["details"]["dependency"] == "Kafka"
        r = await client.post("/keys", {"name": "k2", "scopes": ["jobs:read"]})
        assert r.status == 503
        assert await store.head() == head  # nothing half-written
        assert (await client.get("/medias")).status == 200
        me = await client.get("/me")
        assert me.status == 200 and me.body["data"]["workspace"]["id"] == str(ws)
    finally:
        stop_all({"api": proc})


async def test_an_unexpected_failure_is_500_with_the_request_id_and_no_traceback(settings, pool, tmp_path, http):
    store = PostgresEventStore(pool, EventRegistry())
    _, issued = await handle(store, CreateWorkspace(name="b", plan="free", credits=10, rate_limit=1000))
    async with pool.acquire() as conn:
        await conn.execute("DROP TABLE medias")  # a read model gone: a bug, not an outage
    base, proc = await _start_api(settings, tmp_path)
    try:
        r = await Client(http, base, issued.key).get("/medias")
        assert r.status == 500
        err = r.body["error"]
        assert err["code"] == "internal_error"
        assert err["details"] == {"request_id": r.headers["X-Request-Id"]}
        assert r.headers["X-Request-Id"] in err["message"]
        assert "Traceback" not in str(r.body) and "medias" not in str(r.body)
    finally:
        stop_all({"api": proc})
    log = (tmp_path / "api.log").read_text()
    assert r.headers["X-Request-Id"] in log and "Traceback" in log  # the operator has it, the client does not
