"""Server-Sent Events over real HTTP against the real processes: GET /v1/jobs/{id}/events.

The stream is read by ``EventStreamReader``, a parser written from the WHATWG HTML standard's
"event stream interpretation" (lines end with CRLF, LF or CR; ``:`` starts a comment; a field's
value loses one leading space; ``data`` lines are joined with LF; ``id`` persists until changed; a
blank line dispatches; an event cut by the end of the stream is dropped). No package is needed for
that, and the test then checks the bytes on the wire against the standard, not against a client
library's leniency.

The API processes run with a keep-alive interval of half a second, so that comment lines can be
seen arriving without waiting the default 15 s.
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

import aiohttp
import orjson
import pytest
from prometheus_client.parser import text_string_to_metric_families

from services.application.jobs import QueueJob, append_job
from tests.helpers import context, handle, wait_projected
from tests.media_factory import make_interview
from tests.support.api_videos import upload
from tests.support.event_streams import EventStreamReader, ServerEvent, _alarming, open_streams_gauge, until
from tests.support.service import running_service, start_api, stop_all

KEEPALIVE_S = 0.5


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory):
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"), apis=1,
                               VAEO_API_STREAM_KEEPALIVE_S=str(KEEPALIVE_S)) as svc:
        yield svc


# ------------------------------------------------------------------ a spec-following SSE reader


@dataclass
class Stream:
    response: aiohttp.ClientResponse
    reader: EventStreamReader
    iterator: AsyncIterator[ServerEvent]

    async def next(self, timeout: float = 30) -> ServerEvent | None:
        """The next event, or None when the stream ended."""
        try:
            return await asyncio.wait_for(anext(self.iterator), timeout)
        except StopAsyncIteration:
            return None


async def open_stream(service, key: str, job_id, api: int = 0, session: aiohttp.ClientSession | None = None
                      ) -> Stream:
    http = session or service.http
    response = await http.get(f"{service.bases[api]}/jobs/{job_id}/events",
                              headers={"Authorization": f"Bearer {key}", "Accept": "text/event-stream"})
    reader = EventStreamReader(response)
    return Stream(response, reader, reader.events())


async def drive(service, job_id: UUID, change) -> None:
    """One change of the job, appended as a worker or the cancel command would."""
    job = await service.store.fetch_for_writing(job_id)
    change(job)
    await append_job(job, context(service.store))


async def requests_counted(service, route: str, status: str, api: int = 0) -> float:
    async with service.http.get(service.bases[api].removesuffix("/v1") + "/metrics") as resp:
        text = await resp.text()
    return sum(s.value for f in text_string_to_metric_families(text) if f.name == "vaeo_http_requests"
               for s in f.samples if s.name == "vaeo_http_requests_total" and s.labels["route"] == route
               and s.labels["status"] == status)


ROUTE = "/v1/jobs/{id}/events"


# ------------------------------------------------------------------------------------- tests


async def test_events_have_ids_and_names_and_arrive_in_order_until_the_job_ends(service):
    ws = await service.workspace()
    job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    counted = await requests_counted(service, ROUTE, "200")

    stream = await open_stream(service, ws.key, job.id)
    assert stream.response.status == 200
    assert stream.response.headers["Content-Type"].startswith("text/event-stream")
    assert stream.response.headers["Cache-Control"] == "no-cache"
    # The headers the outer middleware gives JSON answers, given to the stream before its first byte.
    assert stream.response.headers["X-Request-Id"]
    assert int(stream.response.headers["X-RateLimit-Limit"]) == 100_000
    assert int(stream.response.headers["X-RateLimit-Remaining"]) >= 0

    first = await stream.next()
    assert (first.event, first.id) == ("job.progressed", "1")
    assert first.json["id"] == str(job.id) and first.json["status"] == "pending" and first.json["step"] == "queued"

    await drive(service, job.id, lambda j: j.start(attempt=1, worker="test"))
    started = await stream.next()
    assert (started.event, started.id, started.json["status"]) == ("job.progressed", "2", "running")
    await drive(service, job.id, lambda j: j.report_progress(40, "cutting"))
    progressed = await stream.next()
    assert (progressed.event, progressed.id) == ("job.progressed", "3")
    assert (progressed.json["progress"], progressed.json["step"]) == (40, "cutting")
    await drive(service, job.id, lambda j: j.complete({"clips": 2}))
    completed = await stream.next()
    assert (completed.event, completed.id) == ("job.completed", "4")
    assert completed.json["status"] == "completed" and completed.json["result"] == {"clips": 2}
    assert await stream.next() is None and stream.reader.ended  # the server ended the stream
    stream.response.release()

    # Telemetry and metrics counted the call like any other.
    await until(lambda: _more(requests_counted(service, ROUTE, "200"), counted))
    await until(lambda: _gauge_is(service, 0))


async def _more(count, than: float) -> bool:
    return await count > than


async def _gauge_is(service, value: float, api: int = 0) -> bool:
    return await open_streams_gauge(service, api) == value


async def test_a_failed_or_cancelled_job_ends_its_stream_and_a_finished_one_answers_once(service):
    ws = await service.workspace()
    failing, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    cancelled, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])

    stream = await open_stream(service, ws.key, failing.id)
    assert (await stream.next()).event == "job.progressed"
    await drive(service, failing.id, lambda j: j.start(attempt=1, worker="test"))
    assert (await stream.next()).json["status"] == "running"
    await drive(service, failing.id, lambda j: j.fail("the media could not be decoded"))
    failed = await stream.next()
    assert failed.event == "job.failed" and failed.json["error_message"] == "the media could not be decoded"
    assert await stream.next() is None

    stream = await open_stream(service, ws.key, cancelled.id)
    assert (await stream.next()).event == "job.progressed"
    r = await ws.client.delete(f"/jobs/{cancelled.id}")  # the API's own cancel command
    assert r.status == 200, r.body
    ended = await stream.next()
    assert ended.event == "job.cancelled" and ended.json["status"] == "cancelled"
    assert await stream.next() is None

    # A job already finished: its final state, then the end.
    again = await open_stream(service, ws.key, cancelled.id)
    only = await again.next()
    assert only.event == "job.cancelled" and only.id == ended.id
    assert await again.next() is None


async def test_refusals_come_before_any_byte_as_json_errors(service):
    ws = await service.workspace()
    other = await service.workspace()
    job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    sandbox_job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle", environment="sandbox"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    no_jobs_scope = await service.key(ws, ["videos:read"])
    cases = [
        (None, job.id, 401, "missing_key"),
        ("service_live_" + "x" * 43, job.id, 401, "invalid_key"),
        (no_jobs_scope, job.id, 403, "insufficient_scope"),
        (other.key, job.id, 404, "not_found"),  # another workspace's job: as if missing
        (ws.key, sandbox_job.id, 404, "not_found"),  # another environment's
        (ws.key, uuid.uuid4(), 404, "not_found"),
        (ws.key, "not-a-uuid", 404, "not_found"),
    ]
    for key, job_id, status, code in cases:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with service.http.get(f"{service.base}/jobs/{job_id}/events", headers=headers) as resp:
            body = await resp.read()
            assert resp.status == status, body
            assert resp.headers["Content-Type"].startswith("application/json")
            assert resp.headers["X-Request-Id"]
            assert orjson.loads(body)["error"]["code"] == code
    async with service.http.get(f"{service.base}/jobs/{job.id}/events", params={"from": "3"},
                                headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        assert resp.status == 400 and orjson.loads(await resp.read())["error"]["code"] == "validation_error"

    limited = await service.workspace(rate_limit=1)
    job, _ = await handle(service.store, QueueJob(limited.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    assert (await limited.client.get("/me")).status == 200  # the window's one request
    async with service.http.get(f"{service.base}/jobs/{job.id}/events",
                                headers={"Authorization": f"Bearer {limited.key}"}) as resp:
        assert resp.status == 429 and resp.headers["Content-Type"].startswith("application/json")
        assert orjson.loads(await resp.read())["error"]["code"] == "rate_limited"
        assert resp.headers["Retry-After"] and resp.headers["X-RateLimit-Remaining"] == "0"


async def test_keep_alive_comments_arrive_while_nothing_happens(service):
    ws = await service.workspace()
    job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    stream = await open_stream(service, ws.key, job.id)
    first = await stream.next()
    assert first.event == "job.progressed"
    opened = time.monotonic()
    pending_next = asyncio.ensure_future(stream.next(timeout=60))
    await until(lambda: _has_comments(stream.reader, 3), timeout=10)
    assert not pending_next.done()  # comments are no events
    times = [t for t, _ in stream.reader.comments]
    assert {text for _, text in stream.reader.comments} == {"keep-alive"}
    assert times[0] - opened < KEEPALIVE_S * 4
    # An event resets nothing it should not: the next change still arrives after the comments.
    await drive(service, job.id, lambda j: j.cancel())
    assert (await pending_next).event == "job.cancelled"
    assert await stream.next() is None


async def _has_comments(reader: EventStreamReader, n: int) -> bool:
    return len(reader.comments) >= n


async def test_a_client_that_leaves_mid_stream_ends_it_cleanly(service):
    ws = await service.workspace()
    jobs = [(await handle(service.store, QueueJob(ws.id, job_type="e2e_idle")))[0] for _ in range(3)]
    await wait_projected(service.settings, service.pool, ["jobs"])
    log = service.logs / "api.log"
    log_before = log.stat().st_size

    sessions = [aiohttp.ClientSession() for _ in jobs]
    try:
        streams = [await open_stream(service, ws.key, j.id, session=s) for j, s in zip(jobs, sessions, strict=True)]
        for stream in streams:
            assert (await stream.next()).event == "job.progressed"
        assert await open_streams_gauge(service) == 3
        for stream in streams[:2]:
            stream.response.close()  # the connection is dropped, not drained
        await until(lambda: _gauge_is(service, 1))
        await sessions[2].close()
        await until(lambda: _gauge_is(service, 0))
    finally:
        for s in sessions:
            await s.close()
    # The API is still serving, and said nothing alarming about the clients that left.
    assert (await ws.client.get(f"/jobs/{jobs[0].id}")).status == 200
    written = log.read_bytes()[log_before:].decode(errors="replace")
    assert not [line for line in written.splitlines() if _alarming(line)], written


async def test_head_answers_the_stream_headers_and_no_event(service):
    ws = await service.workspace()
    job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    async with service.http.head(f"{service.base}/jobs/{job.id}/events",
                                 headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/event-stream")
        assert resp.headers["X-Request-Id"] and await resp.read() == b""
    await until(lambda: _gauge_is(service, 0))


async def test_openapi_describes_the_stream_as_text_event_stream(service):
    doc = (await service.client().get("/openapi.json")).body
    op = doc["paths"]["/jobs/{id}/events"]["get"]
    assert set(op["responses"]["200"]["content"]) == {"text/event-stream"}
    event = op["responses"]["200"]["content"]["text/event-stream"]["schema"]  # one event, as OpenAPI reads it
    assert event["properties"]["event"]["enum"] == ["job.progressed", "job.completed", "job.failed",
                                                    "job.cancelled", "error"]
    data = event["properties"]["data"]
    assert data["contentMediaType"] == "application/json"
    assert data["contentSchema"] == {"$ref": "#/components/schemas/JobDetail"}
    assert op["security"] == [{"bearerAuth": ["jobs:read"]}]
    assert op["responses"]["404"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorEnvelope"}


async def test_the_progress_of_a_real_analysis_streams_to_its_end(service, tmp_path):
    made = make_interview(tmp_path)
    ws = await service.workspace(credits=100)
    status, body = await upload(ws.client, made["video"], captions=made["vtt"], name="stream")
    assert status == 201, body
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})
    assert r.status == 202, r.body
    stream = await open_stream(service, ws.key, r.data["job_id"])
    seen = []
    while (event := await stream.next(timeout=120)) is not None:
        seen.append(event)
    assert seen and all(e.event == "job.progressed" for e in seen[:-1]), [(e.event, e.json["step"]) for e in seen]
    assert seen[-1].event == "job.completed", seen[-1].json
    assert seen[-1].json["result"]["video_id"] == body["data"]["id"]
    ids = [int(e.id) for e in seen]
    assert ids == sorted(set(ids))  # increasing, none twice
    progress = [e.json["progress"] for e in seen]
    assert progress == sorted(progress) and progress[-1] == 100


async def test_a_quiet_stream_notices_its_client_left_and_shutdown_ends_open_streams(service, tmp_path):
    ws = await service.workspace()
    job, _ = await handle(service.store, QueueJob(ws.id, job_type="e2e_idle"))
    await wait_projected(service.settings, service.pool, ["jobs"])
    base, proc = await start_api(service.settings, service.http, tmp_path, name="api-stopped",
                                 VAEO_API_STREAM_KEEPALIVE_S="60")
    try:
        api = len(service.bases)
        service.bases.append(base)
        # With a keep-alive of 60 s, a stream whose client leaves can only end that soon if the
        # connection's closing is noticed by itself, not by a failed write.
        async with aiohttp.ClientSession() as session:
            left = await open_stream(service, ws.key, job.id, api=api, session=session)
            assert (await left.next()).event == "job.progressed"
            assert await open_streams_gauge(service, api) == 1
        await until(lambda: _gauge_is(service, 0, api), timeout=10)

        stream = await open_stream(service, ws.key, job.id, api=api)
        assert (await stream.next()).event == "job.progressed"
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert await stream.next(timeout=10) is None  # the stream ended, not cut mid-event
        await asyncio.to_thread(proc.wait, 20)
        assert proc.returncode == 0 and time.monotonic() - started < 10
    finally:
        service.bases.remove(base)
        stop_all({"api": proc})
    assert "Traceback" not in (Path(tmp_path) / "api-stopped.log").read_text()
