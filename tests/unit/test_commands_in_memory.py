"""Commands and idempotency decisions (``tests/command_contract.py``) on the in-memory event store,
and the registry of commands."""

from __future__ import annotations

import asyncio
import dataclasses
import typing

import pytest

from infra.codec import EventRegistry
from infra.memory_ports import MemoryKeyRows
from infra.memory_store import MemoryDatabase, MemoryEventStore
from services.application import handlers
from services.application.idempotency import IdempotencyKeys
from tests.command_contract import *  # noqa: F403
from tests.idempotency_support import KEY


class MemoryBackend:
    """The commands' process and another one, over one ``MemoryDatabase``."""

    def __init__(self) -> None:
        self.registry = EventRegistry()
        self.database = MemoryDatabase()
        self._store = MemoryEventStore(self.registry, self.database)

    def store(self) -> MemoryEventStore:
        return self._store

    def other(self) -> MemoryEventStore:
        return MemoryEventStore(EventRegistry(), self.database)

    def keys(self, **kwargs) -> IdempotencyKeys:
        return IdempotencyKeys(MemoryKeyRows(self.database), **kwargs)

    async def written(self, ws) -> dict[str, int]:
        counts: dict[str, int] = {}
        for e in self.database.events:
            if e.workspace_id == ws:
                counts[e.type] = counts.get(e.type, 0) + 1
        return counts

    async def stored_key(self, key: str = KEY, *, api_key_id=None) -> dict | None:
        rows = [row for scope, row in self.database.idempotency_keys.items()
                if scope[4] == key and api_key_id in (None, scope[2])]
        return dict(rows[0]) if rows else None

    async def ending(self, job_id) -> dict:
        ends = [e for e in self.database.events
                if (e.stream_id == job_id and e.type in ("JobFailed", "JobCancelled", "JobCompleted"))
                or (e.type == "CreditsRefunded" and e.data.get("job_id") == str(job_id))]
        claim = self.database.credit_refunds.get(job_id)
        positions = [e.position for e in ends]
        return {"types": [e.type for e in ends], "one_append": positions == list(range(positions[0],
                                                                                          positions[-1] + 1)),
                "refunds": [e.data["amount"] for e in ends if e.type == "CreditsRefunded"],
                "claims": [claim[1]] if claim else []}

    async def claim_refund(self, job_id, ws, amount: int) -> None:
        self.database.credit_refunds[job_id] = (ws, amount)


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()


def test_every_command_has_a_handler_taking_the_command_and_the_context():
    """One row per operation: each command is a frozen dataclass, each handler an async function of
    ``(command, context)`` annotated with its command's type."""
    assert handlers.HANDLERS
    for command, handler in handlers.HANDLERS.items():
        assert dataclasses.is_dataclass(command) and command.__dataclass_params__.frozen, command
        assert asyncio.iscoroutinefunction(handler), handler
        hints = typing.get_type_hints(handler)
        assert list(hints)[:2] == ["command", "ctx"] and hints["command"] is command, handler
