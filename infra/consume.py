"""Reading the log back: decoding and upcasting, the ``type`` and ``position`` headers, and the
tracking a reader keeps in PostgreSQL.

Every reader of ``vaeo.events.v1`` with an effect (the projections, the dispatcher's intake, the
credits watch) keeps, per partition, the next offset and the highest position it applied
(``projection_offsets``, under the reader's name) and writes them in the same transaction as its
effect; its status, and the event it stopped on, are in ``projection_state``. On start it seeks
Kafka to what PostgreSQL stored. A message below the stored offset was applied already; one
whose position is not above the stored highest position is a duplicate the at-least-once relay
sent again after a crash. Both only advance tracking. The runner that applies the failure policy
on top of this is ``services/processes/consuming.py``; ``vaeo events tail`` uses the decoding and the
duplicate skipping alone.

Telemetry records (``vaeo.telemetry.v1``) carry no position: they are ordered and deduplicated by
offset alone (position = offset + 1).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import orjson
from aiokafka.structs import ConsumerRecord

from infra.codec import EventRegistry, StoredEvent

# NOTIFY channel of the projections' progress (``name:partition:max_position``), for the API's
# read-your-writes waits.
PROGRESS_CHANNEL = "vaeo_projection"


# ------------------------------------------------------------------------------- messages


def headers_of(record: ConsumerRecord) -> tuple[str, int]:
    """The event type and global position, from the headers in one pass (the relay writes
    ``type`` then ``position``); the value is parsed only if the position header is missing."""
    kind, position = "", None
    for key, value in record.headers:
        if key == "type":
            kind = value.decode()
        elif key == "position":
            position = int(value)
    return kind, position if position is not None else orjson.loads(record.value)["position"]


def position_of(record: ConsumerRecord) -> int:
    return headers_of(record)[1]


def decode(registry: EventRegistry, value: bytes) -> StoredEvent:
    """The envelope, with ``data`` upcast to the current schema of its type.

    A type this build does not know is returned as stored (no reader handles it; tracking still
    moves). A known type whose old schema cannot be upcast raises: the reader's failure policy
    applies to it.
    """
    ev = StoredEvent.from_json(value)
    if not registry.knows(ev.type):
        return ev
    data = registry.upcast(ev.type, ev.schema, ev.data)
    if data is ev.data:
        return ev
    return StoredEvent(ev.position, ev.stream_id, ev.stream_type, ev.version, ev.workspace_id, ev.type,
                       registry.current_schema(ev.type), data, ev.meta, ev.recorded_at)


@dataclass(slots=True)
class Message:
    """A fetched message with what every reader asks of it, read once per batch."""

    partition: int
    offset: int
    kind: str  # the event type ("" for telemetry)
    position: int  # the global position (telemetry: offset + 1)
    record: ConsumerRecord


class ParsedBatch:
    """One fetch, read once for every reader that consumes it.

    Headers are parsed once per message and each payload is decoded at most once, however many
    readers handle it: with one consumer feeding a dozen read models, decoding per reader was
    most of the projector's work.
    """

    def __init__(self, source: str, registry: EventRegistry, batches: Mapping[int, list[ConsumerRecord]]) -> None:
        self.source = source
        self.registry = registry
        self.parts: dict[int, list[Message]] = {}
        self.kinds: set[str] = set()
        events = source == "events"
        for partition, records in batches.items():
            if events:
                parsed = [Message(partition, r.offset, *headers_of(r), r) for r in records]
                self.kinds.update(m.kind for m in parsed)
            else:
                parsed = [Message(partition, r.offset, "", r.offset + 1, r) for r in records]
            if parsed:
                self.parts[partition] = parsed
        self._payloads: dict[tuple[int, int], StoredEvent | dict] = {}

    def __bool__(self) -> bool:
        return bool(self.parts)

    def payload(self, msg: Message) -> StoredEvent | dict:
        """The decoded event (upcast), or the telemetry record; decoded once per batch."""
        key = (msg.partition, msg.offset)
        found = self._payloads.get(key)
        if found is None:
            found = self._payloads[key] = (orjson.loads(msg.record.value) if self.source == "telemetry"
                                           else decode(self.registry, msg.record.value))
        return found

    def concerns(self, handles_type: Callable[[str], bool]) -> bool:
        """Whether any message is of a type the reader handles (telemetry: any message)."""
        if self.source != "events":
            return bool(self.parts)
        return any(handles_type(kind) for kind in self.kinds)

    def reach(self) -> dict[int, Mark]:
        """Per partition: the offset after the last message and the highest position seen."""
        return {partition: Mark(msgs[-1].offset + 1, max(m.position for m in msgs))
                for partition, msgs in self.parts.items()}


# ------------------------------------------------------------------------------- tracking


@dataclass(frozen=True, slots=True)
class Mark:
    """How far a reader got on one partition: the next offset to read, the highest position applied."""

    next_offset: int = 0
    max_position: int = 0

    def further(self, other: Mark) -> Mark:
        return Mark(max(self.next_offset, other.next_offset), max(self.max_position, other.max_position))


Marks = dict[int, Mark]  # partition -> Mark


def advance(marks: Marks, more: Mapping[int, Mark]) -> None:
    """Per partition, keep the further of two marks."""
    for partition, mark in more.items():
        marks[partition] = marks.get(partition, Mark()).further(mark)


@dataclass(slots=True)
class Fresh:
    """What a batch holds for one reader once what it applied already is skipped."""

    messages: list[Message]  # new and of a type the reader handles, per partition in offset order
    moved: Marks  # the partitions whose mark moved, and where to
    applied: int  # new messages, handled or not (the others only advance tracking)
    duplicates: int  # positions the reader had applied already (a resend of the relay)


def take_fresh(batch: ParsedBatch, stored: Marks, handles_type: Callable[[str], bool] | None = None) -> Fresh:
    """Pure: skip what ``stored`` says was applied, keep what ``handles_type`` accepts (every
    message when None, or for telemetry), and move ``stored`` (updated in place) past the batch.

    Messages below the stored offset were applied already (this reader before a restart, or
    another owner of the partition); positions at or below the stored maximum are duplicates
    the relay sent again after a crash.
    """
    kept: list[Message] = []
    moved: Marks = {}
    applied = duplicates = 0
    filtering = handles_type is not None and batch.source == "events"
    for partition, msgs in batch.parts.items():
        mark = stored.get(partition, Mark())
        next_offset, max_position = mark.next_offset, mark.max_position
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
            if filtering and not handles_type(msg.kind):
                continue  # not this reader's concern: tracking only, no decoding
            kept.append(msg)
        if last_offset is not None:
            moved[partition] = stored[partition] = Mark(last_offset + 1, max_position)
    return Fresh(kept, moved, applied, duplicates)


@dataclass(frozen=True, slots=True)
class Tracking:
    """One row of ``projection_offsets``: a reader's mark on one partition."""

    reader: str
    partition: int
    mark: Mark


async def read_marks(conn: asyncpg.Connection, readers: list[str], partitions: Iterable[int]) -> dict[str, Marks]:
    """The stored marks of ``readers`` on ``partitions``, locked until the transaction ends (two
    owners of a partition during a rebalance take turns), in one lock order for every caller."""
    out: dict[str, Marks] = {name: {} for name in readers}
    for r in await conn.fetch(_READ_MARKS, readers, sorted(partitions)):
        out[r["projection"]][r["partition"]] = Mark(r["next_offset"], r["max_position"])
    return out


async def write_marks(conn: asyncpg.Connection, rows: list[Tracking], *, announce: bool) -> None:
    """Store the rows in one statement; with ``announce``, NOTIFY each on ``PROGRESS_CHANNEL``
    (sent when the transaction commits)."""
    if not rows:
        return
    args = ([t.reader for t in rows], [t.partition for t in rows], [t.mark.next_offset for t in rows],
            [t.mark.max_position for t in rows])
    await conn.execute(_WRITE_AND_ANNOUNCE if announce else _WRITE, *args)


async def earliest_marks(conn: asyncpg.Connection, readers: list[str]) -> dict[int, int]:
    """Per partition, the offset the least advanced of ``readers`` stored; a partition for which
    any of them stored nothing is missing (that reader starts at the beginning)."""
    rows = await conn.fetch("SELECT partition, count(*) AS n, min(next_offset) AS next_offset "
                            "FROM projection_offsets WHERE projection = ANY($1::text[]) GROUP BY partition",
                            readers)
    return {r["partition"]: r["next_offset"] for r in rows if r["n"] == len(set(readers))}


async def applied_position(pool: asyncpg.Pool, reader: str, partition: int) -> int | None:
    """The highest position ``reader`` has applied on ``partition`` (None: it stored nothing there);
    read without a lock, by the API's read-your-writes waits."""
    return await pool.fetchval("SELECT max_position FROM projection_offsets WHERE projection = $1 AND partition = $2",
                               reader, partition)


async def seek_to_earliest(consumer, earliest: Mapping[int, int], partitions) -> None:
    """Position a consumer shared by several readers where the least advanced of them got to
    (``earliest_marks``); the others read those messages again and skip them by their own marks."""
    for tp in partitions:
        if tp.partition in earliest:
            consumer.seek(tp, earliest[tp.partition])
        else:
            await consumer.seek_to_beginning(tp)


async def fill_batch(consumer, partitions, max_records: int) -> dict:
    """Fetch up to ``max_records`` across partitions, waiting briefly for more: big transactions
    make a rebuild fast (the live runner does not wait, for read-your-writes latency)."""
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


_READ_MARKS = ("SELECT projection, partition, next_offset, max_position FROM projection_offsets "
               "WHERE projection = ANY($1::text[]) AND partition = ANY($2::int[]) "
               "ORDER BY projection, partition FOR UPDATE")  # one lock order for every runner: no deadlock
_UPSERT_MARKS = """
    INSERT INTO projection_offsets (projection, partition, next_offset, max_position)
    SELECT u.n, u.p, u.o, u.m FROM unnest($1::text[], $2::int[], $3::bigint[], $4::bigint[]) AS u(n, p, o, m)
    ON CONFLICT (projection, partition) DO UPDATE
    SET next_offset = excluded.next_offset, max_position = excluded.max_position"""
_WRITE = _UPSERT_MARKS
_WRITE_AND_ANNOUNCE = f"""
WITH stored AS ({_UPSERT_MARKS}
    RETURNING projection, partition, max_position)
SELECT count(pg_notify('{PROGRESS_CHANNEL}', projection || ':' || partition || ':' || max_position)) FROM stored"""


# ------------------------------------------------------------------------------- reader state


@dataclass(frozen=True, slots=True)
class ReaderState:
    """A reader's row of ``projection_state``: ``live``, ``rebuilding`` (projections only: the
    live runner pauses it) or ``stopped`` on a failing event (``error``, ``error_position``)."""

    status: str
    generation: int


async def ensure_state_rows(conn: asyncpg.Connection, readers: Iterable[str]) -> None:
    await conn.executemany("INSERT INTO projection_state (projection) VALUES ($1) ON CONFLICT DO NOTHING",
                           [(n,) for n in readers])


async def lock_states(conn: asyncpg.Connection, readers: list[str]) -> dict[str, ReaderState]:
    """The readers' states, share-locked until the transaction ends: a rebuild that changes one
    waits for the batch in flight, so the two never interleave writes."""
    rows = await conn.fetch("SELECT projection, status, generation FROM projection_state "
                            "WHERE projection = ANY($1::text[]) FOR SHARE", readers)
    return {r["projection"]: ReaderState(r["status"], r["generation"]) for r in rows}


async def record_stopped(conn: asyncpg.Connection, reader: str, position: int, error: str, now: datetime) -> None:
    await conn.execute("UPDATE projection_state SET status = 'stopped', error = $2, error_position = $3, "
                       "updated_at = $4 WHERE projection = $1", reader, error[:2000], position, now)


async def retry_stopped(conn: asyncpg.Connection, readers: list[str], now: datetime) -> None:
    """A start retries the readers stopped on a failing event: they go live again."""
    await conn.execute("UPDATE projection_state SET status = 'live', error = NULL, error_position = NULL, "
                       "updated_at = $2 WHERE status = 'stopped' AND projection = ANY($1::text[])", readers, now)


# ------------------------------------------------------------------------------- causes

# What is copied from an event's meta into what a reader appends is bounded first: a request id
# may be what a client sent. A short printable token is carried on; anything else is not.
_CORRELATION_ID = re.compile(r"[\x21-\x7e]{1,128}")


def caused_by(event: StoredEvent) -> dict[str, str]:
    """The ``meta`` of an event a reader appends because of ``event``: ``causation_id`` is
    ``event:<position>``, ``correlation_id`` the chain ``event`` belongs to (its own
    ``correlation_id``; for an event written before events carried one, its ``request_id``, else
    its stream)."""
    meta = {"causation_id": f"event:{event.position}"}
    own = event.meta if isinstance(event.meta, dict) else {}
    chain = own.get("correlation_id") or own.get("request_id") or str(event.stream_id)
    if isinstance(chain, str) and _CORRELATION_ID.fullmatch(chain):
        meta["correlation_id"] = chain
    return meta
