"""What the idempotency tests share, on PostgreSQL (``tests/integration/test_idempotency.py``) and in
memory (``tests/unit/test_commands_in_memory.py``): a key, the API key that sends it (and another
one of the same workspace), a request, a clock the test moves, and the command behind the key."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from uuid import UUID, uuid4

from infra.eventstore import EventStore
from services.application.idempotency import Outcome
from services.application.jobs import QueueJob
from services.application.workspaces import CreateWorkspace
from tests.helpers import handle

KEY = "order-7f3a9c21-e5d4"
API_KEY = UUID("0b7d3c52-6a11-4d0e-9a8f-1f2e3d4c5b6a")  # the API key that sends KEY
OTHER_API_KEY = UUID("5e9a1b7c-2d34-4f6e-8b9a-0c1d2e3f4a5b")  # another API key of the same workspace
REQUEST = {"job_type": "render", "credits": 5}
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


class ChargedJob:
    """The command behind the key: queue a job charged ``credits``, its answer in the same append.
    Counts its executions; ``hold`` (when set) keeps it in flight between deciding and appending."""

    def __init__(self, store: EventStore, workspace_id, credits: int = 5) -> None:
        self.store, self.workspace_id, self.credits = store, workspace_id, credits
        self.executions = 0
        self.started = asyncio.Event()
        self.hold: asyncio.Event | None = None

    async def __call__(self, claim) -> Outcome:
        self.executions += 1
        self.started.set()
        job_id = uuid4()
        outcome = Outcome(202, {"data": {"job_id": str(job_id), "status": "pending", "reused": False}})
        if self.hold is not None:
            await self.hold.wait()
        await handle(self.store, QueueJob(self.workspace_id, job_type="render", credits=self.credits, job_id=job_id,
                                          effects=(claim.records(outcome),)))
        return outcome


async def workspace(store, credits: int = 100):
    ws, _ = await handle(store, CreateWorkspace(name="idempotency", plan="pro", credits=credits, rate_limit=100))
    return ws


