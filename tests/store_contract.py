"""The event store's contract, written once and run against every implementation.

``tests/unit/test_store_contract.py`` runs it on the in-memory store, and
``tests/integration/test_store_contract.py`` on PostgreSQL: each gives a ``backend`` fixture
(``Backend``): stores over one shared database (two stores are two processes), the positions
appended so far, and the idempotency keys of that database. What only PostgreSQL does (group
commit, statements riding with the append, NOTIFY, compression) is tested in
``tests/integration/test_eventstore.py``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import uuid
from datetime import date
from typing import Any, Protocol

import pytest

from domain.articles import Article
from domain.jobs import Job
from domain.pricing import MediaWork, SandboxAllowance
from domain.workspaces import Workspace
from infra.codec import EventRegistry, NewEvent
from infra.effects import (
    ClaimLapsed,
    DigestTaken,
    KeyAnswersDropped,
    KeyDigest,
    RefundClaim,
    RefundClaimed,
    SandboxClaim,
    SandboxQuotaExceeded,
)
from infra.eventstore import ConcurrencyError, EventStore
from infra.eventstore_kept import CACHE_FROM_VERSION
from services.application.idempotency import Claim, IdempotencyKeyInUse, Outcome
from services.application.workspaces import AddCredits, CreateWorkspace
from tests.helpers import handle
from tests.idempotency_support import API_KEY, OTHER_API_KEY


class Backend(Protocol):
    registry: EventRegistry

    def store(self) -> EventStore:
        """A new process's store over the shared database."""

    async def positions(self) -> list[int]:
        """Every position appended, in order."""

    def keys(self) -> Any:
        """The idempotency keys of the shared database."""


def _job_events(store: EventStore, ws: uuid.UUID) -> tuple[Job, list[NewEvent]]:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="test")
    return job, store.registry.to_new_events(job.collect_events(), workspace_id=ws)


async def _overtaken_job(store: EventStore, ws: uuid.UUID) -> Job:
    """A queued job loaded twice; the first copy is started and appended: the second, returned, is stale."""
    job, events = _job_events(store, ws)
    await store.save(events=events)
    current = await store.fetch_for_writing(job.id)
    stale = await store.fetch_for_writing(job.id)
    current.start(1, "first")
    await store.save(current, workspace_id=ws)
    return stale


async def test_fifty_concurrent_appends_at_one_version_exactly_one_wins(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    await store.save(events=events)
    loaded = [await store.fetch_for_writing(job.id) for _ in range(50)]  # all at version 1

    async def attempt(i: int, agg: Job) -> bool:
        agg.start(1, f"worker-{i}")
        try:
            await store.save(agg, workspace_id=ws)
            return True
        except ConcurrencyError:
            return False

    results = await asyncio.gather(*(attempt(i, a) for i, a in enumerate(loaded)))
    assert results.count(True) == 1
    assert results.count(False) == 49
    positions = await backend.positions()
    versions = [e.version for e in await store.read_stream(job.id)]
    assert positions == list(range(1, len(positions) + 1)) == [1, 2]
    assert versions == [1, 2]


async def test_positions_are_gap_free_under_concurrent_appends_to_many_streams(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()

    async def writer() -> list[int]:
        out = []
        for _ in range(20):
            _, events = _job_events(store, ws)
            out.append(await store.save(events=events))
        return out

    returned = [p for ps in await asyncio.gather(*(writer() for _ in range(10))) for p in ps]
    positions = await backend.positions()
    assert positions == list(range(1, 201))
    assert sorted(returned) == positions
    assert await store.head() == 200


async def test_an_append_expecting_a_future_version_is_refused(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    await store.save(events=events)
    job.start(1, "w")
    (started,) = store.registry.to_new_events(job.collect_events(), workspace_id=ws)
    skipped = NewEvent(started.stream_id, started.stream_type, 5, ws, started.type, started.schema, started.data)
    with pytest.raises(ConcurrencyError):
        await store.save(events=[skipped])


async def test_a_conflict_writes_nothing_not_even_the_effects(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()
    stale_b = await _overtaken_job(store, ws)
    stale_b.start(1, "b")
    digest = KeyDigest("d" * 64, uuid.uuid4(), ws)
    with pytest.raises(ConcurrencyError):
        await store.save(stale_b, workspace_id=ws, effects=[digest])
    assert await backend.positions() == [1, 2]
    _, events = _job_events(store, ws)
    await store.save(events=events, effects=[digest])  # the digest was not claimed by the refused append


async def test_load_rebuilds_the_aggregate_with_its_state(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    await store.save(events=events)
    job.start(1, "w")
    job.report_progress(40, "transcribing")
    job.complete({"words": 12}, article_id=7)
    await store.save(job, workspace_id=ws, meta={"request_id": "r1"})
    loaded = await store.fetch_for_writing(job.id)
    assert (loaded.status, loaded.progress, loaded.article_id, loaded.version) == ("completed", 100, 7, 4)
    assert loaded.workspace_id == ws
    stored = await store.read_stream(job.id)
    assert [e.type for e in stored] == ["JobQueued", "JobStarted", "JobProgressed", "JobCompleted"]
    assert stored[-1].meta == {"request_id": "r1"}
    assert [e.type for e in await store.read_stream(job.id, limit=1)] == ["JobQueued"]
    assert await store.fetch_for_writing(uuid.uuid4()) is None
    assert await store.read_stream(uuid.uuid4()) == []


async def test_event_data_comes_back_as_written(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    tricky = {"quotes": 'a "b" \\c\\ {d}, e', "braces": "{1,2}", "null_text": "NULL", "blank": " ",
              "unicode": "é 🇫🇷 👩‍👩‍👧 \u202e", "nested": [{"x": None, "y": [1.5, -2, True]}], "empty": ""}
    events[0] = dataclasses.replace(events[0], data={**events[0].data, "extra": copy.deepcopy(tricky)},
                                    meta={"note": tricky["quotes"]})
    await store.save(events=events)
    events[0].data["extra"]["quotes"] = "changed after the append"  # the store kept its own copy
    stored = await store.read_stream(job.id)
    assert stored[0].data["extra"] == tricky and stored[0].meta == {"note": tricky["quotes"]}


async def test_a_long_stream_loads_from_its_kept_state_plus_what_any_process_appended_since(backend: Backend):
    """The in-memory state of a long stream (a busy workspace's) plus the events after it is what the
    whole stream gives, whoever appended them; a caller's copy never changes the kept state."""
    here, elsewhere = backend.store(), backend.store()  # two processes' stores
    ws, _ = await handle(here, CreateWorkspace(name="busy", plan="pro", credits=0, rate_limit=600))
    for _ in range(CACHE_FROM_VERSION + 4):
        await handle(here, AddCredits(ws, amount=1))
    first = await here.fetch_for_writing(ws)
    assert ws in here._aggregates, "a long stream's state is kept"
    loaded_at = first.version
    for _ in range(3):
        await handle(elsewhere, AddCredits(ws, amount=10))  # another process moves the stream
    first.add_credits(1000)  # decided on, never saved: the kept state must not see it
    again = await here.fetch_for_writing(ws)
    whole = backend.registry.reconstruct(await here.read_stream(ws))
    assert again.version == whole.version == loaded_at + 3
    assert vars(again).keys() == vars(whole).keys()
    assert {k: v for k, v in vars(again).items() if k != "_pending_events"} == \
        {k: v for k, v in vars(whole).items() if k != "_pending_events"}
    assert again.credits_total == whole.credits_total == CACHE_FROM_VERSION + 4 + 30


async def test_a_stream_read_only_is_shared_until_it_moves_and_then_rebuilt_on_a_copy(backend: Backend):
    """``fetch_latest`` hands every reader the same read-only view while the stream stands still;
    once another process appends, the next read is the whole stream's state on a new object, and the
    object an earlier reader holds has not changed under it."""
    here, elsewhere = backend.store(), backend.store()
    ws, _ = await handle(here, CreateWorkspace(name="read", plan="pro", credits=5, rate_limit=600))
    [first] = await here.fetch_latest(ws)
    assert (await here.fetch_latest(ws))[0] is first, "a stream that did not move is not rebuilt"
    held_version, held_total = first.version, first.credits_total
    await handle(elsewhere, AddCredits(ws, amount=7))
    [moved] = await here.fetch_latest(ws)
    assert moved is not first
    assert (first.version, first.credits_total) == (held_version, held_total), "a held reading never changes"
    whole = backend.registry.reconstruct(await here.read_stream(ws))
    assert (moved.version, moved.credits_total) == (whole.version, whole.credits_total) == (held_version + 1,
                                                                                           held_total + 7)
    assert await here.fetch_latest(uuid.uuid4()) == [None]

    other, _ = await handle(elsewhere, CreateWorkspace(name="other", plan="pro", credits=9, rate_limit=600))
    both = await here.fetch_latest(other, uuid.uuid4(), ws)  # one never read, one empty, one kept
    assert [getattr(a, "credits_total", None) for a in both] == [9, None, held_total + 7]
    assert both[2] is moved, "the kept one did not move"


async def test_a_reading_refuses_every_change_and_a_copy_of_it_takes_them(backend: Backend):
    """What ``fetch_latest`` hands out is shared: a reader cannot change it, through a method, an
    attribute or a container it holds; ``copy.deepcopy`` gives a state to decide on."""
    store = backend.store()
    ws, _ = await handle(store, CreateWorkspace(name="frozen", plan="pro", credits=5, rate_limit=600))
    [reading] = await store.fetch_latest(ws)
    assert isinstance(reading, Workspace)
    with pytest.raises(TypeError):
        reading.add_credits(3)
    with pytest.raises(TypeError):
        reading.name = "changed"
    with pytest.raises(TypeError):
        reading.job_secrets["production"] = {}
    [again] = await store.fetch_latest(ws)
    assert (again.credits_total, again.name, again.job_secrets, again.version) == (5, "frozen", {}, 1)
    mine = copy.deepcopy(reading)
    mine.add_credits(3)
    mine.job_secrets["x"] = {}
    assert mine.credits_total == 8 and (await store.fetch_latest(ws))[0].credits_total == 5
    await store.save(mine, workspace_id=ws)
    assert (await store.fetch_latest(ws))[0].credits_total == 8


async def test_a_kept_state_is_decided_on_without_a_read_and_a_stale_one_costs_one_retry(backend: Backend):
    """A turn's ``fetch_for_writing`` gives this process's kept state (updated by its own saves);
    when another process moved the stream, the decision's append is refused, the kept state
    dropped, and the next load reads the stream: the charge then lands on the true balance."""
    here, elsewhere = backend.store(), backend.store()
    ws, _ = await handle(here, CreateWorkspace(name="kept", plan="pro", credits=100, rate_limit=600))
    for _ in range(CACHE_FROM_VERSION):
        await handle(here, AddCredits(ws, amount=1))
    async with here.in_turn(ws) as turn:
        workspace = await turn.fetch_for_writing()
        workspace.charge(10, "first")
        await turn.save(workspace, workspace_id=ws)
    await turn.saved
    assert here._aggregates[ws].version == workspace.version, "a save keeps the state it saved"

    await handle(elsewhere, AddCredits(ws, amount=1000))  # another process moves the stream
    async with here.in_turn(ws) as turn:
        stale = await turn.fetch_for_writing()
        assert stale.version == workspace.version, "no read: the kept state, not the stream"
        stale.charge(5, "decided on a stale state")
        with pytest.raises(ConcurrencyError):
            await here.save(stale, workspace_id=ws)
    assert ws not in here._aggregates
    async with here.in_turn(ws) as turn:
        fresh = await turn.fetch_for_writing()
        fresh.charge(5, "again")
        await turn.save(fresh, workspace_id=ws)
    await turn.saved
    whole = backend.registry.reconstruct(await here.read_stream(ws))
    assert whole.credits_balance == 100 + CACHE_FROM_VERSION + 1000 - 10 - 5


async def test_a_turn_saves_its_own_stream_and_reads_the_committed_one_on_demand(backend: Backend):
    """``turn.save`` must save the turn's aggregate; ``fetch_for_writing(committed=True)`` reads
    what any process appended, past the kept state."""
    here, elsewhere = backend.store(), backend.store()
    ws, _ = await handle(here, CreateWorkspace(name="turn", plan="pro", credits=10, rate_limit=600))
    for _ in range(CACHE_FROM_VERSION):
        await handle(here, AddCredits(ws, amount=1))
    async with here.in_turn(ws) as turn:
        await turn.fetch_for_writing()
        job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="test")
        with pytest.raises(ValueError):
            await turn.save(job, workspace_id=ws)
    await handle(elsewhere, AddCredits(ws, amount=50))
    async with here.in_turn(ws) as turn:
        assert (await turn.fetch_for_writing()).credits_total == 10 + CACHE_FROM_VERSION, "the kept state"
        assert (await turn.fetch_for_writing(committed=True)).credits_total == 10 + CACHE_FROM_VERSION + 50


async def test_a_sandbox_claim_counts_the_day_and_refuses_past_each_bound_writing_nothing(backend: Backend):
    store = backend.store()
    ws = uuid.uuid4()
    allowance = SandboxAllowance(day=date(2026, 3, 1), jobs=3, clip_ms=10_000, decoded_ms=20_000, clip_max_ms=5_000)
    await store.save(events=_job_events(store, ws)[1], effects=[SandboxClaim(ws, allowance, MediaWork(clip_ms=6_000))])
    with pytest.raises(SandboxQuotaExceeded) as clips:
        await store.save(events=_job_events(store, ws)[1],
                         effects=[SandboxClaim(ws, allowance, MediaWork(clip_ms=6_000))])
    assert clips.value.details == {"limit": "clip_seconds", "quota": 10}
    with pytest.raises(SandboxQuotaExceeded) as decoded:
        await store.save(events=_job_events(store, ws)[1],
                         effects=[SandboxClaim(ws, allowance, MediaWork(decoded_ms=25_000))])
    assert decoded.value.details == {"limit": "decoded_seconds", "quota": 20}
    assert decoded.value.status == 429 and decoded.value.code == "sandbox_quota_exceeded"
    await store.save(events=_job_events(store, ws)[1], effects=[SandboxClaim(ws, allowance)])
    await store.save(events=_job_events(store, ws)[1], effects=[SandboxClaim(ws, allowance)])
    with pytest.raises(SandboxQuotaExceeded) as jobs:
        await store.save(events=_job_events(store, ws)[1], effects=[SandboxClaim(ws, allowance)])
    assert jobs.value.details == {"limit": "jobs", "quota": 3}
    assert await backend.positions() == [1, 2, 3]  # three jobs of one event each
    other_day = dataclasses.replace(allowance, day=date(2026, 3, 2))
    await store.save(events=_job_events(store, ws)[1], effects=[SandboxClaim(ws, other_day)])
    await store.save(events=_job_events(store, uuid.uuid4())[1], effects=[SandboxClaim(ws, other_day)])


async def test_a_job_is_refunded_once_and_a_key_digest_is_taken_once(backend: Backend):
    store, elsewhere = backend.store(), backend.store()
    ws, job_id = uuid.uuid4(), uuid.uuid4()
    await store.save(events=_job_events(store, ws)[1], effects=[RefundClaim(job_id, ws, 5)])
    with pytest.raises(RefundClaimed):
        await elsewhere.save(events=_job_events(store, ws)[1], effects=[RefundClaim(job_id, ws, 5)])
    await store.save(events=_job_events(store, ws)[1], effects=[KeyDigest("k" * 64, uuid.uuid4(), ws)])
    with pytest.raises(DigestTaken):
        await elsewhere.save(events=_job_events(store, ws)[1], effects=[KeyDigest("k" * 64, uuid.uuid4(), ws)])
    assert await backend.positions() == [1, 2]


async def test_an_idempotency_answer_commits_with_its_append_and_a_lapsed_claim_refuses_it(backend: Backend):
    """An answer is stored by the append it rides in, all or nothing with the events and every
    other effect; an answer for a claim no longer held refuses the append (``ClaimLapsed``)."""
    store = backend.store()
    keys = backend.keys()
    ws = uuid.uuid4()
    claim = await keys._claim((ws, "production", API_KEY, "test.calls", "k" * 16), "hash")
    stolen = await keys._claim((ws, "production", API_KEY, "test.calls", "s" * 16), "hash")
    await keys._release(stolen)  # this claim is no longer held: completing it refuses
    _, events = _job_events(store, ws)
    with pytest.raises(ClaimLapsed):
        await store.save(events=events, effects=[claim.records(Outcome(200, {"data": {"n": 1}})),
                                                 stolen.records(Outcome(200, {"data": {}}))])
    assert await backend.positions() == []
    assert not claim.answer_stored
    await store.save(events=events, effects=[claim.records(Outcome(201, {"data": {"n": 2}}))])
    assert claim.answer_stored, "told once committed"
    replay = await keys._claim((ws, "production", API_KEY, "test.calls", "k" * 16), "hash")
    assert replay == Outcome(201, {"data": {"n": 2}})


async def test_an_api_keys_idempotency_keys_are_dropped_with_its_append_and_only_its_own(backend: Backend):
    """``KeyAnswersDropped`` (a revocation's) deletes every key of one API key, answered or in
    flight, and none of another API key or environment: all or nothing with the append's events."""
    store = backend.store()
    keys = backend.keys()
    ws = uuid.uuid4()
    answered = await keys._claim((ws, "production", API_KEY, "test.calls", "k" * 16), "hash")
    _, events = _job_events(store, ws)
    await store.save(events=events, effects=[answered.records(Outcome(201, {"data": {"n": 1}}))])
    in_flight = await keys._claim((ws, "production", API_KEY, "test.other", "k" * 16), "hash")
    others = [(ws, "production", OTHER_API_KEY, "test.calls", "k" * 16),
              (ws, "sandbox", API_KEY, "test.calls", "k" * 16)]
    for scope in others:
        await keys._claim(scope, "hash")
    stale = await _overtaken_job(store, ws)
    stale.start(1, "late")
    dropped = KeyAnswersDropped(ws, "production", API_KEY)
    with pytest.raises(ConcurrencyError):
        await store.save(stale, workspace_id=ws, effects=[dropped])
    assert await keys._claim((ws, "production", API_KEY, "test.calls", "k" * 16), "hash") == \
        Outcome(201, {"data": {"n": 1}})

    _, events = _job_events(store, ws)
    await store.save(events=events, effects=[dropped])

    again = await keys._claim((ws, "production", API_KEY, "test.calls", "k" * 16), "hash")
    assert isinstance(again, Claim), "the answer is gone: the key is new"
    _, events = _job_events(store, ws)
    with pytest.raises(ClaimLapsed):  # the claim in flight was dropped too
        await store.save(events=events, effects=[in_flight.records(Outcome(200, {"data": {}}))])
    for scope in others:  # another API key's, another environment's: untouched, still in flight
        with pytest.raises(IdempotencyKeyInUse):
            await keys._claim(scope, "hash")


async def test_ids_of_a_sequence_are_unique_and_increase(backend: Backend):
    store = backend.store()
    ids = [await store.next_id("media_id_seq") for _ in range(5)]
    assert ids == sorted(ids) and len(set(ids)) == 5
    assert await backend.store().next_id("media_id_seq") not in ids, "another process's ids are others"


def _article(article_id: int, ws: uuid.UUID) -> Article:
    return Article(article_id=article_id, workspace_id=ws, environment="production", job_id=uuid.uuid4(),
                   video_id=None, media_id=None, title="T", language="en", writing_style="auto", aeo_score=1,
                   geo_score=1, composite_score=1.0, keywords_primary=[], has_transcript=True, content={},
                   markdown="")


async def test_a_stream_is_found_by_the_name_its_first_event_declares(backend: Backend):
    """An article is found by its integer id (``article:<id>``) by any process, with no read model."""
    ws = uuid.uuid4()
    article = _article(4242, ws)
    await backend.store().save(article, workspace_id=ws)
    other = backend.store()
    assert await other.named_stream("article:4242") == article.id
    assert await other.named_stream("article:4243") is None
    article.rename("renamed")  # later events of the stream declare no name of their own
    await other.save(article, workspace_id=ws)
    assert await backend.store().named_stream("article:4242") == article.id
