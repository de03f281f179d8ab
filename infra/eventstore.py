"""The event store: its interface (``EventStore``) and its PostgreSQL implementation (asyncpg).

The interface has one way for each purpose, named for it (Marten's ``FetchForWriting`` and
``FetchLatest`` are the model):

- ``fetch_for_writing``: the aggregate to decide on, the caller's own copy, at the version its
  append is checked against;
- ``fetch_latest``: aggregates to read and never change, as read-only views (``infra.readonly``)
  that every reader shares;
- ``read_stream``: a stream's stored events as they are (audit, the stream's origin);
- ``save``: what aggregates decided, and events collected earlier, in one append with its typed
  effects (``infra.effects``), or refused whole;
- ``in_turn``: decisions on one stream taken one after the other in this process (a workspace's
  charges), each saved while the next is decided;
- ``next_id``: integer ids from named sequences.

Only the write side (commands, workers) loads streams here; every reader reads Kafka. The
in-memory implementation (``infra.memory_store``) keeps the same rules without I/O, and one
contract suite (``tests/store_contract.py``) runs against both.
"""

from __future__ import annotations

import asyncio
import copy
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol
from uuid import UUID

import asyncpg
import orjson

from infra.codec import EventRegistry, NewEvent, StoredEvent
from infra.effects import (
    SANDBOX_BOUNDS,
    ClaimLapsed,
    DigestTaken,
    Effect,
    IdempotencyAnswer,
    KeyAnswersDropped,
    KeyDigest,
    RefundClaim,
    RefundClaimed,
    SandboxClaim,
    committed,
)
from infra.readonly import Reading
from infra.settings import wall_clock

NOTIFY_CHANNEL = "vaeo_events"
# The NOTIFY payload's mark of an unhurried append ("~1234"; a hurried one is "1234"): nobody waits
# for its events to reach the read models, so the relay may hold them a moment to send them with
# others (``Relay``).
UNHURRIED = "~"
# Aggregates whose streams reach this many events are kept in memory at their last loaded version,
# and a later load reads only the events after it: a workspace's stream gains an event per charge,
# and rebuilding tens of thousands of them for every charge would make a busy workspace slow.
CACHE_FROM_VERSION = 16
CACHED_AGGREGATES = 2048  # streams kept per process (least recently loaded dropped first)
# Streams read (never changed) by a command on every request, such as a video with its Content
# Graph or an article, are kept too, whatever their length, and shared by readers as read-only
# views (``fetch_latest``): a 60-minute video's graph is about 80 KB to receive, decode and
# rebuild, and 3 ms to copy. Fewer are kept: each can weigh a megabyte in memory.
READ_AGGREGATES = 128
CONFLICT_SQLSTATE = "VA001"
LAPSED_SQLSTATE = "VA002"

# A PostgreSQL-only effect: a step run on the append's connection, in its transaction. For the
# store's own tests and for infrastructure; commands give typed effects (``infra.effects``).
PgEffect = Callable[[asyncpg.Connection], Awaitable[None]]


class ConcurrencyError(Exception):
    """The stream moved since it was loaded: reload, decide again, retry."""


class Turn(Protocol):
    """Decisions on one stream taken one after the other (``EventStore.in_turn``)."""

    saved: asyncio.Future | None

    async def fetch_for_writing(self, *, committed: bool = False) -> Any: ...

    async def save(self, *aggregates, workspace_id: UUID | None, meta: dict | None = None,
                   events: Sequence = (), effects: Sequence = ()) -> None: ...


class EventStore(Protocol):
    """What the write side needs of an event store (``PostgresEventStore``, ``MemoryEventStore``)."""

    registry: EventRegistry

    async def fetch_for_writing(self, stream_id: UUID) -> Any:
        """The aggregate rebuilt from its stream (None when empty): the caller's own copy, to decide
        on; its version is the one the append of its new events expects."""

    async def fetch_latest(self, *stream_ids: UUID) -> list:
        """The aggregates at their latest versions (None for an empty stream), to read only:
        read-only views shared by every reader (``infra.readonly.Reading``); ``copy.deepcopy``
        of one is a changeable copy."""

    async def read_stream(self, stream_id: UUID, *, limit: int | None = None) -> list[StoredEvent]:
        """The stream's stored events in version order (the first ``limit`` only, when given)."""

    async def save(self, *aggregates, workspace_id: UUID | None = None, meta: dict | None = None,
                   events: Sequence = (), effects: Sequence = (), unhurried: bool = False) -> int:
        """Append what ``aggregates`` decided (their pending events, collected here) and ``events``
        (domain events collected earlier, or ``NewEvent``s already encoded), with ``meta``, and
        apply ``effects``: all in one transaction, or nothing. Returns the last position.

        ``ConcurrencyError`` when a stream moved since its aggregate was loaded; an effect's own
        error when its claim does not hold. ``unhurried``: nobody waits for these events downstream
        (no read-your-writes wait), so the log may carry them with others a moment later."""

    def in_turn(self, stream_id: UUID) -> Any:
        """An async context manager yielding a ``Turn`` on ``stream_id``: this process's decisions on
        the stream are taken one after the other, each decided on the state the previous one saved
        even before it has committed. ``turn.save`` queues the append; the caller awaits
        ``turn.saved`` (its last position) after leaving the block, so the next decision does not
        wait for this one's commit."""

    async def named_stream(self, name: str) -> UUID | None:
        """The stream an event declared ``name`` for (its class's ``stream_name``, such as
        ``article:123``), or None: how the write side finds a stream by a natural key without a
        read model."""

    async def next_id(self, sequence: str) -> int:
        """A new integer id (media, video, article) from the named sequence."""

    async def head(self) -> int:
        """The last position appended (0 when none)."""


async def origin(store: EventStore, stream_id: UUID) -> StoredEvent | None:
    """The first event of a stream (what started it), or None: its ``meta`` names the chain the
    stream belongs to (a job's ``JobQueued`` says which request queued it), and its position is
    what the stream's later events quote as their cause."""
    first = await store.read_stream(stream_id, limit=1)
    return first[0] if first else None


def encoded(registry: EventRegistry, aggregates: Sequence, events: Sequence, workspace_id: UUID | None,
            meta: dict | None) -> list[NewEvent]:
    """``events`` and the pending events of ``aggregates`` (collected), as new events to append;
    ``NewEvent``s among ``events`` are kept as they are."""
    out: list[NewEvent] = []
    pending: list = []

    def flush() -> None:
        if pending:
            out.extend(registry.to_new_events(pending, workspace_id=workspace_id, meta=meta))
            pending.clear()

    for event in events:
        if isinstance(event, NewEvent):
            flush()
            out.append(event)
        else:
            pending.append(event)
    for agg in aggregates:
        pending.extend(agg.collect_events())
    flush()
    return out


@dataclass(frozen=True)
class Call:
    """A side effect that is one call of a PostgreSQL function (``SELECT function(args)``: always
    one row, whatever it returns; the function raises to refuse the append). Unlike any other side
    effect it rides in the append's own statement, so an append with calls only is one round trip
    instead of four (begin, the effect, the append, commit). ``types`` are the arguments' SQL types
    (a cast chain such as ``text::jsonb`` passes JSON already serialised).
    ``on_commit``, when given, is called once the append it rode in has committed."""

    function: str
    types: tuple[str, ...]
    args: tuple
    on_commit: Callable[[], None] | None = None

    def sql(self, offset: int = 0) -> str:
        return f"{self.function}(" + ", ".join(f"${offset + i}::{t}" for i, t in enumerate(self.types, 1)) + ")"

    async def __call__(self, conn: asyncpg.Connection) -> None:
        await conn.execute(f"SELECT {self.sql()}", *self.args)


_COMPLETE_TYPES = ("uuid", "text", "uuid", "text", "text", "uuid", "integer", "text::jsonb", "timestamptz")
_SANDBOX_CLAIM = (
    "INSERT INTO sandbox_job_quota AS q (workspace_id, day, jobs, quota, clip_ms, clip_ms_quota, decoded_ms, "
    "decoded_ms_quota) VALUES ($1, $2, 1, $3, $4, $5, $6, $7) "
    "ON CONFLICT (workspace_id, day) DO UPDATE SET jobs = q.jobs + 1, quota = EXCLUDED.quota, "
    "clip_ms = q.clip_ms + EXCLUDED.clip_ms, clip_ms_quota = EXCLUDED.clip_ms_quota, "
    "decoded_ms = q.decoded_ms + EXCLUDED.decoded_ms, decoded_ms_quota = EXCLUDED.decoded_ms_quota")


def _statement(sql: str, *args) -> PgEffect:
    async def run(conn: asyncpg.Connection) -> None:
        await conn.execute(sql, *args)

    return run


def _pg_step(effect) -> Call | PgEffect:
    """How PostgreSQL applies an effect in the append transaction. The sandbox quota is a row per
    workspace and day whose CHECK constraints refuse a claim past any bound; a refund claim and a
    key's digest are rows under a primary key; an idempotency answer completes the key's claim
    (``vaeo_idempotency_complete``, which raises ``VA002`` when the claim lapsed) and rides in the
    append's own statement; a revoked API key's idempotency keys are deleted."""
    if isinstance(effect, IdempotencyAnswer):
        body = orjson.dumps(effect.body, default=str).decode()
        return Call("vaeo_idempotency_complete", _COMPLETE_TYPES,
                    (effect.workspace_id, effect.environment, effect.api_key_id, effect.operation, effect.key,
                     effect.owner, effect.status, body, effect.at))
    if isinstance(effect, KeyAnswersDropped):
        return _statement("DELETE FROM idempotency_keys WHERE workspace_id = $1 AND environment = $2 "
                          "AND api_key_id = $3", effect.workspace_id, effect.environment, effect.api_key_id)
    if isinstance(effect, SandboxClaim):
        a, w = effect.allowance, effect.work
        return _statement(_SANDBOX_CLAIM, effect.workspace_id, a.day, a.jobs, w.clip_ms, a.clip_ms, w.decoded_ms,
                          a.decoded_ms)
    if isinstance(effect, RefundClaim):
        return _statement("INSERT INTO credit_refunds (job_id, workspace_id, amount) VALUES ($1, $2, $3)",
                          effect.job_id, effect.workspace_id, effect.amount)
    if isinstance(effect, KeyDigest):
        return _statement("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ($1, $2, $3)",
                          effect.digest, effect.key_id, effect.workspace_id)
    if callable(effect):  # a ``Call`` or a ``PgEffect``
        return effect
    raise TypeError(f"not an effect this store applies: {effect!r}")


def _steps(effects: Sequence[Effect | Call | PgEffect]) -> list:
    return [_pg_step(e) for e in effects]


def _with_calls(calls: Sequence[Call], events: Sequence[NewEvent], at: datetime,
                announce: str | None = None) -> tuple[str, tuple]:
    """One statement: each call in a CTE (a volatile function's CTE is evaluated, once, and not
    inlined), the append over their one-row cross join, so after every call has succeeded; with
    ``announce``, the NOTIFY too (``_announced``)."""
    parts, args = [], []
    for n, call in enumerate(calls):
        parts.append(f"c{n} AS (SELECT {call.sql(len(args))})")
        args.extend(call.args)
    append = f"SELECT {_append_call(len(args))} AS last FROM {', '.join(f'c{n}' for n in range(len(calls)))}"
    args.extend(_args(events, at))
    if announce is None:
        return f"WITH {', '.join(parts)} {append}", tuple(args)
    return _announced(append, parts, args, announce)


def _announced(append: str, ctes: Sequence[str], args: list, mark: str) -> tuple[str, tuple]:
    """The append (a ``SELECT ... AS last``) and its NOTIFY (payload ``mark`` and the last
    position) in one statement: PostgreSQL delivers the notification when the statement's
    transaction commits, and never if it does not."""
    n = len(args)
    sql = (f"WITH {''.join(c + ', ' for c in ctes)}appended AS ({append}), "
           f"announced AS (SELECT pg_notify(${n + 1}, ${n + 2} || last::text) FROM appended) "
           "SELECT last FROM appended, announced")
    return sql, (*args, NOTIFY_CHANNEL, mark)


def _args(events: Sequence[NewEvent], at: datetime) -> tuple:
    """The append's arguments: the events' columns, and ``at``, their ``recorded_at`` (the
    service's clock when the append is sent: every time a reader compares, a job's due time with
    a worker's claim for one, is then on one clock)."""
    return (
        [e.stream_id for e in events], [e.stream_type for e in events], [e.version for e in events],
        [e.workspace_id for e in events], [e.type for e in events], [e.schema for e in events],
        [e.data for e in events], [e.meta for e in events], [e.name for e in events], at,
    )


def _connection_lost(exc: asyncpg.PostgresError) -> bool:
    """The connection or the server is gone (classes 08 and 57): not this append's own failure."""
    return (exc.sqlstate or "")[:2] in ("08", "57")


async def _append_on(conn: asyncpg.Connection, events: Sequence[NewEvent], before: Sequence[Call | PgEffect],
                     at: datetime, announce: str | None = None) -> int:
    """The side effects and the append in one transaction; without side effects, or with calls
    only (``Call``), one statement (its own transaction, one round trip). With ``announce`` (a
    NOTIFY payload's mark), the NOTIFY of the last position rides in the same statement, delivered
    at commit. Returns the last position."""
    if not before:
        if announce is None:
            return await conn.fetchval(_APPEND, *_args(events, at))
        sql, args = _announced(f"SELECT {_append_call()} AS last", (), list(_args(events, at)), announce)
        return await conn.fetchval(sql, *args)
    if all(isinstance(effect, Call) for effect in before):
        sql, args = _with_calls(before, events, at, announce)
        return await conn.fetchval(sql, *args)
    async with conn.transaction():
        for effect in before:
            await effect(conn)
        last = await conn.fetchval(_APPEND, *_args(events, at))
        if announce is not None:
            await conn.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL, f"{announce}{last}")
        return last


def _refusal(exc: asyncpg.PostgresError, effects: Sequence = ()) -> Exception:
    """What a failed append means to its caller: a conflict (``ConcurrencyError``), the refusal of
    one of its typed effects (``infra.effects``), else the database's own error."""
    constraint = getattr(exc, "constraint_name", "") or ""
    if exc.sqlstate == CONFLICT_SQLSTATE or (isinstance(exc, asyncpg.UniqueViolationError) and
                                             constraint == "events_stream_id_version_key"):
        return ConcurrencyError(str(exc))
    if exc.sqlstate == LAPSED_SQLSTATE and any(isinstance(e, IdempotencyAnswer) for e in effects):
        return ClaimLapsed(str(exc))
    if isinstance(exc, asyncpg.CheckViolationError) and constraint in SANDBOX_BOUNDS:
        claim = next((e for e in effects if isinstance(e, SandboxClaim)), None)
        if claim is not None:
            return claim.refusal(constraint)
    if isinstance(exc, asyncpg.UniqueViolationError):
        if constraint == "credit_refunds_pkey" and any(isinstance(e, RefundClaim) for e in effects):
            return RefundClaimed(str(exc))
        if constraint == "api_key_digests_pkey" and any(isinstance(e, KeyDigest) for e in effects):
            return DigestTaken(str(exc))
    return exc
class KeptStates:
    """What every event store of this service shares above its storage: the states it keeps (a
    long stream's state to decide on, the shared read-only views), saving through ``_append``, and
    decisions in turn. A store implements ``_append``, ``read_stream``, ``_read_after`` and
    ``_read_many_after``; ``group_commit`` stores also queue (``_queued``)."""

    group_commit = False

    def __init__(self, registry: EventRegistry) -> None:
        self.registry = registry
        self._stream_locks: weakref.WeakValueDictionary[UUID, asyncio.Lock] = weakref.WeakValueDictionary()
        self._aggregates: OrderedDict[UUID, object] = OrderedDict()
        self._read: OrderedDict[UUID, Reading] = OrderedDict()
        # Stream id -> the appends queued in turn on it and not yet settled: its kept state is ahead
        # of the store until they are (``Turn.fetch_for_writing(committed=True)``).
        self._in_turn: dict[UUID, set[asyncio.Future]] = {}

    async def _append(self, events: Sequence[NewEvent], effects: Sequence, unhurried: bool = False) -> int:
        raise NotImplementedError

    def _queued(self, events: Sequence[NewEvent], effects: Sequence, unhurried: bool = False) -> asyncio.Future:
        raise NotImplementedError

    async def read_stream(self, stream_id: UUID, *, limit: int | None = None) -> list[StoredEvent]:
        raise NotImplementedError

    async def _read_after(self, stream_id: UUID, version: int) -> list[StoredEvent]:
        """The stream's events after ``version``, in version order."""
        raise NotImplementedError

    async def _read_many_after(self, stream_ids: Sequence[UUID], versions: Sequence[int]) -> dict[UUID, list]:
        """Each stream's events after its version (streams with none left out), in one read."""
        raise NotImplementedError

    async def save(self, *aggregates, workspace_id: UUID | None = None, meta: dict | None = None,
                   events: Sequence = (), effects: Sequence = (), unhurried: bool = False) -> int:
        """See ``EventStore.save``. The effects run in the append's transaction ahead of the
        append, so that the table lock is held only for the append and the commit; with group
        commit the append is queued and shares a commit with others.

        ``unhurried``: the relay may hold these events for up to ``relay_unhurried_ms`` to send
        them with others. Durability is the same: the append has committed when this returns.
        """
        new = encoded(self.registry, aggregates, events, workspace_id, meta)
        try:
            last = await self._append(new, effects, unhurried)
        except ConcurrencyError:
            for agg in aggregates:  # decided on a state another process moved: read it anew next time
                self._aggregates.pop(agg.id, None)
            raise
        for agg in aggregates:  # a kept stream's state is now the one just saved
            if agg.id in self._aggregates:
                self._aggregates[agg.id] = copy.deepcopy(agg)
        return last

    def in_turn(self, stream_id: UUID) -> StoreTurn:
        """See ``EventStore.in_turn``. Other processes are not covered: their conflicts are still
        retried.

        With group commit the append is queued, and the new state of the turn's stream is kept at
        once whatever its length (and so is that of the other aggregates saved, when kept already):
        the next decision of the stream is made while this one commits, and the appends of one busy
        workspace share group commits instead of taking turns through the round trip and the commit.
        The next decision is made on a state not yet durable: when this append is refused, the kept
        states are dropped and the next append, which expects the versions this one would have
        made, is refused as a conflict and decided again on what the store holds. Without group
        commit the append is made in the block, as ``save`` makes it.
        """
        return StoreTurn(self, stream_id)

    def _stream_lock(self, stream_id: UUID) -> asyncio.Lock:
        lock = self._stream_locks.get(stream_id)
        if lock is None:
            lock = self._stream_locks[stream_id] = asyncio.Lock()
        return lock

    def _save_in_turn(self, stream_id: UUID, aggregates, workspace_id: UUID | None, meta: dict | None,
                      events: Sequence, effects: Sequence) -> asyncio.Future:
        future = self._queued(encoded(self.registry, aggregates, events, workspace_id, meta), effects)
        ids = [agg.id for agg in aggregates]
        for agg in aggregates:
            if agg.id == stream_id or agg.id in self._aggregates:
                self._keep(agg)
        for saved_id in ids:
            self._in_turn.setdefault(saved_id, set()).add(future)

        def settled(done: asyncio.Future) -> None:  # runs before the caller resumes, awaited or not
            for saved_id in ids:
                queued = self._in_turn.get(saved_id)
                if queued is not None:
                    queued.discard(done)
                    if not queued:
                        del self._in_turn[saved_id]
            if done.cancelled() or done.exception() is not None:
                for saved_id in ids:  # the kept states were decided on what was not written
                    self._aggregates.pop(saved_id, None)
            else:
                committed(effects)

        future.add_done_callback(settled)
        return future

    def _keep(self, aggregate) -> None:
        """Keep a copy of ``aggregate`` as its stream's state, most recently used
        (``CACHED_AGGREGATES`` at most)."""
        self._aggregates[aggregate.id] = copy.deepcopy(aggregate)
        self._aggregates.move_to_end(aggregate.id)
        while len(self._aggregates) > CACHED_AGGREGATES:
            self._aggregates.popitem(last=False)

    async def fetch_for_writing(self, stream_id: UUID):
        """See ``EventStore.fetch_for_writing``.

        A long stream's state is kept in memory (``CACHE_FROM_VERSION``) and the next load applies
        only the events appended since, by this process or any other: events never change, so the
        state at version N plus the events after N is the state the whole stream gives. Callers get
        their own copy to decide on; the kept one is never handed out.
        """
        kept = self._aggregates.get(stream_id)
        if kept is None:
            aggregate = self.registry.reconstruct(await self.read_stream(stream_id))
        else:
            self._aggregates.move_to_end(stream_id)
            after = await self._read_after(stream_id, kept.version)
            aggregate = self.registry.reconstruct(after, start=copy.deepcopy(kept))
            if not after:
                return aggregate
        if aggregate is not None and (kept is not None or aggregate.version >= CACHE_FROM_VERSION):
            self._keep(aggregate)  # a kept state is brought up to date, however short its stream
        return aggregate

    async def _fetch_kept(self, stream_id: UUID):
        """The aggregate to decide on, from this process's kept state without a query when there is
        one (a long stream this process loaded or saved, or one saved in turn); else
        ``fetch_for_writing``.

        For a stream whose appends mostly come from this process, one after the other (a
        workspace's charges, in turn). When another process has moved the stream, the decision's
        append is refused by its expected version (``ConcurrencyError``), ``save`` drops the kept
        state, and the retry loads the stream: a stale state costs a retry, never a wrong decision.
        A decision that appends nothing (a refusal) is not checked that way: make it on
        ``_fetch_committed``.
        """
        kept = self._aggregates.get(stream_id)
        if kept is None:
            return await self.fetch_for_writing(stream_id)
        self._aggregates.move_to_end(stream_id)
        return copy.deepcopy(kept)

    async def _fetch_committed(self, stream_id: UUID):
        """The aggregate as the store holds it, to decide on where a decision made on a kept state
        could be wrong without any append to refuse it (a charge refused for lack of credits appends
        nothing, so a top-up or a refund that another process appended would never be seen).

        Waits for this process's appends of the stream queued in turn to settle (the kept state is
        then the store's, or dropped when one was refused), then applies whatever any process
        appended since (``fetch_for_writing``): one query, and the kept state is brought up to date.
        Called in the stream's turn, so that no append of the stream is queued meanwhile.
        """
        while queued := self._in_turn.get(stream_id):
            await asyncio.wait(list(queued))
        return await self.fetch_for_writing(stream_id)

    async def fetch_latest(self, *stream_ids: UUID) -> list:
        """See ``EventStore.fetch_latest``: in one query.

        Kept in memory (``READ_AGGREGATES``) as frozen states, and brought up to date with one
        query, like a long stream in ``fetch_for_writing``: a stream that moved is rebuilt onto a
        copy, so that a view a reader already holds never changes under it, and while a stream
        stands still every reader gets the same view.
        """
        kept = [self._read.get(stream_id) for stream_id in stream_ids]
        by_stream = await self._read_many_after(stream_ids, [k.version if k is not None else 0 for k in kept])
        out = []
        for stream_id, reading in zip(stream_ids, kept, strict=True):
            new = by_stream.get(stream_id)
            if reading is not None:
                self._read.move_to_end(stream_id)
                if not new:
                    out.append(reading)
                    continue
            start = copy.deepcopy(reading) if reading is not None else None
            aggregate = self.registry.reconstruct(new or (), start=start)
            if aggregate is not None:
                aggregate = self._read[stream_id] = Reading(aggregate)
                self._read.move_to_end(stream_id)
                while len(self._read) > READ_AGGREGATES:
                    self._read.popitem(last=False)
            out.append(aggregate)
        return out


class PostgresEventStore(KeptStates):
    """The event store on PostgreSQL. With ``group_commit``, concurrent appends of one process share
    commits.

    Group commit: appends queue up; one committer task takes up to ``max_group`` of them and
    appends them all in one transaction with one ``vaeo_append`` call (one WAL flush, one hold
    of the append lock). If any part fails (a conflict, a refused effect), the group is
    redone append by append, each in its own savepoint, so only that append is refused. No
    caller hears back before the commit has succeeded.
    """

    def __init__(self, pool: asyncpg.Pool, registry: EventRegistry, *, notify: bool = True,
                 group_commit: bool = False, max_group: int = 64, id_block: int = 1,
                 clock: Callable[[], datetime] = wall_clock) -> None:
        super().__init__(registry)
        self.clock = clock  # the service's clock (``Settings.now``): what an event's ``recorded_at`` says
        self.pool = pool
        self.notify = notify
        self.group_commit = group_commit
        self.max_group = max_group
        self.id_block = id_block
        self._ids: dict[str, list[int]] = {}
        self._id_locks: dict[str, asyncio.Lock] = {}
        self._queue: list[tuple[Sequence[NewEvent], Sequence, asyncio.Future]] = []
        self._unhurried: set[asyncio.Future] = set()  # queued appends nobody waits on downstream
        self._committer: asyncio.Task | None = None

    # -- saving ---------------------------------------------------------------------------------

    async def _append(self, events: Sequence[NewEvent], effects: Sequence, unhurried: bool = False) -> int:
        if not events:
            raise ValueError("nothing to append")
        if self.group_commit:
            last = await self._queued(events, effects, unhurried)
            committed(effects)
            return last
        announce = UNHURRIED if unhurried and self.notify else None
        async with self.pool.acquire() as conn:
            try:
                last = await _append_on(conn, events, _steps(effects), self.clock(), announce)
            except asyncpg.PostgresError as exc:
                raise _refusal(exc, effects) from exc
            committed(effects)
            if announce is None:
                await self._notify(conn, last)
        return last

    def _queued(self, events: Sequence[NewEvent], effects: Sequence, unhurried: bool = False) -> asyncio.Future:
        """Queue an append for the next group commit; the future is its last position."""
        future = asyncio.get_running_loop().create_future()
        self._queue.append((events, effects, future))
        if unhurried:
            self._unhurried.add(future)
        if self._committer is None or self._committer.done():
            self._committer = asyncio.create_task(self._commit_groups())
        return future

    async def named_stream(self, name: str) -> UUID | None:
        async with self.pool.acquire() as conn:
            return await conn.fetchval("SELECT stream_id FROM stream_names WHERE name = $1", name)

    async def next_id(self, sequence: str) -> int:
        """A new integer id (media, video, article) from a PostgreSQL sequence.

        With ``id_block`` > 1 the ids are taken that many at a time and handed out from memory:
        a busy API saves a round trip per command. Ids stay unique and increase within a process;
        across processes (and after a restart, which drops the rest of a block) they are not
        dense and not in creation order, like any sequence's ids after a rollback.
        """
        free = self._ids.setdefault(sequence, [])
        if not free:
            async with self._id_locks.setdefault(sequence, asyncio.Lock()):
                if not free:
                    async with self.pool.acquire() as conn:
                        rows = await conn.fetch("SELECT nextval($1::regclass) AS id FROM generate_series(1, $2)",
                                                sequence, self.id_block)
                    free.extend(sorted((r["id"] for r in rows), reverse=True))
        return free.pop()

    # -- appends of the log's readers (PostgreSQL only) -----------------------------------------

    async def save_batch(self, events: Sequence[NewEvent], *, along: tuple[str, Sequence] | None = None,
                         notify: bool = True) -> int:
        """Append encoded events in one statement of their own, now (never queued for a group
        commit): for a reader of the log that batches its own appends (the dispatcher's recorder).
        One conflict refuses the whole batch (``ConcurrencyError``).

        ``along`` is ``(sql, args)``: a data-modifying statement (an ``UPDATE`` of the caller's
        rows, with ``$1..$n``) made in the same statement and transaction, ahead of the append,
        so both cost one round trip and the table lock is held for the append only. With
        ``notify=False`` the caller announces the position itself (``announce``), for instance
        after it has told its waiters.
        """
        if not events:
            raise ValueError("nothing to append")
        if along is None:
            sql, args = _APPEND, _args(events, self.clock())
        else:
            sql = (f"WITH along AS ({along[0]} RETURNING 1) "
                   f"SELECT {_append_call(len(along[1]))} FROM (SELECT count(*) FROM along) AS done")
            args = (*along[1], *_args(events, self.clock()))
        async with self.pool.acquire() as conn:
            try:
                last = await conn.fetchval(sql, *args)
            except asyncpg.PostgresError as exc:
                raise _refusal(exc) from exc
            if notify:
                await self._notify(conn, last)
        return last

    async def save_within(self, conn: asyncpg.Connection, events: Sequence[NewEvent]) -> int:
        """Append encoded events on the caller's connection, inside the caller's transaction: for a
        reader of the log whose effect is an append, committed with its tracking. Checks the
        expected versions as ``save`` does (``ConcurrencyError``; the caller's savepoint keeps the
        rest of its transaction). No NOTIFY: the caller ``announce``s after its commit."""
        if not events:
            raise ValueError("nothing to append")
        try:
            return await conn.fetchval(_APPEND, *_args(events, self.clock()))
        except asyncpg.PostgresError as exc:
            raise _refusal(exc) from exc

    async def announce(self, last: int) -> None:
        """The NOTIFY that ``save`` sends after a commit (wakes the relay), for ``notify=False``."""
        if self.notify:
            async with self.pool.acquire() as conn:
                await self._notify(conn, last)

    async def _notify(self, conn: asyncpg.Connection, last: int, *, hurried: bool = True) -> None:
        if self.notify:
            # A hurried append's NOTIFY is sent after its commit, outside the append transaction:
            # NOTIFY inside it would add a second global serialisation point to the commit of every
            # write that someone waits for. A lost notification costs one polling interval. Appends
            # nobody waits for (unhurried) take that cost instead of a round trip of their own: their
            # NOTIFY rides in the append's statement (``_append_on``).
            await conn.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL,
                               str(last) if hurried else f"{UNHURRIED}{last}")

    # -- group commit -----------------------------------------------------------------------------

    async def _commit_together(self, conn: asyncpg.Connection, group, announce: str | None = None) -> list | None:
        """Fast path: every append of the group in one vaeo_append call. None if any part fails
        (a conflict, an effect refused): then the group goes append by append."""
        every = [e for events, _, _ in group for e in events]
        try:
            last = await _append_on(conn, every, _steps([effect for _, effects, _ in group for effect in effects]),
                                    self.clock(), announce)
        except asyncpg.PostgresError as exc:
            if _connection_lost(exc):
                raise
            return None
        outcomes, end = [], last - len(every)
        for events, _, future in group:
            end += len(events)
            outcomes.append((future, end, None))
        return outcomes

    async def _commit_groups(self) -> None:
        while self._queue:
            group, self._queue = self._queue[:self.max_group], self._queue[self.max_group:]
            outcomes: list[tuple[asyncio.Future, int | None, BaseException | None]] = []
            # A group of unhurried appends only announces itself in its own statement (``_notify``).
            announce = UNHURRIED if self.notify and all(f in self._unhurried for _, _, f in group) else None
            try:
                async with self.pool.acquire() as conn:
                    if len(group) == 1:  # alone: its own statement (and transaction), one round trip
                        outcomes = [await self._commit_alone(conn, *group[0], announce=announce)]
                    elif (together := await self._commit_together(conn, group, announce)) is not None:
                        outcomes = together
                    else:
                        await self._commit_one_by_one(conn, group, outcomes)
                        announce = None  # appended one by one, announced after
                    # The callers hear back as soon as the group is durable; the relay's wake-up
                    # notification follows (a lost one costs the relay one polling interval).
                    _settle(outcomes)
                    lasts = [last for _, last, _ in outcomes if last is not None]
                    hurried = any(future not in self._unhurried for future, last, _ in outcomes if last is not None)
                    self._unhurried.difference_update(future for _, _, future in group)
                    if lasts and announce is None:
                        try:
                            await self._notify(conn, max(lasts), hurried=hurried)
                        except Exception:  # noqa: BLE001  the group is durable; polling covers it
                            pass
            except BaseException as exc:
                for _, _, future in group:
                    self._unhurried.discard(future)
                    if not future.done():
                        future.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
                if not isinstance(exc, Exception):
                    raise
                continue

    async def _commit_alone(self, conn: asyncpg.Connection, events, effects, future, *,
                            announce: str | None = None) -> tuple:
        """A group of one, as ``save`` without group commit does it: no savepoint is needed."""
        try:
            return future, await _append_on(conn, events, _steps(effects), self.clock(), announce), None
        except asyncpg.PostgresError as exc:
            if _connection_lost(exc):
                raise
            return future, None, _refusal(exc, effects)

    async def _commit_one_by_one(self, conn: asyncpg.Connection, group, outcomes: list) -> None:
        async with conn.transaction():
            for events, effects, future in group:
                try:
                    async with conn.transaction():  # a savepoint per append
                        for step in _steps(effects):
                            await step(conn)
                        last = await conn.fetchval(_APPEND, *_args(events, self.clock()))
                    outcomes.append((future, last, None))
                except asyncpg.PostgresError as exc:
                    if _connection_lost(exc):
                        raise  # the whole group fails
                    outcomes.append((future, None, _refusal(exc, effects)))

    # -- loading ----------------------------------------------------------------------------------

    async def read_stream(self, stream_id: UUID, *, limit: int | None = None) -> list[StoredEvent]:
        async with self.pool.acquire() as conn:
            if limit is None:
                rows = await conn.fetch(_LOAD, stream_id)
            else:
                rows = await conn.fetch(_LOAD_FIRST, stream_id, limit)
        return [row_to_stored(r) for r in rows]

    async def _read_after(self, stream_id: UUID, version: int) -> list[StoredEvent]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(_LOAD_AFTER, stream_id, version)
        return [row_to_stored(r) for r in rows]

    async def _read_many_after(self, stream_ids: Sequence[UUID], versions: Sequence[int]) -> dict[UUID, list]:
        # Each stream through the (stream_id, version) index (a join could scan the whole table instead).
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(_LOAD_MANY_AFTER, list(stream_ids), list(versions))
        by_stream: dict[UUID, list] = {}
        for row in rows:
            by_stream.setdefault(row["stream_id"], []).append(row_to_stored(row))
        return by_stream

    async def head(self) -> int:
        async with self.pool.acquire() as conn:
            return await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")


class StoreTurn:
    """A turn on one stream of a store (``in_turn``): its lock, held for the decision and the
    queueing of the append, and the future of that append."""

    def __init__(self, store: KeptStates, stream_id: UUID) -> None:
        self.store = store
        self.stream_id = stream_id
        self.saved: asyncio.Future | None = None
        self._lock = store._stream_lock(stream_id)

    async def __aenter__(self) -> StoreTurn:
        await self._lock.acquire()
        return self

    async def __aexit__(self, *exc_info) -> None:
        self._lock.release()

    async def fetch_for_writing(self, *, committed: bool = False):
        """The turn's stream to decide on: this process's kept state, without a query when there is
        one; ``committed``, the stream as the store holds it once this process's queued appends of
        it have settled (for a refusal, which no append would check)."""
        if committed:
            return await self.store._fetch_committed(self.stream_id)
        return await self.store._fetch_kept(self.stream_id)

    async def save(self, *aggregates, workspace_id: UUID | None, meta: dict | None = None, events: Sequence = (),
                   effects: Sequence = ()) -> None:
        """Save, the turn's aggregate among ``aggregates``; ``saved`` is the append's last position."""
        if not any(agg.id == self.stream_id for agg in aggregates):
            raise ValueError("the turn's aggregate is one of those saved")
        if not self.store.group_commit:
            last = await self.store.save(*aggregates, workspace_id=workspace_id, meta=meta, events=events,
                                         effects=effects)
            self.saved = asyncio.get_running_loop().create_future()
            self.saved.set_result(last)
            return
        self.saved = self.store._save_in_turn(self.stream_id, aggregates, workspace_id, meta, events, effects)


def _settle(outcomes: list[tuple[asyncio.Future, int | None, BaseException | None]]) -> None:
    for future, last, error in outcomes:
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(last)


def _append_call(offset: int = 0) -> str:
    types = ("uuid[]", "text[]", "int[]", "uuid[]", "text[]", "int[]", "jsonb[]", "jsonb[]", "text[]", "timestamptz")
    return "vaeo_append(" + ", ".join(f"${offset + i}::{t}" for i, t in enumerate(types, 1)) + ")"


_APPEND = f"SELECT {_append_call()}"
_COLUMNS = "position, stream_id, stream_type, version, workspace_id, type, schema, data, meta, recorded_at"
_LOAD = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version"
_LOAD_AFTER = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 AND version > $2 ORDER BY version"
_LOAD_MANY_AFTER = (f"SELECT {', '.join('e.' + c for c in _COLUMNS.split(', '))} "
                    "FROM unnest($1::uuid[], $2::int[]) AS k(stream_id, after) CROSS JOIN LATERAL "
                    "(SELECT * FROM events WHERE stream_id = k.stream_id AND version > k.after ORDER BY version) e")
_LOAD_FIRST = f"SELECT {_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY version LIMIT $2"
SELECT_FROM = f"SELECT {_COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2"


def row_to_stored(r: asyncpg.Record) -> StoredEvent:
    return StoredEvent(
        position=r["position"], stream_id=r["stream_id"], stream_type=r["stream_type"], version=r["version"],
        workspace_id=r["workspace_id"], type=r["type"], schema=r["schema"], data=r["data"], meta=r["meta"],
        recorded_at=r["recorded_at"],
    )
