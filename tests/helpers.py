"""Waiting on positions, never on sleep: helpers shared by the integration and e2e tests."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import inspect
import signal
import time

import asyncpg

from infra.eventlog import make_consumer, topic_partitions
from infra.settings import Settings


async def until(probe, timeout: float, what: str, step: float = 0.05):
    """``probe()`` (a function or a coroutine function) until it gives something true, which is
    returned; after ``timeout`` seconds, an AssertionError naming ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        got = probe()
        if inspect.isawaitable(got):
            got = await got
        if got:
            return got
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(step)


async def eventually(check, timeout: float, step: float = 0.5):
    """``check()`` (a function or a coroutine function that asserts) until it passes, and its result;
    after ``timeout`` seconds, its last AssertionError. For what is read after a kill, a restart or
    a rebalance: on a busy machine it settles later than on a quiet one, so it is never read once."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = check()
            return await got if inspect.isawaitable(got) else got
        except AssertionError:
            if time.monotonic() >= deadline:
                raise
        await asyncio.sleep(step)


async def end_offsets(settings: Settings) -> dict[int, int]:
    consumer = make_consumer(settings, group_id=None)
    await consumer.start()
    try:
        tps = await topic_partitions(consumer, settings.events_topic)
        return {tp.partition: off for tp, off in (await consumer.end_offsets(tps)).items()}
    finally:
        await consumer.stop()


async def wait_relayed(pool: asyncpg.Pool, timeout: float = 60) -> int:
    """Until the relay checkpoint equals the head of the events table; returns the head."""
    deadline = time.monotonic() + timeout
    while True:
        async with pool.acquire() as conn:
            head = await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
            cp = await conn.fetchval("SELECT coalesce(max(position), 0) FROM relay_checkpoint")
        if cp >= head:
            return head
        if time.monotonic() > deadline:
            raise TimeoutError(f"relay at {cp}, head at {head}")
        await asyncio.sleep(0.05)


async def wait_projected(settings: Settings, pool: asyncpg.Pool, names: list[str], timeout: float = 60) -> None:
    """Until every named projection of domain events has consumed each partition to its end offset."""
    from projections import ALL

    names = [n for n in names if ALL[n].source == "events"]
    await wait_relayed(pool, timeout)
    ends = await end_offsets(settings)
    deadline = time.monotonic() + timeout
    while True:
        async with pool.acquire() as conn:
            rows = await conn.fetch("SELECT projection, partition, next_offset FROM projection_offsets "
                                    "WHERE projection = ANY($1)", names)
        got = {(r["projection"], r["partition"]): r["next_offset"] for r in rows}
        behind = [(n, p) for n in names for p, end in ends.items() if end > 0 and got.get((n, p), 0) < end]
        if not behind:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"projections behind on {behind[:5]}")
        await asyncio.sleep(0.05)


async def snapshot(pool: asyncpg.Pool, table: str, order_by: str, exclude: tuple[str, ...] = ()) -> list[dict]:
    async with pool.acquire() as conn:
        rows = await conn.fetch(f"SELECT * FROM {table} ORDER BY {order_by}")
    return [{k: v for k, v in dict(r).items() if k not in exclude} for r in rows]


async def kafka_messages(settings: Settings, topic: str | None = None) -> dict[int, list]:
    """Every message of the topic as it is now, per partition, in offset order."""
    consumer = make_consumer(settings, group_id=None)
    await consumer.start()
    try:
        tps = await topic_partitions(consumer, topic or settings.events_topic)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        reached = {tp: 0 for tp in tps}
        out: dict[int, list] = {tp.partition: [] for tp in tps}
        while any(reached[tp] < end[tp] for tp in tps):
            for tp, msgs in (await consumer.getmany(timeout_ms=1000, max_records=20000)).items():
                out[tp.partition].extend(msgs)
                reached[tp] = msgs[-1].offset + 1
        return out
    finally:
        await consumer.stop()


def terminate_with_parent() -> None:
    """In a service the tests or a benchmark start (``preexec_fn``, Linux): SIGTERM when the process
    that started it dies, even by a signal that runs no cleanup (an interrupted benchmark), so that
    no service outlives its run. Call it from the thread that stays: the signal follows that thread."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def context(store, *, meta: dict | None = None, idempotency=None, **application):
    """The application over ``store`` for a test's call, whose events carry ``meta``.
    ``application`` sets its policies and ports (``max_attempts``, ``sandbox``, ``storage``, ``box``,
    ...); the media port is ffmpeg's unless one is given."""
    from infra.media.inspector import FfmpegInspector
    from services.application.context import Application
    from services.application.handlers import HANDLERS

    application.setdefault("media", FfmpegInspector())
    return Application(store, idempotency=idempotency, handlers=HANDLERS, **application).context(meta)


async def handle(store, command, *, meta: dict | None = None, **application):
    """Run ``command`` through its handler, on the application over ``store`` (``context``)."""
    return await context(store, meta=meta, **application).handle(command)
