"""The dispatcher's sender: due webhook deliveries -> signed HTTPS attempts, each recorded as events.

It claims due deliveries with ``FOR UPDATE SKIP LOCKED`` and a lease (so two dispatchers never
send the same attempt), checks the destination again, signs the attempt afresh, sends it to the
vetted address, appends the attempt and its outcome as events on the delivery's stream (their
``meta`` is the delivery's cause: ``causation_id`` names the event the intake turned into it,
``correlation_id`` is that event's chain; ``Application.reacting`` makes it, as for every event
appended because of another), and sets the row's next attempt from the schedule
(or succeeded, exhausted, failed). A destination the guard refuses at send time ends the delivery failed at
once, unsent and not retried. A 410 disables the webhook (``WebhookDisabled``). The pending
deliveries of a webhook deleted or disabled end at once, unsent, with ``WebhookDeliveryCancelled``.

An attempt whose process died after sending and before recording is made again when its lease
expires: delivery is at least once, and receivers deduplicate by ``webhook-id``.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import asyncpg
import orjson

from domain.webhooks import ACTIVE, Webhook, attempt_events, cancel_events, next_delay
from infra.codec import NewEvent
from infra.crypto import SecretBox
from infra.eventstore import ConcurrencyError
from infra.eventstore_postgres import PostgresEventStore
from infra.netguard import DestinationRefused, Resolver, SystemResolver, allowance_for, vet
from infra.settings import Settings
from infra.webhook_http import Outcome, WebhookClient, job_notification_secret, signature_headers
from infra.wiring import adapters_for
from services.application.bootstrap import bootstrap
from services.lib.common import supervise
from services.processes.dispatcher.intake import WAKE_CHANNEL

log = logging.getLogger("vaeo.dispatcher")

# Every time here is the service's clock (``Settings.now``, $4 / $10), the one retries are scheduled on.
_CLAIM = """
UPDATE webhook_deliveries d SET status = 'sending', lease_owner = $1, attempts = d.attempts + 1,
       next_attempt_at = $4::timestamptz + make_interval(secs => $2), updated_at = $4
 WHERE d.id IN (SELECT id FROM webhook_deliveries
                 WHERE status IN ('pending', 'sending') AND next_attempt_at <= $4
                 ORDER BY next_attempt_at FOR UPDATE SKIP LOCKED LIMIT $3)
RETURNING d.id, d.workspace_id, d.environment, d.webhook_id, d.url, d.event, d.source_position, d.payload,
          d.cause, d.attempts, d.schedule_base, d.stream_version,
          (SELECT t.status FROM webhook_targets t WHERE t.webhook_id = d.webhook_id) AS target_status,
          (SELECT t.secret_encrypted FROM webhook_targets t WHERE t.webhook_id = d.webhook_id) AS target_secret,
          -- a job URL's: the job secret's versions valid now, current first (no row: version 1 only)
          (SELECT CASE WHEN s.previous_valid_until > $4 THEN ARRAY[s.version, s.previous_version]
                       ELSE ARRAY[s.version] END
             FROM webhook_job_secrets s
            WHERE d.webhook_id IS NULL AND s.workspace_id = d.workspace_id
              AND s.environment = d.environment) AS job_secret_versions"""

# Claimed rows not sent (shutdown, or held too long): back to pending, the claim undone.
_RELEASE = """
UPDATE webhook_deliveries d SET status = 'pending', attempts = d.attempts - 1, next_attempt_at = $4,
       lease_owner = NULL, updated_at = $4
  FROM unnest($2::uuid[], $3::int[]) AS r(id, claimed)
 WHERE d.id = r.id AND d.lease_owner = $1 AND d.attempts = r.claimed AND d.status = 'sending'"""

# The rows of recorded attempts, in the statement that appends their events. A retry of a
# webhook deleted or disabled meanwhile is made due now, so that it ends (cancelled) at once.
_FINISH = """
UPDATE webhook_deliveries d
   SET status = u.status,
       next_attempt_at = CASE WHEN u.status = 'pending' AND EXISTS (
                                   SELECT 1 FROM webhook_targets t
                                    WHERE t.webhook_id = d.webhook_id AND t.status <> 'active')
                              THEN $10 ELSE coalesce(u.next_at, d.next_attempt_at) END,
       attempts = u.attempts, lease_owner = NULL, last_status_code = u.status_code, last_error = u.error,
       stream_version = u.version, updated_at = $10
  FROM unnest($2::uuid[], $3::int[], $4::int[], $5::text[], $6::timestamptz[], $7::int[], $8::text[], $9::int[])
       AS u(id, claimed, attempts, status, next_at, status_code, error, version)
 WHERE d.id = u.id AND d.lease_owner = $1 AND d.attempts = u.claimed"""

RECORD_BATCH = 500  # attempts recorded per transaction at most


@dataclass
class Claimed:
    id: UUID
    workspace_id: UUID
    environment: str
    webhook_id: UUID | None
    url: str
    event: str
    source_position: int
    payload: dict[str, Any]
    cause: dict[str, str]  # the meta of the delivery's events
    attempts: int
    schedule_base: int
    stream_version: int
    target_status: str | None = None
    target_secret: str | None = None
    job_secret_versions: list[int] | None = None  # a job URL's: current first, then one in its grace period
    claimed_at: float = 0.0  # monotonic

    def scheduled(self) -> dict[str, Any]:
        """The fields of the stream's first event (``WebhookDeliveryScheduled``)."""
        return {"workspace_id": self.workspace_id, "environment": self.environment, "webhook_id": self.webhook_id,
                "url": self.url, "event_name": self.event, "source_position": self.source_position}


@dataclass
class Record:
    """What an attempt (or a cancellation) changes: the row, and the events at a stream version."""

    row: Claimed
    status: str  # the row's next status
    attempts: int  # attempts made (a cancellation undoes its claim)
    next_at: datetime | None
    status_code: int | None
    error: str | None
    events: Callable[[int], list]  # the stream's version -> the domain events to append after it


@dataclass
class SenderStats:
    attempts: int = 0
    delivered: int = 0
    failed: int = 0
    cancelled: int = 0
    recorded: int = 0  # attempts and cancellations whose events and row are committed


class Sender:
    """Claims due deliveries, sends them, records each attempt.

    A feeder claims due rows in chunks (one statement for up to ``dispatcher_concurrency`` rows)
    into a local queue of at most that many. Twice ``dispatcher_concurrency`` workers take them in
    order; an attempt holds one of ``dispatcher_concurrency`` sending slots from the destination
    check to the response (signed afresh, sent to the vetted address). A recorder then appends the
    events of all the attempts finished meanwhile and updates their rows in one statement. A
    worker waits until its attempt is recorded before it takes the next row (it holds no slot
    meanwhile), so at most twice ``dispatcher_concurrency`` attempts of a process are sent and not
    yet recorded: what a kill -9 can make the next claimer send again.

    The lease covers the wait for a slot: an attempt starts at most half a lease (15 s) after its
    claim, or the row is released unsent (the claim undone), and takes at most 10 s; so it ends
    inside the 30 s lease. The queued rows are released at shutdown too, so they are claimed again
    at once rather than at lease expiry. A claimed row of a deleted or disabled webhook is not sent:
    it ends cancelled (``WebhookDeliveryCancelled``).
    """

    def __init__(self, settings: Settings, pool: asyncpg.Pool, store: PostgresEventStore, *,
                 resolver: Resolver | None = None, owner: str | None = None) -> None:
        self.settings = settings
        self.pool = pool
        self.store = store
        self.resolver = resolver or SystemResolver()
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.box = SecretBox(settings.secret_key)
        self.application = bootstrap(settings, store, adapters_for(store))
        self.stats = SenderStats()
        self._secrets: dict[UUID, str] = {}
        self._wake = asyncio.Event()
        self._hungry = asyncio.Event()
        self._sending = asyncio.Semaphore(settings.dispatcher_concurrency)  # attempts on the wire
        self._queue: asyncio.Queue[Claimed] = asyncio.Queue()
        self._records: list[tuple[Record, asyncio.Future]] = []
        self._recorder: asyncio.Task | None = None
        self._announcing: set[asyncio.Task] = set()

    async def run(self, stop: asyncio.Event) -> None:
        await supervise(self._run, stop, "dispatcher sender")

    def _on_notify(self, *_: object) -> None:
        self._wake.set()

    async def _run(self, stop: asyncio.Event) -> None:
        limit = self.settings.dispatcher_concurrency
        listener = await self.pool.acquire()
        workers: list[asyncio.Task] = []
        busy: set[asyncio.Task] = set()
        try:
            await listener.add_listener(WAKE_CHANNEL, self._on_notify)
            async with WebhookClient(timeout_s=self.settings.webhook_timeout_s,
                                     max_response_bytes=self.settings.webhook_max_response_bytes,
                                     extra_ca_file=self.settings.webhook_extra_ca_file, limit=limit,
                                     clock=self.settings.now) as client:
                # Twice as many workers as attempts on the wire: a worker waiting for its attempt
                # to be recorded holds no connection, and another one sends meanwhile.
                workers = [asyncio.create_task(self._work(client, busy)) for _ in range(2 * limit)]
                try:
                    await self._feed(stop, limit)
                finally:
                    await self._release_queued()
                    if busy:
                        await asyncio.wait(set(busy), timeout=self.settings.webhook_timeout_s + 5)
        finally:
            for task in workers:
                task.cancel()
            if workers:
                await asyncio.gather(*workers, return_exceptions=True)
            try:
                await listener.remove_listener(WAKE_CHANNEL, self._on_notify)
            finally:
                await self.pool.release(listener)

    async def _feed(self, stop: asyncio.Event, limit: int) -> None:
        """Claim while there is room in the queue; then wait for room, a NOTIFY, a poll or stop."""
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                self._wake.clear()
                self._hungry.clear()
                room = limit - self._queue.qsize()
                asked = room if room >= max(1, limit // 2) else 0
                claimed = await self._claim(asked) if asked else []
                for row in claimed:
                    self._queue.put_nowait(row)
                more_due = asked > 0 and len(claimed) == asked
                waiters = [stopping, asyncio.create_task(self._hungry.wait())]
                if not more_due:
                    waiters.append(asyncio.create_task(self._wake.wait()))
                _, pending = await asyncio.wait(waiters, timeout=self.settings.dispatcher_poll_interval_s,
                                                return_when=asyncio.FIRST_COMPLETED)
                for w in pending:
                    if w is not stopping:
                        w.cancel()
        finally:
            stopping.cancel()

    async def _claim(self, n: int) -> list[Claimed]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch(_CLAIM, self.owner, self.settings.dispatcher_lease_s, n, self.settings.now())
        now = time.monotonic()
        out = []
        for r in rows:
            values = dict(r)
            for key in ("id", "workspace_id", "webhook_id"):  # asyncpg's UUID type is not one orjson encodes
                if values[key] is not None:
                    values[key] = UUID(bytes=values[key].bytes)
            out.append(Claimed(**values, claimed_at=now))
        return out

    async def _release(self, rows: list[Claimed]) -> None:
        if rows:
            async with self.pool.acquire() as conn:
                await conn.execute(_RELEASE, self.owner, [r.id for r in rows], [r.attempts for r in rows],
                                   self.settings.now())

    async def _release_queued(self) -> None:
        rows = []
        while not self._queue.empty():
            rows.append(self._queue.get_nowait())
        try:
            await self._release(rows)
        except Exception as exc:  # their leases expire instead
            log.warning("dispatcher: %d claimed deliveries not released: %s: %s", len(rows), type(exc).__name__, exc)

    async def _work(self, client: WebhookClient, busy: set[asyncio.Task]) -> None:
        me = asyncio.current_task()
        while True:
            row = await self._queue.get()
            if self._queue.qsize() <= self.settings.dispatcher_concurrency // 2:
                self._hungry.set()
            busy.add(me)
            try:
                await self._attempt_once(client, row)
            except Exception as exc:  # the lease expires and the attempt is claimed again
                log.warning("dispatcher: attempt %d of delivery %s not recorded: %s: %s", row.attempts, row.id,
                            type(exc).__name__, exc)
            finally:
                busy.discard(me)

    def _job_secrets(self, row: Claimed) -> tuple[str, tuple[str, ...]]:
        """(the current job secret of the row's workspace and environment, the previous one while
        its grace period lasts): the versions come from the log (``JobSecretRotated``)."""
        versions = row.job_secret_versions or [1]
        current, *older = (job_notification_secret(self.settings.secret_key, row.workspace_id, row.environment, v)
                           for v in versions)
        return current, tuple(older)

    def _secret_for(self, row: Claimed) -> tuple[str | None, str | None]:
        """(secret, why not): the webhook's secret if it is still active, the job secret for a job URL."""
        if row.webhook_id is None:
            return self._job_secrets(row)[0], None
        if row.target_status != ACTIVE or row.target_secret is None:
            return None, f"webhook {row.target_status or 'unknown'}"
        secret = self._secrets.get(row.webhook_id)
        if secret is None:
            secret = self.box.decrypt(row.target_secret, str(row.webhook_id))
            self._secrets[row.webhook_id] = secret
        return secret, None

    async def _attempt_once(self, client: WebhookClient, row: Claimed) -> None:
        secret, why_not = self._secret_for(row)
        if secret is None:
            made = row.attempts - 1
            await self._record(Record(row, "failed", made, None, None, f"cancelled: {why_not}",
                                      lambda v: cancel_events(row.id, v, row.scheduled(), reason=why_not,
                                                              attempts=made, now=self.settings.now())))
            self.stats.cancelled += 1
            return
        async with self._sending:
            if time.monotonic() - row.claimed_at > self.settings.dispatcher_lease_s / 2:
                await self._release([row])  # held too long to finish inside its lease: claimed again now
                return
            signed_at = int(self.settings.now().timestamp())
            allowance = allowance_for(self.settings.webhook_test_allow, self.settings.mode, row.environment)
            refused_for_good = False
            try:
                vetted = await vet(row.url, self.resolver, allowance)
            except DestinationRefused as exc:
                # The destination itself is refused (its URL, its name or an address it resolves
                # to): no retry would be sent either, so the delivery ends now. A name that does
                # not resolve at all is an outage, retried on the schedule.
                refused_for_good = exc.permanent
                outcome = Outcome(None, 0.0, f"destination refused: {exc.reason}")
            else:
                body = orjson.dumps(row.payload)
                also = self._job_secrets(row)[1] if row.webhook_id is None else ()
                outcome = await client.post(vetted, body, signature_headers(secret, str(row.id), body, signed_at,
                                                                            also=also))
        self.stats.attempts += 1
        next_at = None
        if outcome.delivered:
            status = "succeeded"
            self.stats.delivered += 1
        elif refused_for_good or (outcome.status_code == 410 and row.webhook_id is not None):
            status = "failed"
            self.stats.failed += 1
        else:
            self.stats.failed += 1
            s = self.settings
            delay = next_delay(s.webhook_retry_schedule_s, row.attempts - row.schedule_base,
                               jitter=s.webhook_retry_jitter,
                               retry_after=outcome.retry_after_s if outcome.status_code == 429 else None,
                               floor=s.webhook_retry_floor_s, retry_after_max=s.webhook_retry_after_max_s,
                               timed_out=outcome.timed_out)
            if delay is None:
                status = "exhausted"
            else:
                status, next_at = "pending", self.settings.now() + timedelta(seconds=delay)
        if outcome.status_code == 410 and row.webhook_id is not None:
            # Disabled before the attempt is recorded: a crash between the two leaves the delivery
            # claimed, and its claim, taken again after the lease, ends it unsent (the webhook is
            # disabled). In the other order the delivery would end failed and the webhook stay on.
            await self.disable(row)
        await self._record(Record(
            row, status, row.attempts, next_at, outcome.status_code, outcome.error,
            lambda v: attempt_events(row.id, v, row.scheduled(), attempt=row.attempts, signed_at=signed_at,
                                     status_code=outcome.status_code, latency_ms=outcome.latency_ms,
                                     error=outcome.error, now=self.settings.now(), next_attempt_at=next_at,
                                     exhausted=status == "exhausted")))

    async def _record(self, record: Record) -> None:
        """Queue for the recorder; returns once the attempt's events and row are committed."""
        future = asyncio.get_running_loop().create_future()
        self._records.append((record, future))
        if self._recorder is None or self._recorder.done():
            self._recorder = asyncio.create_task(self._flush_records())
        await future

    async def _flush_records(self) -> None:
        while self._records:
            group, self._records = self._records[:RECORD_BATCH], self._records[RECORD_BATCH:]
            try:
                last = await self._write([r for r, _ in group])
            except ConcurrencyError:
                # A stream moved (an attempt recorded by a process that died before updating its
                # row): each record on its own, so only that one reloads its version.
                last = 0
                for record, future in group:
                    try:
                        last = max(last, await self._write_alone(record))
                    except Exception as exc:
                        _settle(future, exc)
                    else:
                        self.stats.recorded += 1
                        _settle(future)
            except Exception as exc:
                for _, future in group:
                    _settle(future, exc)
                continue
            else:
                self.stats.recorded += len(group)
                for _, future in group:
                    _settle(future)
            # The relay's wake-up, after the waiters are told: nobody waits for it.
            task = asyncio.create_task(self.store.announce(last))
            self._announcing.add(task)
            task.add_done_callback(self._announced)

    def _announced(self, task: asyncio.Task) -> None:
        self._announcing.discard(task)
        if not task.cancelled() and task.exception() is not None:  # the relay polls anyway
            log.debug("dispatcher: NOTIFY after a record failed: %s", task.exception())

    async def _write(self, records: list[Record]) -> int:
        """One statement: every record's row update, then all their events in one append."""
        events, args = [], ([], [], [], [], [], [], [], [])
        for rec in records:
            row = rec.row
            new = self.recorded_events(rec)
            events.extend(new)
            for column, value in zip(args, (row.id, row.attempts, rec.attempts, rec.status, rec.next_at,
                                            rec.status_code, (rec.error or None) and rec.error[:500],
                                            row.stream_version + len(new)), strict=True):
                column.append(value)
        return await self.store.save_batch(events, along=(_FINISH, (self.owner, *args, self.settings.now())),
                                           notify=False)

    def recorded_events(self, record: Record) -> list[NewEvent]:
        """A record's events, encoded at its row's stream version with the delivery's cause."""
        row = record.row
        return self.application.reacting(row.cause).encoded(events=record.events(row.stream_version),
                                                            workspace_id=row.workspace_id)

    async def _write_alone(self, record: Record) -> int:
        for _ in range(3):
            try:
                return await self._write([record])
            except ConcurrencyError:
                stored = await self.store.read_stream(record.row.id)
                record.row.stream_version = stored[-1].version if stored else 0
        raise ConcurrencyError(f"delivery {record.row.id}: stream kept moving")

    async def disable(self, row: Claimed) -> None:
        """The webhook disabled (``WebhookDisabled``) after a 410 to ``row``'s attempt: caused, like
        the attempt's own events, by the delivered event."""
        for _ in range(5):
            webhook = await self.store.fetch_for_writing(row.webhook_id)
            if not isinstance(webhook, Webhook) or webhook.status != ACTIVE:
                return
            webhook.disable("the receiver answered 410 Gone")
            try:
                await self.application.reacting(row.cause).save(webhook, workspace_id=row.workspace_id)
                self._secrets.pop(row.webhook_id, None)
                return
            except ConcurrencyError:
                continue


def _settle(future: asyncio.Future, exc: BaseException | None = None) -> None:
    if future.done():
        return
    if exc is None:
        future.set_result(None)
    else:
        future.set_exception(exc)
