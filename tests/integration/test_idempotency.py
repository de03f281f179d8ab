"""Idempotent requests on the real PostgreSQL: one execution and one charge per key whatever the
concurrency, replays (refusals included, after a restart too), mismatches that change nothing,
claims that lapse, retention, and the deterministic job id of identical requests."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from domain.base import InsufficientCredits
from domain.workspaces import Workspace
from infra.db import create_pool
from infra.eventstore import PostgresEventStore
from services.application.idempotency import (
    IdempotencyKeyInUse,
    IdempotencyKeyMismatch,
    IdempotencyKeys,
    Outcome,
    ReplayedRefusal,
)
from services.application.workspaces import AddCredits
from tests.helpers import handle
from tests.idempotency_support import KEY, REQUEST, T0, ChargedJob, Clock, workspace


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


@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_fifty_concurrent_requests_with_one_key_run_once_and_charge_once(store, pool, group_commit):
    ws = await workspace(store)
    api = PostgresEventStore(pool, store.registry, group_commit=group_commit)
    keys = IdempotencyKeys(pool)
    command = ChargedJob(api, ws)

    answers = await asyncio.gather(*(keys.run(ws, "jobs.create", KEY, REQUEST, command) for _ in range(50)),
                                   return_exceptions=True)

    assert command.executions == 1
    assert all(isinstance(a, Outcome | IdempotencyKeyInUse) for a in answers), answers
    outcomes = [a for a in answers if isinstance(a, Outcome)]
    assert [o.reused for o in outcomes].count(False) == 1
    assert len({o.body["data"]["job_id"] for o in outcomes}) == 1
    assert all(o.body["data"]["reused"] == o.reused for o in outcomes)
    assert (await written(pool, ws)) == {"WorkspaceCreated": 1, "ApiKeyIssued": 1, "JobQueued": 1,
                                         "CreditsCharged": 1}
    assert await balance(store, ws) == 95
    # Once the first has answered, every request with the key is a replay.
    again = await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    assert again.reused and again.body["data"]["reused"] is True and command.executions == 1
    assert again.body["data"]["job_id"] == outcomes[0].body["data"]["job_id"]


async def test_the_answer_commits_with_the_events(store, pool):
    ws = await workspace(store)
    keys = IdempotencyKeys(pool)
    await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws))

    async with pool.acquire() as conn:
        txs = await conn.fetch("SELECT xmin::text AS tx FROM idempotency_keys WHERE key = $1 UNION "
                               "SELECT xmin::text FROM events WHERE workspace_id = $2 AND type = 'JobQueued'", KEY, ws)
    assert len(txs) == 1
    row = await stored_key(pool)
    assert row["state"] == "done" and row["status"] == 202 and row["owner"] is None


async def test_the_same_key_with_other_parameters_is_a_mismatch_that_changes_nothing(store, pool):
    ws = await workspace(store)
    keys = IdempotencyKeys(pool)
    command = ChargedJob(store, ws)
    first = await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    before, row = await written(pool, ws), await stored_key(pool)

    with pytest.raises(IdempotencyKeyMismatch) as refused:
        await keys.run(ws, "jobs.create", KEY, {**REQUEST, "credits": 6}, command)

    assert refused.value.status == 409 and refused.value.code == "idempotency_key_mismatch"
    assert command.executions == 1
    assert await written(pool, ws) == before and await stored_key(pool) == row
    assert await balance(store, ws) == 95
    # Key order does not make another request; another operation or workspace is another key.
    same = await keys.run(ws, "jobs.create", KEY, dict(reversed(REQUEST.items())), command)
    assert same.reused and same.body["data"]["job_id"] == first.body["data"]["job_id"]
    other = await keys.run(ws, "clips.detect", KEY, {**REQUEST, "credits": 6}, command)
    assert not other.reused and command.executions == 2


async def test_a_refusal_is_stored_and_replayed(store, pool):
    ws = await workspace(store, credits=3)
    keys = IdempotencyKeys(pool)
    command = ChargedJob(store, ws)
    with pytest.raises(InsufficientCredits) as first:
        await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    await handle(store, AddCredits(ws, amount=50))  # the same request would now succeed: it is not run again

    with pytest.raises(ReplayedRefusal) as replayed:
        await keys.run(ws, "jobs.create", KEY, REQUEST, command)

    assert command.executions == 1
    assert (replayed.value.status, replayed.value.code, replayed.value.message, replayed.value.details) == \
        (402, "insufficient_credits", first.value.message, {k: v for k, v in first.value.details.items()})
    assert "JobQueued" not in await written(pool, ws)
    assert (await stored_key(pool))["body"]["error"]["code"] == "insufficient_credits"


async def test_a_replay_after_a_restart_still_replays(settings, store, pool):
    ws = await workspace(store)
    first = await IdempotencyKeys(pool).run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws))

    # A new process: a new pool, store and key table handle; nothing of the first in memory.
    fresh_pool = await create_pool(settings.resolved_database_url(), max_size=2)
    try:
        fresh_store = PostgresEventStore(fresh_pool, store.registry)
        command = ChargedJob(fresh_store, ws)
        again = await IdempotencyKeys(fresh_pool).run(ws, "jobs.create", KEY, REQUEST, command)
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
    in_flight = asyncio.create_task(IdempotencyKeys(dying_pool, clock=clock, claim_s=60).run(
        ws, "jobs.create", KEY, REQUEST, dying))
    await asyncio.wait_for(dying.started.wait(), 10)
    dying_pool.terminate()  # the process is gone: its connections, and its release, with it
    in_flight.cancel()
    await asyncio.gather(in_flight, return_exceptions=True)
    keys = IdempotencyKeys(pool, clock=clock, claim_s=60)
    command = ChargedJob(store, ws)

    clock.now = T0 + timedelta(seconds=59)
    with pytest.raises(IdempotencyKeyInUse) as refused:
        await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    assert refused.value.status == 409 and refused.value.code == "idempotency_key_in_use"

    clock.now = T0 + timedelta(seconds=61)
    answer = await keys.run(ws, "jobs.create", KEY, REQUEST, command)

    assert not answer.reused and command.executions == 1
    assert (await written(pool, ws))["JobQueued"] == 1 and await balance(store, ws) == 95


@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_a_request_whose_claim_lapsed_cannot_commit(store, pool, group_commit):
    """A slow request (not dead) whose claim was taken over by a retry: its append is refused whole,
    so the key has one execution and one charge. Another request's append made at the same time
    (with group commit, possibly in the same group) is not affected."""
    ws = await workspace(store)
    clock = Clock()
    keys = IdempotencyKeys(pool, clock=clock, claim_s=60)
    api = PostgresEventStore(pool, store.registry, group_commit=group_commit)
    slow = ChargedJob(api, ws)
    slow.hold = asyncio.Event()
    first = asyncio.create_task(keys.run(ws, "jobs.create", KEY, REQUEST, slow))
    await asyncio.wait_for(slow.started.wait(), 10)

    clock.now = T0 + timedelta(seconds=61)
    retry = ChargedJob(api, ws)
    answer = await keys.run(ws, "jobs.create", KEY, REQUEST, retry)
    slow.hold.set()
    late, neighbour = await asyncio.gather(
        first, keys.run(ws, "jobs.create", "another-key-0001", REQUEST, ChargedJob(api, ws)), return_exceptions=True)

    assert isinstance(late, IdempotencyKeyInUse), late
    assert retry.executions == 1 and not answer.reused and not neighbour.reused
    assert (await written(pool, ws))["JobQueued"] == 2 and await balance(store, ws) == 90
    replay = await keys.run(ws, "jobs.create", KEY, REQUEST, retry)
    assert replay.body["data"]["job_id"] == answer.body["data"]["job_id"]


async def test_an_unexpected_failure_releases_the_key(store, pool):
    ws = await workspace(store)
    keys = IdempotencyKeys(pool)

    async def broken(claim) -> Outcome:
        raise RuntimeError("the storage went away")

    with pytest.raises(RuntimeError):
        await keys.run(ws, "jobs.create", KEY, REQUEST, broken)
    assert await stored_key(pool) is None
    command = ChargedJob(store, ws)
    assert not (await keys.run(ws, "jobs.create", KEY, REQUEST, command)).reused and command.executions == 1


async def test_keys_are_kept_a_day_then_purged(store, pool):
    ws = await workspace(store)
    clock = Clock()
    keys = IdempotencyKeys(pool, clock=clock)
    command = ChargedJob(store, ws)
    await keys.run(ws, "jobs.create", KEY, REQUEST, command)

    clock.now = T0 + timedelta(hours=23, minutes=59)
    assert await keys.purge() == 0
    assert (await keys.run(ws, "jobs.create", KEY, REQUEST, command)).reused

    clock.now = T0 + timedelta(hours=24, seconds=1)
    assert await keys.purge() == 1
    assert await stored_key(pool) is None
    assert not (await keys.run(ws, "jobs.create", KEY, REQUEST, command)).reused
    assert command.executions == 2
    with pytest.raises(ValueError):
        IdempotencyKeys(pool, retention_s=3600)
