"""The credits watch (``vaeo credits-watch``): appends ``CreditsLow`` once per downward crossing.

Why a process on the log rather than inside the command that charges: every charge, whichever
command or engine appends it (the API, a worker, an operator script), reaches the log, and this
process sees them all; a rule inside one command would miss the charges of the others. And why
not a projection: appending an event is a side effect, and projections have none (a rebuild must
never notify anybody again).

The rule: a ``CreditsCharged`` at stream version v crossed the threshold when the workspace had
at least ``alert_credits_warning_pct`` percent of its credits remaining before it (version v-1)
and less after it (version v), both folded from the workspace's stream. The CreditsLow it
appends names v (``crossing_version``) and the aggregate refuses a second one for the same or an
earlier crossing, so the at-least-once intake (redelivery, a restart, a replay, two watches at
once) appends exactly one: the append carries the stream's expected version, a concurrent append
makes it retry on the reloaded stream, which already holds the flag. Crossing again needs credits
back above the threshold first (a top-up, ``vaeo workspace credits W --add N``, or refunds).

Intake: the events topic, every partition assigned to this process; the next offset per
partition is stored in ``projection_offsets`` under the name ``credits_watch`` after the batch's
appends (a crash in between redelivers the batch, which the rule absorbs). One watch runs per
stack; a second one would only do the work twice, without a second event.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from uuid import UUID

import asyncpg
import orjson

from domain.workspaces import Workspace, crosses_below
from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventlog import make_consumer, topic_partitions
from infra.eventstore import ConcurrencyError, EventStore
from infra.settings import Settings
from services.common import supervise

log = logging.getLogger("vaeo.credits_watch")

NAME = "credits_watch"
CONFLICT_RETRIES = 10


async def check_charge(store: EventStore, workspace_id, version: int, threshold_pct: float) -> int | None:
    """Apply the rule to the charge at ``version`` of the workspace's stream; the position appended, if any."""
    for _ in range(CONFLICT_RETRIES):
        events = await store.load(workspace_id)
        if len(events) < version or events[version - 1].type != "CreditsCharged":
            return None
        before = store.registry.reconstruct(events[:version - 1])
        after = store.registry.reconstruct(events[:version])
        if not isinstance(after, Workspace) or not crosses_below(threshold_pct, before, after):
            return None
        current = store.registry.reconstruct(events)
        if not current.flag_low_credits(threshold_pct, version):
            return None  # this crossing was flagged already
        # The event reports the balance at the crossing, not later moves.
        try:
            return await store.save(current, workspace_id=workspace_id)
        except ConcurrencyError:
            continue
    raise ConcurrencyError(f"workspace {workspace_id}: CreditsLow not appended after {CONFLICT_RETRIES} conflicts")


class CreditsWatch:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.appended = 0

    async def run(self, stop: asyncio.Event) -> None:
        await supervise(self._run, stop, "credits watch")

    async def _run(self, stop: asyncio.Event) -> None:
        pool = await create_pool(self.settings.resolved_database_url(), min_size=1, max_size=4)
        consumer = make_consumer(self.settings, group_id=None)
        try:
            store = EventStore(pool, EventRegistry(), notify=self.settings.notify_on_append)
            await consumer.start()
            tps = await topic_partitions(consumer, self.settings.events_topic)
            consumer.assign(tps)
            async with pool.acquire() as conn:
                stored = {r["partition"]: r["next_offset"] for r in await conn.fetch(
                    "SELECT partition, next_offset FROM projection_offsets WHERE projection = $1", NAME)}
            for tp in tps:
                if tp.partition in stored:
                    consumer.seek(tp, stored[tp.partition])
                else:
                    await consumer.seek_to_beginning(tp)
            while not stop.is_set():
                batches = await consumer.getmany(timeout_ms=500, max_records=1000)
                if batches:
                    await self._handle(store, pool, batches)
        finally:
            with contextlib.suppress(Exception):
                await consumer.stop()
            await pool.close()

    async def _handle(self, store: EventStore, pool: asyncpg.Pool, batches) -> None:
        threshold = self.settings.alert_credits_warning_pct
        tracking = []
        for tp, msgs in batches.items():
            for msg in msgs:
                if dict(msg.headers).get("type") == b"CreditsCharged":
                    ev = orjson.loads(msg.value)
                    if await check_charge(store, UUID(ev["stream_id"]), ev["version"], threshold) is not None:
                        self.appended += 1
                        log.info("credits low in workspace %s (charge at version %d)", ev["stream_id"], ev["version"])
            tracking.append((NAME, tp.partition, msgs[-1].offset + 1, 0))
        async with pool.acquire() as conn:
            await conn.executemany(
                "INSERT INTO projection_offsets (projection, partition, next_offset, max_position) "
                "VALUES ($1, $2, $3, $4) ON CONFLICT (projection, partition) DO UPDATE "
                "SET next_offset = excluded.next_offset", tracking)
