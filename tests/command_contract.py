"""Commands and idempotency decisions, written once and run on both event stores.

``tests/unit/test_commands_in_memory.py`` runs them on the in-memory store (milliseconds) and
``tests/integration/test_commands.py`` on PostgreSQL, with and without group commit: each gives a
``backend`` fixture (``Backend``). What needs PostgreSQL itself (the answer's transaction seen from
outside, a restart, a process dying with its connections, the workers) stays in the integration
modules of idempotency, refunds and credits.
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import date, timedelta
from typing import Any, Protocol

import pytest

from domain.articles import Article
from domain.base import InsufficientCredits, InvalidTransition, NotFound
from domain.pricing import SandboxAllowance
from domain.workspaces import Workspace
from infra.effects import SandboxQuotaExceeded
from infra.eventstore import EventStore
from services.application.articles import ProviderNotConfigured, UpdateArticle
from services.application.idempotency import (
    AMBIENT,
    PENDING,
    IdempotencyKeyInUse,
    IdempotencyKeyMismatch,
    Outcome,
    ReplayedRefusal,
)
from services.application.jobs import CancelJob, QueueJob, queue_job_once
from services.application.keys import IssueKey, RevokeKey
from services.application.workspaces import AddCredits, CreateWorkspace
from tests.helpers import context, handle
from tests.idempotency_support import API_KEY, KEY, OTHER_API_KEY, REQUEST, T0, ChargedJob, Clock, workspace


class Backend(Protocol):
    def store(self) -> EventStore:
        """The store of the process that runs the commands (one per backend)."""

    def other(self) -> EventStore:
        """A store of another process over the same database."""

    def keys(self, **kwargs) -> Any:
        """The idempotency keys of the database (``clock``, ``claim_s`` as ``IdempotencyKeys`` takes them)."""

    async def written(self, ws) -> dict[str, int]:
        """How many events of each type the workspace has."""

    async def stored_key(self, key: str = KEY, *, api_key_id=None) -> dict | None:
        """The key's row (``state``, ``status``, ``owner``, ``body``...) of ``api_key_id`` (any API
        key's when None), None when there is none."""

    async def ending(self, job_id) -> dict:
        """The job's final events and refunds: ``types``, ``one_append`` (all written by one
        append), ``refunds`` (amounts refunded) and ``claims`` (amounts claimed)."""

    async def claim_refund(self, job_id, ws, amount: int) -> None:
        """A refund claimed outside the commands (as one made before refunds moved into the ending
        append)."""


async def balance(store: EventStore, ws) -> int:
    workspace: Workspace = store.registry.reconstruct(await store.read_stream(ws))
    return workspace.credits_balance


# -- charges -----------------------------------------------------------------------------------


async def test_concurrent_charges_of_one_workspace_take_turns_and_stop_at_the_balance(backend: Backend):
    store = backend.store()
    ws, _ = await handle(store, CreateWorkspace(name="turns", plan="pro", credits=20, rate_limit=100))
    results = await asyncio.gather(*(handle(store, QueueJob(ws, job_type="charged", credits=1)) for _ in range(25)),
                                   return_exceptions=True)
    assert sum(not isinstance(r, Exception) for r in results) == 20
    assert all(isinstance(r, InsufficientCredits) for r in results if isinstance(r, Exception)), results
    written = await backend.written(ws)
    assert written["CreditsCharged"] == written["JobQueued"] == 20
    assert await balance(store, ws) == 0


async def test_a_charge_refused_writes_nothing(backend: Backend):
    store = backend.store()
    ws, _ = await handle(store, CreateWorkspace(name="short", plan="pro", credits=3, rate_limit=100))
    head = await store.head()
    with pytest.raises(InsufficientCredits):
        await handle(store, QueueJob(ws, job_type="charged", credits=4))
    assert await store.head() == head


async def test_a_sandbox_job_counts_against_the_day_and_is_refused_past_it_writing_nothing(backend: Backend):
    store = backend.store()
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


async def test_a_top_up_by_another_process_is_usable_by_the_next_charge(backend: Backend):
    """A charge refused on a kept state is decided again on the stream as committed."""
    api, cli = backend.store(), backend.other()
    ws, _ = await handle(api, CreateWorkspace(name="spent", plan="pro", credits=20, rate_limit=600))
    for _ in range(20):  # a stream long enough to be kept
        await handle(api, QueueJob(ws, job_type="charged", credits=1), max_attempts=1)
    with pytest.raises(InsufficientCredits):
        await handle(api, QueueJob(ws, job_type="charged", credits=1))

    await handle(cli, AddCredits(ws, amount=10))  # what `vaeo workspace credits W --add 10` does

    job, position = await handle(api, QueueJob(ws, job_type="charged", credits=4))
    assert position is not None and job.params["credits"] == 4
    assert await balance(api, ws) == 6
    with pytest.raises(InsufficientCredits):  # the balance the events say, not more
        await handle(api, QueueJob(ws, job_type="charged", credits=7))


async def test_a_refund_appended_by_another_process_is_usable_by_the_next_charge(backend: Backend):
    api, other = backend.store(), backend.other()
    ws, _ = await handle(api, CreateWorkspace(name="spent", plan="pro", credits=20, rate_limit=600))
    queued = [(await handle(api, QueueJob(ws, job_type="charged", credits=1)))[0] for _ in range(20)]
    with pytest.raises(InsufficientCredits):
        await handle(api, QueueJob(ws, job_type="charged", credits=1))

    await handle(other, CancelJob(ws, queued[0].id))
    assert await balance(api, ws) == 1, "the other process refunded the job"

    _, position = await handle(api, QueueJob(ws, job_type="charged", credits=1))
    assert position is not None and await balance(api, ws) == 0


# -- refunds -----------------------------------------------------------------------------------


async def charged_job(store, credits: int = 7, *, total: int = 20):
    ws, _ = await handle(store, CreateWorkspace(name="refunds", plan="pro", credits=total, rate_limit=100))
    job, _ = await handle(store, QueueJob(ws, job_type="charged", credits=credits, charge_reason="test"))
    return ws, job


async def test_cancelling_a_queued_job_refunds_its_charge_in_the_same_append(backend: Backend):
    store = backend.store()
    ws, job = await charged_job(store, 7)
    assert await balance(store, ws) == 13

    cancelled, _ = await handle(store, CancelJob(ws, job_id=job.id, environment="production"))

    assert cancelled.status == "cancelled"
    assert await balance(store, ws) == 20
    seen = await backend.ending(job.id)
    assert seen["types"] == ["JobCancelled", "CreditsRefunded"] and seen["one_append"]
    assert seen["refunds"] == [7] and seen["claims"] == [7]

    with pytest.raises(InvalidTransition):
        await handle(store, CancelJob(ws, job_id=job.id, environment="production"))
    assert (await backend.ending(job.id))["refunds"] == [7]
    assert await balance(store, ws) == 20


async def test_concurrent_cancellations_refund_once(backend: Backend):
    store = backend.store()
    ws, job = await charged_job(store, 9)

    results = await asyncio.gather(*(handle(store, CancelJob(ws, job_id=job.id)) for _ in range(6)),
                                   return_exceptions=True)

    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, InvalidTransition) for r in results if isinstance(r, Exception)), results
    seen = await backend.ending(job.id)
    assert seen["types"] == ["JobCancelled", "CreditsRefunded"] and seen["refunds"] == [9]
    assert await balance(store, ws) == 20


async def test_a_job_charged_nothing_is_never_refunded(backend: Backend):
    store = backend.store()
    ws, job = await charged_job(store, 0)
    assert job.params["credits"] == 0 and await balance(store, ws) == 20

    await handle(store, CancelJob(ws, job_id=job.id))

    seen = await backend.ending(job.id)
    assert seen["types"] == ["JobCancelled"] and seen["claims"] == []
    assert await balance(store, ws) == 20


async def test_a_refund_claimed_earlier_is_not_paid_twice(backend: Backend):
    """A job refunded before the refund moved into the ending append (the analysis handler used to
    refund, then the worker failed the job) still ends, without a second refund."""
    store = backend.store()
    ws, job = await charged_job(store, 4)
    await backend.claim_refund(job.id, ws, 4)

    cancelled, _ = await handle(store, CancelJob(ws, job_id=job.id))

    assert cancelled.status == "cancelled"
    seen = await backend.ending(job.id)
    assert seen["types"] == ["JobCancelled"] and seen["refunds"] == []
    assert await balance(store, ws) == 16


async def test_a_cancellation_joins_the_chain_of_the_request_that_queued_the_job(backend: Backend):
    store = backend.store()
    ws, _ = await handle(store, CreateWorkspace(name="chain", plan="pro", credits=10, rate_limit=100))
    queued = {"request_id": "r-1", "correlation_id": "r-1", "causation_id": "request:r-1"}
    job, _ = await handle(store, QueueJob(ws, job_type="charged", credits=2), meta=queued)
    cancelling = {"request_id": "r-2", "correlation_id": "r-2", "causation_id": "request:r-2"}
    await handle(store, CancelJob(ws, job.id), meta=cancelling)
    ended = [e for e in await store.read_stream(job.id) if e.type == "JobCancelled"]
    refund = [e for e in await store.read_stream(ws) if e.type == "CreditsRefunded"]
    assert ended[0].meta == refund[0].meta == {**cancelling, "correlation_id": "r-1"}


# -- idempotency keys --------------------------------------------------------------------------


async def test_fifty_concurrent_requests_with_one_key_run_once_and_charge_once(backend: Backend):
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()
    command = ChargedJob(store, ws)

    answers = await asyncio.gather(*(keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)
                                     for _ in range(50)), return_exceptions=True)

    assert command.executions == 1
    assert all(isinstance(a, Outcome | IdempotencyKeyInUse) for a in answers), answers
    outcomes = [a for a in answers if isinstance(a, Outcome)]
    assert [o.reused for o in outcomes].count(False) == 1
    assert len({o.body["data"]["job_id"] for o in outcomes}) == 1
    assert all(o.body["data"]["reused"] == o.reused for o in outcomes)
    assert (await backend.written(ws)) == {"WorkspaceCreated": 1, "ApiKeyIssued": 1, "JobQueued": 1,
                                           "CreditsCharged": 1}
    assert await balance(store, ws) == 95
    # Once the first has answered, every request with the key is a replay.
    again = await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)
    assert again.reused and again.body["data"]["reused"] is True and command.executions == 1
    assert again.body["data"]["job_id"] == outcomes[0].body["data"]["job_id"]


async def test_the_same_key_with_other_parameters_is_a_mismatch_that_changes_nothing(backend: Backend):
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()
    command = ChargedJob(store, ws)
    first = await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)
    before, row = await backend.written(ws), await backend.stored_key()

    with pytest.raises(IdempotencyKeyMismatch) as refused:
        await keys.run(ws, "jobs.create", KEY, {**REQUEST, "credits": 6}, command, api_key_id=API_KEY)

    assert refused.value.status == 409 and refused.value.code == "idempotency_key_mismatch"
    assert command.executions == 1
    assert await backend.written(ws) == before and await backend.stored_key() == row
    assert await balance(store, ws) == 95
    # Key order does not make another request; another operation or workspace is another key.
    same = await keys.run(ws, "jobs.create", KEY, dict(reversed(REQUEST.items())), command, api_key_id=API_KEY)
    assert same.reused and same.body["data"]["job_id"] == first.body["data"]["job_id"]
    other = await keys.run(ws, "clips.detect", KEY, {**REQUEST, "credits": 6}, command, api_key_id=API_KEY)
    assert not other.reused and command.executions == 2


async def test_a_refusal_is_not_the_keys_answer_and_the_request_is_decided_afresh(backend: Backend):
    """A refusal wrote nothing: the key is released, and the same request with the key runs again
    (here once credits were added); another API key's refusal under the same key value cannot
    become the answer the first API key gets (no poisoning)."""
    store = backend.store()
    ws = await workspace(store, credits=3)
    keys = backend.keys()
    command = ChargedJob(store, ws)
    with pytest.raises(InsufficientCredits):
        await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=OTHER_API_KEY)
    with pytest.raises(InsufficientCredits):
        await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)
    assert await backend.stored_key() is None
    await handle(store, AddCredits(ws, amount=50))

    answer = await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)

    assert not answer.reused and command.executions == 3
    assert (await backend.written(ws))["JobQueued"] == 1 and await balance(store, ws) == 48
    replay = await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)
    assert replay.reused and replay.body["data"]["job_id"] == answer.body["data"]["job_id"]
    assert command.executions == 3


async def test_a_refusal_once_the_work_committed_is_the_keys_answer(backend: Backend):
    """A request whose events committed and that then failed did its work: running it again would
    do it twice, so that refusal is stored and replayed to its API key."""
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()
    runs = []

    async def queued_then_refused(claim) -> Outcome:
        runs.append(claim)
        token = AMBIENT.set(claim)
        try:
            await handle(store, QueueJob(ws, job_type="render", credits=5))
        finally:
            AMBIENT.reset(token)
        raise InvalidTransition("the job cannot be started", status="pending")

    with pytest.raises(InvalidTransition):
        await keys.run(ws, "jobs.create", KEY, REQUEST, queued_then_refused, api_key_id=API_KEY)
    with pytest.raises(ReplayedRefusal) as replayed:
        await keys.run(ws, "jobs.create", KEY, REQUEST, queued_then_refused, api_key_id=API_KEY)

    assert len(runs) == 1 and replayed.value.code == "invalid_state"
    assert (await backend.written(ws))["JobQueued"] == 1 and await balance(store, ws) == 95


async def test_another_api_key_with_the_same_key_runs_its_own_request(backend: Backend):
    """A key belongs to the API key that sent it: another API key of the workspace sending the same
    key value and request never gets the first answer (it may hold a new key or a secret); its own
    request runs and is replayed to it alone, and other parameters are no mismatch for it."""
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()
    owner, other = ChargedJob(store, ws), ChargedJob(store, ws)
    first = await keys.run(ws, "jobs.create", KEY, REQUEST, owner, api_key_id=API_KEY)

    theirs = await keys.run(ws, "jobs.create", KEY, REQUEST, other, api_key_id=OTHER_API_KEY)

    assert not theirs.reused and other.executions == 1
    assert theirs.body["data"]["job_id"] != first.body["data"]["job_id"]
    assert (await backend.written(ws))["JobQueued"] == 2 and await balance(store, ws) == 90
    mine = await keys.run(ws, "jobs.create", KEY, REQUEST, owner, api_key_id=API_KEY)
    again = await keys.run(ws, "jobs.create", KEY, REQUEST, other, api_key_id=OTHER_API_KEY)
    assert mine.body["data"]["job_id"] == first.body["data"]["job_id"]
    assert again.body["data"]["job_id"] == theirs.body["data"]["job_id"]
    assert owner.executions == other.executions == 1
    with pytest.raises(IdempotencyKeyMismatch):
        await keys.run(ws, "jobs.create", KEY, {**REQUEST, "credits": 6}, other, api_key_id=OTHER_API_KEY)
    third = ChargedJob(store, ws, credits=6)
    assert not (await keys.run(ws, "jobs.create", KEY, {**REQUEST, "credits": 6}, third,
                               api_key_id=uuid.uuid4())).reused
    assert (await backend.stored_key(api_key_id=API_KEY))["body"] == first.body


async def test_revoking_an_api_key_deletes_its_keys_and_its_request_in_flight_cannot_commit(backend: Backend):
    """A revoked key's answers (a key it created, a webhook secret) are kept for nobody: deleted
    with its revocation, all of them and only its own; a request of it still running when it is
    revoked cannot store its answer, and so writes nothing."""
    store = backend.store()
    ws, owner = await handle(store, CreateWorkspace(name="revoked", plan="pro", credits=100, rate_limit=100))
    issued = await handle(store, IssueKey(ws, name="deploy", scopes=["analyses:create"], environment="production"))
    keys = backend.keys()
    await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=issued.key_id)
    await keys.run(ws, "clips.detect", KEY, REQUEST, ChargedJob(store, ws), api_key_id=issued.key_id)
    kept = await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=owner.key_id)
    slow = ChargedJob(store, ws)
    slow.hold = asyncio.Event()
    in_flight = asyncio.create_task(keys.run(ws, "jobs.create", "in-flight-key-0001", REQUEST, slow,
                                             api_key_id=issued.key_id))
    await asyncio.wait_for(slow.started.wait(), 10)

    await handle(store, RevokeKey(ws, issued.key_id))

    assert await backend.stored_key(api_key_id=issued.key_id) is None
    assert await backend.stored_key("in-flight-key-0001") is None
    slow.hold.set()
    with pytest.raises(IdempotencyKeyInUse):
        await in_flight
    assert (await backend.written(ws))["JobQueued"] == 3 and await balance(store, ws) == 85
    replay = await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=owner.key_id)
    assert replay.reused and replay.body["data"]["job_id"] == kept.body["data"]["job_id"]


async def test_a_request_whose_claim_lapsed_cannot_commit(backend: Backend):
    """A slow request (not dead) whose claim was taken over by a retry: its append is refused whole,
    so the key has one execution and one charge. Another request's append made at the same time
    (with group commit, possibly in the same group) is not affected."""
    store = backend.store()
    ws = await workspace(store)
    clock = Clock()
    keys = backend.keys(clock=clock, claim_s=60)
    slow = ChargedJob(store, ws)
    slow.hold = asyncio.Event()
    first = asyncio.create_task(keys.run(ws, "jobs.create", KEY, REQUEST, slow, api_key_id=API_KEY))
    await asyncio.wait_for(slow.started.wait(), 10)

    clock.now = T0 + timedelta(seconds=59)
    with pytest.raises(IdempotencyKeyInUse) as in_use:
        await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=API_KEY)
    assert in_use.value.status == 409 and in_use.value.code == "idempotency_key_in_use"
    clock.now = T0 + timedelta(seconds=61)
    retry = ChargedJob(store, ws)
    answer = await keys.run(ws, "jobs.create", KEY, REQUEST, retry, api_key_id=API_KEY)
    slow.hold.set()
    late, neighbour = await asyncio.gather(
        first, keys.run(ws, "jobs.create", "another-key-0001", REQUEST, ChargedJob(store, ws), api_key_id=API_KEY),
        return_exceptions=True)

    assert isinstance(late, IdempotencyKeyInUse), late
    assert retry.executions == 1 and not answer.reused and not neighbour.reused
    assert (await backend.written(ws))["JobQueued"] == 2 and await balance(store, ws) == 90
    replay = await keys.run(ws, "jobs.create", KEY, REQUEST, retry, api_key_id=API_KEY)
    assert replay.body["data"]["job_id"] == answer.body["data"]["job_id"]


async def test_an_unexpected_failure_releases_the_key(backend: Backend):
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()

    async def broken(claim) -> Outcome:
        raise RuntimeError("the storage went away")

    with pytest.raises(RuntimeError):
        await keys.run(ws, "jobs.create", KEY, REQUEST, broken, api_key_id=API_KEY)
    assert await backend.stored_key() is None
    command = ChargedJob(store, ws)
    assert not (await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)).reused
    assert command.executions == 1


async def test_an_ambient_claim_binds_the_key_to_the_first_append_then_its_answer_replaces_the_placeholder(
        backend: Backend):
    """The API's header wraps a handler that builds its answer after its append: the claim, set as
    the ambient claim, rides in the first append the command makes (and in no later one); until
    the answer is stored the key is in use, then the answer is replayed."""
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()
    seen: dict[str, Any] = {}

    async def handler(claim) -> Outcome:
        token = AMBIENT.set(claim)
        try:
            job, _ = await handle(store, QueueJob(ws, job_type="render", credits=5))
            seen["bound"] = await backend.stored_key()
            with pytest.raises(IdempotencyKeyInUse):
                await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=API_KEY)
            await handle(store, AddCredits(ws, amount=1))  # a second append carries no binding
        finally:
            AMBIENT.reset(token)
        return Outcome(202, {"data": {"job_id": str(job.id)}})

    first = await keys.run(ws, "jobs.create", KEY, REQUEST, handler, api_key_id=API_KEY)

    assert seen["bound"]["state"] == "done" and PENDING in seen["bound"]["body"]
    row = await backend.stored_key()
    assert (row["status"], row["body"]) == (202, first.body)
    replay = await keys.run(ws, "jobs.create", KEY, REQUEST, ChargedJob(store, ws), api_key_id=API_KEY)
    assert replay.reused and replay.body == first.body
    written = await backend.written(ws)
    assert (written["JobQueued"], written["CreditsCharged"], written["CreditsAdded"]) == (1, 1, 1)
    assert await balance(store, ws) == 96


async def test_a_5xx_refusal_before_any_append_frees_the_key(backend: Backend):
    """A request the service could not serve now (no provider) wrote nothing: no answer is kept,
    so the same request can be sent with the key once the cause is gone."""
    store = backend.store()
    ws = await workspace(store)
    keys = backend.keys()

    async def unavailable(claim) -> Outcome:
        raise ProviderNotConfigured("no provider", dependency="language model provider")

    with pytest.raises(ProviderNotConfigured):
        await keys.run(ws, "jobs.create", KEY, REQUEST, unavailable, api_key_id=API_KEY)
    assert await backend.stored_key() is None
    command = ChargedJob(store, ws)
    assert not (await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)).reused
    assert command.executions == 1


async def test_keys_are_kept_a_day_then_purged(backend: Backend):
    store = backend.store()
    ws = await workspace(store)
    clock = Clock()
    keys = backend.keys(clock=clock)
    command = ChargedJob(store, ws)
    await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)

    clock.now = T0 + timedelta(hours=23, minutes=59)
    assert await keys.purge() == 0
    assert (await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)).reused

    clock.now = T0 + timedelta(hours=24, seconds=1)
    assert await keys.purge() == 1
    assert await backend.stored_key() is None
    assert not (await keys.run(ws, "jobs.create", KEY, REQUEST, command, api_key_id=API_KEY)).reused
    assert command.executions == 2
    with pytest.raises(ValueError):
        backend.keys(retention_s=3600)


async def test_an_identical_request_reuses_the_earlier_job(backend: Backend):
    store = backend.store()
    ws = await workspace(store)
    request = {"article_id": 4, "template_id": 2, "requested_clip_count": 10}

    async def detect(body=request):
        job, reused, _ = await queue_job_once(QueueJob(ws, job_type="clip_detection", params=body, credits=5),
                                              context(store), operation="clips.detect", request=body)
        return job, reused

    results = await asyncio.gather(*(detect() for _ in range(20)))

    assert len({job.id for job, _ in results}) == 1
    assert [reused for _, reused in results].count(False) == 1
    assert (await backend.written(ws))["JobQueued"] == 1 and await balance(store, ws) == 95
    job, reused = await detect()
    assert reused and job.id == results[0][0].id

    other, reused = await detect({**request, "requested_clip_count": 11})
    assert not reused and other.id != job.id

    # A job that ended cancelled (or failed) is not reused: the identical request queues a new one.
    await handle(store, CancelJob(ws, job_id=job.id))
    renewed, reused = await detect()
    assert not reused and renewed.id not in (job.id, other.id)
    assert (await detect())[0].id == renewed.id


async def test_an_article_is_renamed_by_its_integer_id_and_another_workspace_gets_404(backend: Backend):
    """The article commands find an article by its id on the write side (its stream's name), never
    through a read model: they run on every store."""
    store = backend.store()
    ws, other = uuid.uuid4(), uuid.uuid4()
    article = Article(article_id=77, workspace_id=ws, environment="production", job_id=uuid.uuid4(), video_id=None,
                      media_id=None, title="T", language="en", writing_style="auto", aeo_score=1, geo_score=1,
                      composite_score=1.0, keywords_primary=[], has_transcript=True, content={}, markdown="")
    await store.save(article, workspace_id=ws)
    updated, _ = await handle(backend.other(), UpdateArticle(ws, "production", 77, custom_name="Renamed"))
    assert updated
    assert (await store.fetch_for_writing(article.id)).custom_name == "Renamed"
    for wrong in (UpdateArticle(other, "production", 77, custom_name="x"),
                  UpdateArticle(ws, "sandbox", 77, custom_name="x"), UpdateArticle(ws, "production", 78)):
        with pytest.raises(NotFound):
            await handle(store, wrong)
