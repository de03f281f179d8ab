"""The event store's contract (``tests/store_contract.py``) on the in-memory store."""

from __future__ import annotations

import pytest

from infra.codec import EventRegistry
from infra.memory_ports import MemoryKeyRows
from infra.memory_store import MemoryDatabase, MemoryEventStore
from services.application.idempotency import IdempotencyKeys
from tests.store_contract import *  # noqa: F403


class MemoryBackend:
    """Stores over one ``MemoryDatabase``: each store is a process."""

    def __init__(self) -> None:
        self.registry = EventRegistry()
        self.database = MemoryDatabase()
        self._keys = IdempotencyKeys(MemoryKeyRows(self.database))

    def store(self) -> MemoryEventStore:
        return MemoryEventStore(self.registry, self.database)

    async def positions(self) -> list[int]:
        return [e.position for e in self.database.events]

    def keys(self) -> IdempotencyKeys:
        return self._keys


@pytest.fixture
def backend() -> MemoryBackend:
    return MemoryBackend()
