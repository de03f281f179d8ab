"""Correlation and causation end to end: analyses queued over HTTP on the real processes, each
event of their chains checked in the events table, and the chain read back from Kafka by
``vaeo jobs history``'s reader.

The rule (docs/events.md, "Correlation and causation"): the request's own events (``JobQueued``
and its charge) carry its id as ``request_id`` and ``correlation_id`` and ``request:<id>`` as
``causation_id``; everything the job's work appends (its lifecycle, the provider's usage, the
video's graph and analysis, the article, the refund of a failure) carries the same
``correlation_id`` and ``event:<position of JobQueued>``; a cancellation and its refund carry
the job's ``correlation_id`` and the cancelling request as cause.

The worker's article provider is a fake speaking the protocol over a socket (tests/fake_llm.py).
"""

from __future__ import annotations

import asyncio
import io
import json
from uuid import UUID

import pytest

from services.cli.history import job_history
from tests import fake_llm
from tests.fake_llm import FakeProvider
from tests.helpers import wait_relayed
from tests.media_factory import make_interview
from tests.support.api_videos import follow, upload
from tests.support.service import running_service

PROVIDER_SLOWNESS_S = 4.0


@pytest.fixture(scope="module")
async def provider():
    fake = await FakeProvider().start()
    yield fake
    await fake.stop()


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory, provider):
    env = {"VAEO_LLM_BASE_URL": provider.base_url, "VAEO_LLM_MODEL": "fake-model", "VAEO_LLM_TIMEOUT_S": "10",
           "VAEO_LLM_MAX_ATTEMPTS": "1", "VAEO_JOB_MAX_ATTEMPTS": "1"}
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"), apis=1, **env) as svc:
        yield svc


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> dict:
    return make_interview(tmp_path_factory.mktemp("chain"))


async def analyze(service, media, request_id: str):
    """A workspace, an upload, and a premium analysis queued by a request with this id."""
    ws = await service.workspace(credits=10)
    status, uploaded = await upload(ws.client, media["video"], captions=media["vtt"])
    assert status == 201, uploaded
    r = await ws.client.post(f"/videos/{uploaded['data']['id']}/analyze", {"quality_profile": "premium"},
                             headers={"X-Request-Id": request_id})
    assert r.status == 202 and r.headers["X-Request-Id"] == request_id, r.body
    return ws, r.data["job_id"]


async def chain_of(service, ws, job_id: str, request_id: str) -> tuple[dict, list[dict]]:
    """The job's JobQueued, and every event of the workspace from it on that is on the job's stream
    or names the request as its correlation: what the chain must be."""
    async with service.pool.acquire() as conn:
        queued = await conn.fetchrow("SELECT position, meta FROM events WHERE stream_id = $1 AND version = 1",
                                     UUID(job_id))
        rows = await conn.fetch("SELECT position, stream_id, type, meta FROM events WHERE workspace_id = $1 AND "
                                "position >= $2 AND (stream_id = $3 OR meta->>'correlation_id' = $4) ORDER BY position",
                                ws.id, queued["position"], UUID(job_id), request_id)
    return dict(queued), [dict(r) for r in rows]


async def until_types(service, ws, job_id, request_id, *types: str, timeout: float = 30) -> list[dict]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        _, chain = await chain_of(service, ws, job_id, request_id)
        if set(types) <= {e["type"] for e in chain}:
            return chain
        assert asyncio.get_running_loop().time() < deadline, [e["type"] for e in chain]
        await asyncio.sleep(0.1)


def split_by_cause(chain: list[dict], request_id: str, queued_position: int) -> tuple[list[str], list[str]]:
    """The types the request caused and those the job caused; fails on any event that follows neither rule."""
    by_request, by_job = [], []
    for e in chain:
        meta = e["meta"]
        assert meta["correlation_id"] == request_id, e
        if meta["causation_id"] == f"request:{request_id}":
            assert meta["request_id"] == request_id, e
            by_request.append(e["type"])
        else:
            assert meta["causation_id"] == f"event:{queued_position}", e
            assert "request_id" not in meta and meta["worker"], e
            by_job.append(e["type"])
    return by_request, by_job


async def history_from_kafka(service, job_id: str) -> list[dict]:
    await wait_relayed(service.pool)
    out = io.StringIO()
    await job_history(service.settings, UUID(job_id), out, as_json=True)
    return [json.loads(line) for line in out.getvalue().splitlines()]


async def test_every_event_of_a_completed_analysis_carries_the_requests_chain(service, provider, media):
    provider.answer(fake_llm.article())
    ws, job_id = await analyze(service, media, "chain-completed-01")
    job, _ = await follow(ws.client, job_id)
    assert job["status"] == "completed", job

    queued, chain = await chain_of(service, ws, job_id, "chain-completed-01")
    by_request, by_job = split_by_cause(chain, "chain-completed-01", queued["position"])

    assert by_request == ["JobQueued", "CreditsCharged"]
    assert by_job[0] == "JobStarted" and "JobProgressed" in by_job and "LlmUsageRecorded" in by_job
    assert by_job[-4:] == ["JobCompleted", "VideoGraphRecorded", "VideoAnalyzed", "ArticleGenerated"]
    assert [(e["position"], e["type"]) for e in await history_from_kafka(service, job_id)] == [
        (e["position"], e["type"]) for e in chain]


async def test_a_failed_analysis_and_its_refund_carry_the_requests_chain(service, provider, media):
    # the first call is answered (its usage recorded), the second refused: the job fails
    provider.answer(fake_llm.article(), fake_llm.status(400, "the model refused the request"))
    ws, job_id = await analyze(service, media, "chain-failed-0001")
    job, _ = await follow(ws.client, job_id)
    assert job["status"] == "failed", job

    queued, chain = await chain_of(service, ws, job_id, "chain-failed-0001")
    by_request, by_job = split_by_cause(chain, "chain-failed-0001", queued["position"])

    assert by_request == ["JobQueued", "CreditsCharged"]
    assert "LlmUsageRecorded" in by_job and by_job[-2:] == ["JobFailed", "CreditsRefunded"]
    assert not {"VideoGraphRecorded", "VideoAnalyzed", "ArticleGenerated"} & set(by_job)
    assert [e["position"] for e in await history_from_kafka(service, job_id)] == [e["position"] for e in chain]


async def test_a_cancellation_and_its_refund_join_the_jobs_chain_caused_by_the_cancelling_request(service, provider,
                                                                                                  media):
    provider.answer(fake_llm.slow(PROVIDER_SLOWNESS_S))
    ws, job_id = await analyze(service, media, "chain-cancelled-1")
    deadline = asyncio.get_running_loop().time() + 60
    while "provider" not in (await ws.client.get(f"/jobs/{job_id}")).data["step"]:
        assert asyncio.get_running_loop().time() < deadline, "the job never reached the provider"
        await asyncio.sleep(0.05)

    cancelled = await ws.client.delete(f"/jobs/{job_id}", headers={"X-Request-Id": "chain-cancel-req1"})
    assert cancelled.status == 200 and cancelled.data["status"] == "cancelled", cancelled.body

    chain = await until_types(service, ws, job_id, "chain-cancelled-1", "JobCancelled", "CreditsRefunded")
    ended = [e for e in chain if e["type"] in ("JobCancelled", "CreditsRefunded")]
    assert [e["type"] for e in ended] == ["JobCancelled", "CreditsRefunded"]
    assert all(e["meta"]["correlation_id"] == "chain-cancelled-1" and e["meta"]["request_id"] == "chain-cancel-req1"
               and e["meta"]["causation_id"] == "request:chain-cancel-req1" for e in ended), ended
    history = await history_from_kafka(service, job_id)
    assert {"JobQueued", "CreditsCharged", "JobStarted", "JobCancelled", "CreditsRefunded"} <= {
        e["type"] for e in history}
