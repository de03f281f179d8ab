"""The event store in memory: the ``EventStore`` interface with no I/O, for command tests that run in
milliseconds and need only the store's rules.

``MemoryDatabase`` stands for the database: the events, the sequences and the tables the typed
effects write (``infra.effects``). ``MemoryEventStore`` stands for one process's store over it,
with the same kept states as the PostgreSQL store (``KeptStates``): two stores over one database
behave as two processes do, one's kept state going stale when the other appends. The rules are
PostgreSQL's, applied in one step of the event loop, so an append is atomic: gap-free positions in
commit order, a stream's first new version following its current one (else ``ConcurrencyError``),
and effects refused with the errors the PostgreSQL store raises, writing nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

import orjson

from infra.codec import EventRegistry, NewEvent, StoredEvent
from infra.effects import (
    SANDBOX_BOUNDS,
    ClaimLapsed,
    DigestTaken,
    IdempotencyAnswer,
    KeyAnswersDropped,
    KeyDigest,
    RefundClaim,
    RefundClaimed,
    SandboxClaim,
    committed,
)
from infra.eventstore import ConcurrencyError
from infra.eventstore_kept import KeptStates
from infra.settings import wall_clock


@dataclass
class MemoryDatabase:
    """What a PostgreSQL database of the service holds, as far as the write side appends to it."""

    clock: Callable[[], datetime] = wall_clock  # the recording time of what is appended
    events: list[StoredEvent] = field(default_factory=list)
    streams: dict[UUID, list[StoredEvent]] = field(default_factory=dict)
    sequences: dict[str, int] = field(default_factory=dict)
    # (workspace, day) -> {"jobs", "quota", "clip_ms", "clip_ms_quota", "decoded_ms", "decoded_ms_quota"}
    sandbox_quota: dict[tuple[UUID, object], dict[str, int]] = field(default_factory=dict)
    credit_refunds: dict[UUID, tuple[UUID, int]] = field(default_factory=dict)  # job -> (workspace, amount)
    key_digests: dict[str, tuple[UUID, UUID]] = field(default_factory=dict)  # digest -> (key, workspace)
    # (workspace, environment, API key, operation, key) -> the row of ``idempotency_keys`` (its columns as keys)
    idempotency_keys: dict[tuple[UUID, str, UUID, str, str], dict] = field(default_factory=dict)
    stream_names: dict[str, UUID] = field(default_factory=dict)  # an event's declared name -> its stream

    def append(self, events: Sequence[NewEvent], effects: Sequence) -> int:
        """Check, apply the effects and append, all or nothing; the last position."""
        if not events:
            raise ValueError("nothing to append")
        first: dict[UUID, int] = {}
        seen: set[tuple[UUID, int]] = set()
        for e in events:
            first[e.stream_id] = min(first.get(e.stream_id, e.version), e.version)
            if (e.stream_id, e.version) in seen:
                raise ConcurrencyError(f"stream {e.stream_id} version {e.version} appears twice")
            seen.add((e.stream_id, e.version))
        for stream_id, version in first.items():
            current = len(self.streams.get(stream_id, ()))
            if current != version - 1:
                raise ConcurrencyError(f"stream {stream_id} is at version {current}, the append expected "
                                       f"{version - 1}")
        staged = self._staged(effects)
        for table, rows in staged.items():
            for key, value in rows.items():
                if value is None:  # a row the effects deleted
                    getattr(self, table).pop(key, None)
                else:
                    getattr(self, table)[key] = value
        at = self.clock()
        base = len(self.events)
        for n, e in enumerate(events, 1):
            stored = StoredEvent(position=base + n, stream_id=e.stream_id, stream_type=e.stream_type,
                                 version=e.version, workspace_id=e.workspace_id, type=e.type, schema=e.schema,
                                 data=orjson.loads(orjson.dumps(e.data)), meta=orjson.loads(orjson.dumps(e.meta)),
                                 recorded_at=at)
            self.events.append(stored)
            self.streams.setdefault(e.stream_id, []).append(stored)
            if e.name is not None:
                self.stream_names.setdefault(e.name, e.stream_id)
        return base + len(events)

    def _staged(self, effects: Sequence) -> dict[str, dict]:
        """The rows the effects write (None: a row they delete), table by table, or the refusal of
        the first that does not hold (as PostgreSQL's constraints and ``vaeo_idempotency_complete``
        refuse them)."""
        staged: dict[str, dict] = {}

        def row(table: str, key):
            return staged.get(table, {}).get(key, getattr(self, table).get(key))

        def put(table: str, key, value) -> None:
            staged.setdefault(table, {})[key] = value

        for effect in effects:
            if isinstance(effect, SandboxClaim):
                a, w, key = effect.allowance, effect.work, (effect.workspace_id, effect.allowance.day)
                day = dict(row("sandbox_quota", key) or {"jobs": 0, "clip_ms": 0, "decoded_ms": 0})
                day.update(jobs=day["jobs"] + 1, quota=a.jobs, clip_ms=day["clip_ms"] + w.clip_ms,
                           clip_ms_quota=a.clip_ms, decoded_ms=day["decoded_ms"] + w.decoded_ms,
                           decoded_ms_quota=a.decoded_ms)
                within = {"sandbox_job_quota_within": day["jobs"] <= day["quota"],
                          "sandbox_clip_ms_within": day["clip_ms"] <= day["clip_ms_quota"],
                          "sandbox_decoded_ms_within": day["decoded_ms"] <= day["decoded_ms_quota"]}
                for bound in sorted(SANDBOX_BOUNDS):  # PostgreSQL checks constraints in name order
                    if not within[bound]:
                        raise effect.refusal(bound)
                put("sandbox_quota", key, day)
            elif isinstance(effect, RefundClaim):
                if row("credit_refunds", effect.job_id) is not None:
                    raise RefundClaimed(f"job {effect.job_id} was refunded already")
                put("credit_refunds", effect.job_id, (effect.workspace_id, effect.amount))
            elif isinstance(effect, KeyDigest):
                if row("key_digests", effect.digest) is not None:
                    raise DigestTaken("a key with this digest exists already")
                put("key_digests", effect.digest, (effect.key_id, effect.workspace_id))
            elif isinstance(effect, IdempotencyAnswer):
                key = (effect.workspace_id, effect.environment, effect.api_key_id, effect.operation, effect.key)
                held = row("idempotency_keys", key)
                if held is None or held["state"] != "in_flight" or held["owner"] != effect.owner:
                    raise ClaimLapsed(f"the idempotency key {effect.key} of {effect.operation} is no longer "
                                      "held by this request")
                body = orjson.loads(orjson.dumps(effect.body, default=str))
                put("idempotency_keys", key, {**held, "state": "done", "owner": None, "claimed_until": None,
                                              "status": effect.status, "body": body, "completed_at": effect.at})
            elif isinstance(effect, KeyAnswersDropped):
                prefix = (effect.workspace_id, effect.environment, effect.api_key_id)
                for key in {*self.idempotency_keys, *staged.get("idempotency_keys", {})}:
                    if key[:3] == prefix:
                        put("idempotency_keys", key, None)
            else:
                raise TypeError(f"not an effect this store applies: {effect!r}")
        return staged


class MemoryEventStore(KeptStates):
    """One process's event store over a ``MemoryDatabase`` (its own when none is given)."""

    def __init__(self, registry: EventRegistry | None = None, database: MemoryDatabase | None = None) -> None:
        super().__init__(registry or EventRegistry())
        self.database = database if database is not None else MemoryDatabase()

    async def _append(self, events: Sequence[NewEvent], effects: Sequence, unhurried: bool = False) -> int:
        await asyncio.sleep(0)  # an append is a suspension point, as a round trip is
        last = self.database.append(events, effects)
        committed(effects)
        return last

    async def read_stream(self, stream_id: UUID, *, limit: int | None = None) -> list[StoredEvent]:
        stream = self.database.streams.get(stream_id, [])
        return list(stream if limit is None else stream[:limit])

    async def _read_after(self, stream_id: UUID, version: int) -> list[StoredEvent]:
        return list(self.database.streams.get(stream_id, [])[version:])

    async def _read_many_after(self, stream_ids: Sequence[UUID], versions: Sequence[int]) -> dict[UUID, list]:
        out = {}
        for stream_id, version in zip(stream_ids, versions, strict=True):
            if after := self.database.streams.get(stream_id, [])[version:]:
                out[stream_id] = list(after)
        return out

    async def named_stream(self, name: str) -> UUID | None:
        return self.database.stream_names.get(name)

    async def next_id(self, sequence: str) -> int:
        value = self.database.sequences.get(sequence, 0) + 1
        self.database.sequences[sequence] = value
        return value

    async def head(self) -> int:
        return len(self.database.events)
