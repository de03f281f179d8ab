"""Commands and idempotency decisions on the in-memory event store: charges, refunds, sandbox
quotas, keys, replays. What they need of PostgreSQL (group commit, its constraints and statements,
transactions seen from outside) stays in tests/integration; the store's own rules are the contract
suite's, run on both stores."""

from __future__ import annotations

import asyncio
import dataclasses
import typing
from datetime import date, timedelta

import pytest

from domain.base import InsufficientCredits, InvalidTransition
from domain.pricing import SandboxAllowance
from domain.workspaces import Workspace
from infra.codec import EventRegistry
from infra.effects import SandboxQuotaExceeded
from infra.eventstore import EventStore
from infra.memory_store import MemoryDatabase, MemoryEventStore
from services.application import handlers
from services.application.idempotency import (
    IdempotencyKeyInUse,
    IdempotencyKeyMismatch,
    MemoryIdempotencyKeys,
    Outcome,
    ReplayedRefusal,
)
from services.application.jobs import CancelJob, QueueJob, queue_job_once
from services.application.workspaces import AddCredits, CreateWorkspace
from tests.helpers import context, handle
from tests.idempotency_support import KEY, REQUEST, T0, ChargedJob, Clock, workspace


@pytest.fixture
def database() -> MemoryDatabase:
    return MemoryDatabase()


@pytest.fixture
def store(database) -> MemoryEventStore:
    return MemoryEventStore(EventRegistry(), database)


def written(database: MemoryDatabase, ws) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in database.events:
        if e.workspace_id == ws:
            counts[e.type] = counts.get(e.type, 0) + 1
    return counts


async def balance(store: EventStore, ws) -> int:
    workspace: Workspace = store.registry.reconstruct(await store.read_stream(ws))
    return workspace.credits_balance


def outcome(database: MemoryDatabase, job_id) -> dict:
    """The job's final events and its refunds, with their positions."""
    ends = [e for e in database.events
            if (e.stream_id == job_id and e.type in ("JobFailed", "JobCancelled", "JobCompleted"))
            or (e.type == "CreditsRefunded" and e.data.get("job_id") == str(job_id))]
    claim = database.credit_refunds.get(job_id)
    return {"types": [e.type for e in ends], "positions": [e.position for e in ends],
            "refunds": [e.data["amount"] for e in ends if e.type == "CreditsRefunded"],
            "claims": [claim[1]] if claim else []}


# -- the registry of commands ------------------------------------------------------------------


def test_every_command_has_a_handler_taking_the_command_and_the_context():
    """One row per operation: each command is a frozen dataclass, each handler an async function of
    ``(command, context)`` annotated with its command's type."""
    assert handlers.HANDLERS
    for command, handler in handlers.HANDLERS.items():
        assert dataclasses.is_dataclass(command) and command.__dataclass_params__.frozen, command
        assert asyncio.iscoroutinefunction(handler), handler
        hints = typing.get_type_hints(handler)
        assert list(hints)[:2] == ["command", "ctx"] and hints["command"] is command, handler


# -- charges -----------------------------------------------------------------------------------


async def test_concurrent_charges_of_one_workspace_take_turns_and_stop_at_the_balance(store, database):
    ws, _ = await handle(store, CreateWorkspace(name="turns", plan="pro", credits=20, rate_limit=100))
    results = await asyncio.gather(*(handle(store, QueueJob(ws, job_type="charged", credits=1)) for _ in range(25)),
                                   return_exceptions=True)
    assert sum(not isinstance(r, Exception) for r in results) == 20
    assert all(isinstance(r, InsufficientCredits) for r in results if isinstance(r, Exception)), results
    assert written(database, ws)["CreditsCharged"] == written(database, ws)["JobQueued"] == 20
    assert await balance(store, ws) == 0


async def test_a_charge_refused_writes_nothing(store, database):
    ws, _ = await handle(store, CreateWorkspace(name="short", plan="pro", credits=3, rate_limit=100))
    head = await store.head()
    with pytest.raises(InsufficientCredits):
        await handle(store, QueueJob(ws, job_type="charged", credits=4))
    assert await store.head() == head


async def test_a_sandbox_job_counts_against_the_day_and_is_refused_past_it_writing_nothing(store, database):
    ws, _ = await handle(store, CreateWorkspace(name="sandbox", plan="pro", credits=0, rate_limit=100))
    allowance = SandboxAllowance(day=date(2026, 3, 1), jobs=2, clip_ms=60_000, decoded_ms=60_000, clip_max_ms=5_000)
    ctx = context(store, sandbox=lambda: allowance)
    for _ in range(2):
        await ctx.handle(QueueJob(ws, job_type="free", environment="sandbox"))
    head = await store.head()
    with pytest.raises(SandboxQuotaExceeded) as refused:
        await ctx.handle(QueueJob(ws, job_type="free", environment="sandbox"))
    assert refused.value.details == {"limit": "jobs", "quota": 2} and await store.head() == head
    await ctx.handle(QueueJob(ws, job_type="paid", environment="production"))  # production is not counted


async def test_a_top_up_by_another_process_is_usable_by_the_next_charge(database):
    """A charge refused on a kept state is decided again on the stream as committed."""
    api, cli = MemoryEventStore(EventRegistry(), database), MemoryEventStore(EventRegistry(), database)
    ws, _ = await handle(api, CreateWorkspace(name="spent", plan="pro", credits=20, rate_limit=600))
    for _ in range(20):
        await handle(api, QueueJob(ws, job_type="charged", credits=1), max_attempts=1)
    with pytest.raises(InsufficientCredits):
        await handle(api, QueueJob(ws, job_type="charged", credits=1))

    await handle(cli, AddCredits(ws, amount=10))

    job, position = await handle(api, QueueJob(ws, job_type="charged", credits=4))
    assert position is not None and job.params["credits"] == 4
    assert await balance(api, ws) == 6
    with pytest.raises(InsufficientCredits):  # the balance the events say, not more
        await handle(api, QueueJob(ws, job_type="charged", credits=7))


async def test_a_refund_appended_by_another_process_is_usable_by_the_next_charge(database):
    api, worker = MemoryEventStore(EventRegistry(), database), MemoryEventStore(EventRegistry(), database)
    ws, _ = await handle(api, CreateWorkspace(name="spent", plan="pro", credits=20, rate_limit=600))
    queued = [(await handle(api, QueueJob(ws, job_type="charged", credits=1)))[0] for _ in range(20)]
    with pytest.raises(InsufficientCredits):
        await handle(api, QueueJob(ws, job_type="charged", credits=1))

    await handle(worker, CancelJob(ws, queued[0].id))
    assert await balance(api, ws) == 1, "the other process refunded the job"

    _, position = await handle(api, QueueJob(ws, job_type="charged", credits=1))
    assert position is not None and await balance(api, ws) == 0


# -- refunds -----------------------------------------------------------------------------------


async def charged_job(store, credits: int = 7, *, total: int = 20):
    ws, _ = await handle(store, CreateWorkspace(name="refunds", plan="pro", credits=total, rate_limit=100))
    job, _ = await handle(store, QueueJob(ws, job_type="charged", credits=credits, charge_reason="test"))
    return ws, job


async def test_cancelling_a_queued_job_refunds_its_charge_in_the_same_append(store, database):
    ws, job = await charged_job(store, 7)
    assert await balance(store, ws) == 13

    cancelled, _ = await handle(store, CancelJob(ws, job_id=job.id, environment="production"))

    assert cancelled.status == "cancelled"
    assert await balance(store, ws) == 20
    seen = outcome(database, job.id)
    assert seen["types"] == ["JobCancelled", "CreditsRefunded"]
    assert seen["positions"][1] == seen["positions"][0] + 1 == await store.head()  # one append
    assert seen["refunds"] == [7] and seen["claims"] == [7]
    with pytest.raises(InvalidTransition):
        await handle(store, CancelJob(ws, job_id=job.id, environment="production"))
    assert outcome(database, job.id)["refunds"] == [7]
    assert await balance(store, ws) == 20


async def test_concurrent_cancellations_refund_once(store, database):
    ws, job = await charged_job(store, 9)
    results = await asyncio.gather(*(handle(store, CancelJob(ws, job_id=job.id)) for _ in range(6)),
                                   return_exceptions=True)
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, InvalidTransition) for r in results if isinstance(r, Exception)), results
    seen = outcome(database, job.id)
    assert seen["types"] == ["JobCancelled", "CreditsRefunded"] and seen["refunds"] == [9]
    assert await balance(store, ws) == 20


async def test_a_job_charged_nothing_is_never_refunded(store, database):
    ws, job = await charged_job(store, 0)
    assert job.params["credits"] == 0 and await balance(store, ws) == 20
    await handle(store, CancelJob(ws, job_id=job.id))
    seen = outcome(database, job.id)
    assert seen["types"] == ["JobCancelled"] and seen["claims"] == []
    assert await balance(store, ws) == 20


async def test_a_refund_claimed_earlier_is_not_paid_twice(store, database):
    ws, job = await charged_job(store, 4)
    database.credit_refunds[job.id] = (ws, 4)
    cancelled, _ = await handle(store, CancelJob(ws, job_id=job.id))
    assert cancelled.status == "cancelled"
    seen = outcome(database, job.id)
    assert seen["types"] == ["JobCancelled"] and seen["refunds"] == []
    assert await balance(store, ws) == 16


async def test_a_cancellation_joins_the_chain_of_the_request_that_queued_the_job(store):
    ws, _ = await handle(store, CreateWorkspace(name="chain", plan="pro", credits=10, rate_limit=100))
    queued = {"request_id": "r-1", "correlation_id": "r-1", "causation_id": "request:r-1"}
    job, _ = await handle(store, QueueJob(ws, job_type="charged", credits=2), meta=queued)
    cancelling = {"request_id": "r-2", "correlation_id": "r-2", "causation_id": "request:r-2"}
    await handle(store, CancelJob(ws, job.id), meta=cancelling)
    ended = [e for e in await store.read_stream(job.id) if e.type == "JobCancelled"]
    refund = [e for e in await store.read_stream(ws) if e.type == "CreditsRefunded"]
    assert ended[0].meta == refund[0].meta == {**cancelling, "correlation_id": "r-1"}


# -- idempotency keys --------------------------------------------------------------------------


@pytest.fixture
def keys(database) -> MemoryIdempotencyKeys:
    return MemoryIdempotencyKeys(database)


async def test_fifty_concurrent_requests_with_one_key_run_once_and_charge_once(store, database, keys):
    ws = await workspace(store)
    command = ChargedJob(store, ws)

    answers = await asyncio.gather(*(keys.run(ws, "jobs.create", KEY, REQUEST, command) for _ in range(50)),
                                   return_exceptions=True)

    assert command.executions == 1
    assert all(isinstance(a, Outcome | IdempotencyKeyInUse) for a in answers), answers
    outcomes = [a for a in answers if isinstance(a, Outcome)]
    assert [o.reused for o in outcomes].count(False) == 1
    assert written(database, ws) == {"WorkspaceCreated": 1, "ApiKeyIssued": 1, "JobQueued": 1, "CreditsCharged": 1}
    assert await balance(store, ws) == 95
    again = await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    assert again.reused and again.body["data"]["reused"] is True and command.executions == 1
    assert again.body["data"]["job_id"] == outcomes[0].body["data"]["job_id"]


async def test_the_same_key_with_other_parameters_is_a_mismatch_that_changes_nothing(store, database, keys):
    ws = await workspace(store)
    command = ChargedJob(store, ws)
    first = await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    before, row = written(database, ws), dict(database.idempotency_keys[(ws, "production", "jobs.create", KEY)])

    with pytest.raises(IdempotencyKeyMismatch) as refused:
        await keys.run(ws, "jobs.create", KEY, {**REQUEST, "credits": 6}, command)

    assert refused.value.status == 409 and refused.value.code == "idempotency_key_mismatch"
    assert command.executions == 1
    assert written(database, ws) == before
    assert database.idempotency_keys[(ws, "production", "jobs.create", KEY)] == row
    same = await keys.run(ws, "jobs.create", KEY, dict(reversed(REQUEST.items())), command)
    assert same.reused and same.body["data"]["job_id"] == first.body["data"]["job_id"]
    other = await keys.run(ws, "clips.detect", KEY, {**REQUEST, "credits": 6}, command)
    assert not other.reused and command.executions == 2


async def test_a_refusal_is_stored_and_replayed(store, database, keys):
    ws = await workspace(store, credits=3)
    command = ChargedJob(store, ws)
    with pytest.raises(InsufficientCredits) as first:
        await keys.run(ws, "jobs.create", KEY, REQUEST, command)
    await handle(store, AddCredits(ws, amount=50))  # the same request would now succeed: it is not run again

    with pytest.raises(ReplayedRefusal) as replayed:
        await keys.run(ws, "jobs.create", KEY, REQUEST, command)

    assert command.executions == 1
    assert (replayed.value.status, replayed.value.code, replayed.value.message, replayed.value.details) == \
        (402, "insufficient_credits", first.value.message, dict(first.value.details))
    assert "JobQueued" not in written(database, ws)


async def test_a_request_whose_claim_lapsed_cannot_commit(store, database):
    ws = await workspace(store)
    clock = Clock()
    keys = MemoryIdempotencyKeys(database, clock=clock, claim_s=60)
    slow = ChargedJob(store, ws)
    slow.hold = asyncio.Event()
    first = asyncio.create_task(keys.run(ws, "jobs.create", KEY, REQUEST, slow))
    await asyncio.wait_for(slow.started.wait(), 10)

    clock.now = T0 + timedelta(seconds=59)
    with pytest.raises(IdempotencyKeyInUse):
        await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws))
    clock.now = T0 + timedelta(seconds=61)
    retry = ChargedJob(store, ws)
    answer = await keys.run(ws, "jobs.create", KEY, REQUEST, retry)
    slow.hold.set()
    late = (await asyncio.gather(first, return_exceptions=True))[0]

    assert isinstance(late, IdempotencyKeyInUse), late
    assert retry.executions == 1 and not answer.reused
    assert written(database, ws)["JobQueued"] == 1 and await balance(store, ws) == 95
    assert (await keys.run(ws, "jobs.create", KEY, REQUEST, retry)).body == answer.body | {
        "data": {**answer.body["data"], "reused": True}}


async def test_an_unexpected_failure_releases_the_key(store, database, keys):
    ws = await workspace(store)

    async def broken(claim) -> Outcome:
        raise RuntimeError("the storage went away")

    with pytest.raises(RuntimeError):
        await keys.run(ws, "jobs.create", KEY, REQUEST, broken)
    assert database.idempotency_keys == {}
    command = ChargedJob(store, ws)
    assert not (await keys.run(ws, "jobs.create", KEY, REQUEST, command)).reused and command.executions == 1


async def test_keys_are_kept_a_day_then_purged(store, database):
    ws = await workspace(store)
    clock = Clock()
    keys = MemoryIdempotencyKeys(database, clock=clock)
    command = ChargedJob(store, ws)
    await keys.run(ws, "jobs.create", KEY, REQUEST, command)

    clock.now = T0 + timedelta(hours=23, minutes=59)
    assert await keys.purge() == 0
    assert (await keys.run(ws, "jobs.create", KEY, REQUEST, command)).reused

    clock.now = T0 + timedelta(hours=24, seconds=1)
    assert await keys.purge() == 1
    assert database.idempotency_keys == {}
    with pytest.raises(ValueError):
        MemoryIdempotencyKeys(database, retention_s=3600)


async def test_an_identical_request_reuses_the_earlier_job(store, database):
    ws = await workspace(store)
    request = {"article_id": 4, "template_id": 2, "requested_clip_count": 10}

    async def detect(body=request):
        job, reused, _ = await queue_job_once(QueueJob(ws, job_type="clip_detection", params=body, credits=5),
                                              context(store), operation="clips.detect", request=body)
        return job, reused

    results = await asyncio.gather(*(detect() for _ in range(20)))

    assert len({job.id for job, _ in results}) == 1
    assert [reused for _, reused in results].count(False) == 1
    assert written(database, ws)["JobQueued"] == 1 and await balance(store, ws) == 95
    job, reused = await detect()
    assert reused and job.id == results[0][0].id

    other, reused = await detect({**request, "requested_clip_count": 11})
    assert not reused and other.id != job.id

    # A job that ended cancelled (or failed) is not reused: the identical request queues a new one.
    await handle(store, CancelJob(ws, job_id=job.id))
    renewed, reused = await detect()
    assert not reused and renewed.id not in (job.id, other.id)
    assert (await detect())[0].id == renewed.id
