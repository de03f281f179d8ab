"""The dispatcher (``vaeo dispatcher``): domain events on Kafka -> signed HTTPS deliveries.

Two loops in one process, sharing nothing but PostgreSQL: the **intake** (``intake``: a tracked
reader of the log that turns events into ``webhook_deliveries`` rows, with no other side effect)
and the **sender** (``sender``: claims due rows, sends, records each attempt as events). An intake
stopped on a failing event leaves the sender running; restarting the process retries the event.
"""

from __future__ import annotations

import asyncio

from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventstore_postgres import PostgresEventStore
from infra.netguard import Resolver
from infra.settings import Settings
from services.processes.dispatcher.intake import INTAKE_TYPES, NAME, WAKE_CHANNEL, Intake, plan_intake
from services.processes.dispatcher.sender import Sender

__all__ = ["INTAKE_TYPES", "NAME", "WAKE_CHANNEL", "Intake", "Sender", "plan_intake", "run_dispatcher"]


async def run_dispatcher(settings: Settings, stop: asyncio.Event, *, resolver: Resolver | None = None,
                         intake: bool = True, sender: bool = True) -> None:
    if not settings.secret_key:
        raise RuntimeError("the dispatcher needs VAEO_SECRET_KEY to decrypt webhook secrets")
    registry = EventRegistry()
    pool = await create_pool(settings.resolved_database_url(), min_size=1,
                             max_size=8 + min(settings.dispatcher_concurrency, 40))
    try:
        # No group commit: the sender's recorder batches its appends itself (save_batch).
        store = PostgresEventStore(pool, registry, notify=settings.notify_on_append, clock=settings.now)
        loops = []
        if intake:
            loops.append(Intake().runner(settings, pool, registry).serve(stop))
        if sender:
            loops.append(Sender(settings, pool, store, resolver=resolver).run(stop))
        await asyncio.gather(*loops)
    finally:
        await pool.close()

