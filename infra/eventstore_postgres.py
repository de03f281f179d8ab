"""The event store on PostgreSQL (asyncpg): ``PostgresEventStore``, with group commit, NOTIFY
after the commit, integer ids in blocks, and the appends of the log's readers (``save_batch``,
``save_within``). Its statements are in ``infra.eventstore_sql``; the kept states and turns it
shares with the in-memory store in ``infra.eventstore_kept``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import datetime
from uuid import UUID

import asyncpg

from infra.codec import EventRegistry, NewEvent, StoredEvent
from infra.effects import committed
from infra.eventstore_kept import KeptStates
from infra.eventstore_sql import (
    APPEND,
    LOAD,
    LOAD_AFTER,
    LOAD_FIRST,
    LOAD_MANY_AFTER,
    NOTIFY_CHANNEL,
    UNHURRIED,
    append_args,
    append_call,
    append_on,
    connection_lost,
    pg_steps,
    refusal,
    row_to_stored,
)
from infra.settings import wall_clock


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
                last = await append_on(conn, events, pg_steps(effects), self.clock(), announce)
            except asyncpg.PostgresError as exc:
                raise refusal(exc, effects) from exc
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
            sql, args = APPEND, append_args(events, self.clock())
        else:
            sql = (f"WITH along AS ({along[0]} RETURNING 1) "
                   f"SELECT {append_call(len(along[1]))} FROM (SELECT count(*) FROM along) AS done")
            args = (*along[1], *append_args(events, self.clock()))
        async with self.pool.acquire() as conn:
            try:
                last = await conn.fetchval(sql, *args)
            except asyncpg.PostgresError as exc:
                raise refusal(exc) from exc
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
            return await conn.fetchval(APPEND, *append_args(events, self.clock()))
        except asyncpg.PostgresError as exc:
            raise refusal(exc) from exc

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
            # NOTIFY rides in the append's statement (``append_on``).
            await conn.execute("SELECT pg_notify($1, $2)", NOTIFY_CHANNEL,
                               str(last) if hurried else f"{UNHURRIED}{last}")

    # -- group commit -----------------------------------------------------------------------------

    async def _commit_together(self, conn: asyncpg.Connection, group, announce: str | None = None) -> list | None:
        """Fast path: every append of the group in one vaeo_append call. None if any part fails
        (a conflict, an effect refused): then the group goes append by append."""
        every = [e for events, _, _ in group for e in events]
        try:
            last = await append_on(conn, every, pg_steps([effect for _, effects, _ in group for effect in effects]),
                                    self.clock(), announce)
        except asyncpg.PostgresError as exc:
            if connection_lost(exc):
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
            return future, await append_on(conn, events, pg_steps(effects), self.clock(), announce), None
        except asyncpg.PostgresError as exc:
            if connection_lost(exc):
                raise
            return future, None, refusal(exc, effects)

    async def _commit_one_by_one(self, conn: asyncpg.Connection, group, outcomes: list) -> None:
        async with conn.transaction():
            for events, effects, future in group:
                try:
                    async with conn.transaction():  # a savepoint per append
                        for step in pg_steps(effects):
                            await step(conn)
                        last = await conn.fetchval(APPEND, *append_args(events, self.clock()))
                    outcomes.append((future, last, None))
                except asyncpg.PostgresError as exc:
                    if connection_lost(exc):
                        raise  # the whole group fails
                    outcomes.append((future, None, refusal(exc, effects)))

    # -- loading ----------------------------------------------------------------------------------

    async def read_stream(self, stream_id: UUID, *, limit: int | None = None) -> list[StoredEvent]:
        async with self.pool.acquire() as conn:
            if limit is None:
                rows = await conn.fetch(LOAD, stream_id)
            else:
                rows = await conn.fetch(LOAD_FIRST, stream_id, limit)
        return [row_to_stored(r) for r in rows]

    async def _read_after(self, stream_id: UUID, version: int) -> list[StoredEvent]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(LOAD_AFTER, stream_id, version)
        return [row_to_stored(r) for r in rows]

    async def _read_many_after(self, stream_ids: Sequence[UUID], versions: Sequence[int]) -> dict[UUID, list]:
        # Each stream through the (stream_id, version) index (a join could scan the whole table instead).
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(LOAD_MANY_AFTER, list(stream_ids), list(versions))
        by_stream: dict[UUID, list] = {}
        for row in rows:
            by_stream.setdefault(row["stream_id"], []).append(row_to_stored(row))
        return by_stream

    async def head(self) -> int:
        async with self.pool.acquire() as conn:
            return await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")


def _settle(outcomes: list[tuple[asyncio.Future, int | None, BaseException | None]]) -> None:
    for future, last, error in outcomes:
        if future.done():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(last)
