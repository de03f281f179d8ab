"""The one consume-and-track runner: a Kafka consumer feeding tracked readers, with one failure policy.

Every reader of the log with an effect runs here: the projections (``services/processes/projector``),
the dispatcher's intake and the credits watch. A ``Reader`` declares its name, the event types
it handles and its effect (``apply``: statements on the connection of the runner's transaction).
The runner owns everything else:

- one consumer per runner (auto-commit off), in the consumer group it is given; on every
  assignment it seeks to the least advanced offset its readers stored in PostgreSQL, and Kafka's
  own committed offsets are written at most once a second, as a hint for tooling;
- one transaction per fetched batch for all the readers the batch concerns: their states are
  checked (``projection_state``), their marks locked and read, what each applied already is
  skipped (by offset, and by position for the relay's resends), each reader's new marks and its
  effect are written together; a reader the batch does not concern advances its mark in memory
  and stores it with its next transaction, or after ``projector_idle_flush_s``;
- the failure policy, declared here once: a batch that fails for a reason other than an outage
  is retried reader by reader, ``projector_max_attempts`` times with doubling backoff from
  ``projector_retry_backoff_s``; then the runner names the failing event (the reader's messages
  applied one at a time, rolled back), records it (``projection_state``: status ``stopped``,
  ``error``, ``error_position``, shown by ``vaeo status`` and ``vaeo projections list``) and stops
  that reader alone. It never skips an event and never ends the process; a start (a process
  restart) retries a stopped reader. Outages of PostgreSQL or Kafka are retried forever with
  backoff and are not event failures;
- a reader found ``rebuilding`` (a projection's rebuild began) is paused alone, and taken back
  from where the rebuild left it once it is ``live`` again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import asyncpg
from aiokafka import ConsumerRebalanceListener

from infra.codec import EventRegistry
from infra.consume import (
    Marks,
    Message,
    ParsedBatch,
    Tracking,
    advance,
    earliest_marks,
    ensure_state_rows,
    lock_states,
    read_marks,
    record_stopped,
    retry_stopped,
    seek_to_earliest,
    take_fresh,
    write_marks,
)
from infra.db import create_pool
from infra.eventlog import make_consumer, start_or_stop
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from services.lib.common import is_transient, supervise, until_connected

if TYPE_CHECKING:
    from services.application.context import Application

log = logging.getLogger("vaeo.consuming")


class Reader:
    """A tracked reader of the log: its rows in ``projection_state`` and ``projection_offsets`` are
    under ``name``. Subclasses give ``handles_type`` and ``apply``."""

    name: str

    def handles_type(self, kind: str) -> bool:
        """Whether events of this type have an effect here; the others only advance tracking
        (and are never decoded for this reader)."""
        return True

    async def apply(self, conn: asyncpg.Connection, batch: ParsedBatch, fresh: list[Message]) -> None:
        """The effect of ``fresh`` (new messages of handled types, per partition in offset order),
        on ``conn``, inside the runner's transaction that also stores this reader's marks.
        ``batch.payload(msg)`` decodes a message (once for all readers). Raising fails the batch."""
        raise NotImplementedError

    async def committed(self) -> None:
        """Called after a transaction in which ``apply`` ran has committed (not after one rolled
        back): a wake-up for others, counts. Must not fail."""



class AppendingReader(Reader):
    """A tracked reader whose effect is an append (the credits watch, the exports watch): its own
    pool and event store, one runner on its ``source`` topic in the consumer group
    ``<consumer_group_prefix><name>``; what ``apply`` appends (``store.save_within``, position
    kept in ``last``) commits with the reader's tracking, and ``announce`` wakes the relay after
    the commit. Its events are encoded by the application's context for their cause
    (``application.reacting(event).encoded(...)``), so their ``meta`` follows the rule every
    append of the service follows. Subclasses give ``name``, ``source``, ``handles_type``,
    ``apply`` and ``committed``."""

    source = "events"  # or "telemetry"

    def __init__(self, settings: Settings, *, registry: EventRegistry | None = None) -> None:
        self.settings = settings
        self.registry = registry or EventRegistry()
        self.store: PostgresEventStore | None = None
        self.application: Application | None = None  # over ``store``, made with it by ``run``
        self.last = 0  # the position of the batch's last append (0: it appended nothing)

    async def run(self, stop: asyncio.Event) -> None:
        label = self.name.replace("_", " ")
        pool = await until_connected(lambda: create_pool(self.settings.resolved_database_url(), min_size=1,
                                                         max_size=4), stop, label)
        if pool is None:
            return
        topic = self.settings.telemetry_topic if self.source == "telemetry" else self.settings.events_topic
        try:
            self.store = PostgresEventStore(pool, self.registry, notify=self.settings.notify_on_append,
                                            clock=self.settings.now)
            # The application and its adapters are imported here, by the readers that append: the
            # projector's process (the same runner, no append) never loads them (ffmpeg's and the
            # webhook client's modules, the secret box: about 20 MB resident).
            from infra.wiring import adapters_for
            from services.application.bootstrap import bootstrap

            self.application = bootstrap(self.settings, self.store, adapters_for(self.store))
            runner = ConsumerRunner(self.settings, [self], pool, self.registry, topic=topic,
                                    group=self.settings.consumer_group_prefix + self.name, source=self.source,
                                    max_records=1000)
            await runner.serve(stop)
        finally:
            await pool.close()

    async def announce(self) -> None:
        """After a commit that appended: the relay's wake-up (a lost one costs it a polling interval)."""
        if self.last:
            try:
                await self.store.announce(self.last)
            except Exception as exc:  # noqa: BLE001
                log.debug("%s: NOTIFY after an append failed: %s", self.name, exc)
        self.last = 0

@dataclass
class RunnerStats:
    applied: int = 0
    duplicates: int = 0
    batches: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def rate(self) -> float:
        elapsed = time.monotonic() - self.started
        return self.applied / elapsed if elapsed > 0 else 0.0


@dataclass
class BatchOutcome:
    """What one transaction did: per reader (new messages, duplicates), and the readers found not
    ``live`` (a rebuild began, or another process stopped them): nothing applied for those."""

    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    not_live: list[str] = field(default_factory=list)
    applied_by: list[Reader] = field(default_factory=list)


class ConsumerRunner:
    """Readers of one topic sharing one consumer, one decoding and one transaction per batch.

    Each reader keeps its own marks, status and failure policy; ``states`` holds, per reader,
    ``starting``, ``live``, ``paused`` (being rebuilt), ``reconnecting`` (an outage) or
    ``stopped`` (a failing event).
    """

    def __init__(self, settings: Settings, readers: list[Reader], pool: asyncpg.Pool, registry: EventRegistry, *,
                 topic: str, group: str, source: str = "events", announce: bool = False,
                 max_records: int | None = None) -> None:
        if not readers:
            raise ValueError("a runner needs at least one reader")
        self.settings = settings
        self.readers = {r.name: r for r in readers}
        self.pool = pool
        self.registry = registry
        self.topic = topic
        self.group = group
        self.source = source
        self.announce = announce  # NOTIFY progress for read-your-writes waits
        self.max_records = max_records or settings.projector_max_records
        self.label = ",".join(self.readers)
        self.stats = RunnerStats()
        self.states: dict[str, str] = {name: "starting" for name in self.readers}
        self._deferred: dict[str, Marks] = {name: {} for name in self.readers}
        self._flushed = time.monotonic()
        self._checked_paused = 0.0

    @property
    def status(self) -> str:
        """``live`` while any reader is applied; else ``paused``, ``stopped`` or the transient state."""
        states = set(self.states.values())
        for status in ("live", "paused", "reconnecting", "starting"):
            if status in states:
                return status
        return "stopped"

    def _named(self, status: str) -> list[str]:
        return [name for name, s in self.states.items() if s == status]

    def _set_all(self, status: str) -> None:
        for name, s in self.states.items():
            if s != "stopped":
                self.states[name] = status

    async def run(self, stop: asyncio.Event) -> None:
        """Consume until ``stop``, or until every reader has stopped on a failing event."""
        names = list(self.readers)

        async def start() -> bool:
            async with self.pool.acquire() as conn:
                await ensure_state_rows(conn, names)
                await retry_stopped(conn, names, self.settings.now())
            return True

        if await until_connected(start, stop, f"{self.label}: start") is None:
            return
        await supervise(self._consume, stop, self.label, on_outage=lambda: self._set_all("reconnecting"))

    async def serve(self, stop: asyncio.Event) -> None:
        """``run``, then stay until ``stop``: a process whose readers all stopped on a failing event
        stays up and reports them (a restart is what retries them, not a crash loop)."""
        await self.run(stop)
        if not stop.is_set():
            log.error("%s: every reader stopped on a failing event; restart the process to retry", self.label)
            await stop.wait()

    async def _consume(self, stop: asyncio.Event) -> None:
        runner = self

        class SeekToStored(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked):
                for tp in revoked:  # another owner takes over from what PostgreSQL stored
                    for deferred in runner._deferred.values():
                        deferred.pop(tp.partition, None)

            async def on_partitions_assigned(self, assigned):
                # aiokafka logs and swallows a listener's error: retry here until the seek is
                # done, so that consumption always starts from what PostgreSQL stored.
                await until_connected(lambda: runner._seek(consumer, assigned), stop,
                                      f"{runner.label}: seek to stored offsets")

        consumer = make_consumer(self.settings, group_id=self.group)
        consumer.subscribe([self.topic], listener=SeekToStored())
        await start_or_stop(consumer)
        hint: dict = {}
        hinted = 0.0
        try:
            for name in self._named("starting") + self._named("reconnecting"):
                self.states[name] = "live"
            while not stop.is_set():
                if not self._named("live") and not self._named("paused"):
                    return  # every reader stopped on a failing event
                batches = await consumer.getmany(timeout_ms=500, max_records=self.max_records)
                if self._named("paused") and time.monotonic() - self._checked_paused >= 0.5:
                    await self._resume_rebuilt(consumer)
                await self._apply(ParsedBatch(self.source, self.registry,
                                              {tp.partition: m for tp, m in batches.items()}))
                # A hint for Kafka tooling only (PostgreSQL holds the truth), at most once a second:
                # a commit round trip per batch would sit between every two batches.
                for tp, msgs in batches.items():
                    hint[tp] = msgs[-1].offset + 1
                if hint and time.monotonic() - hinted >= 1.0:
                    try:
                        await consumer.commit(dict(hint))
                    except Exception as exc:  # rebalancing: the next round commits again
                        log.debug("%s: offset hint not committed: %s", self.label, exc)
                    hint.clear()
                    hinted = time.monotonic()
        finally:
            await consumer.stop()

    async def _seek(self, consumer, partitions) -> None:
        names = [n for n, s in self.states.items() if s != "stopped"] or list(self.readers)
        async with self.pool.acquire() as conn:
            earliest = await earliest_marks(conn, names)
        await seek_to_earliest(consumer, earliest, partitions)

    # ------------------------------------------------------------------------- one batch

    async def _apply(self, batch: ParsedBatch) -> None:
        live = [self.readers[n] for n in self._named("live")]
        flush_due = time.monotonic() - self._flushed >= self.settings.projector_idle_flush_s
        taking = [r for r in live if batch.concerns(r.handles_type) or (flush_due and self._deferred[r.name])]
        if len(taking) < len(live) and batch:
            reach = batch.reach()
            for r in live:
                if r not in taking:
                    advance(self._deferred[r.name], reach)
        if not taking:
            return
        try:
            async with self.pool.acquire() as conn:
                outcome = await self._transaction(conn, batch, taking)
        except Exception as exc:
            if is_transient(exc):
                raise
            log.warning("%s: shared batch failed (%s: %s); applying each reader on its own",
                        ",".join(r.name for r in taking), type(exc).__name__, exc)
            for r in taking:
                await self._apply_alone(r, batch)
            return
        await self._settle(outcome)
        if flush_due:
            self._flushed = time.monotonic()

    async def _transaction(self, conn: asyncpg.Connection, batch: ParsedBatch, readers: list[Reader]) -> BatchOutcome:
        """Apply one fetched batch for ``readers`` in one transaction.

        Per reader, its effect and its marks (next offset and highest position per partition,
        and the marks deferred in memory) commit together. Sharing the transaction (its commit,
        its locks and its tracking statement) between the readers of one fetch is what keeps the
        projector's cost per event low when a dozen read models follow one topic.
        """
        outcome = BatchOutcome()
        async with conn.transaction():
            states = await lock_states(conn, [r.name for r in readers])
            live = [r for r in readers if (s := states.get(r.name)) is not None and s.status == "live"]
            outcome.not_live = [r.name for r in readers if r not in live]
            if not live:
                return outcome
            partitions = set(batch.parts)
            for r in live:
                partitions.update(self._deferred[r.name])
            stored = await read_marks(conn, [r.name for r in live], partitions)
            tracking: list[Tracking] = []
            work = []
            for r in live:
                marks, deferred = stored[r.name], self._deferred[r.name]
                advance(marks, deferred)
                fresh = take_fresh(batch, marks, r.handles_type)
                tracking.extend(Tracking(r.name, p, m) for p, m in fresh.moved.items())
                tracking.extend(Tracking(r.name, p, marks[p]) for p in deferred if p not in fresh.moved)
                outcome.counts[r.name] = (fresh.applied, fresh.duplicates)
                if fresh.messages:
                    work.append((r, fresh.messages))
            await write_marks(conn, tracking, announce=self.announce)
            for r, messages in work:
                await r.apply(conn, batch, messages)
                outcome.applied_by.append(r)
        return outcome

    async def _settle(self, outcome: BatchOutcome) -> None:
        for name, (applied, duplicates) in outcome.counts.items():
            self._deferred[name] = {}
            self.stats.applied += applied
            self.stats.duplicates += duplicates
        self.stats.batches += 1
        for name in outcome.not_live:
            self._pause(name)
        for reader in outcome.applied_by:
            await reader.committed()

    def _pause(self, name: str) -> None:
        self.states[name] = "paused"
        self._deferred[name] = {}
        log.info("%s: paused while it is rebuilt", name)

    async def _resume_rebuilt(self, consumer) -> None:
        """Take back the paused readers whose rebuild ended, from where the rebuild left them."""
        self._checked_paused = time.monotonic()
        paused = self._named("paused")
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT projection, status FROM projection_state WHERE projection = ANY($1::text[])", paused)
            back = [r["projection"] for r in rows if r["status"] == "live"]
            for r in rows:
                if r["status"] == "stopped":
                    self.states[r["projection"]] = "stopped"
            if not back:
                return
            earliest = await earliest_marks(conn, back)
        for tp in consumer.assignment():
            if tp.partition not in earliest:
                await consumer.seek_to_beginning(tp)
            elif earliest[tp.partition] < await consumer.position(tp):
                consumer.seek(tp, earliest[tp.partition])
        for name in back:
            self.states[name] = "live"
            log.info("%s: resumed", name)

    # ------------------------------------------------------------------------- the failure policy

    async def _apply_alone(self, reader: Reader, batch: ParsedBatch) -> None:
        """The reader's own transaction, retried with doubling backoff; then the failing event is
        named in ``projection_state`` and the reader stops (it never skips)."""
        attempts = self.settings.projector_max_attempts
        delay = self.settings.projector_retry_backoff_s
        for attempt in range(1, attempts + 1):
            try:
                async with self.pool.acquire() as conn:
                    outcome = await self._transaction(conn, batch, [reader])
            except Exception as exc:
                if is_transient(exc):
                    raise
                log.warning("%s: batch failed (attempt %d/%d): %s: %s", reader.name, attempt, attempts,
                            type(exc).__name__, exc)
                if attempt < attempts:
                    await asyncio.sleep(delay)
                    delay *= 2
                continue
            await self._settle(outcome)
            return
        position, error = await self._failing_event(reader, batch)
        async with self.pool.acquire() as conn:
            await record_stopped(conn, reader.name, position, error, self.settings.now())
        log.error("%s: stopped at position %d: %s", reader.name, position, error)
        self.states[reader.name] = "stopped"
        self._deferred[reader.name] = {}

    async def _failing_event(self, reader: Reader, batch: ParsedBatch) -> tuple[int, str]:
        """Apply the reader's new messages of the batch one at a time, each rolled back, to name
        the one that fails: (its position, the error)."""
        positions = [m.position for msgs in batch.parts.values() for m in msgs]
        async with self.pool.acquire() as conn:
            outer = conn.transaction()
            await outer.start()
            try:
                marks = (await read_marks(conn, [reader.name], batch.parts))[reader.name]
                advance(marks, self._deferred[reader.name])
                for msg in take_fresh(batch, marks, reader.handles_type).messages:
                    try:
                        async with conn.transaction():  # a savepoint, always rolled back
                            await reader.apply(conn, batch, [msg])
                            raise _RollBack
                    except _RollBack:
                        continue
                    except Exception as exc:
                        if is_transient(exc):
                            raise
                        return msg.position, f"{type(exc).__name__}: {exc}"
            finally:
                await outer.rollback()
        why = "the batch failed but no single event did (conflict inside the batch)"
        return (positions[0] if positions else 0), why


class _RollBack(Exception):
    pass

