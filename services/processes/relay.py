"""The relay: the events table to Kafka, in position order, checkpointing only what Kafka acked.

At least once: after a crash the relay resends from its checkpoint, and readers skip what they
have already applied by position. One relay is active at a time (a session advisory lock);
a second one waits as a standby. Woken by NOTIFY, with a polling fallback.

Unhurried appends (``EventStore.save(unhurried=True)``: events nobody waits for downstream, the
assistant's conversation turns) wait for company: when the relay has caught up, it fetches again
no sooner than ``relay_unhurried_ms`` after its last fetch, unless a hurried append (every other
one: a command whose answer waits for a read model) arrives meanwhile, which is fetched at once.
Under a load of unhurried appends each fetch, each Kafka request and each projector transaction
carries several turns instead of one or two: the background's cost is per batch, not per event
(docs/benchmarks.md, Assistant). A backlog is never held back, and an idle relay fetches at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

import asyncpg
import orjson

from infra.db import REPLAYABLE, connect
from infra.eventlog import key_of, make_producer, start_or_stop
from infra.eventstore_sql import NOTIFY_CHANNEL, UNHURRIED
from infra.settings import Settings
from services.lib.common import sleep_until_stopped, supervise
from services.lib.status import RELAY_LOCK, relay_lock_holder_name

log = logging.getLogger("vaeo.relay")

_AFTER = (
    "SELECT position, stream_id, stream_type, version, workspace_id, type, schema, data::text AS data, "
    "meta::text AS meta, recorded_at FROM events WHERE position > $1 ORDER BY position LIMIT "
)
_FETCH = _AFTER + "$2"  # (after, batch size)
_MARK = "UPDATE relay_checkpoint SET position = $1, updated_at = $5 WHERE name = $2"  # (checkpoint, name; now)
# The checkpoint of the batch Kafka just acknowledged rides on the next fetch: one round trip per
# batch instead of two. The loop fetches again at once after a batch, so it is stored right away.
_MARK_AND_FETCH = f"WITH mark AS ({_MARK}) {_AFTER.replace('$1', '$3')}$4"  # (checkpoint, name, after, size, now)


@dataclass
class _Sent:
    """A batch handed to the producer and not yet acknowledged."""

    acks: asyncio.Future  # every record's acknowledgement
    first: int  # positions
    last: int
    count: int


def encode(row: asyncpg.Record) -> bytes:
    """The Kafka value: the stored envelope, with data and meta spliced in as they are stored."""
    return orjson.dumps({
        "position": row["position"], "stream_id": str(row["stream_id"]), "stream_type": row["stream_type"],
        "version": row["version"], "workspace_id": str(ws) if (ws := row["workspace_id"]) else None,
        "type": row["type"], "schema": row["schema"],
        "data": orjson.Fragment(row["data"]), "meta": orjson.Fragment(row["meta"]),
        "recorded_at": row["recorded_at"],
    })


class Relay:
    def __init__(self, settings: Settings, name: str = "main") -> None:
        self.settings = settings
        self.name = name
        self.checkpoint = 0
        self.relayed = 0
        self.batches = 0  # acknowledged batches: relayed / batches is the batch size
        self.stored = 0  # the checkpoint as PostgreSQL holds it (at most one batch behind ``checkpoint``)
        self.fetched = 0  # the last position read from the table: sent, perhaps not acknowledged yet
        self.fetches = 0  # round trips that read the table: fetches / batches is their cost per batch
        self._wake = asyncio.Event()
        self._hurry = asyncio.Event()  # a hurried append was notified since the last fetch
        self._unhurried = False  # an unhurried append was notified since the last fetch
        self._fetched_at = 0.0  # monotonic time of the last fetch
        self.held = 0  # fetches held back for company (unhurried appends only)
        # Called with (first, last position) once Kafka acknowledged them: metrics and benchmarks.
        self.on_acked = None

    async def run(self, stop: asyncio.Event) -> None:
        """Run until ``stop`` is set, reconnecting to PostgreSQL and Kafka with backoff."""
        await supervise(self._run_connected, stop, "relay")

    async def _run_connected(self, stop: asyncio.Event) -> None:
        dsn = self.settings.resolved_database_url()
        lock_conn = await connect(dsn)
        try:
            # The session that holds (or will hold) the lock says which relay it is: ``vaeo status``
            # marks that one active and the others standing by.
            await lock_conn.execute("SELECT set_config('application_name', $1, false)", relay_lock_holder_name())
            standing_by = False
            while not await lock_conn.fetchval("SELECT pg_try_advisory_lock($1)", RELAY_LOCK):
                if not standing_by:
                    log.info("relay: another relay holds the lock; standing by")
                    standing_by = True
                if await sleep_until_stopped(stop, self.settings.relay_standby_poll_s):
                    return
            if standing_by:
                log.info("relay: the lock is free; taking over")
            await lock_conn.add_listener(NOTIFY_CHANNEL, self._notified)
            conn = await connect(dsn, server_settings=REPLAYABLE)  # it writes only checkpoints
            producer = make_producer(self.settings)
            try:
                await start_or_stop(producer)
            except BaseException:
                await conn.close()
                raise
            try:
                await conn.execute(
                    "INSERT INTO relay_checkpoint (name, position) VALUES ($1, 0) ON CONFLICT DO NOTHING", self.name)
                self.checkpoint = self.stored = self.fetched = await conn.fetchval(
                    "SELECT position FROM relay_checkpoint WHERE name = $1", self.name)
                log.info("relay: started at checkpoint %d", self.checkpoint)
                try:
                    await self._relay_until(stop, conn, producer)
                finally:
                    await self._store_checkpoint(conn)
            finally:
                await producer.stop()
                await conn.close()
        finally:
            await lock_conn.close()

    def _notified(self, _conn, _pid, _channel, payload: str) -> None:
        self._wake.set()
        if payload.startswith(UNHURRIED):
            self._unhurried = True
        else:
            self._hurry.set()

    async def _keep_company(self, stop: asyncio.Event) -> None:
        """Before a fetch that is not part of a backlog, when only unhurried appends were notified
        since the last fetch: wait until ``relay_unhurried_ms`` after it, unless a hurried append
        arrives (or ``stop``). With nothing notified (the fetch that carries a checkpoint) or a
        hurried append notified, the fetch is at once; an idle relay's last fetch is long past."""
        wait = self._fetched_at + self.settings.relay_unhurried_ms / 1000 - time.monotonic()
        if self._unhurried and wait > 0 and not self._hurry.is_set() and not stop.is_set():
            self.held += 1
            hurry = asyncio.ensure_future(self._hurry.wait())
            stopper = asyncio.ensure_future(stop.wait())
            await asyncio.wait({hurry, stopper}, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            hurry.cancel()
            stopper.cancel()
        self._hurry.clear()
        self._unhurried = False

    async def _relay_until(self, stop: asyncio.Event, conn: asyncpg.Connection, producer) -> None:
        """Fetch, send, and wait for the acknowledgements of the batch before: after a full batch
        the next one is read from PostgreSQL and handed to the producer while Kafka acknowledges
        the previous one (fetching only after the acknowledgements left the relay at 63-91 % of a
        bare producer in the core benchmark; overlapped, at its rate). A batch that caught up with
        the table is acknowledged before the next fetch, which then carries its checkpoint: two
        round trips per batch instead of three when the relay keeps up. The checkpoint still moves
        only past acknowledged batches, in order; what was sent and not acknowledged is sent again
        after a failure, and readers skip it by position."""
        in_flight: _Sent | None = None
        sending: _Sent | None = None
        try:
            while not stop.is_set():
                if in_flight is None:  # not in a backlog (a full batch in flight): unhurried rows wait
                    await self._keep_company(stop)
                sending = await self._fetch_and_send(conn, producer)
                waited = in_flight is not None
                if in_flight is not None:
                    await self._acknowledged(in_flight)
                in_flight, sending = sending, None
                if in_flight is not None and in_flight.count < self.settings.relay_batch_size:
                    # Caught up with the table: a fetch now would find the rows of the last few
                    # microseconds, most often none, for a round trip. Those added while Kafka
                    # acknowledges are fetched right after it, with the checkpoint on that fetch.
                    await self._acknowledged(in_flight)
                    in_flight = None
                    continue
                if in_flight is None and not waited:  # nothing new, nothing left to store: sleep
                    waiter = asyncio.ensure_future(self._wake.wait())
                    stopper = asyncio.ensure_future(stop.wait())
                    await asyncio.wait({waiter, stopper}, timeout=self.settings.relay_poll_interval_s,
                                       return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                    stopper.cancel()
            if in_flight is not None:  # a clean stop: what was sent is acknowledged, then stored
                await self._acknowledged(in_flight)
                in_flight = None
        finally:
            for unacknowledged in (in_flight, sending):  # an error: resent from the checkpoint
                if unacknowledged is not None:  # its outcome is of no interest any more
                    unacknowledged.acks.add_done_callback(_ignore_outcome)

    async def _store_checkpoint(self, conn: asyncpg.Connection) -> None:
        """On the way out: the last acknowledged batch's checkpoint, if no fetch carried it yet."""
        if self.checkpoint > self.stored and not conn.is_closed():
            try:
                await conn.execute(_MARK.replace("$5", "$3"), self.checkpoint, self.name, self.settings.now())
                self.stored = self.checkpoint
            except (asyncpg.PostgresError, OSError) as exc:  # resent after a restart: readers skip it
                log.warning("relay: checkpoint %d not stored: %s", self.checkpoint, exc)

    async def _fetch_and_send(self, conn: asyncpg.Connection, producer) -> _Sent | None:
        """The rows after the last fetched, handed to the producer (the previous acknowledged
        checkpoint riding on the fetch); None when there are none."""
        size = self.settings.relay_batch_size
        self.fetches += 1
        self._fetched_at = time.monotonic()
        # Cleared before the fetch, not after it: a NOTIFY that arrives while the fetch is in
        # flight may be for rows the fetch did not see, and must wake the sleep that follows.
        self._wake.clear()
        if self.checkpoint > self.stored:
            rows = await conn.fetch(_MARK_AND_FETCH, self.checkpoint, self.name, self.fetched, size,
                                    self.settings.now())
            self.stored = self.checkpoint
        else:
            rows = await conn.fetch(_FETCH, self.fetched, size)
        if not rows:
            return None
        topic = self.settings.events_topic
        futures = []
        for row in rows:
            futures.append(await producer.send(
                topic, encode(row), key=key_of(row["workspace_id"]),
                headers=[("type", row["type"].encode()), ("position", str(row["position"]).encode())],
            ))
        self.fetched = rows[-1]["position"]
        return _Sent(asyncio.gather(*futures), rows[0]["position"], self.fetched, len(rows))

    async def _acknowledged(self, sent: _Sent) -> None:
        """Every send of the batch acknowledged (acks=all): only then the checkpoint moves past it."""
        await sent.acks
        self.checkpoint = sent.last  # stored by the next fetch
        self.relayed += sent.count
        self.batches += 1
        if self.on_acked:
            self.on_acked(sent.first, sent.last)


def _ignore_outcome(future: asyncio.Future) -> None:
    if not future.cancelled():
        future.exception()


async def relay_lag(conn: asyncpg.Connection, name: str = "main") -> tuple[int, int]:
    """(head position, relay checkpoint)."""
    head = await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
    cp = await conn.fetchval("SELECT position FROM relay_checkpoint WHERE name = $1", name) or 0
    return head, cp
