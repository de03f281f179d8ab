"""Idempotent requests where PostgreSQL itself is the subject: the answer and the events in one
transaction, a replay after a restart, the claim of a process that died with its connections. The
rules of keys (one execution per key, replays, mismatches, lapsed claims, retention, identical
requests) are in ``tests/command_contract.py``, run on both stores."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from domain.workspaces import Workspace
from infra.db import create_pool
from infra.eventstore_postgres import PostgresEventStore
from infra.idempotency_rows import PostgresKeyRows
from services.application.idempotency import (
    IdempotencyKeyInUse,
    IdempotencyKeys,
)
from tests.idempotency_support import API_KEY, KEY, REQUEST, T0, ChargedJob, Clock, workspace


async def written(pool, ws) -> dict[str, int]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT type, count(*) AS n FROM events WHERE workspace_id = $1 GROUP BY type", ws)
    return {r["type"]: r["n"] for r in rows}


async def balance(store, ws) -> int:
    workspace: Workspace = await store.fetch_for_writing(ws)
    return workspace.credits_balance


async def stored_key(pool, key: str = KEY):
    async with pool.acquire() as conn:
        return await conn.fetchrow("SELECT * FROM idempotency_keys WHERE key = $1", key)


async def test_the_answer_commits_with_the_events(store, pool):
    ws = await workspace(store)
    keys = IdempotencyKeys(PostgresKeyRows(pool))
    await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=API_KEY)

    async with pool.acquire() as conn:
        txs = await conn.fetch("SELECT xmin::text AS tx FROM idempotency_keys WHERE key = $1 UNION "
                               "SELECT xmin::text FROM events WHERE workspace_id = $2 AND type = 'JobQueued'", KEY, ws)
    assert len(txs) == 1
    row = await stored_key(pool)
    assert row["state"] == "done" and row["status"] == 202 and row["owner"] is None


async def test_a_replay_after_a_restart_still_replays(settings, store, pool):
    ws = await workspace(store)
    first = await IdempotencyKeys(PostgresKeyRows(pool)).run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws),
                                                             api_key_id=API_KEY)

    # A new process: a new pool, store and key table handle; nothing of the first in memory.
    fresh_pool = await create_pool(settings.resolved_database_url(), max_size=2)
    try:
        fresh_store = PostgresEventStore(fresh_pool, store.registry)
        command = ChargedJob(fresh_store, ws)
        again = await IdempotencyKeys(PostgresKeyRows(fresh_pool)).run(ws, "jobs.create", KEY, REQUEST, command,
                                                                        api_key_id=API_KEY)
    finally:
        await fresh_pool.close()

    assert command.executions == 0
    assert again.reused and again.body["data"] == {**first.body["data"], "reused": True}
    assert (await written(pool, ws))["CreditsCharged"] == 1


async def test_a_key_in_flight_is_in_use_until_its_claim_lapses(settings, store, pool):
    """A process that dies while its request runs leaves its claim: the key answers in_use until
    the claim lapses, then the next request runs."""
    ws = await workspace(store)
    clock = Clock()
    dying_pool = await create_pool(settings.resolved_database_url(), max_size=2)
    dying = ChargedJob(PostgresEventStore(dying_pool, store.registry), ws)
    dying.hold = asyncio.Event()
    in_flight = asyncio.create_task(IdempotencyKeys(PostgresKeyRows(dying_pool), clock=clock, claim_s=60).run(
        ws, "jobs.create", KEY, REQUEST, dying, api_key_id=API_KEY))
    await asyncio.wait_for(dying.started.wait(), 10)
    dying_pool.terminate()  # the process is gone: its connections, and its release, with it
    in_flight.cancel()
    await asyncio.gather(in_flight, return_exceptions=True)
    keys = IdempotencyKeys(PostgresKeyRows(pool), clock=clock, claim_s=60)
    command = ChargedJob(store, ws)

    clock.now = T0 + timedelta(seconds=59)
    with pytest.raises(IdempotencyKeyInUse) as refused:
        await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)
    assert refused.value.status == 409 and refused.value.code == "idempotency_key_in_use"

    clock.now = T0 + timedelta(seconds=61)
    answer = await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)

    assert not answer.reused and command.executions == 1
    assert (await written(pool, ws))["JobQueued"] == 1 and await balance(store, ws) == 95
