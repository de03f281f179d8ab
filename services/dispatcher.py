"""The dispatcher (``vaeo dispatcher``): domain events on Kafka -> signed HTTPS deliveries.

Two loops in one process, sharing nothing but PostgreSQL:

- **Intake** (a Kafka consumer, group ``dispatcher_group``; it never reads the events table).
  Each fetched batch is applied in one PostgreSQL transaction together with its offsets
  (``projection_offsets`` under the name ``dispatcher``; duplicates from the at-least-once
  relay are skipped by position, as the projector does): subscriptions (``webhook_targets``)
  and jobs (``webhook_jobs``) are updated, and every mapped event becomes one
  ``webhook_deliveries`` row per active subscription of its workspace and environment (and
  one for a job's ``webhook_url`` when the job ends), inserted ``ON CONFLICT DO NOTHING`` on
  the delivery's uuid5. A subscription registered before an event is ordered before it on the
  workspace's partition, so it is seen first. The intake has no side effect but rows.
- **Sender**: claims due deliveries with ``FOR UPDATE SKIP LOCKED`` and a lease (so two
  dispatchers never send the same attempt), checks the destination again, signs the attempt
  afresh, sends it to the vetted address, appends the attempt and its outcome as events on the
  delivery's stream, and sets the row's next attempt from the schedule (or succeeded,
  exhausted, failed). A destination the guard refuses at send time ends the delivery failed at
  once, unsent and not retried. A 410 disables the webhook (``WebhookDisabled``). The pending deliveries
  of a webhook deleted or disabled end at once, unsent, with ``WebhookDeliveryCancelled``.

Neither the tables above nor the offsets are rebuilt by ``vaeo projections rebuild``; the
deterministic ids make a second intake of the same event a no-op. An attempt whose process died
after sending and before recording is made again when its lease expires: delivery is at least
once, and receivers deduplicate by ``webhook-id``.

Failing batch policy (intake): retried with doubling backoff ``projector_max_attempts`` times,
then the intake stops with the error logged and the process exits non-zero (``vaeo up``
restarts it); it never skips an event. Outages are retried forever.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import asyncpg
import orjson
from aiokafka import ConsumerRebalanceListener
from aiokafka.structs import ConsumerRecord

from domain.webhooks import (
    ACTIVE,
    EVENT_FOR,
    JOB_END_EVENTS,
    Webhook,
    attempt_events,
    cancel_events,
    delivery_id,
    event_data,
    next_delay,
    payload,
)
from domain.workspaces import ENVIRONMENTS
from infra.codec import EventRegistry, StoredEvent
from infra.crypto import SecretBox
from infra.db import create_pool
from infra.eventlog import make_consumer
from infra.eventstore import ConcurrencyError, EventStore
from infra.netguard import DestinationRefused, Resolver, SystemResolver, allowance_for, vet
from infra.settings import Settings
from infra.webhook_http import Outcome, WebhookClient, job_notification_secret, signature_headers
from services.common import is_transient, supervise
from services.projector import decode, position_of, seek_to_stored, type_of

log = logging.getLogger("vaeo.dispatcher")

NAME = "dispatcher"
WAKE_CHANNEL = "vaeo_webhooks"
INTAKE_TYPES = frozenset({*EVENT_FOR, "WebhookRegistered", "WebhookDeleted", "WebhookDisabled", "JobQueued",
                          "WebhookDeliveryResent", "JobSecretRotated"})


# ----------------------------------------------------------------------------------- intake


@dataclass
class Target:
    webhook_id: UUID
    workspace_id: UUID
    environment: str
    url: str
    events: frozenset[str]
    status: str


@dataclass
class JobInfo:
    workspace_id: UUID
    environment: str
    job_type: str
    webhook_url: str | None


@dataclass
class IntakePlan:
    targets: dict[UUID, tuple] = field(default_factory=dict)  # webhook id -> row (upsert, last wins)
    jobs: list[tuple] = field(default_factory=list)
    deliveries: list[tuple] = field(default_factory=list)
    resends: list[UUID] = field(default_factory=list)
    unrouted: list[tuple] = field(default_factory=list)  # (position, workspace, type, why): never delivered
    job_secrets: list[tuple] = field(default_factory=list)  # (workspace, environment, version, previous, until)


def plan_intake(events: Iterable[StoredEvent], targets: dict[UUID, dict[UUID, Target]],
                jobs: dict[UUID, JobInfo]) -> IntakePlan:
    """Pure: events in order -> rows. ``targets`` (workspace -> webhook -> Target) and ``jobs``
    hold what the intake knew before the batch and are updated as the batch goes."""
    plan = IntakePlan()
    for ev in events:
        d = ev.data
        if ev.type == "WebhookRegistered":
            t = Target(ev.stream_id, ev.workspace_id, d["environment"], d["url"], frozenset(d["events"]), ACTIVE)
            targets.setdefault(ev.workspace_id, {})[ev.stream_id] = t
            plan.targets[ev.stream_id] = (ev.stream_id, ev.workspace_id, d["environment"], d["url"], d["events"],
                                          d["secret_encrypted"], ACTIVE, ev.version)
        elif ev.type in ("WebhookDeleted", "WebhookDisabled"):
            status = "deleted" if ev.type == "WebhookDeleted" else "disabled"
            t = targets.get(ev.workspace_id, {}).get(ev.stream_id)
            if t is not None:
                t.status = status
            row = plan.targets.get(ev.stream_id)
            if row is not None:
                plan.targets[ev.stream_id] = (*row[:6], status, ev.version)
            else:
                plan.targets[ev.stream_id] = (ev.stream_id, None, None, None, None, None, status, ev.version)
        elif ev.type == "JobQueued":
            info = JobInfo(ev.workspace_id, d["environment"], d["job_type"], d.get("webhook_url"))
            jobs[ev.stream_id] = info
            plan.jobs.append((ev.stream_id, ev.workspace_id, info.environment, info.job_type, info.webhook_url))
        elif ev.type == "WebhookDeliveryResent":
            plan.resends.append(ev.stream_id)
        elif ev.type == "JobSecretRotated":
            plan.job_secrets.append((ev.workspace_id, d["environment"], d["version"], d["previous_version"],
                                     datetime.fromisoformat(d["previous_valid_until"])))
        elif ev.type in EVENT_FOR:
            _fan_out(ev, targets, jobs, plan)
    return plan


def _job_of(ev: StoredEvent, jobs: dict[UUID, JobInfo]) -> JobInfo | None:
    """The job an event is about: its stream's for a Job event, else the job named by ``job_id``."""
    if ev.stream_type == "Job":
        return jobs.get(ev.stream_id)
    job_id = ev.data.get("job_id")
    try:
        return jobs.get(UUID(job_id)) if isinstance(job_id, str) else None
    except ValueError:
        return None


def environment_of(ev: StoredEvent, jobs: dict[UUID, JobInfo]) -> str | None:
    """The environment an event belongs to: its own ``environment`` (every event tied to one
    carries it from its current schema on), else its job's (events written before, upcast with
    None), else None: unknown."""
    environment = ev.data.get("environment")
    if environment is None:
        job = _job_of(ev, jobs)
        environment = job.environment if job is not None else None
    return environment if environment in ENVIRONMENTS else None


def _fan_out(ev: StoredEvent, targets: dict[UUID, dict[UUID, Target]], jobs: dict[UUID, JobInfo],
             plan: IntakePlan) -> None:
    """The deliveries of one mapped event: to the active webhooks of its workspace and environment
    subscribed to it, and to its job's webhook_url when a job ends. An event whose environment
    cannot be told is delivered to nobody (a sandbox webhook must never see production data, nor
    the reverse): it is recorded in ``webhook_unrouted`` and logged instead."""
    name = EVENT_FOR[ev.type]
    environment = environment_of(ev, jobs)
    if environment is None:
        plan.unrouted.append((ev.position, ev.workspace_id, ev.type, "the event's environment is unknown"))
        return
    job = jobs.get(ev.stream_id) if ev.stream_type == "Job" else None
    data = event_data(ev.stream_type, ev.stream_id, ev.data)
    data["environment"] = environment
    if job is not None:
        data.setdefault("job_type", job.job_type)
    created_at = ev.recorded_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    for t in targets.get(ev.workspace_id, {}).values():
        if t.status != ACTIVE or name not in t.events or t.environment != environment:
            continue
        did = delivery_id(t.webhook_id, ev.position, name)
        plan.deliveries.append((did, ev.workspace_id, t.environment, t.webhook_id, t.url, name, ev.position,
                                payload(did, name, created_at, ev.workspace_id, data)))
    if job is not None and job.webhook_url and ev.type in JOB_END_EVENTS:
        did = delivery_id(job.webhook_url, ev.position, name)
        plan.deliveries.append((did, ev.workspace_id, environment, None, job.webhook_url, name, ev.position,
                                payload(did, name, created_at, ev.workspace_id, data)))


_UPSERT_TARGET = """
INSERT INTO webhook_targets (webhook_id, workspace_id, environment, url, events, secret_encrypted, status, version)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (webhook_id) DO UPDATE SET status = excluded.status, version = excluded.version
 WHERE webhook_targets.version < excluded.version"""
_TARGET_STATUS = "UPDATE webhook_targets SET status = $2, version = $3 WHERE webhook_id = $1 AND version < $3"
_INSERT_JOB = """INSERT INTO webhook_jobs (job_id, workspace_id, environment, job_type, webhook_url)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (job_id) DO NOTHING"""
_INSERT_DELIVERY = """
INSERT INTO webhook_deliveries (id, workspace_id, environment, webhook_id, url, event, source_position, payload,
                                status, next_attempt_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', now()) ON CONFLICT (id) DO NOTHING"""
# Pending retries of a webhook deleted or disabled: due now, so the sender ends them (cancelled) at once.
_EXPEDITE = "UPDATE webhook_deliveries SET next_attempt_at = now() WHERE webhook_id = $1 AND status = 'pending'"
_ROTATE_JOB_SECRET = """
INSERT INTO webhook_job_secrets (workspace_id, environment, version, previous_version, previous_valid_until)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (workspace_id, environment) DO UPDATE
   SET version = excluded.version, previous_version = excluded.previous_version,
       previous_valid_until = excluded.previous_valid_until
 WHERE webhook_job_secrets.version < excluded.version"""
_UNROUTED = """INSERT INTO webhook_unrouted (source_position, workspace_id, event_type, reason)
                VALUES ($1, $2, $3, $4) ON CONFLICT (source_position) DO NOTHING"""
_RESEND = """UPDATE webhook_deliveries SET status = 'pending', schedule_base = attempts, next_attempt_at = now(),
                    updated_at = now() WHERE id = $1 AND status IN ('failed', 'exhausted')"""


def _job_ids(events: list[StoredEvent]) -> list[UUID]:
    """The jobs the batch's mapped events may need: a Job stream's, and the ``job_id`` of an event
    that does not carry its environment (written before it did)."""
    ids = set()
    for ev in events:
        if ev.type not in EVENT_FOR:
            continue
        if ev.stream_type == "Job":
            ids.add(ev.stream_id)
        elif ev.data.get("environment") is None and isinstance(ev.data.get("job_id"), str):
            try:
                ids.add(UUID(ev.data["job_id"]))
            except ValueError:
                pass
    return list(ids)


async def _known(conn: asyncpg.Connection, events: list[StoredEvent]) -> tuple[dict, dict]:
    workspaces = list({ev.workspace_id for ev in events if ev.type in EVENT_FOR and ev.workspace_id})
    job_ids = _job_ids(events)
    targets: dict[UUID, dict[UUID, Target]] = defaultdict(dict)
    if workspaces:
        for r in await conn.fetch("SELECT * FROM webhook_targets WHERE workspace_id = ANY($1::uuid[])", workspaces):
            targets[r["workspace_id"]][r["webhook_id"]] = Target(r["webhook_id"], r["workspace_id"], r["environment"],
                                                                 r["url"], frozenset(r["events"]), r["status"])
    jobs: dict[UUID, JobInfo] = {}
    if job_ids:
        for r in await conn.fetch("SELECT * FROM webhook_jobs WHERE job_id = ANY($1::uuid[])", job_ids):
            jobs[r["job_id"]] = JobInfo(r["workspace_id"], r["environment"], r["job_type"], r["webhook_url"])
    return targets, jobs


async def intake_batch(conn: asyncpg.Connection, registry: EventRegistry,
                       batches: dict[int, list[ConsumerRecord]]) -> tuple[int, int]:
    """Apply several partitions' messages and their offsets in one transaction: (applied, deliveries)."""
    async with conn.transaction():
        rows = await conn.fetch("SELECT partition, next_offset, max_position FROM projection_offsets "
                                "WHERE projection = $1 AND partition = ANY($2::int[]) FOR UPDATE", NAME, list(batches))
        stored = {r["partition"]: (r["next_offset"], r["max_position"]) for r in rows}
        events: list[StoredEvent] = []
        tracking = []
        applied = 0
        for partition, msgs in batches.items():
            next_offset, max_position = stored.get(partition, (0, 0))
            last_offset = None
            for msg in msgs:
                if msg.offset < next_offset:
                    continue
                last_offset = msg.offset
                position = position_of(msg)
                if position <= max_position:
                    continue  # the relay sent it again
                max_position = position
                applied += 1
                if type_of(msg) in INTAKE_TYPES:
                    events.append(decode(registry, msg.value))
            if last_offset is not None:
                tracking.append((NAME, partition, last_offset + 1, max_position))
        if not tracking:
            return 0, 0
        targets, jobs = await _known(conn, events)
        plan = plan_intake(events, targets, jobs)
        creations = [r for r in plan.targets.values() if r[1] is not None]
        changes = [(r[0], r[6], r[7]) for r in plan.targets.values() if r[1] is None]
        if creations:
            await conn.executemany(_UPSERT_TARGET, creations)
        if changes:
            await conn.executemany(_TARGET_STATUS, changes)
        ended = [(r[0],) for r in plan.targets.values() if r[6] != ACTIVE]
        if ended:
            await conn.executemany(_EXPEDITE, ended)
        if plan.jobs:
            await conn.executemany(_INSERT_JOB, plan.jobs)
        if plan.deliveries:
            await conn.executemany(_INSERT_DELIVERY, plan.deliveries)
        if plan.resends:
            await conn.executemany(_RESEND, [(r,) for r in plan.resends])
        if plan.job_secrets:
            await conn.executemany(_ROTATE_JOB_SECRET, plan.job_secrets)
        if plan.unrouted:
            await conn.executemany(_UNROUTED, plan.unrouted)
            for position, workspace_id, event_type, reason in plan.unrouted:
                log.warning("dispatcher intake: %s at position %d (workspace %s) delivered to nobody: %s",
                            event_type, position, workspace_id, reason)
        await conn.executemany(
            "INSERT INTO projection_offsets (projection, partition, next_offset, max_position) "
            "VALUES ($1, $2, $3, $4) ON CONFLICT (projection, partition) DO UPDATE "
            "SET next_offset = excluded.next_offset, max_position = excluded.max_position", tracking)
        if plan.deliveries or plan.resends or ended:
            await conn.execute("SELECT pg_notify($1, '')", WAKE_CHANNEL)
    return applied, len(plan.deliveries)


class Intake:
    def __init__(self, settings: Settings, pool: asyncpg.Pool, registry: EventRegistry) -> None:
        self.settings = settings
        self.pool = pool
        self.registry = registry
        self.applied = 0
        self.deliveries = 0

    async def run(self, stop: asyncio.Event) -> None:
        await supervise(self._consume, stop, "dispatcher intake")

    async def _seek_to_stored(self, consumer, partitions) -> None:
        await seek_to_stored(self.pool, consumer, NAME, partitions)

    async def _consume(self, stop: asyncio.Event) -> None:
        intake = self

        class SeekToStored(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked):
                pass

            async def on_partitions_assigned(self, assigned):
                await intake._seek_to_stored(consumer, assigned)

        consumer = make_consumer(self.settings, group_id=self.settings.dispatcher_group)
        consumer.subscribe([self.settings.events_topic], listener=SeekToStored())
        await consumer.start()
        try:
            while not stop.is_set():
                got = await consumer.getmany(timeout_ms=500, max_records=self.settings.projector_max_records)
                if not got:
                    continue
                await self._apply_with_policy({tp.partition: msgs for tp, msgs in got.items()})
                try:  # a hint for Kafka tooling; PostgreSQL holds the truth
                    await consumer.commit({tp: msgs[-1].offset + 1 for tp, msgs in got.items()})
                except Exception as exc:
                    log.debug("dispatcher intake: offset hint not committed: %s", exc)
        finally:
            await consumer.stop()

    async def _apply_with_policy(self, batches: dict[int, list[ConsumerRecord]]) -> None:
        delay = self.settings.projector_retry_backoff_s
        for attempt in range(1, self.settings.projector_max_attempts + 1):
            try:
                async with self.pool.acquire() as conn:
                    applied, deliveries = await intake_batch(conn, self.registry, batches)
                self.applied += applied
                self.deliveries += deliveries
                return
            except Exception as exc:
                if is_transient(exc) or attempt == self.settings.projector_max_attempts:
                    raise
                log.warning("dispatcher intake: batch failed (attempt %d): %s: %s", attempt, type(exc).__name__, exc)
                await asyncio.sleep(delay)
                delay *= 2


# ----------------------------------------------------------------------------------- sender

_CLAIM = """
UPDATE webhook_deliveries d SET status = 'sending', lease_owner = $1, attempts = d.attempts + 1,
       next_attempt_at = now() + make_interval(secs => $2), updated_at = now()
 WHERE d.id IN (SELECT id FROM webhook_deliveries
                 WHERE status IN ('pending', 'sending') AND next_attempt_at <= now()
                 ORDER BY next_attempt_at FOR UPDATE SKIP LOCKED LIMIT $3)
RETURNING d.id, d.workspace_id, d.environment, d.webhook_id, d.url, d.event, d.source_position, d.payload,
          d.attempts, d.schedule_base, d.stream_version,
          (SELECT t.status FROM webhook_targets t WHERE t.webhook_id = d.webhook_id) AS target_status,
          (SELECT t.secret_encrypted FROM webhook_targets t WHERE t.webhook_id = d.webhook_id) AS target_secret,
          -- a job URL's: the job secret's versions valid now, current first (no row: version 1 only)
          (SELECT CASE WHEN s.previous_valid_until > now() THEN ARRAY[s.version, s.previous_version]
                       ELSE ARRAY[s.version] END
             FROM webhook_job_secrets s
            WHERE d.webhook_id IS NULL AND s.workspace_id = d.workspace_id
              AND s.environment = d.environment) AS job_secret_versions"""

# Claimed rows not sent (shutdown, or held too long): back to pending, the claim undone.
_RELEASE = """
UPDATE webhook_deliveries d SET status = 'pending', attempts = d.attempts - 1, next_attempt_at = now(),
       lease_owner = NULL, updated_at = now()
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
                              THEN now() ELSE coalesce(u.next_at, d.next_attempt_at) END,
       attempts = u.attempts, lease_owner = NULL, last_status_code = u.status_code, last_error = u.error,
       stream_version = u.version, updated_at = now()
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

    def __init__(self, settings: Settings, pool: asyncpg.Pool, store: EventStore, *,
                 resolver: Resolver | None = None, owner: str | None = None) -> None:
        self.settings = settings
        self.pool = pool
        self.store = store
        self.resolver = resolver or SystemResolver()
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.box = SecretBox(settings.secret_key)
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
            rows = await conn.fetch(_CLAIM, self.owner, self.settings.dispatcher_lease_s, n)
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
                await conn.execute(_RELEASE, self.owner, [r.id for r in rows], [r.attempts for r in rows])

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
        await self._record(Record(
            row, status, row.attempts, next_at, outcome.status_code, outcome.error,
            lambda v: attempt_events(row.id, v, row.scheduled(), attempt=row.attempts, signed_at=signed_at,
                                     status_code=outcome.status_code, latency_ms=outcome.latency_ms,
                                     error=outcome.error, now=self.settings.now(), next_attempt_at=next_at,
                                     exhausted=status == "exhausted")))
        if outcome.status_code == 410 and row.webhook_id is not None:
            await self._disable(row)

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
        registry = self.store.registry
        events, args = [], ([], [], [], [], [], [], [], [])
        for rec in records:
            row = rec.row
            new = registry.to_new_events(rec.events(row.stream_version), workspace_id=row.workspace_id)
            events.extend(new)
            for column, value in zip(args, (row.id, row.attempts, rec.attempts, rec.status, rec.next_at,
                                            rec.status_code, (rec.error or None) and rec.error[:500],
                                            row.stream_version + len(new)), strict=True):
                column.append(value)
        return await self.store.append_batch(events, along=(_FINISH, (self.owner, *args)), notify=False)

    async def _write_alone(self, record: Record) -> int:
        for _ in range(3):
            try:
                return await self._write([record])
            except ConcurrencyError:
                stored = await self.store.load(record.row.id)
                record.row.stream_version = stored[-1].version if stored else 0
        raise ConcurrencyError(f"delivery {record.row.id}: stream kept moving")

    async def _disable(self, row: Claimed) -> None:
        for _ in range(5):
            webhook = await self.store.load_aggregate(row.webhook_id)
            if not isinstance(webhook, Webhook) or webhook.status != ACTIVE:
                return
            webhook.disable("the receiver answered 410 Gone")
            try:
                await self.store.save(webhook, workspace_id=row.workspace_id)
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


# ----------------------------------------------------------------------------------- process


async def _sleep_or_stop(stop: asyncio.Event, seconds: float) -> None:
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except TimeoutError:
        pass


async def run_dispatcher(settings: Settings, stop: asyncio.Event, *, resolver: Resolver | None = None,
                         intake: bool = True, sender: bool = True) -> None:
    if not settings.secret_key:
        raise RuntimeError("the dispatcher needs VAEO_SECRET_KEY to decrypt webhook secrets")
    registry = EventRegistry()
    pool = await create_pool(settings.resolved_database_url(), min_size=1,
                             max_size=8 + min(settings.dispatcher_concurrency, 40))
    try:
        # No group commit: the sender's recorder batches its appends itself (append_batch).
        store = EventStore(pool, registry, notify=settings.notify_on_append)
        loops = []
        if intake:
            loops.append(Intake(settings, pool, registry).run(stop))
        if sender:
            loops.append(Sender(settings, pool, store, resolver=resolver).run(stop))
        await asyncio.gather(*loops)
    finally:
        await pool.close()
