"""Workers, relay and projector run as tasks of a test, and waiting for what they do."""

from __future__ import annotations

import asyncio
import time

from services.processes.projector.runner import run_projector
from services.processes.relay import Relay


def start_pipeline(settings, background) -> None:
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop, ["jobs", "scheduler"]))


async def wait_for(predicate, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise TimeoutError(what)


async def job_finished(store, job_id):
    job = await store.fetch_for_writing(job_id)
    return job if job.finished else None
