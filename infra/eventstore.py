"""The event store's interface (``EventStore``), what every store raises, and what they share.

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
implementations: ``infra.eventstore_postgres`` (PostgreSQL, with its statements and the SQL of
the typed effects in ``infra.eventstore_sql``) and ``infra.memory_store`` (no I/O, the same
rules); both inherit the states a store keeps in memory and its turns (``infra.eventstore_kept``).
One contract suite (``tests/store_contract.py``) runs against both.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol
from uuid import UUID

from infra.codec import EventRegistry, NewEvent, StoredEvent


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
