"""Read-your-writes: wait until a projection has applied a position on one Kafka partition.

The projector NOTIFYs ``vaeo_projection`` with ``name:partition:max_position`` after each batch
it commits. One LISTEN connection per API process keeps the highest position seen per
(projection, partition) and wakes the requests waiting for it. A notification can be missed when
the LISTEN connection was not listening when the projector committed, so a wait that began
before the listener's current connection did (``since``) reads ``projection_offsets`` first, and
every wait re-reads it every ``POLL_S``. A listener that has been up since before the write saw
every notification after it: that wait costs no query. The wait is bounded
(``read_your_writes_timeout_s``): the write is durable either way, so on timeout the call answers
anyway and says so in the ``X-Read-Your-Writes`` header.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict

import asyncpg

from infra.consume import PROGRESS_CHANNEL, applied_position
from infra.db import connect, ping
from services.lib.common import backoff_delays

log = logging.getLogger("vaeo.api.waits")

POLL_S = 0.25  # fallback re-read of projection_offsets while waiting (a lost NOTIFY costs at most this)


class ProgressWaiter:
    def __init__(self, dsn: str, pool: asyncpg.Pool, timeout_s: float) -> None:
        self.dsn = dsn
        self.pool = pool
        self.timeout_s = timeout_s
        self._reached: dict[tuple[str, int], int] = defaultdict(int)
        self._waiting: dict[tuple[str, int], list[tuple[int, asyncio.Future]]] = defaultdict(list)
        self._listening_since: float | None = None  # monotonic time the current LISTEN began

    def _advance(self, key: tuple[str, int], position: int) -> None:
        if position <= self._reached[key]:
            return
        self._reached[key] = position
        waiting = self._waiting.get(key)
        if not waiting:
            return
        still = []
        for wanted, fut in waiting:
            if wanted <= position:
                _resolve(fut, True)
            elif not fut.done():
                still.append((wanted, fut))
        self._waiting[key] = still

    def _on_notify(self, _conn, _pid, _channel, payload: str) -> None:
        try:
            name, partition, position = payload.rsplit(":", 2)
            self._advance((name, int(partition)), int(position))
        except ValueError:
            log.warning("unexpected progress notification %r", payload)

    def _lost(self, lost: asyncio.Event) -> None:
        self._listening_since = None  # from now on, waits read the stored progress first
        lost.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Keep one LISTEN connection open until ``stop``; reconnect with backoff when it drops."""
        delays = backoff_delays()
        while not stop.is_set():
            conn = None
            lost = asyncio.Event()
            try:
                conn = await connect(self.dsn)
                conn.add_termination_listener(lambda _conn, lost=lost: self._lost(lost))
                await conn.add_listener(PROGRESS_CHANNEL, self._on_notify)
                self._listening_since = time.monotonic()
                delays = backoff_delays()
                while not stop.is_set() and not lost.is_set():
                    await _first_of(stop, lost, timeout_s=5.0)
                    if not stop.is_set() and not lost.is_set():
                        await ping(conn)  # notice a connection that died silently
                if lost.is_set() and not stop.is_set():
                    log.warning("progress listener: connection lost; reconnecting")
            except Exception as exc:  # an outage: waiters fall back to polling meanwhile
                log.warning("progress listener: %s: %s", type(exc).__name__, exc)
                await _first_of(stop, timeout_s=next(delays))
            finally:
                self._listening_since = None
                if conn is not None and not conn.is_closed():
                    await conn.close()

    def reached(self, projection: str, partition: int) -> int:
        """The highest position of ``partition`` this process knows ``projection`` has applied
        (0 before it heard of any): a wait for the next one wakes on the projection's next batch."""
        return self._reached.get((projection, partition), 0)

    async def _read_stored(self, key: tuple[str, int]) -> None:
        stored = await applied_position(self.pool, *key)
        if stored:
            self._advance(key, stored)

    async def wait(self, projection: str, partition: int, position: int, timeout_s: float | None = None,
                   since: float | None = None) -> bool:
        """True once ``projection`` has applied ``position`` on ``partition``; False on timeout.

        ``since``: a monotonic time before ``position`` was committed; without it, the stored
        progress is read first.
        """
        key = (projection, partition)
        if self._reached[key] >= position:
            return True
        deadline = time.monotonic() + (self.timeout_s if timeout_s is None else timeout_s)
        listening_since = self._listening_since
        if since is None or listening_since is None or listening_since > since:
            await self._read_stored(key)
        loop = asyncio.get_running_loop()
        while self._reached[key] < position:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            # One future per wait, resolved True by a notification (``_advance``) or False by its
            # timer: a poll of the stored progress is then due. No task, no wait_for, no shield.
            fut: asyncio.Future = loop.create_future()
            self._waiting[key].append((position, fut))
            timer = loop.call_later(min(POLL_S, remaining), _resolve, fut, False)
            reached = False
            try:
                reached = await fut
            finally:
                timer.cancel()
                if not reached:  # timed out or cancelled: no longer waiting
                    fut.cancel()
                    self._waiting[key] = [w for w in self._waiting.get(key, []) if w[1] is not fut]
            if reached:
                return True
            await self._read_stored(key)
        return True


def _resolve(fut: asyncio.Future, value: bool) -> None:
    if not fut.done():
        fut.set_result(value)


async def _first_of(*events: asyncio.Event, timeout_s: float) -> None:
    """Until one of ``events`` is set or ``timeout_s`` passes."""
    waits = [asyncio.create_task(e.wait()) for e in events]
    try:
        await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
