"""Correlation and causation on the real servers, and ``vaeo jobs history`` reading the chain back
from Kafka as a user runs it.

A job queued the way the API queues one (a request's meta, a charge) is run by a real worker whose
handler uses every port that appends: progress, ``save_now`` (usage recorded at once), results
recorded with the completion, a transient failure retried, a permanent failure refunded. Another
workspace uses the same request id (request ids come from clients), and the same request id
appended something before the job existed: neither is the job's history.
"""

from __future__ import annotations

import json
import uuid

from domain.llm_usage import LlmUsage
from domain.media import Media
from services.application.jobs import CancelJob, QueueJob
from services.application.media import CreateMedia
from services.application.meta import request_meta
from services.application.workspaces import CreateWorkspace
from services.jobs.context import JobHandlers
from services.jobs.errors import PermanentJobError
from services.processes.worker import Worker
from tests.helpers import handle, wait_relayed
from tests.support.cli import vaeo
from tests.support.pipeline import job_finished, start_pipeline, wait_for

REQUEST = "req-audit-0001"


def audited_handlers() -> JobHandlers:
    handlers = JobHandlers()

    @handlers.register("audited")
    async def audited(ctx):
        await ctx.progress(30, "recording the usage")
        await ctx.save_now(LlmUsage.record(call_key=f"{ctx.job_id}:{ctx.attempt}", workspace_id=ctx.workspace_id,
                                           environment=ctx.environment, operation="article.write", prompt_tokens=3,
                                           completion_tokens=4, job_id=ctx.job_id))
        if ctx.params.get("fail_first") and ctx.attempt == 1:
            raise RuntimeError("a transient failure")
        if ctx.params.get("fail"):
            raise PermanentJobError("told to fail")
        media = Media.create(media_id=await ctx.store.next_id("media_id_seq"), workspace_id=ctx.workspace_id,
                             environment=ctx.environment, name="result")
        ctx.record_with_completion(list(media.collect_events()))
        return {"ok": True}

    return handlers


async def queue_as_the_api_does(store, workspace_id, request_id: str, **params):
    job, _ = await handle(store, QueueJob(workspace_id, job_type="audited", params=params, credits=2,
        charge_reason="audited job"), max_attempts=3, meta=request_meta(request_id, uuid.uuid4()))
    return job


async def events(pool, sql: str, *args) -> list[dict]:
    async with pool.acquire() as conn:
        rows = await conn.fetch(f"SELECT position, stream_id, type, meta FROM events WHERE {sql} ORDER BY position",
                                *args)
    return [dict(r) for r in rows]


async def test_a_jobs_events_carry_its_requests_chain_and_jobs_history_reads_it_from_kafka(fast, store, pool,
                                                                                             background):
    start_pipeline(fast, background)
    code, out, err = await vaeo(fast, "workspace", "create", "--name", "Audit", "--credits", "100", "--json")
    assert code == 0, err
    ws = uuid.UUID(json.loads(out)["workspace_id"])
    other, _ = await handle(store, CreateWorkspace(name="Namesake", plan="pro", credits=100, rate_limit=600))
    # The same request id earlier in this workspace, and in another workspace: not the job's doing.
    await handle(store, CreateMedia(ws, environment="production", name="before"), meta=request_meta(REQUEST,
        uuid.uuid4()))
    namesake = await queue_as_the_api_does(store, other, REQUEST)
    done = await queue_as_the_api_does(store, ws, REQUEST, fail_first=True)
    failed = await queue_as_the_api_does(store, ws, "req-audit-0002", fail=True)
    background.start(Worker(fast, audited_handlers(), pool=pool, worker_id="worker-audit").run)
    for job in (done, failed, namesake):
        await wait_for(lambda j=job: job_finished(store, j.id), what=f"job {job.id} finished")

    # The CLI's own events: a fresh chain each command, the command its cause.
    created = await events(pool, "workspace_id = $1 AND type IN ('WorkspaceCreated', 'ApiKeyIssued')", ws)
    cli_chain = created[0]["meta"]["correlation_id"]
    assert all(e["meta"] == {"cli": "workspace create", "correlation_id": cli_chain,
                             "causation_id": f"cli:{cli_chain}"} for e in created)

    for job, request_id in ((done, REQUEST), (failed, "req-audit-0002")):
        [queued] = await events(pool, "stream_id = $1 AND version = 1", job.id)
        chain = await events(pool, "workspace_id = $1 AND position >= $2 AND (stream_id = $3 OR "
                                   "meta->>'correlation_id' = $4)", ws, queued["position"], job.id, request_id)
        by_request = [e for e in chain if e["meta"].get("causation_id") == f"request:{request_id}"]
        by_the_job = [e for e in chain if e not in by_request]
        assert [e["type"] for e in by_request] == ["JobQueued", "CreditsCharged"]
        assert all(e["meta"]["request_id"] == request_id for e in by_request)
        assert all(e["meta"]["correlation_id"] == request_id for e in chain)
        assert all(e["meta"]["causation_id"] == f"event:{queued['position']}" and e["meta"]["job_id"] == str(job.id)
                   and e["meta"]["worker"] == "worker-audit" for e in by_the_job), by_the_job
        types = [e["type"] for e in by_the_job]
        assert types[0] == "JobStarted" and "LlmUsageRecorded" in types
        if job is done:  # a retry, the result recorded with the completion, no refund
            assert types.count("JobStarted") == 2 and "JobAttemptFailed" in types
            assert types[-2:] == ["JobCompleted", "MediaCreated"] and "CreditsRefunded" not in types
        else:  # the refund in the append that fails the job; nothing recorded with a completion
            assert types[-2:] == ["JobFailed", "CreditsRefunded"] and "MediaCreated" not in types

        await wait_relayed(pool)
        code, out, err = await vaeo(fast, "jobs", "history", str(job.id), "--json")
        assert code == 0, err
        printed = [json.loads(line) for line in out.splitlines()]
        assert [(e["position"], e["type"], e["meta"]) for e in printed] == [
            (e["position"], e["type"], e["meta"]) for e in chain]

        code, out, err = await vaeo(fast, "jobs", "history", str(job.id))
        assert code == 0, err
        table = out.splitlines()
        assert table[0].split()[:2] == ["POSITION", "TIME"]
        assert [(int(row.split()[0]), row.split()[3]) for row in table[1:]] == [
            (e["position"], e["type"]) for e in chain]
        assert "job_type=audited" in table[1] and "amount=2" in table[2]

    code, out, err = await vaeo(fast, "jobs", "history", str(uuid.uuid4()))
    assert (code, out) == (1, "") and err.startswith("vaeo: not_found: job ") and err.count("\n") == 1, err
    code, _, err = await vaeo(fast, "jobs", "history", "nope")
    assert code == 2 and "not a uuid" in err and "Traceback" not in err


async def test_a_cancellation_and_its_refund_join_the_jobs_chain(store, pool):
    ws, _ = await handle(store, CreateWorkspace(name="C", plan="pro", credits=10, rate_limit=600))
    job = await queue_as_the_api_does(store, ws, "req-queue-0001")

    await handle(store, CancelJob(ws, job_id=job.id), meta=request_meta("req-cancel-01", uuid.uuid4()))

    ended = await events(pool, "type IN ('JobCancelled', 'CreditsRefunded') AND workspace_id = $1", ws)
    assert [e["type"] for e in ended] == ["JobCancelled", "CreditsRefunded"]
    assert all(e["meta"]["correlation_id"] == "req-queue-0001" and e["meta"]["request_id"] == "req-cancel-01"
               and e["meta"]["causation_id"] == "request:req-cancel-01" for e in ended)
