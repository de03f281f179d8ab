"""A charge refused for lack of credits is decided on the workspace's stream as committed, not on
what an API process kept of it: a top-up (the CLI, another API process) or a refund (a worker
ending a job failed) appended elsewhere is usable by the very next charge. The top-up, and a
refund by a cancellation, are in ``tests/command_contract.py`` (both stores); the worker's refund is
here."""

from __future__ import annotations

import pytest

from domain.base import InsufficientCredits
from domain.workspaces import Workspace
from infra.codec import EventRegistry
from infra.eventstore import EventStore
from infra.eventstore_postgres import PostgresEventStore
from services.application.jobs import QueueJob
from services.application.workspaces import CreateWorkspace
from services.jobs.context import JobHandlers
from services.processes.worker import Worker
from tests.helpers import handle

GROUP = pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])


async def spent(api: EventStore, *, jobs: int = 20):
    """A workspace whose ``jobs`` one-credit jobs (a stream long enough to be kept) spent every credit,
    and the jobs; the API process has just been refused a charge on it."""
    ws, _ = await handle(api, CreateWorkspace(name="spent", plan="pro", credits=jobs, rate_limit=600))
    queued = [(await handle(api, QueueJob(ws, job_type="charged", credits=1), max_attempts=1))[0]
              for _ in range(jobs)]
    with pytest.raises(InsufficientCredits):
        await handle(api, QueueJob(ws, job_type="charged", credits=1))
    return ws, queued


async def balance(store: EventStore, ws) -> int:
    workspace: Workspace = store.registry.reconstruct(await store.read_stream(ws))
    return workspace.credits_balance


@GROUP
async def test_a_refund_appended_by_the_worker_is_usable_by_the_next_charge(settings, pool, registry,
                                                                            group_commit):
    api = PostgresEventStore(pool, registry, group_commit=group_commit)
    ws, queued = await spent(api)

    worker = Worker(settings, JobHandlers(), pool=pool, worker_id="w-refund")
    worker.store = PostgresEventStore(pool, EventRegistry())  # the worker process's own store
    job = await worker.append_to_job(queued[0], lambda j: j.start(1, "w-refund"))
    await worker._finish_failed(job, 1, "the clip failed three times")
    assert await balance(api, ws) == 1, "the worker refunded the job"

    _, position = await handle(api, QueueJob(ws, job_type="charged", credits=1))
    assert position is not None
    assert await balance(api, ws) == 0
