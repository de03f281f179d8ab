"""Commit order: transactions that commit out of insert order never make the relay skip an event.

32 writers append 20,000 events with a random delay (0-300 ms) between their insert and their
commit, while the relay runs. Beside it, as a control, the same kind of writers insert into a
plain ``bigserial`` table without the append lock, and a naive tailer reads ``id > last``: it
misses the rows whose transaction committed after a higher id was already visible. The control
shows what the test would catch if positions were allocated the naive way.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from datetime import UTC, datetime

import pytest

from domain.jobs import Job
from infra.consume import position_of
from infra.eventstore_sql import APPEND, append_args
from services.processes.relay import Relay
from tests.helpers import kafka_messages, wait_relayed

pytestmark = pytest.mark.slow

WRITERS = 32
EVENTS = 20_000
PER_APPEND = 250


def _batch(store, ws: uuid.UUID, n: int) -> list:
    jobs = [Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="order") for _ in range(n)]
    return store.registry.to_new_events([e for j in jobs for e in j.collect_events()], workspace_id=ws)


async def test_relay_misses_nothing_when_commits_come_out_of_order(settings, store, pool, background):
    rng = random.Random(7)
    workspaces = [uuid.uuid4() for _ in range(8)]
    appends = EVENTS // PER_APPEND
    work = list(range(appends))
    async with pool.acquire() as conn:
        await conn.execute("CREATE TABLE naive_log (id bigserial PRIMARY KEY, writer int NOT NULL)")

    async def writer(i: int) -> None:
        while work:
            work.pop()
            events = _batch(store, workspaces[i % len(workspaces)], PER_APPEND)
            async with pool.acquire() as conn:
                async with conn.transaction():
                    await conn.fetchval(APPEND, *append_args(events, datetime.now(UTC)))
                    await asyncio.sleep(rng.uniform(0, 0.3))  # between insert and commit

    naive_done = asyncio.Event()
    naive_inserted = 0

    async def naive_writer(i: int) -> None:
        nonlocal naive_inserted
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            async with pool.acquire() as conn:
                async with conn.transaction():
                    await conn.execute("INSERT INTO naive_log (writer) VALUES ($1)", i)
                    await asyncio.sleep(rng.uniform(0, 0.3))
            naive_inserted += 1

    naive_seen: set[int] = set()

    async def naive_tailer() -> None:
        last = 0
        while True:
            async with pool.acquire() as conn:
                rows = await conn.fetch("SELECT id FROM naive_log WHERE id > $1 ORDER BY id", last)
            for r in rows:
                naive_seen.add(r["id"])
            if rows:
                last = rows[-1]["id"]
            if naive_done.is_set() and not rows:
                return
            await asyncio.sleep(0.01)

    background.start(Relay(settings).run)
    tailer = asyncio.create_task(naive_tailer())
    naive = asyncio.gather(*(naive_writer(i) for i in range(WRITERS)))
    await asyncio.gather(*(writer(i) for i in range(WRITERS)))
    await naive
    naive_done.set()
    await tailer

    head = await wait_relayed(pool, timeout=120)
    assert head == EVENTS
    per_partition = {p: [position_of(m) for m in msgs] for p, msgs in (await kafka_messages(settings)).items()}
    everything = sorted(p for ps in per_partition.values() for p in ps)
    assert everything == list(range(1, EVENTS + 1)), "the relay skipped or repeated events"
    for positions in per_partition.values():
        assert positions == sorted(positions), "a partition is out of position order"

    async with pool.acquire() as conn:
        committed = await conn.fetchval("SELECT count(*) FROM naive_log")
    missed = committed - len(naive_seen)
    print(f"\ncontrol: naive tailer on bigserial saw {len(naive_seen)} of {committed} rows, missed {missed}")
    assert committed == naive_inserted
    assert missed > 0, "the control should show the hazard the append lock prevents"
