"""The projection runner (``vaeo projector``) and rebuilds (``vaeo projections rebuild NAME``).

Each projection is its own Kafka consumer group, auto-commit off, never starting at "latest".
A batch of one partition is applied in one PostgreSQL transaction together with the offsets
and the highest position it reached (``projection_offsets``), so a crash at any moment neither
loses nor repeats an effect; on start the consumer seeks to what PostgreSQL stored, and Kafka's
own committed offsets are only a hint for external tools. Duplicates from the at-least-once
relay are skipped by position.

Failing event policy: a batch that fails for a reason other than an outage is retried
``projector_max_attempts`` times with doubling backoff; then the projection narrows the failure
to one event, records it in ``projection_state`` (status ``stopped``, error, position) and stops
consuming. It never skips an event. Restarting the projector retries a stopped projection.
Outages of PostgreSQL or Kafka are retried forever with backoff and are not event failures.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field

import asyncpg
import orjson
from aiokafka import ConsumerRebalanceListener
from aiokafka.structs import ConsumerRecord

from infra.codec import EventRegistry, StoredEvent
from infra.db import REPLAYABLE, connect, create_pool
from infra.eventlog import make_consumer, topic_partitions
from infra.settings import Settings
from projections import ALL
from projections.base import Projection, Statement
from services.common import backoff_delays, is_transient, until_connected

log = logging.getLogger("vaeo.projector")

PROGRESS_CHANNEL = "vaeo_projection"


class ProjectionStopped(Exception):
    pass


class NotMyTurn(Exception):
    """The projection's status changed under the runner (a rebuild started or ended)."""


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


def decode(registry: EventRegistry, value: bytes) -> StoredEvent:
    ev = StoredEvent.from_json(value)
    if not registry.knows(ev.type):
        return ev  # a type this build does not know: no projection handles it, tracking still moves
    # A known type whose old schema cannot be upcast raises: the failing-event policy applies.
    data = registry.upcast(ev.type, ev.schema, ev.data)
    if data is ev.data:
        return ev
    return StoredEvent(ev.position, ev.stream_id, ev.stream_type, ev.version, ev.workspace_id, ev.type,
                       registry.current_schema(ev.type), data, ev.meta, ev.recorded_at)


def topic_of(settings: Settings, projection: Projection) -> str:
    return settings.telemetry_topic if projection.source == "telemetry" else settings.events_topic


def message_position(projection: Projection, msg: ConsumerRecord) -> int:
    """Events carry their global position; telemetry records are ordered by offset alone."""
    return msg.offset + 1 if projection.source == "telemetry" else position_of(msg)


def message_payload(projection: Projection, registry: EventRegistry, msg: ConsumerRecord) -> StoredEvent | dict:
    return orjson.loads(msg.value) if projection.source == "telemetry" else decode(registry, msg.value)


def position_of(msg: ConsumerRecord) -> int:
    for key, value in msg.headers:
        if key == "position":
            return int(value)
    return orjson.loads(msg.value)["position"]


def _kind_and_position(msg: ConsumerRecord) -> tuple[str, int]:
    """Both headers in one pass (the relay writes ``type`` then ``position``)."""
    kind, position = "", None
    for key, value in msg.headers:
        if key == "type":
            kind = value.decode()
        elif key == "position":
            position = int(value)
    return kind, position if position is not None else orjson.loads(msg.value)["position"]


def type_of(msg: ConsumerRecord) -> str:
    for key, value in msg.headers:
        if key == "type":
            return value.decode()
    return ""


def execution_plan(keyed: list[tuple[Hashable, Statement]], ordering: str,
                   merge: Callable[[Statement, Statement], Statement | None] | None = None,
                   ) -> list[tuple[str, list[tuple]]]:
    """Order a batch's statements into (sql, [args, ...]) groups, each sent as one executemany.

    ``strict`` keeps the produced order and only merges consecutive runs of the same SQL.
    ``per_stream`` puts the k-th statement of each stream in layer k: within a layer every
    statement touches another stream's rows, so a layer may be grouped by SQL freely while each
    stream keeps its order; with the projection's ``merge``, two consecutive statements of one
    stream with the same SQL become one (five events of a job in a batch: two writes, not five).
    ``commutative`` groups the whole batch by SQL.
    """
    if ordering == "strict":
        groups: list[tuple[str, list[tuple]]] = []
        for _, (sql, args) in keyed:
            if groups and groups[-1][0] == sql:
                groups[-1][1].append(args)
            else:
                groups.append((sql, [args]))
        return groups
    if ordering == "commutative":
        layers = [keyed]
    elif ordering == "per_stream":
        per_stream: dict[Hashable, list[Statement]] = {}
        for key, statement in keyed:
            mine = per_stream.setdefault(key, [])
            if merge is not None and mine and mine[-1][0] == statement[0]:
                merged = merge(mine[-1], statement)
                if merged is not None:
                    mine[-1] = merged
                    continue
            mine.append(statement)
        layers = []
        for key, statements in per_stream.items():
            for d, statement in enumerate(statements):
                if d == len(layers):
                    layers.append([])
                layers[d].append((key, statement))
    else:
        raise ValueError(f"unknown ordering {ordering!r}")
    plan: list[tuple[str, list[tuple]]] = []
    for layer in layers:
        by_sql: dict[str, list[tuple]] = {}
        for _, (sql, args) in layer:
            by_sql.setdefault(sql, []).append(args)
        plan.extend(by_sql.items())
    return plan


async def execute_plan(conn: asyncpg.Connection, plan: list[tuple[str, list[tuple]]]) -> None:
    for sql, many in plan:
        if len(many) == 1:
            await conn.execute(sql, *many[0])
        else:
            await conn.executemany(sql, many)


async def execute_statements(conn: asyncpg.Connection, statements: list[Statement]) -> None:
    """Run statements in order; consecutive runs of the same SQL go as one pipelined executemany."""
    await execute_plan(conn, execution_plan([(None, st) for st in statements], "strict"))


@dataclass
class Prepared:
    """A batch turned into SQL: the plan, the tracking rows to store, and its counts."""

    plan: list[tuple[str, list[tuple]]]
    tracking: list[tuple[str, int, int, int]]  # (projection, partition, next_offset, max_position)
    applied: int
    duplicates: int


def prepare(registry: EventRegistry, projection: Projection, batches: Mapping[int, list[ConsumerRecord]],
            stored: dict[int, tuple[int, int]]) -> Prepared:
    """Pure: decode, deduplicate against ``stored`` (partition -> (next_offset, max_position)), plan.

    Messages below the stored offset were applied already (this runner before a restart, or
    another owner of the partition); positions at or below the stored maximum are duplicates
    the relay sent again after a crash. Both only advance tracking. ``stored`` is updated.
    """
    keyed: list[tuple[Hashable, Statement]] = []
    tracking: list[tuple[str, int, int, int]] = []
    applied = duplicates = 0
    events = projection.source == "events"
    for partition, msgs in batches.items():
        next_offset, max_position = stored.get(partition, (0, 0))
        last_offset = None
        for msg in msgs:
            if msg.offset < next_offset:
                continue
            last_offset = msg.offset
            kind, position = _kind_and_position(msg) if events else ("", msg.offset + 1)
            if position <= max_position:
                duplicates += 1
                continue
            max_position = position
            applied += 1
            if events and not projection.handles_type(kind):
                continue  # not this read model's concern: tracking only, no decoding
            payload = message_payload(projection, registry, msg)
            key = payload.stream_id if events else None
            for statement in projection.apply(payload):
                keyed.append((key, statement))
        if last_offset is not None:
            tracking.append((projection.name, partition, last_offset + 1, max_position))
            stored[partition] = (last_offset + 1, max_position)
    return Prepared(execution_plan(keyed, projection.ordering, projection.merge), tracking, applied, duplicates)


async def _check_turn(conn: asyncpg.Connection, projection: Projection, expect_status: str,
                      generation: int | None) -> None:
    state = await conn.fetchrow(
        "SELECT status, generation FROM projection_state WHERE projection = $1 FOR SHARE", projection.name)
    if state is None or state["status"] != expect_status or (
            generation is not None and state["generation"] != generation):
        raise NotMyTurn(projection.name)


_TRACK = f"""
WITH stored AS (
    INSERT INTO projection_offsets (projection, partition, next_offset, max_position)
    SELECT $1, u.p, u.o, u.m FROM unnest($2::int[], $3::bigint[], $4::bigint[]) AS u(p, o, m)
    ON CONFLICT (projection, partition) DO UPDATE
    SET next_offset = excluded.next_offset, max_position = excluded.max_position
    RETURNING partition, max_position)
SELECT count(pg_notify('{PROGRESS_CHANNEL}', $1 || ':' || partition || ':' || max_position)) FROM stored"""


async def _commit_prepared(conn: asyncpg.Connection, prepared: Prepared) -> None:
    """The plan, then every partition's tracking and its progress NOTIFY in one statement."""
    await execute_plan(conn, prepared.plan)
    name = prepared.tracking[0][0]
    await conn.fetchval(_TRACK, name, [t[1] for t in prepared.tracking], [t[2] for t in prepared.tracking],
                        [t[3] for t in prepared.tracking])


async def apply_batch(conn: asyncpg.Connection, registry: EventRegistry, projection: Projection,
                      batches: Mapping[int, list[ConsumerRecord]], *, expect_status: str = "live",
                      generation: int | None = None,
                      deferred: Mapping[int, tuple[int, int]] | None = None) -> tuple[int, int]:
    """Apply the messages of several partitions in one transaction; return (applied, duplicates).

    The read-model change and every partition's new offset and highest position commit together.
    ``deferred`` is tracking the runner advanced in memory over messages this projection does not
    handle (see ``ProjectionRunner``); it is stored by this transaction too.
    """
    deferred = deferred or {}
    async with conn.transaction():
        await _check_turn(conn, projection, expect_status, generation)
        parts = sorted(set(batches) | set(deferred))
        rows = await conn.fetch(
            "SELECT partition, next_offset, max_position FROM projection_offsets WHERE projection = $1 "
            "AND partition = ANY($2::int[]) FOR UPDATE", projection.name, parts)
        stored = {r["partition"]: (r["next_offset"], r["max_position"]) for r in rows}
        for partition, (next_offset, max_position) in deferred.items():
            old_offset, old_max = stored.get(partition, (0, 0))
            stored[partition] = (max(old_offset, next_offset), max(old_max, max_position))
        prepared = prepare(registry, projection, batches, stored)
        moved = {t[1] for t in prepared.tracking}
        prepared.tracking.extend((projection.name, p, *stored[p]) for p in deferred if p not in moved)
        if prepared.tracking:
            await _commit_prepared(conn, prepared)
    return prepared.applied, prepared.duplicates


async def find_failing_event(conn: asyncpg.Connection, registry: EventRegistry, projection: Projection,
                             msgs: list[ConsumerRecord]) -> tuple[int, str]:
    """Apply the batch's events one at a time, rolled back, to name the one that fails."""
    for msg in msgs:
        try:
            async with conn.transaction():
                await execute_statements(conn, projection.apply(message_payload(projection, registry, msg)))
                raise _Rollback
        except _Rollback:
            continue
        except Exception as exc:
            if is_transient(exc):
                raise
            return message_position(projection, msg), f"{type(exc).__name__}: {exc}"
    return message_position(projection, msgs[0]), "the batch failed but no single event did (conflict inside the batch)"


class _Rollback(Exception):
    pass


async def ensure_state_rows(conn: asyncpg.Connection, names) -> None:
    await conn.executemany(
        "INSERT INTO projection_state (projection) VALUES ($1) ON CONFLICT DO NOTHING", [(n,) for n in names])


async def seek_to_stored(pool: asyncpg.Pool, consumer, name: str, partitions) -> None:
    """Position the consumer where PostgreSQL says ``name`` got to; the start where it says nothing."""
    async with pool.acquire() as conn:
        offsets = await stored_offsets(conn, name)
    for tp in partitions:
        if tp.partition in offsets:
            consumer.seek(tp, offsets[tp.partition])
        else:
            await consumer.seek_to_beginning(tp)


async def stored_offsets(conn: asyncpg.Connection, name: str) -> dict[int, int]:
    rows = await conn.fetch("SELECT partition, next_offset FROM projection_offsets WHERE projection = $1", name)
    return {r["partition"]: r["next_offset"] for r in rows}


async def fill_batch(consumer, partitions, max_records: int) -> dict:
    """Fetch up to ``max_records`` across partitions, waiting briefly for more: big transactions
    make a rebuild fast; the live runner does not wait, for read-your-writes latency."""
    out: dict = {}
    count = 0
    timeout = 1000
    while count < max_records:
        got = await consumer.getmany(*partitions, timeout_ms=timeout, max_records=max_records - count)
        if not got:
            break
        for tp, msgs in got.items():
            out.setdefault(tp, []).extend(msgs)
            count += len(msgs)
        timeout = 20
    return out


class ProjectionRunner:
    def __init__(self, settings: Settings, projection: Projection, pool: asyncpg.Pool,
                 registry: EventRegistry) -> None:
        self.settings = settings
        self.projection = projection
        self.pool = pool
        self.registry = registry
        self.stats = RunnerStats()
        self.status = "starting"
        self._deferred: dict[int, tuple[int, int]] = {}
        self._flushed = time.monotonic()

    async def run(self, stop: asyncio.Event) -> None:
        delays = backoff_delays()
        while not stop.is_set():
            try:
                await self._consume(stop)
                return
            except ProjectionStopped:
                self.status = "stopped"
                return
            except Exception as exc:
                if not is_transient(exc):
                    raise
                delay = next(delays)
                self.status = "reconnecting"
                log.warning("projection %s: %s: %s; retrying in %.1fs", self.projection.name,
                            type(exc).__name__, exc, delay)
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except TimeoutError:
                    pass

    async def _seek_to_stored(self, consumer, partitions) -> None:
        await seek_to_stored(self.pool, consumer, self.projection.name, partitions)

    async def _consume(self, stop: asyncio.Event) -> None:
        runner = self
        name = self.projection.name

        class SeekToStored(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked):
                for tp in revoked:  # another owner takes over from what PostgreSQL stored
                    runner._deferred.pop(tp.partition, None)

            async def on_partitions_assigned(self, assigned):
                # aiokafka logs and swallows a listener's error: retry here until the seek is
                # done, so that consumption always starts from what PostgreSQL stored.
                await until_connected(lambda: runner._seek_to_stored(consumer, assigned), stop,
                                      f"projection {name}: seek to stored offsets")

        # Small fetches: one process runs a consumer per projection, and their buffers add up
        # (a rebuild uses its own consumer with the default, larger fetches).
        consumer = make_consumer(self.settings, group_id=self.settings.consumer_group_prefix + name,
                                 max_partition_fetch_bytes=256 * 1024, fetch_max_bytes=2 * 1024 * 1024)
        consumer.subscribe([topic_of(self.settings, self.projection)], listener=SeekToStored())
        await consumer.start()
        hint: dict = {}
        hinted = 0.0
        try:
            self.status = "live"
            while not stop.is_set():
                batches = await consumer.getmany(timeout_ms=500, max_records=self.settings.projector_max_records)
                by_partition = {tp.partition: msgs for tp, msgs in batches.items()}
                try:
                    if not by_partition or not self._concerns(by_partition):
                        self._defer(by_partition)
                        if self._deferred and time.monotonic() - self._flushed >= self.settings.projector_idle_flush_s:
                            await self._apply_with_policy({})
                        continue
                    await self._apply_with_policy(by_partition)
                except NotMyTurn:
                    self._deferred.clear()
                    await self._wait_until_live(stop)
                    await self._seek_to_stored(consumer, consumer.assignment())
                    continue
                # A hint for Kafka tooling only (PostgreSQL holds the truth), at most once a second:
                # a commit round trip per batch would sit between every two batches.
                for tp, msgs in batches.items():
                    hint[tp] = msgs[-1].offset + 1
                if time.monotonic() - hinted >= 1.0:
                    try:
                        await consumer.commit(dict(hint))
                    except Exception as exc:  # rebalancing: the next round commits again
                        log.debug("projection %s: offset hint not committed: %s", name, exc)
                    hint.clear()
                    hinted = time.monotonic()
        finally:
            await consumer.stop()

    async def _wait_until_live(self, stop: asyncio.Event) -> None:
        self.status = "paused"
        log.info("projection %s: paused while it is rebuilt", self.projection.name)
        while not stop.is_set():
            async with self.pool.acquire() as conn:
                status = await conn.fetchval("SELECT status FROM projection_state WHERE projection = $1",
                                             self.projection.name)
            if status == "live":
                self.status = "live"
                log.info("projection %s: resumed", self.projection.name)
                return
            if status == "stopped":
                raise ProjectionStopped(self.projection.name)
            try:
                await asyncio.wait_for(stop.wait(), 0.5)
            except TimeoutError:
                pass

    def _concerns(self, batches: dict[int, list[ConsumerRecord]]) -> bool:
        """Whether any message is of a type this projection handles (telemetry: always)."""
        if self.projection.source != "events":
            return True
        return any(self.projection.handles_type(type_of(m)) for msgs in batches.values() for m in msgs)

    def _defer(self, batches: dict[int, list[ConsumerRecord]]) -> None:
        """Advance tracking in memory over messages this projection has nothing to do with.

        A transaction per such batch would cost every projection a commit for every event of
        every other read model. The tracking is stored with the next transaction, or after
        ``projector_idle_flush_s``; after a crash the same messages are read again, to no effect.
        """
        for partition, msgs in batches.items():
            _, max_position = self._deferred.get(partition, (0, 0))
            top = max(position_of(m) for m in msgs)
            self._deferred[partition] = (msgs[-1].offset + 1, max(max_position, top))

    async def _apply_with_policy(self, batches: dict[int, list[ConsumerRecord]]) -> None:
        delay = self.settings.projector_retry_backoff_s
        for attempt in range(1, self.settings.projector_max_attempts + 1):
            try:
                async with self.pool.acquire() as conn:
                    applied, dups = await apply_batch(conn, self.registry, self.projection, batches,
                                                      deferred=self._deferred)
                self._deferred.clear()
                self._flushed = time.monotonic()
                self.stats.applied += applied
                self.stats.duplicates += dups
                self.stats.batches += 1
                return
            except NotMyTurn:
                raise
            except Exception as exc:
                if is_transient(exc):
                    raise
                log.warning("projection %s: batch failed (attempt %d/%d): %s: %s", self.projection.name, attempt,
                            self.settings.projector_max_attempts, type(exc).__name__, exc)
                if attempt < self.settings.projector_max_attempts:
                    await asyncio.sleep(delay)
                    delay *= 2
        async with self.pool.acquire() as conn:
            msgs = [m for part in batches.values() for m in part]
            position, error = await find_failing_event(conn, self.registry, self.projection, msgs)
            await conn.execute(
                "UPDATE projection_state SET status = 'stopped', error = $2, error_position = $3, updated_at = now() "
                "WHERE projection = $1", self.projection.name, error, position)
        log.error("projection %s: stopped at position %d: %s", self.projection.name, position, error)
        raise ProjectionStopped(self.projection.name)


async def run_projector(settings: Settings, stop: asyncio.Event, names: list[str] | None = None) -> None:
    registry = EventRegistry()
    selected = [ALL[n] for n in (names or list(ALL))]

    async def start() -> asyncpg.Pool:
        pool = await create_pool(settings.resolved_database_url(), min_size=1, max_size=4 + len(ALL),
                                 server_settings=REPLAYABLE)
        try:
            async with pool.acquire() as conn:
                await ensure_state_rows(conn, [p.name for p in selected])
                # A projection stopped on a failing event is retried when the projector restarts.
                await conn.execute("UPDATE projection_state SET status = 'live', error = NULL, "
                                   "error_position = NULL WHERE status = 'stopped' AND projection = ANY($1)",
                                   [p.name for p in selected])
        except BaseException:
            await pool.close()
            raise
        return pool

    pool = await until_connected(start, stop, "projector")
    if pool is None:
        return
    try:
        runners = [ProjectionRunner(settings, p, pool, registry) for p in selected]
        await asyncio.gather(*(r.run(stop) for r in runners))
    finally:
        await pool.close()


# -------------------------------------------------------------------------------------- rebuild


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
                "error_position = NULL, updated_at = now() WHERE projection = $1 RETURNING generation", name)
            for stmt in projection.teardown:
                await conn.execute(stmt)
            await conn.execute("DELETE FROM projection_offsets WHERE projection = $1", name)
        await consumer.start()
        tps = await topic_partitions(consumer, topic_of(settings, projection))
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
        stored: dict[int, tuple[int, int]] = {}
        ready: asyncio.Queue[Prepared | None] = asyncio.Queue(maxsize=2)

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
                    await ready.put(prepare(registry, projection, todo, stored))
            await ready.put(None)

        feeder = asyncio.create_task(fetch_and_prepare())
        try:
            while (prepared := await ready.get()) is not None:
                async with conn.transaction():
                    await _check_turn(conn, projection, "rebuilding", generation)
                    await _commit_prepared(conn, prepared)
                applied += prepared.applied
                if progress:
                    done = sum(reached[tp] - begin[tp] for tp in tps)
                    elapsed = time.monotonic() - started
                    progress(done, total - done, done / elapsed if elapsed else 0.0)
            await feeder
        finally:
            feeder.cancel()
        elapsed = time.monotonic() - started
        await conn.execute("UPDATE projection_state SET status = 'live', updated_at = now() "
                           "WHERE projection = $1 AND generation = $2", name, generation)
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


async def list_projections(settings: Settings) -> list[dict]:
    """Name, status, position reached and lag (messages not yet applied) of every projection."""
    conn = await connect(settings.resolved_database_url())
    consumer = make_consumer(settings, group_id=None)
    try:
        await ensure_state_rows(conn, list(ALL))
        await consumer.start()
        ends = {}
        for source in {p.source for p in ALL.values()}:
            topic = settings.telemetry_topic if source == "telemetry" else settings.events_topic
            tps = await topic_partitions(consumer, topic)
            ends[source] = (tps, await consumer.end_offsets(tps) if tps else {})
        out = []
        for name, projection in ALL.items():
            tps, end = ends[projection.source]
            state = await conn.fetchrow("SELECT status, error, error_position FROM projection_state "
                                        "WHERE projection = $1", name)
            rows = await conn.fetch("SELECT partition, next_offset, max_position FROM projection_offsets "
                                    "WHERE projection = $1", name)
            stored = {r["partition"]: r for r in rows}
            lag = sum(end[tp] - (stored[tp.partition]["next_offset"] if tp.partition in stored else 0) for tp in tps)
            position = max((r["max_position"] for r in rows), default=0)
            out.append({"name": name, "status": state["status"], "position": position, "lag": lag,
                        "error": state["error"], "error_position": state["error_position"]})
        return out
    finally:
        await consumer.stop()
        await conn.close()
