"""Rebuilds (``vaeo projections rebuild NAME``): empty a read model and replay the whole topic into it.

The projection is marked ``rebuilding`` and its generation bumped (after any live batch in
flight, which holds its state row ``FOR SHARE``); the live runner pauses it at its next batch.
The rebuild is then the only writer of the read model: every batch it applies checks status and
generation in its own transaction, stores the tracking with the statements, and the live runner
resumes from what the rebuild stored once the projection is ``live`` again. A rebuilt read model
equals the live one. The dispatcher's and the credits watch's tables are never rebuilt: their
effects must not happen twice.
"""

from __future__ import annotations

import asyncio
import sys
import time

import asyncpg

from infra.codec import EventRegistry
from infra.consume import (
    Marks,
    ParsedBatch,
    Tracking,
    ensure_state_rows,
    fill_batch,
    lock_states,
    take_fresh,
    write_marks,
)
from infra.db import REPLAYABLE, connect
from infra.eventlog import make_consumer, topic_partitions
from infra.settings import Settings
from projections import ALL
from projections.base import Projection
from projections.plan import Plan, plan_for
from services.processes.projector.runner import execute_plan, topic_of


class NotMyTurn(Exception):
    """The projection's status or generation changed under the rebuild (another rebuild began)."""


async def _check_turn(conn: asyncpg.Connection, name: str, generation: int) -> None:
    state = (await lock_states(conn, [name])).get(name)
    if state is None or state.status != "rebuilding" or state.generation != generation:
        raise NotMyTurn(name)


def _prepare(projection: Projection, batch: ParsedBatch, stored: Marks) -> tuple[Plan, list[Tracking], int]:
    """Pure: the batch's plan, its tracking and how many new messages it holds (``stored`` is
    moved past the batch)."""
    fresh = take_fresh(batch, stored, projection.handles_type)
    plan = plan_for(projection, [batch.payload(m) for m in fresh.messages])
    return plan, [Tracking(projection.name, p, m) for p, m in fresh.moved.items()], fresh.applied


async def rebuild(settings: Settings, name: str, *, progress=None) -> dict:
    """Empty the read model and replay the whole topic into it; the live runner pauses meanwhile.

    Returns counts and the rate. ``progress(done, remaining, rate)`` is called as it goes.
    """
    projection = ALL[name]
    registry = EventRegistry()
    conn = await connect(settings.resolved_database_url(), server_settings=REPLAYABLE)
    consumer = make_consumer(settings, group_id=None)
    try:
        await ensure_state_rows(conn, [name])
        async with conn.transaction():
            generation = await conn.fetchval(
                "UPDATE projection_state SET status = 'rebuilding', generation = generation + 1, error = NULL, "
                "error_position = NULL, updated_at = $2 WHERE projection = $1 RETURNING generation", name,
                settings.now())
            for stmt in projection.teardown:
                await conn.execute(stmt)
            await conn.execute("DELETE FROM projection_offsets WHERE projection = $1", name)
        await consumer.start()
        tps = await topic_partitions(consumer, topic_of(settings, projection.source))
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        begin = await consumer.beginning_offsets(tps)
        total = sum(end[tp] - begin[tp] for tp in tps)
        reached = {tp: begin[tp] for tp in tps}
        applied = 0
        started = time.monotonic()
        remaining = {tp for tp in tps if reached[tp] < end[tp]}
        # Two-stage pipeline: while PostgreSQL applies batch N, batch N+1 is fetched and decoded.
        # The rebuild is the only writer of this projection meanwhile, so tracking is known here.
        stored: Marks = {}
        ready: asyncio.Queue[tuple[Plan, list[Tracking], int] | None] = asyncio.Queue(maxsize=2)

        async def fetch_and_prepare() -> None:
            while remaining:
                batches = await fill_batch(consumer, remaining, settings.rebuild_batch_records)
                todo = {}
                for tp, msgs in batches.items():
                    msgs = [m for m in msgs if m.offset < end[tp]]
                    if msgs:
                        todo[tp.partition] = msgs
                        reached[tp] = msgs[-1].offset + 1
                    if reached[tp] >= end[tp]:
                        remaining.discard(tp)
                if todo:
                    await ready.put(_prepare(projection, ParsedBatch(projection.source, registry, todo), stored))
            await ready.put(None)

        feeder = asyncio.create_task(fetch_and_prepare())
        try:
            while (prepared := await ready.get()) is not None:
                plan, tracking, new = prepared
                async with conn.transaction():
                    await _check_turn(conn, name, generation)
                    await write_marks(conn, tracking, announce=True)
                    await execute_plan(conn, plan)
                applied += new
                if progress:
                    done = sum(reached[tp] - begin[tp] for tp in tps)
                    elapsed = time.monotonic() - started
                    progress(done, total - done, done / elapsed if elapsed else 0.0)
            await feeder
        finally:
            feeder.cancel()
        elapsed = time.monotonic() - started
        await conn.execute("UPDATE projection_state SET status = 'live', updated_at = $3 "
                           "WHERE projection = $1 AND generation = $2", name, generation, settings.now())
        return {"projection": name, "messages": total, "applied": applied, "seconds": elapsed,
                "events_per_s": total / elapsed if elapsed > 0 else 0.0}
    finally:
        await consumer.stop()
        await conn.close()


def progress_bar(stream=sys.stderr):
    def show(done: int, remaining: int, rate: float) -> None:
        total = done + remaining
        width = 30
        filled = int(width * done / total) if total else width
        stream.write(f"\r[{'#' * filled}{'-' * (width - filled)}] {done:,}/{total:,} events  "
                     f"{rate:,.0f} ev/s  lag {remaining:,}   ")
        stream.flush()

    return show
