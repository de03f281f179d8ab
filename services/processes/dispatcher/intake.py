"""The dispatcher's intake: domain events on Kafka -> webhook delivery rows (it never sends).

A tracked reader (``services/processes/consuming.py``) under the name ``dispatcher``, in the consumer
group ``dispatcher_group``; it never reads the events table. Each batch is applied in one
PostgreSQL transaction together with its tracking: subscriptions (``webhook_targets``) and jobs
(``webhook_jobs``) are updated, and every mapped event becomes one ``webhook_deliveries`` row per
active subscription of its workspace and environment (and one for a job's ``webhook_url`` when
the job ends), inserted ``ON CONFLICT DO NOTHING`` on the delivery's uuid5. A subscription
registered before an event is ordered before it on the workspace's partition, so it is seen
first. Each row keeps its cause (``caused_by``: the event's position and correlation id), which
the delivery's events carry in their ``meta``.

Failure policy: the runner's. A batch the intake cannot apply is retried with backoff, then the
intake stops at the failing event, recorded in ``projection_state`` (``vaeo status``, ``vaeo
projections list``); the sender goes on, and a restart of the dispatcher retries the event. It
is never skipped. None of these tables is rebuilt by ``vaeo projections rebuild``; the
deterministic ids make a second intake of the same event a no-op.
"""

from __future__ import annotations

import logging
import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import asyncpg

from domain.webhook_payloads import EVENT_FOR, JOB_END_EVENTS, JobFacts, Links, Source, public_data
from domain.webhooks import ACTIVE, delivery_id, payload
from domain.workspaces import ENVIRONMENTS
from infra.codec import EventRegistry, StoredEvent
from infra.consume import Message, ParsedBatch, caused_by
from infra.file_urls import public_base_url, signed_url
from infra.settings import Settings
from infra.storage import StorageError
from services.lib.readers import DISPATCHER_INTAKE
from services.processes.consuming import ConsumerRunner, Reader

log = logging.getLogger("vaeo.dispatcher")

NAME = DISPATCHER_INTAKE
WAKE_CHANNEL = "vaeo_webhooks"  # NOTIFYed when deliveries become due: the sender claims at once
PROGRESS_TYPES = frozenset({"JobProgressed", "JobItemCompleted"})  # a job's progress, shown when it fails
INTAKE_TYPES = frozenset({*EVENT_FOR, *PROGRESS_TYPES, "WebhookRegistered", "WebhookDeleted", "WebhookDisabled",
                          "JobQueued", "WebhookDeliveryResent", "JobSecretRotated"})


@dataclass(frozen=True)
class FileLinks:
    """The URLs of one event's payload: file URLs signed with the service key (``infra.file_urls``,
    the API's own tokens) that expire ``webhook_file_url_ttl_s`` after the event, a whole second
    fixed by the event's time, so reading the event again makes the same URLs."""

    settings: Settings
    workspace_id: UUID
    expires_at: datetime

    @classmethod
    def of(cls, settings: Settings, workspace_id: UUID, recorded_at: datetime) -> FileLinks:
        end = math.ceil((recorded_at + timedelta(seconds=settings.webhook_file_url_ttl_s)).timestamp())
        return cls(settings, workspace_id, datetime.fromtimestamp(end, UTC))

    def file(self, storage_key: str) -> str | None:
        # the half second keeps int(now + expires_in) on the whole second, whatever now's fraction
        expires_in = self.expires_at.timestamp() + 0.5 - self.settings.now().timestamp()
        try:
            return signed_url(self.settings, self.workspace_id, storage_key, expires_in)
        except StorageError as exc:  # never from an event the service wrote; not a reason to stop the intake
            log.warning("dispatcher intake: a file of workspace %s cannot be signed (%s): its URL is null",
                        self.workspace_id, exc)
            return None

    def api(self, path: str) -> str:
        return public_base_url(self.settings) + path


class NoLinks:
    """For a plan made without settings (unit tests of the fan-out): an event needing a URL fails."""

    expires_at = datetime(1970, 1, 1, tzinfo=UTC)

    def file(self, storage_key: str) -> str | None:
        raise RuntimeError("the intake needs the settings to sign file URLs")

    def api(self, path: str) -> str:
        raise RuntimeError("the intake needs the settings to make API URLs")


# ----------------------------------------------------------------------------------- the plan


@dataclass
class Target:
    """A subscription as the intake knows it."""

    webhook_id: UUID
    workspace_id: UUID
    environment: str
    url: str
    events: frozenset[str]
    status: str


@dataclass
class JobInfo:
    """What the intake keeps of a job (``webhook_jobs``): where its end is delivered, and what its
    public shape shows that its last event does not carry (``domain.webhook_payloads.JobFacts``)."""

    job_id: UUID
    workspace_id: UUID
    environment: str
    job_type: str
    webhook_url: str | None
    created_at: datetime | None = None
    progress: int = 0
    video_id: int | None = None
    version: int = 1

    def args(self) -> tuple:
        return (self.job_id, self.workspace_id, self.environment, self.job_type, self.webhook_url, self.created_at,
                self.progress, self.video_id, self.version)

    def facts(self) -> JobFacts:
        return JobFacts(self.job_type, self.created_at, self.progress, self.video_id)


@dataclass(frozen=True)
class Registration:
    """The fields of ``WebhookRegistered`` a ``webhook_targets`` row is created with."""

    workspace_id: UUID
    environment: str
    url: str
    events: list[str]
    secret_encrypted: str


@dataclass
class TargetChange:
    """What a batch does to one subscription: its last status and stream version, and, when the
    batch registers it, the row to create (else only the status of an existing row moves)."""

    webhook_id: UUID
    status: str
    version: int
    registration: Registration | None = None
    at: datetime | None = None  # when the change was recorded: an ended webhook's retries are due from then

    def creation_args(self) -> tuple:
        r = self.registration
        return (self.webhook_id, r.workspace_id, r.environment, r.url, r.events, r.secret_encrypted, self.status,
                self.version)


@dataclass
class Delivery:
    """A ``webhook_deliveries`` row to create: one event to one destination."""

    id: UUID
    workspace_id: UUID
    environment: str
    webhook_id: UUID | None  # None: a job's own webhook_url
    url: str
    event: str  # the public event name (``job.completed``)
    source_position: int
    payload: dict[str, Any]
    cause: dict[str, str]  # the meta of the delivery's events (``infra.consume.caused_by``)
    due: datetime  # the first attempt's time: when the event was recorded (on the service's clock)

    def args(self) -> tuple:
        return (self.id, self.workspace_id, self.environment, self.webhook_id, self.url, self.event,
                self.source_position, self.payload, self.cause, self.due)


@dataclass(frozen=True)
class Unrouted:
    """A mapped event delivered to nobody, and why (``webhook_unrouted``)."""

    source_position: int
    workspace_id: UUID | None
    event_type: str
    reason: str


@dataclass(frozen=True)
class JobSecretRotation:
    """A workspace environment's job-secret versions after ``JobSecretRotated``."""

    workspace_id: UUID
    environment: str
    version: int
    previous_version: int
    previous_valid_until: datetime


@dataclass
class IntakePlan:
    targets: dict[UUID, TargetChange] = field(default_factory=dict)  # webhook id -> change (last wins)
    jobs: list[JobInfo] = field(default_factory=list)
    deliveries: list[Delivery] = field(default_factory=list)
    resends: list[tuple[UUID, datetime]] = field(default_factory=list)  # delivery id, when the resend was asked
    unrouted: list[Unrouted] = field(default_factory=list)
    job_secrets: list[JobSecretRotation] = field(default_factory=list)
    progress: list[tuple[UUID, int, int]] = field(default_factory=list)  # job id, progress, stream version


def _video_id(params: Any) -> int | None:
    value = params.get("video_id") if isinstance(params, dict) else None
    return value if type(value) is int else None


def plan_intake(events: Iterable[StoredEvent], targets: dict[UUID, dict[UUID, Target]],
                jobs: dict[UUID, JobInfo], links: Callable[[UUID, datetime], Links] | None = None) -> IntakePlan:
    """Pure: events in order -> rows. ``targets`` (workspace -> webhook -> Target) and ``jobs``
    hold what the intake knew before the batch and are updated as the batch goes; ``links``
    makes the URLs of an event's payload (workspace, event time -> ``Links``)."""
    plan = IntakePlan()
    links = links or (lambda workspace_id, at: NoLinks())
    for ev in events:
        d = ev.data
        if ev.type == "WebhookRegistered":
            t = Target(ev.stream_id, ev.workspace_id, d["environment"], d["url"], frozenset(d["events"]), ACTIVE)
            targets.setdefault(ev.workspace_id, {})[ev.stream_id] = t
            plan.targets[ev.stream_id] = TargetChange(
                ev.stream_id, ACTIVE, ev.version,
                Registration(ev.workspace_id, d["environment"], d["url"], d["events"], d["secret_encrypted"]))
        elif ev.type in ("WebhookDeleted", "WebhookDisabled"):
            status = "deleted" if ev.type == "WebhookDeleted" else "disabled"
            t = targets.get(ev.workspace_id, {}).get(ev.stream_id)
            if t is not None:
                t.status = status
            change = plan.targets.get(ev.stream_id)
            registration = change.registration if change is not None else None
            plan.targets[ev.stream_id] = TargetChange(ev.stream_id, status, ev.version, registration, ev.recorded_at)
        elif ev.type == "JobQueued":
            info = JobInfo(ev.stream_id, ev.workspace_id, d["environment"], d["job_type"], d.get("webhook_url"),
                           ev.recorded_at, 0, _video_id(d.get("params")), ev.version)
            jobs[ev.stream_id] = info
            plan.jobs.append(info)
        elif ev.type in PROGRESS_TYPES:
            plan.progress.append((ev.stream_id, d["progress"], ev.version))
            if ev.stream_id in jobs and jobs[ev.stream_id].version < ev.version:
                jobs[ev.stream_id].progress, jobs[ev.stream_id].version = d["progress"], ev.version
        elif ev.type == "WebhookDeliveryResent":
            plan.resends.append((ev.stream_id, ev.recorded_at))
        elif ev.type == "JobSecretRotated":
            plan.job_secrets.append(JobSecretRotation(ev.workspace_id, d["environment"], d["version"],
                                                      d["previous_version"],
                                                      datetime.fromisoformat(d["previous_valid_until"])))
        elif ev.type in EVENT_FOR:
            _fan_out(ev, targets, jobs, plan, links)
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
             plan: IntakePlan, links: Callable[[UUID, datetime], Links]) -> None:
    """The deliveries of one mapped event: to the active webhooks of its workspace and environment
    subscribed to it, and to its job's webhook_url when a job ends. An event whose environment
    cannot be told is delivered to nobody (a sandbox webhook must never see production data, nor
    the reverse): it is recorded in ``webhook_unrouted`` and logged instead."""
    name = EVENT_FOR[ev.type].name
    environment = environment_of(ev, jobs)
    if environment is None:
        plan.unrouted.append(Unrouted(ev.position, ev.workspace_id, ev.type, "the event's environment is unknown"))
        return
    job = jobs.get(ev.stream_id) if ev.stream_type == "Job" else None
    about = job or _job_of(ev, jobs)
    data = public_data(Source(ev.type, ev.stream_id, ev.recorded_at, environment, ev.data,
                              about.facts() if about is not None else None),
                       links(ev.workspace_id, ev.recorded_at))
    created_at = ev.recorded_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    cause = caused_by(ev)
    for t in targets.get(ev.workspace_id, {}).values():
        if t.status != ACTIVE or name not in t.events or t.environment != environment:
            continue
        did = delivery_id(t.webhook_id, ev.position, name)
        plan.deliveries.append(Delivery(did, ev.workspace_id, t.environment, t.webhook_id, t.url, name, ev.position,
                                        payload(did, name, created_at, ev.workspace_id, data), cause, ev.recorded_at))
    if job is not None and job.webhook_url and ev.type in JOB_END_EVENTS:
        did = delivery_id(job.webhook_url, ev.position, name)
        plan.deliveries.append(Delivery(did, ev.workspace_id, environment, None, job.webhook_url, name, ev.position,
                                        payload(did, name, created_at, ev.workspace_id, data), cause, ev.recorded_at))


# ----------------------------------------------------------------------------------- the rows

_UPSERT_TARGET = """
INSERT INTO webhook_targets (webhook_id, workspace_id, environment, url, events, secret_encrypted, status, version)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (webhook_id) DO UPDATE SET status = excluded.status, version = excluded.version
 WHERE webhook_targets.version < excluded.version"""
_TARGET_STATUS = "UPDATE webhook_targets SET status = $2, version = $3 WHERE webhook_id = $1 AND version < $3"
_INSERT_JOB = """INSERT INTO webhook_jobs (job_id, workspace_id, environment, job_type, webhook_url, created_at,
                                          progress, video_id, version)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (job_id) DO NOTHING"""
_PROGRESS = "UPDATE webhook_jobs SET progress = $2, version = $3 WHERE job_id = $1 AND version < $3"
_INSERT_DELIVERY = """
INSERT INTO webhook_deliveries (id, workspace_id, environment, webhook_id, url, event, source_position, payload,
                                cause, status, next_attempt_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10) ON CONFLICT (id) DO NOTHING"""
# Pending retries of a webhook deleted or disabled: due from the change, so the sender ends them (cancelled)
# at once. Every time the intake writes is an event's ``recorded_at``: a replay writes the same rows.
_EXPEDITE = """UPDATE webhook_deliveries SET next_attempt_at = least(next_attempt_at, $2)
                WHERE webhook_id = $1 AND status = 'pending'"""
_ROTATE_JOB_SECRET = """
INSERT INTO webhook_job_secrets (workspace_id, environment, version, previous_version, previous_valid_until)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (workspace_id, environment) DO UPDATE
   SET version = excluded.version, previous_version = excluded.previous_version,
       previous_valid_until = excluded.previous_valid_until
 WHERE webhook_job_secrets.version < excluded.version"""
_UNROUTED = """INSERT INTO webhook_unrouted (source_position, workspace_id, event_type, reason)
                VALUES ($1, $2, $3, $4) ON CONFLICT (source_position) DO NOTHING"""
_RESEND = """UPDATE webhook_deliveries SET status = 'pending', schedule_base = attempts, next_attempt_at = $2,
                    updated_at = $2 WHERE id = $1 AND status IN ('failed', 'exhausted')"""


def _job_ids(events: list[StoredEvent]) -> list[UUID]:
    """The jobs the batch's mapped events may need: a Job stream's, and the job named by ``job_id``
    (its environment, for an event written before it carried its own; an analysis's video)."""
    ids = set()
    for ev in events:
        if ev.type not in EVENT_FOR:
            continue
        if ev.stream_type == "Job":
            ids.add(ev.stream_id)
        elif isinstance(ev.data.get("job_id"), str):
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
            jobs[r["job_id"]] = JobInfo(r["job_id"], r["workspace_id"], r["environment"], r["job_type"],
                                        r["webhook_url"], r["created_at"], r["progress"], r["video_id"],
                                        r["version"])
    return targets, jobs


async def write_plan(conn: asyncpg.Connection, plan: IntakePlan) -> None:
    """The plan's rows, and the sender's wake-up when deliveries became due (sent at commit)."""
    creations = [c.creation_args() for c in plan.targets.values() if c.registration is not None]
    changes = [(c.webhook_id, c.status, c.version) for c in plan.targets.values() if c.registration is None]
    if creations:
        await conn.executemany(_UPSERT_TARGET, creations)
    if changes:
        await conn.executemany(_TARGET_STATUS, changes)
    ended = [(c.webhook_id, c.at) for c in plan.targets.values() if c.status != ACTIVE]
    if ended:
        await conn.executemany(_EXPEDITE, ended)
    if plan.jobs:
        await conn.executemany(_INSERT_JOB, [j.args() for j in plan.jobs])
    if plan.progress:
        await conn.executemany(_PROGRESS, plan.progress)
    if plan.deliveries:
        await conn.executemany(_INSERT_DELIVERY, [d.args() for d in plan.deliveries])
    if plan.resends:
        await conn.executemany(_RESEND, plan.resends)
    if plan.job_secrets:
        await conn.executemany(_ROTATE_JOB_SECRET, [(s.workspace_id, s.environment, s.version, s.previous_version,
                                                     s.previous_valid_until) for s in plan.job_secrets])
    if plan.unrouted:
        await conn.executemany(_UNROUTED, [(u.source_position, u.workspace_id, u.event_type, u.reason)
                                           for u in plan.unrouted])
        for u in plan.unrouted:
            log.warning("dispatcher intake: %s at position %d (workspace %s) delivered to nobody: %s",
                        u.event_type, u.source_position, u.workspace_id, u.reason)
    if plan.deliveries or plan.resends or ended:
        await conn.execute("SELECT pg_notify($1, '')", WAKE_CHANNEL)


# ----------------------------------------------------------------------------------- the reader


class Intake(Reader):
    """The intake as a tracked reader; ``runner`` gives it its consumer."""

    name = NAME

    def __init__(self) -> None:
        self.deliveries = 0  # delivery rows planned by committed batches
        self._planned = 0
        self._settings: Settings | None = None

    def handles_type(self, kind: str) -> bool:
        return kind in INTAKE_TYPES

    async def apply(self, conn: asyncpg.Connection, batch: ParsedBatch, fresh: list[Message]) -> None:
        events = [batch.payload(m) for m in fresh]
        targets, jobs = await _known(conn, events)
        settings = self._settings
        plan = plan_intake(events, targets, jobs,
                           None if settings is None else lambda ws, at: FileLinks.of(settings, ws, at))
        await write_plan(conn, plan)
        self._planned = len(plan.deliveries)

    async def committed(self) -> None:
        self.deliveries += self._planned
        self._planned = 0

    def runner(self, settings: Settings, pool: asyncpg.Pool, registry: EventRegistry) -> ConsumerRunner:
        self._settings = settings
        return ConsumerRunner(settings, [self], pool, registry, topic=settings.events_topic,
                              group=settings.dispatcher_group)
