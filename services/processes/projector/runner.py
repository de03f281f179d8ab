"""The projection runner (``vaeo projector``): every read model of a topic as a reader of one
``ConsumerRunner`` (``services/processes/consuming.py``).

One consumer per topic and process, in a consumer group named by its set of projections; one
transaction per fetched batch for all the projections it concerns, each with its own tracking
(``projection_offsets``), status and generation (``projection_state``), and a NOTIFY of its
progress for read-your-writes waits. The failure policy is the runner's: a projection that
fails on an event is retried with backoff, then stopped alone and reported (``vaeo projections
list``, ``vaeo status``); restarting the projector retries it. A projection being rebuilt is
paused alone and resumes from where the rebuild left it.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time

import asyncpg

from infra.codec import EventRegistry
from infra.consume import Message, ParsedBatch
from infra.db import REPLAYABLE, create_pool
from infra.settings import Settings
from projections import ALL
from projections.base import Projection, Statement
from projections.plan import Plan, execution_plan, plan_for
from services.lib.common import until_connected
from services.processes.consuming import ConsumerRunner, Reader

log = logging.getLogger("vaeo.projector")


def topic_of(settings: Settings, source: str) -> str:
    return settings.telemetry_topic if source == "telemetry" else settings.events_topic


async def execute_plan(conn: asyncpg.Connection, plan: Plan) -> None:
    for sql, many in plan:
        if len(many) == 1:
            await conn.execute(sql, *many[0])
        else:
            await conn.executemany(sql, many)


async def execute_statements(conn: asyncpg.Connection, statements: list[Statement]) -> None:
    """Run statements in order; consecutive runs of the same SQL go as one pipelined executemany."""
    await execute_plan(conn, execution_plan([(None, st) for st in statements], "strict"))


class ProjectionReader(Reader):
    """A read model as a tracked reader: its effect is its planned statements."""

    def __init__(self, projection: Projection) -> None:
        self.projection = projection
        self.name = projection.name

    def handles_type(self, kind: str) -> bool:
        return self.projection.handles_type(kind)

    async def apply(self, conn: asyncpg.Connection, batch: ParsedBatch, fresh: list[Message]) -> None:
        await execute_plan(conn, plan_for(self.projection, [batch.payload(m) for m in fresh]))


def consumer_group(settings: Settings, names: list[str]) -> str:
    """One projection keeps its own group; a set gets a group of its own, named by its members,
    so that processes running the same set share the partitions and a process running another
    set (``vaeo projector --only jobs``) never takes partitions away from it."""
    if len(names) == 1:
        return settings.consumer_group_prefix + names[0]
    digest = hashlib.sha256(",".join(sorted(names)).encode()).hexdigest()[:12]
    return f"{settings.consumer_group_prefix}projector-{digest}"


class ProjectionRunner(ConsumerRunner):
    """The live runner of the projections that read one topic (see ``ConsumerRunner``).

    Tracking over messages a projection does not handle is kept in memory and stored with its
    next transaction, or after ``projector_idle_flush_s``: a row write per read model for every
    event of every other read model would cost more than the events themselves. After a crash
    those messages are read again, to no effect.
    """

    def __init__(self, settings: Settings, projections: list[Projection], pool: asyncpg.Pool,
                 registry: EventRegistry) -> None:
        sources = {p.source for p in projections}
        if len(sources) != 1:
            raise ValueError(f"one runner reads one topic; got sources {sorted(sources)}")
        source = sources.pop()
        names = [p.name for p in projections]
        super().__init__(settings, [ProjectionReader(p) for p in projections], pool, registry,
                         topic=topic_of(settings, source), group=consumer_group(settings, names), source=source,
                         announce=True)
        self.projections = {p.name: p for p in projections}


async def run_projector(settings: Settings, stop: asyncio.Event, names: list[str] | None = None) -> None:
    """Run the selected projections (all by default), one runner per source topic, until ``stop``."""
    registry = EventRegistry()
    selected = [ALL[n] for n in (names or list(ALL))]
    pool = await until_connected(lambda: create_pool(settings.resolved_database_url(), min_size=1, max_size=8,
                                                     server_settings=REPLAYABLE), stop, "projector")
    if pool is None:
        return
    try:
        by_source: dict[str, list[Projection]] = {}
        for p in selected:
            by_source.setdefault(p.source, []).append(p)
        runners = [ProjectionRunner(settings, group, pool, registry) for group in by_source.values()]
        try:
            await asyncio.gather(*(r.serve(stop) for r in runners))
        finally:
            for r in runners:  # applied / batches is the batch size: what each transaction carries
                log.info("projections %s (%s): stopped after %.0fs, %d messages applied in %d batches",
                         r.label, r.source, time.monotonic() - r.stats.started, r.stats.applied, r.stats.batches)
    finally:
        await pool.close()
