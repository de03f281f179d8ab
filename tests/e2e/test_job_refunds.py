"""Refunds end to end on the real processes: an analysis cancelled before any worker claimed it,
and one whose worker is killed (kill -9, with its ffmpeg) on its last attempt, give the credits
back exactly once, in the append that ends the job. And a top-up by the CLI after a 402 is
spent by the next call.

The service here starts no worker: each test starts its own (one attempt per job, 2 s leases), so
that "no worker claimed it yet" and "the worker died" are facts of the test, not races.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import pytest

from tests.media_factory import run
from tests.support.api_videos import events_of, follow, upload
from tests.support.credits import credits_used, same_transaction
from tests.support.service import running_service
from tests.support.stack import ROOT, env_for

ENV = {"VAEO_JOB_MAX_ATTEMPTS": "1", "VAEO_WORKER_LEASE_S": "2", "VAEO_WORKER_POLL_INTERVAL_S": "0.1"}


@pytest.fixture(scope="module")
async def service(stack_settings, template_db, tmp_path_factory):
    async with running_service(stack_settings, template_db, tmp_path_factory.mktemp("logs"),
                               processes=("relay", "projector"), apis=1, **ENV) as svc:
        yield svc


@pytest.fixture(scope="module")
def long_video(tmp_path_factory) -> object:
    """Five minutes, tiny: its media passes run long enough to kill the worker in the middle."""
    path = tmp_path_factory.mktemp("refunds") / "long.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=160x120:r=10:d=300",
         "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=16000:duration=300",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(path)])
    return path


def start_worker(service, label: str) -> subprocess.Popen:
    """A worker in a session of its own, so that killing its group kills its ffmpeg children too."""
    out = (service.logs / f"{label}.log").open("ab")
    env = dict(env_for(service.settings), **ENV)
    return subprocess.Popen([sys.executable, "-m", "services.cli", "worker"], env=env, stdout=out,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT, start_new_session=True)


def kill_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


async def refunds_of(service, workspace_id) -> list[dict]:
    rows = await events_of(service, workspace_id, "CreditsRefunded")
    return [r["data"] for r in rows]


async def test_cancelling_an_analysis_no_worker_claimed_refunds_it_once(service, long_video):
    ws = await service.workspace(credits=20)
    status, body = await upload(ws.client, long_video)
    assert status == 201, body
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})
    assert r.status == 202 and r.data["credits_charged"] == 10, r.body  # 5 minutes and their speech
    job_id = r.data["job_id"]
    await credits_used(ws.client, 10)  # the charge, once the workspaces read model has it

    cancelled = await ws.client.delete(f"/jobs/{job_id}")

    assert cancelled.status == 200 and cancelled.data["status"] == "cancelled", cancelled.body
    assert (await ws.client.get("/credits")).data == {"balance": 20, "total": 20, "used": 0, "plan": "pro"}
    [refund] = await refunds_of(service, ws.id)
    assert refund["amount"] == 10 and refund["job_id"] == job_id
    assert await same_transaction(service, ws.id, "JobCancelled", "CreditsRefunded")
    again = await ws.client.delete(f"/jobs/{job_id}")
    assert again.status == 409 and again.error["code"] == "invalid_state"
    assert len(await refunds_of(service, ws.id)) == 1
    assert (await ws.client.get("/credits")).data["used"] == 0
    assert await events_of(service, ws.id, "JobStarted") == []  # no worker ever had it
    video = (await ws.client.get(f"/videos/{body['data']['id']}")).data
    assert video["status"] == "uploaded"


async def test_an_analysis_whose_worker_is_killed_on_its_last_attempt_fails_and_refunds_once(service, long_video):
    ws = await service.workspace(credits=20)
    status, body = await upload(ws.client, long_video)
    assert status == 201, body
    r = await ws.client.post(f"/videos/{body['data']['id']}/analyze", {})
    assert r.status == 202 and r.data["credits_charged"] == 10, r.body  # 5 minutes and their speech
    job_id = r.data["job_id"]

    first = start_worker(service, "worker-killed")
    try:
        job, _ = await follow(ws.client, job_id, until=("running", "completed", "failed", "cancelled"), timeout=60)
        assert job["status"] == "running", job
    finally:
        kill_group(first)  # kill -9 mid-job: the lease of the only attempt is left to expire
    second = start_worker(service, "worker-taker")
    try:
        job, _ = await follow(ws.client, job_id, timeout=60)
    finally:
        second.send_signal(signal.SIGTERM)
        await asyncio.to_thread(second.wait, 15)

    assert job["status"] == "failed" and "interrupted 1 times" in job["error_message"], job
    assert job["article_id"] is None
    [refund] = await refunds_of(service, ws.id)
    assert refund["amount"] == 10 and refund["job_id"] == job_id
    assert await same_transaction(service, ws.id, "JobFailed", "CreditsRefunded")
    await credits_used(ws.client, 0)  # the workspaces read model may apply the refund a batch after the job's end
    assert await events_of(service, ws.id, "VideoAnalyzed", "ArticleGenerated", "JobCompleted") == []


async def test_a_top_up_by_the_cli_is_usable_by_the_next_call_after_a_402(service, long_video):
    """The API process refused a charge on a balance of 0; `vaeo workspace credits W --add N`, another
    process, tops the workspace up: the next paid call is charged on the new balance, at once."""
    ws = await service.workspace(credits=10)
    videos = []
    for _ in range(2):
        status, body = await upload(ws.client, long_video)
        assert status == 201, body
        videos.append(body["data"]["id"])
    r = await ws.client.post(f"/videos/{videos[0]}/analyze", {})
    assert r.status == 202 and r.data["credits_charged"] == 10, r.body  # 5 minutes and their speech
    refused = await ws.client.post(f"/videos/{videos[1]}/analyze", {})
    assert refused.status == 402 and refused.error["details"] == {"required": 10, "balance": 0}, refused.body

    topped = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "services.cli", "workspace", "credits", str(ws.id), "--add", "12"],
        env=env_for(service.settings), cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert topped.returncode == 0, topped.stderr

    r = await ws.client.post(f"/videos/{videos[1]}/analyze", {})
    assert r.status == 202 and r.data["credits_charged"] == 10, r.body
    await credits_used(ws.client, 20)
    assert (await ws.client.get("/credits")).data["balance"] == 2
