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
import hashlib
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
from projections.base import Accumulate, Projection, Statement
from services.common import backoff_delays, is_transient, until_connected

log = logging.getLogger("vaeo.projector")

PROGRESS_CHANNEL = "vaeo_projection"


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
                   accumulate: Mapping[str, Accumulate] | None = None) -> list[tuple[str, list[tuple]]]:
    """Order a batch's statements into (sql, [args, ...]) groups, each sent as one executemany.

    ``strict`` keeps the produced order and only merges consecutive runs of the same SQL.
    ``per_stream`` puts the k-th statement of each stream in layer k: within a layer every
    statement touches another stream's rows, so a layer may be grouped by SQL freely while each
    stream keeps its order; with the projection's ``merge``, two consecutive statements of one
    stream with the same SQL become one (five events of a job in a batch: two writes, not five).
    ``commutative`` groups the whole batch by SQL, and folds the executions of an ``accumulate``
    SQL that update the same row into one.
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
        layers = [_accumulated(keyed, accumulate)] if accumulate else [keyed]
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


def _accumulated(keyed: list[tuple[Hashable, Statement]],
                 accumulate: Mapping[str, Accumulate]) -> list[tuple[Hashable, Statement]]:
    out: list[tuple[Hashable, Statement]] = []
    last_of_row: dict[tuple, int] = {}  # (sql, key arguments) -> index in out of that row's statement
    for key, (sql, args) in keyed:
        rule = accumulate.get(sql)
        if rule is not None:
            row = (sql, *(args[i] for i in rule.key))
            at = last_of_row.get(row)
            if at is not None:
                folded = rule.fold(out[at][1][1], args)
                if folded is not None:
                    out[at] = (out[at][0], (sql, folded))
                    continue
            last_of_row[row] = len(out)
        out.append((key, (sql, args)))
    return out


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


@dataclass(slots=True)
class Message:
    """A fetched message with what every projection asks of it, read once per batch."""

    offset: int
    kind: str  # the event type ("" for telemetry)
    position: int  # the global position (telemetry: offset + 1)
    record: ConsumerRecord


class ParsedBatch:
    """One fetch, read once for every projection that consumes it.

    Headers are parsed once per message and each payload is decoded at most once, however many
    projections handle it: with one consumer feeding a dozen read models, decoding per projection
    was most of the projector's work.
    """

    def __init__(self, source: str, registry: EventRegistry, batches: Mapping[int, list[ConsumerRecord]]) -> None:
        self.source = source
        self.registry = registry
        self.parts: dict[int, list[Message]] = {}
        self.kinds: set[str] = set()
        events = source == "events"
        for partition, msgs in batches.items():
            if events:
                parsed = [Message(m.offset, *_kind_and_position(m), m) for m in msgs]
                self.kinds.update(m.kind for m in parsed)
            else:
                parsed = [Message(m.offset, "", m.offset + 1, m) for m in msgs]
            if parsed:
                self.parts[partition] = parsed
        self._payloads: dict[tuple[int, int], StoredEvent | dict] = {}

    def __bool__(self) -> bool:
        return bool(self.parts)

    def payload(self, msg: Message) -> StoredEvent | dict:
        key = (msg.record.partition, msg.offset)
        found = self._payloads.get(key)
        if found is None:
            found = self._payloads[key] = (orjson.loads(msg.record.value) if self.source == "telemetry"
                                           else decode(self.registry, msg.record.value))
        return found

    def concerns(self, projection: Projection) -> bool:
        """Whether any message is of a type ``projection`` handles (telemetry: any message)."""
        if self.source != "events":
            return bool(self.parts)
        return any(projection.handles_type(kind) for kind in self.kinds)

    def reach(self) -> dict[int, tuple[int, int]]:
        """Per partition: the offset after the last message and the highest position seen."""
        return {partition: (msgs[-1].offset + 1, max(m.position for m in msgs))
                for partition, msgs in self.parts.items()}


def prepare(registry: EventRegistry, projection: Projection, batches: Mapping[int, list[ConsumerRecord]],
            stored: dict[int, tuple[int, int]]) -> Prepared:
    """``prepare_parsed`` for one projection's own fetch (rebuilds, the one-projection fallback)."""
    return prepare_parsed(projection, ParsedBatch(projection.source, registry, batches), stored)


def prepare_parsed(projection: Projection, batch: ParsedBatch, stored: dict[int, tuple[int, int]]) -> Prepared:
    """Pure: deduplicate against ``stored`` (partition -> (next_offset, max_position)), plan.

    Messages below the stored offset were applied already (this runner before a restart, or
    another owner of the partition); positions at or below the stored maximum are duplicates
    the relay sent again after a crash. Both only advance tracking. ``stored`` is updated.
    """
    keyed: list[tuple[Hashable, Statement]] = []
    tracking: list[tuple[str, int, int, int]] = []
    applied = duplicates = 0
    events = projection.source == "events"
    for partition, msgs in batch.parts.items():
        next_offset, max_position = stored.get(partition, (0, 0))
        last_offset = None
        for msg in msgs:
            if msg.offset < next_offset:
                continue
            last_offset = msg.offset
            if msg.position <= max_position:
                duplicates += 1
                continue
            max_position = msg.position
            applied += 1
            if events and not projection.handles_type(msg.kind):
                continue  # not this read model's concern: tracking only, no decoding
            payload = batch.payload(msg)
            key = payload.stream_id if events else None
            for statement in projection.apply(payload):
                keyed.append((key, statement))
        if last_offset is not None:
            tracking.append((projection.name, partition, last_offset + 1, max_position))
            stored[partition] = (last_offset + 1, max_position)
    return Prepared(execution_plan(keyed, projection.ordering, projection.merge, projection.accumulate),
                    tracking, applied, duplicates)


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
    SELECT u.n, u.p, u.o, u.m FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) AS u(n, p, o, m)
    ON CONFLICT (projection, partition) DO UPDATE
    SET next_offset = excluded.next_offset, max_position = excluded.max_position
    RETURNING projection, partition, max_position)
SELECT count(pg_notify('{PROGRESS_CHANNEL}', projection || ':' || partition || ':' || max_position)) FROM stored"""


async def _commit_plan(conn: asyncpg.Connection, plan: list[tuple[str, list[tuple]]],
                       tracking: list[tuple[str, int, int, int]]) -> None:
    """The plan, then every (projection, partition)'s tracking and its progress NOTIFY in one statement."""
    await execute_plan(conn, plan)
    await conn.fetchval(_TRACK, [t[0] for t in tracking], [t[1] for t in tracking], [t[2] for t in tracking],
                        [t[3] for t in tracking])


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
            await _commit_plan(conn, prepared.plan, prepared.tracking)
    return prepared.applied, prepared.duplicates


_STATES = "SELECT projection, status FROM projection_state WHERE projection = ANY($1::text[]) FOR SHARE"
_OFFSETS = ("SELECT projection, partition, next_offset, max_position FROM projection_offsets "
            "WHERE projection = ANY($1::text[]) AND partition = ANY($2::int[]) "
            "ORDER BY projection, partition FOR UPDATE")  # one lock order for every runner: no deadlock


def _advance(reached: dict[int, tuple[int, int]], more: Mapping[int, tuple[int, int]]) -> None:
    """Per partition, keep the further of two (next offset, highest position) marks."""
    for partition, (next_offset, top) in more.items():
        old_offset, old_top = reached.get(partition, (0, 0))
        reached[partition] = (max(old_offset, next_offset), max(old_top, top))


@dataclass
class GroupResult:
    applied: dict[str, tuple[int, int]]  # projection -> (applied, duplicates)
    not_live: list[str]  # projections found rebuilding or stopped: nothing applied for them


async def apply_group(conn: asyncpg.Connection, batch: ParsedBatch, projections: list[Projection],
                      deferred: Mapping[str, Mapping[int, tuple[int, int]]]) -> GroupResult:
    """Apply one fetched batch for several projections in one transaction.

    The same promise as ``apply_batch``, per projection: its read-model change and its offsets and
    highest positions commit together. Sharing the transaction (and its commit, locks and NOTIFY
    statement) between the read models of one fetch is what keeps the projector's cost per event
    low when a dozen read models follow one topic. A projection found not ``live`` (a rebuild
    began) is left out and reported; the caller pauses it.
    """
    async with conn.transaction():
        states = {r["projection"]: r["status"] for r in await conn.fetch(_STATES, [p.name for p in projections])}
        live = [p for p in projections if states.get(p.name) == "live"]
        result = GroupResult({}, [p.name for p in projections if states.get(p.name) != "live"])
        if not live:
            return result
        parts = set(batch.parts)
        for p in live:
            parts.update(deferred.get(p.name, ()))
        stored: dict[str, dict[int, tuple[int, int]]] = {p.name: {} for p in live}
        for r in await conn.fetch(_OFFSETS, [p.name for p in live], sorted(parts)):
            stored[r["projection"]][r["partition"]] = (r["next_offset"], r["max_position"])
        plan: list[tuple[str, list[tuple]]] = []
        tracking: list[tuple[str, int, int, int]] = []
        for p in live:
            mine = stored[p.name]
            _advance(mine, deferred.get(p.name, {}))
            prepared = prepare_parsed(p, batch, mine)
            moved = {t[1] for t in prepared.tracking}
            tracking.extend(prepared.tracking)
            tracking.extend((p.name, part, *mine[part]) for part in deferred.get(p.name, {}) if part not in moved)
            plan.extend(prepared.plan)
            result.applied[p.name] = (prepared.applied, prepared.duplicates)
        if tracking:
            await _commit_plan(conn, plan, tracking)
    return result


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
    await seek_to_earliest_stored(pool, consumer, [name], partitions)


async def earliest_stored(pool: asyncpg.Pool, names: list[str]) -> dict[int, int]:
    """Per partition, the offset the least advanced of ``names`` stored; a partition for which
    any of them stored nothing is missing (that projection starts at the beginning)."""
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT partition, count(*) AS n, min(next_offset) AS next_offset "
                                "FROM projection_offsets WHERE projection = ANY($1::text[]) GROUP BY partition",
                                names)
    return {r["partition"]: r["next_offset"] for r in rows if r["n"] == len(set(names))}


async def seek_to_earliest_stored(pool: asyncpg.Pool, consumer, names: list[str], partitions) -> None:
    """Position a consumer shared by ``names`` where the least advanced of them got to.

    The others read those messages again and skip them by their own stored offsets.
    """
    earliest = await earliest_stored(pool, names)
    for tp in partitions:
        if tp.partition in earliest:
            consumer.seek(tp, earliest[tp.partition])
        else:
            await consumer.seek_to_beginning(tp)


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


def consumer_group(settings: Settings, names: list[str]) -> str:
    """One projection keeps its own group; a set gets a group of its own, named by its members,
    so that processes running the same set share the partitions and a process running another
    set (``vaeo projector --only jobs``) never takes partitions away from it."""
    if len(names) == 1:
        return settings.consumer_group_prefix + names[0]
    digest = hashlib.sha256(",".join(sorted(names)).encode()).hexdigest()[:12]
    return f"{settings.consumer_group_prefix}projector-{digest}"


class ProjectionRunner:
    """The live runner of the projections that read one topic: one consumer, one transaction per batch.

    Each projection keeps its own tracking, status and failure policy; they share the fetch, the
    decoding and the transaction (``apply_group``). Tracking over messages a projection does not
    handle is kept in memory and stored with its next transaction, or after
    ``projector_idle_flush_s``: a row write per read model for every event of every other read
    model would cost more than the events themselves. After a crash those messages are read again,
    to no effect.

    A projection whose batch fails is retried on its own (``apply_batch``) with the failing-event
    policy and stops alone; a projection being rebuilt is paused alone, and when it is live again
    the consumer goes back to where the rebuild left it. The others go on.
    """

    def __init__(self, settings: Settings, projections: list[Projection], pool: asyncpg.Pool,
                 registry: EventRegistry) -> None:
        sources = {p.source for p in projections}
        if len(sources) != 1:
            raise ValueError(f"one runner reads one topic; got sources {sorted(sources)}")
        self.settings = settings
        self.source = sources.pop()
        self.projections = {p.name: p for p in projections}
        self.pool = pool
        self.registry = registry
        self.stats = RunnerStats()
        self.states: dict[str, str] = {name: "starting" for name in self.projections}
        self._deferred: dict[str, dict[int, tuple[int, int]]] = {name: {} for name in self.projections}
        self._flushed = time.monotonic()
        self._checked_paused = 0.0

    @property
    def status(self) -> str:
        """``live`` while any projection is applied; else ``paused``, ``stopped`` or the transient state."""
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
        delays = backoff_delays()
        while not stop.is_set():
            try:
                await self._consume(stop)
                return
            except Exception as exc:
                if not is_transient(exc):
                    raise
                delay = next(delays)
                self._set_all("reconnecting")
                log.warning("projections %s: %s: %s; retrying in %.1fs", ",".join(self.projections),
                            type(exc).__name__, exc, delay)
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except TimeoutError:
                    pass

    async def _consume(self, stop: asyncio.Event) -> None:
        runner = self
        label = ",".join(self.projections)

        class SeekToStored(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked):
                for tp in revoked:  # another owner takes over from what PostgreSQL stored
                    for deferred in runner._deferred.values():
                        deferred.pop(tp.partition, None)

            async def on_partitions_assigned(self, assigned):
                # aiokafka logs and swallows a listener's error: retry here until the seek is
                # done, so that consumption always starts from what PostgreSQL stored.
                await until_connected(lambda: runner._seek(consumer, assigned), stop,
                                      f"projections {label}: seek to stored offsets")

        consumer = make_consumer(self.settings, group_id=consumer_group(self.settings, list(self.projections)))
        consumer.subscribe([topic_of(self.settings, next(iter(self.projections.values())))], listener=SeekToStored())
        await consumer.start()
        hint: dict = {}
        hinted = 0.0
        try:
            for name in self._named("starting") + self._named("reconnecting"):
                self.states[name] = "live"
            while not stop.is_set():
                if not self._named("live") and not self._named("paused"):
                    return  # every projection stopped on a failing event
                batches = await consumer.getmany(timeout_ms=500, max_records=self.settings.projector_max_records)
                if self._named("paused") and time.monotonic() - self._checked_paused >= 0.5:
                    await self._resume_rebuilt(consumer)
                batch = ParsedBatch(self.source, self.registry, {tp.partition: m for tp, m in batches.items()})
                await self._apply(batch)
                # A hint for Kafka tooling only (PostgreSQL holds the truth), at most once a second:
                # a commit round trip per batch would sit between every two batches.
                for tp, msgs in batches.items():
                    hint[tp] = msgs[-1].offset + 1
                if hint and time.monotonic() - hinted >= 1.0:
                    try:
                        await consumer.commit(dict(hint))
                    except Exception as exc:  # rebalancing: the next round commits again
                        log.debug("projections %s: offset hint not committed: %s", label, exc)
                    hint.clear()
                    hinted = time.monotonic()
        finally:
            await consumer.stop()

    async def _seek(self, consumer, partitions) -> None:
        names = self._named("live") + self._named("paused") + self._named("starting") + self._named("reconnecting")
        await seek_to_earliest_stored(self.pool, consumer, names or list(self.projections), partitions)

    async def _apply(self, batch: ParsedBatch) -> None:
        live = [self.projections[n] for n in self._named("live")]
        flush_due = time.monotonic() - self._flushed >= self.settings.projector_idle_flush_s
        taking = [p for p in live if batch.concerns(p) or (flush_due and self._deferred[p.name])]
        for p in live:
            if p not in taking:
                self._defer(p.name, batch)
        if not taking:
            return
        try:
            async with self.pool.acquire() as conn:
                result = await apply_group(conn, batch, taking, self._deferred)
        except Exception as exc:
            if is_transient(exc):
                raise
            log.warning("projections %s: shared batch failed (%s: %s); applying each on its own",
                        ",".join(p.name for p in taking), type(exc).__name__, exc)
            for p in taking:
                await self._apply_alone(p, batch)
            return
        for name, (applied, dups) in result.applied.items():
            self._deferred[name] = {}
            self.stats.applied += applied
            self.stats.duplicates += dups
        self.stats.batches += 1
        if flush_due:
            self._flushed = time.monotonic()
        for name in result.not_live:
            self._pause(name)

    def _defer(self, name: str, batch: ParsedBatch) -> None:
        _advance(self._deferred[name], batch.reach())

    def _pause(self, name: str) -> None:
        self.states[name] = "paused"
        self._deferred[name] = {}
        log.info("projection %s: paused while it is rebuilt", name)

    async def _resume_rebuilt(self, consumer) -> None:
        """Take back the paused projections whose rebuild ended, from where the rebuild left them."""
        self._checked_paused = time.monotonic()
        paused = self._named("paused")
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(
                "SELECT projection, status FROM projection_state WHERE projection = ANY($1::text[])", paused)
        back = []
        for r in rows:
            if r["status"] == "live":
                back.append(r["projection"])
            elif r["status"] == "stopped":
                self.states[r["projection"]] = "stopped"
        if not back:
            return
        earliest = await earliest_stored(self.pool, back)
        for tp in consumer.assignment():
            if tp.partition not in earliest:
                await consumer.seek_to_beginning(tp)
            elif earliest[tp.partition] < await consumer.position(tp):
                consumer.seek(tp, earliest[tp.partition])
        for name in back:
            self.states[name] = "live"
            log.info("projection %s: resumed", name)

    async def _apply_alone(self, projection: Projection, batch: ParsedBatch) -> None:
        """One projection's transaction, with the failing-event policy: retried with backoff, then
        the failing event is named in ``projection_state`` and the projection stops (never skips)."""
        name = projection.name
        records = {part: [m.record for m in msgs] for part, msgs in batch.parts.items()}
        delay = self.settings.projector_retry_backoff_s
        for attempt in range(1, self.settings.projector_max_attempts + 1):
            try:
                async with self.pool.acquire() as conn:
                    applied, dups = await apply_batch(conn, self.registry, projection, records,
                                                      deferred=self._deferred[name])
                self._deferred[name] = {}
                self.stats.applied += applied
                self.stats.duplicates += dups
                return
            except NotMyTurn:
                self._pause(name)
                return
            except Exception as exc:
                if is_transient(exc):
                    raise
                log.warning("projection %s: batch failed (attempt %d/%d): %s: %s", name, attempt,
                            self.settings.projector_max_attempts, type(exc).__name__, exc)
                if attempt < self.settings.projector_max_attempts:
                    await asyncio.sleep(delay)
                    delay *= 2
        async with self.pool.acquire() as conn:
            msgs = [m for part in records.values() for m in part]
            position, error = await find_failing_event(conn, self.registry, projection, msgs)
            await conn.execute(
                "UPDATE projection_state SET status = 'stopped', error = $2, error_position = $3, updated_at = now() "
                "WHERE projection = $1", name, error, position)
        log.error("projection %s: stopped at position %d: %s", name, position, error)
        self.states[name] = "stopped"
        self._deferred[name] = {}


async def run_projector(settings: Settings, stop: asyncio.Event, names: list[str] | None = None) -> None:
    """Run the selected projections (all by default): one runner per source topic."""
    registry = EventRegistry()
    selected = [ALL[n] for n in (names or list(ALL))]

    async def start() -> asyncpg.Pool:
        pool = await create_pool(settings.resolved_database_url(), min_size=1, max_size=8,
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
        by_source: dict[str, list[Projection]] = {}
        for p in selected:
            by_source.setdefault(p.source, []).append(p)
        runners = [ProjectionRunner(settings, group, pool, registry) for group in by_source.values()]
        try:
            await asyncio.gather(*(r.run(stop) for r in runners))
        finally:
            for r in runners:  # applied / batches is the batch size: what each transaction carries
                log.info("projections %s (%s): stopped after %.0fs, %d messages applied in %d batches",
                         ",".join(r.projections), r.source, time.monotonic() - r.stats.started,
                         r.stats.applied, r.stats.batches)
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
                    await _commit_plan(conn, prepared.plan, prepared.tracking)
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
