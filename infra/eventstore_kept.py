"""What every event store of this service shares above its storage (``KeptStates``): the states
it keeps in memory (a long stream's state to decide on, the read-only views every reader shares),
saving through the store's own append, and decisions on one stream taken in turn (``StoreTurn``).

``infra.eventstore_postgres`` and ``infra.memory_store`` inherit it, so both keep the same states
by the same rules.
"""

from __future__ import annotations

import asyncio
import copy
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from uuid import UUID

from infra.codec import EventRegistry, NewEvent, StoredEvent
from infra.effects import committed
from infra.eventstore import ConcurrencyError, encoded
from infra.readonly import Reading

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
