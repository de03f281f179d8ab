"""The API's adapters on the real servers: rate-limit counter, read-your-writes waiter, Kafka link."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest

from infra.consume import PROGRESS_CHANNEL
from infra.db import create_pool
from infra.ratelimit import RateCounter, RateLimiter
from services.api.auth import Authenticator
from services.api.errors import ApiError
from services.api.kafka import KafkaLink
from services.api.waits import ProgressWaiter
from services.application.keys import IssueKey, RevokeKey
from services.application.workspaces import CreateWorkspace
from tests.helpers import handle
from tests.support.service import free_port


async def test_rate_limit_counter_is_exact_under_concurrency_from_many_connections(settings, store, pool):
    ws, _ = await handle(store, CreateWorkspace(name="rl", plan="free", credits=0, rate_limit=50))
    limiters = [RateLimiter() for _ in range(4)]  # four "API processes"

    async def hit(i: int):
        async with pool.acquire() as conn:
            return await limiters[i % 4].hit(conn, ws)

    windows = await asyncio.gather(*(hit(i) for i in range(120)))
    counts = sorted(w.count for w in windows)
    admitted = sum(not w.exceeded for w in windows)
    if counts == list(range(1, 121)):  # one window: exact
        assert admitted == 50
    else:  # a minute boundary split the burst into two windows, each counting from 1 and exact
        assert counts.count(1) == 2
        assert admitted == min(counts[-1], 50) + min(120 - counts[-1], 50)
    assert all(w.limit == 50 for w in windows)


class _CountingAuthenticator(Authenticator):
    """The real authenticator, counting the statements it sends."""

    statements = 0

    async def _answer(self, group):
        self.statements += 1
        await super()._answer(group)


async def _authenticated(authenticators, key: str, calls: int) -> list:
    async def call(i: int):
        try:
            return await authenticators[i % len(authenticators)].authenticate(key)
        except ApiError as exc:
            return exc

    return await asyncio.gather(*(call(i) for i in range(calls)))


async def _window_count(pool, ws) -> int:
    async with pool.acquire() as conn:
        return await conn.fetchval("SELECT coalesce(sum(count), 0) FROM api_rate_windows WHERE workspace_id = $1", ws)


async def test_grouped_authentication_numbers_every_call_once_across_processes(settings, store, pool, registry):
    """Four API processes, each numbering its concurrent calls in groups: every call gets its own
    number, exactly the limit is admitted, and the window counts each call once."""
    ws, issued = await handle(store, CreateWorkspace(name="rl", plan="free", credits=0, rate_limit=50))
    authenticators = [_CountingAuthenticator(pool, registry, RateLimiter()) for _ in range(4)]
    results = await _authenticated(authenticators, issued.key, 120)
    windows = [w for _, w in results]
    assert all(p.workspace_id == ws for p, _ in results)
    counted = await _window_count(pool, ws)
    assert counted == 120
    numbers = sorted(w.count for w in windows)
    if numbers == list(range(1, 121)):  # one window: exact
        assert sum(not w.exceeded for w in windows) == 50
    else:  # a minute boundary split the burst into two windows, each numbering from 1
        assert numbers.count(1) == 2 and len(set(numbers)) == 120 - numbers.count(1) + 1
    assert sum(a.statements for a in authenticators) < 120  # calls shared statements


async def test_a_revoked_or_expired_key_in_a_group_is_refused_and_numbered_nothing(settings, store, pool, registry):
    from datetime import UTC, datetime, timedelta

    ws, issued = await handle(store, CreateWorkspace(name="rl", plan="free", credits=0, rate_limit=1000))
    revoked = await handle(store, IssueKey(ws, name="gone", scopes=["*"], environment="production", expires_at=None,
        issuer_scopes=None, issued_by=None))
    await handle(store, RevokeKey(ws, key_id=revoked.key_id))
    expired = await handle(store, IssueKey(ws, name="old", scopes=["*"], environment="production",
        expires_at=datetime.now(UTC) - timedelta(seconds=1), issuer_scopes=None, issued_by=None))
    authenticator = Authenticator(pool, registry, RateLimiter())
    keys = [issued.key, revoked.key, expired.key] * 10
    results = await asyncio.gather(*(authenticator.authenticate(k) for k in keys), return_exceptions=True)
    good = [r for k, r in zip(keys, results, strict=True) if k == issued.key]
    bad = {k: r for k, r in zip(keys, results, strict=True) if k != issued.key}
    assert all(isinstance(r, ApiError) and r.status == 401 for r in bad.values())
    assert "revoked" in bad[revoked.key].message and "expired" in bad[expired.key].message
    assert sorted(w.count for _, w in good) == list(range(1, 11))
    assert await _window_count(pool, ws) == 10


class _CountingRateCounter(RateCounter):
    """The real counter, counting the statements it sends."""

    statements = 0

    async def _answer(self, group):
        self.statements += 1
        await super()._answer(group)


async def test_grouped_counts_number_every_request_once_and_a_count_given_back_leaves_the_window(
        settings, store, pool):
    """Two processes counting plans of 1 to 4 requests at once: each plan gets consecutive numbers
    of its own, the window counts every request once, concurrent counts share statements, and what
    is given back is no longer counted."""
    ws, _ = await handle(store, CreateWorkspace(name="rl", plan="free", credits=0, rate_limit=50))
    counters = [_CountingRateCounter(pool, RateLimiter()) for _ in range(2)]
    sizes = [1 + i % 4 for i in range(40)]  # 100 requests
    numbered = await asyncio.gather(*(counters[i % 2].count(ws, n) for i, n in enumerate(sizes)))
    assert [n.size for n in numbered] == sizes and all(n.limit == 50 for n in numbered)
    assert await _window_count(pool, ws) == 100
    if len({n.window_start for n in numbered}) == 1:  # one window (no minute boundary in the burst): exact
        taken = sorted(number for n in numbered for number in range(n.first, n.first + n.size))
        assert taken == list(range(1, 101))
        admitted = [n.window(i) for n in numbered for i in range(n.size)]
        assert sum(not w.exceeded for w in admitted) == 50
    assert sum(c.statements for c in counters) < len(sizes)  # counts shared statements
    await counters[0].give_back(numbered[-1], numbered[-1].size)
    assert await _window_count(pool, ws) == 100 - numbered[-1].size


async def test_waiter_wakes_on_notify_falls_back_to_stored_offsets_and_times_out(settings, pool, background):
    waiter = ProgressWaiter(settings.resolved_database_url(), pool, timeout_s=1.0)
    background.start(waiter.run)
    await asyncio.sleep(0.3)  # the LISTEN connection is up (a missed NOTIFY would only cost POLL_S)

    task = asyncio.create_task(waiter.wait("jobs", 2, 10, timeout_s=5))
    await asyncio.sleep(0.05)
    async with pool.acquire() as conn:
        await conn.execute("SELECT pg_notify($1, $2)", PROGRESS_CHANNEL, "jobs:2:9")
        await asyncio.sleep(0.1)
        assert not task.done()
        started = time.monotonic()
        await conn.execute("SELECT pg_notify($1, $2)", PROGRESS_CHANNEL, "jobs:2:12")
    assert await task is True
    assert time.monotonic() - started < 0.2  # woken by the notification, not by polling

    async with pool.acquire() as conn:  # applied with no notification at all: the stored offsets tell
        await conn.execute("INSERT INTO projection_offsets (projection, partition, next_offset, max_position) "
                           "VALUES ('medias', 1, 5, 40)")
    assert await waiter.wait("medias", 1, 40, timeout_s=2) is True
    # A wait whose write came after the listener connected trusts the notifications and skips the
    # first read; with none coming, the periodic re-read still finds the stored progress.
    async with pool.acquire() as conn:
        await conn.execute("UPDATE projection_offsets SET max_position = 45 WHERE projection = 'medias'")
    assert await waiter.wait("medias", 1, 45, timeout_s=2, since=time.monotonic()) is True
    started = time.monotonic()
    assert await waiter.wait("medias", 1, 46, timeout_s=0.3) is False
    assert 0.25 < time.monotonic() - started < 1.0
    # A wait that timed out, or whose request was cancelled (client gone), leaves nothing behind.
    cancelled = asyncio.create_task(waiter.wait("medias", 1, 47, timeout_s=5, since=time.monotonic()))
    await asyncio.sleep(0.05)
    assert len(waiter._waiting[("medias", 1)]) == 1
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert waiter._waiting[("medias", 1)] == []


async def test_kafka_link_reports_partitions_when_up_and_unavailable_when_down(settings):
    link = KafkaLink(settings)
    await link.start(timeout_s=10)
    try:
        assert link.available is True
        assert link.partitions == settings.events_partitions
        link.record(str(uuid.uuid4()), {"kind": "api_call"})
    finally:
        stop = asyncio.Event()
        stop.set()
        await link.run(stop)  # flushes what is queued, then stops the producer
    assert link.sent + link.dropped <= 1

    down = KafkaLink(settings.model_copy(update={"kafka_bootstrap": f"127.0.0.1:{free_port()}"}))
    await down.start(timeout_s=3)
    assert down.available is False
    for _ in range(down.settings.api_telemetry_buffer + 5):
        down.record(None, {"kind": "api_call"})  # never blocks; beyond the buffer, dropped and counted
    assert down.dropped == 5


async def test_progress_waiter_survives_a_listener_reconnect(settings, pool, background):
    waiter = ProgressWaiter(settings.resolved_database_url(), pool, timeout_s=1.0)
    background.start(waiter.run)
    await asyncio.sleep(0.3)
    admin = await create_pool(settings.resolved_database_url(), max_size=1)
    try:
        async with admin.acquire() as conn:  # cut the LISTEN connection from the server side
            await conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()")
    finally:
        await admin.close()
    await asyncio.sleep(0.5)  # reconnected after the first backoff delay (at most 0.2 s)
    task = asyncio.create_task(waiter.wait("jobs", 0, 3, timeout_s=5))
    await asyncio.sleep(0.05)
    async with pool.acquire() as conn:
        started = time.monotonic()
        await conn.execute("SELECT pg_notify($1, $2)", PROGRESS_CHANNEL, "jobs:0:3")
    assert await task is True
    assert time.monotonic() - started < 0.2  # woken by the notification: the listener is back
