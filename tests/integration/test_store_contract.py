"""The event store's contract (``tests/store_contract.py``) on PostgreSQL."""

from __future__ import annotations

import asyncpg
import pytest

from infra.codec import EventRegistry
from infra.eventstore_postgres import PostgresEventStore
from infra.idempotency_rows import PostgresKeyRows
from services.application.idempotency import IdempotencyKeys
from tests.store_contract import *  # noqa: F403


class PostgresBackend:
    """Stores over one test database: each store is a process."""

    def __init__(self, pool: asyncpg.Pool, registry: EventRegistry) -> None:
        self.pool, self.registry = pool, registry

    def store(self) -> PostgresEventStore:
        return PostgresEventStore(self.pool, self.registry)

    async def positions(self) -> list[int]:
        async with self.pool.acquire() as conn:
            return [r["position"] for r in await conn.fetch("SELECT position FROM events ORDER BY position")]

    def keys(self) -> IdempotencyKeys:
        return IdempotencyKeys(PostgresKeyRows(self.pool))


@pytest.fixture
def backend(pool, registry) -> PostgresBackend:
    return PostgresBackend(pool, registry)
