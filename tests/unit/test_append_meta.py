"""What a process appends because of an event it read carries ``meta`` made in one place,
``Application.reacting``: a job's work, the credits watch's ``CreditsLow``, the webhook sender's
records of an attempt and the webhook it disables after a 410. Each names its triggering event as
its cause (``event:<position>``) and stays in that event's chain (docs/events.md), on the
in-memory store."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from domain.webhooks import Webhook, attempt_events
from infra.codec import EventRegistry, StoredEvent
from infra.consume import caused_by
from infra.memory_ports import memory_adapters
from infra.memory_store import MemoryDatabase, MemoryEventStore
from infra.settings import Settings
from services.application.bootstrap import bootstrap
from services.application.jobs import QueueJob
from services.application.workspaces import CreateWorkspace
from services.jobs.context import JobHandlers
from services.processes.credits_watch import decide
from services.processes.dispatcher.sender import Claimed, Record, Sender
from services.processes.worker import Worker

SETTINGS = Settings(secret_key="11" * 32)
REQUEST = {"request_id": "r-1", "key_id": "k-1", "correlation_id": "r-1", "causation_id": "request:r-1"}
NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def the_cause(event: StoredEvent) -> dict[str, str]:
    """What every event appended because of ``event`` (a request's) says of its cause."""
    return {"causation_id": f"event:{event.position}", "correlation_id": REQUEST["request_id"]}


async def requested(credits: int = 10, charge: int = 2) -> tuple[MemoryEventStore, StoredEvent, StoredEvent]:
    """A store with a workspace of ``credits`` and a job charged ``charge``, both by ``REQUEST``:
    the store, the job's ``JobQueued`` and its ``CreditsCharged``."""
    database = MemoryDatabase()
    store = MemoryEventStore(EventRegistry(), database)
    ctx = bootstrap(SETTINGS, store, memory_adapters(database)).context(REQUEST)
    await ctx.handle(CreateWorkspace(name="meta", plan="pro", credits=credits, rate_limit=100))
    workspace_id = next(e.stream_id for e in store.database.events if e.type == "WorkspaceCreated")
    await ctx.handle(QueueJob(workspace_id, job_type="charged", credits=charge))
    queued = next(e for e in store.database.events if e.type == "JobQueued")
    charged = next(e for e in store.database.events if e.type == "CreditsCharged")
    return store, queued, charged


async def test_a_jobs_work_appends_with_its_queueing_as_cause_and_names_the_worker_and_the_job():
    store, queued, _ = await requested()
    worker = Worker(SETTINGS, JobHandlers(), store=store, worker_id="worker-1")
    job = await worker.load_job(queued.stream_id)
    await worker.append_to_job(job, lambda j: j.start(1, "worker-1"))
    started = next(e for e in await store.read_stream(queued.stream_id) if e.type == "JobStarted")
    expected = {"worker": "worker-1", "job_id": str(queued.stream_id), **the_cause(queued)}
    assert started.meta == expected
    assert worker.application.reacting(queued, worker="worker-1", job_id=str(queued.stream_id)).meta == expected


async def test_the_credits_watch_appends_credits_low_with_the_charge_as_cause():
    store, _, charged = await requested(credits=10, charge=9)
    app = bootstrap(SETTINGS, store, memory_adapters(store.database))
    low = await decide(app, [charged], 20.0)
    assert [e.type for e in low] == ["CreditsLow"]
    assert low[0].meta == app.reacting(charged).meta == the_cause(charged)


def delivery_of(event: StoredEvent, webhook_id: uuid.UUID | None) -> Claimed:
    """A claimed delivery of ``event``, its cause kept as the intake keeps it (``caused_by``)."""
    return Claimed(id=uuid.uuid4(), workspace_id=event.workspace_id, environment="production", webhook_id=webhook_id,
                   url="https://receiver.example/hook", event="job.queued", source_position=event.position,
                   payload={}, cause=caused_by(event), attempts=1, schedule_base=0, stream_version=0)


async def test_the_senders_records_of_an_attempt_carry_the_delivered_event_as_cause():
    store, queued, _ = await requested()
    sender = Sender(SETTINGS, None, store)
    row = delivery_of(queued, None)
    record = Record(row, "pending", 1, None, 500, "HTTP 500",
                    lambda v: attempt_events(row.id, v, row.scheduled(), attempt=1, signed_at=0, status_code=500,
                                             latency_ms=3.0, error="HTTP 500", now=NOW))
    events = sender.recorded_events(record)
    assert [e.type for e in events] == ["WebhookDeliveryScheduled", "WebhookDeliveryAttempted",
                                        "WebhookDeliveryFailed"]
    assert all(e.meta == the_cause(queued) for e in events)


async def test_a_webhook_disabled_after_a_410_carries_the_delivered_event_as_cause():
    store, queued, _ = await requested()
    webhook = Webhook.register(webhook_id=uuid.uuid4(), workspace_id=queued.workspace_id, environment="production",
                               url="https://receiver.example/hook", events=None, secret_encrypted="sealed")
    app = bootstrap(SETTINGS, store, memory_adapters(store.database))
    await app.context(REQUEST).save(webhook, workspace_id=queued.workspace_id)
    await Sender(SETTINGS, None, store).disable(delivery_of(queued, webhook.id))
    disabled = [e for e in await store.read_stream(webhook.id) if e.type == "WebhookDisabled"]
    assert len(disabled) == 1 and disabled[0].meta == the_cause(queued)
