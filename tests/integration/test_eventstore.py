"""What only the PostgreSQL event store does: group commit, effects and calls in the append's
transaction or statement, NOTIFY, compression. The rules every store keeps are in
``tests/store_contract.py`` (run on PostgreSQL by ``test_store_contract.py``)."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from datetime import UTC, datetime

import asyncpg
import pytest

from domain.jobs import Job
from infra.codec import NewEvent
from infra.effects import ClaimLapsed
from infra.eventstore import ConcurrencyError, EventStore
from infra.eventstore_kept import CACHE_FROM_VERSION
from infra.eventstore_postgres import PostgresEventStore
from infra.eventstore_sql import NOTIFY_CHANNEL, Call
from infra.idempotency_rows import PostgresKeyRows
from services.application.idempotency import IdempotencyKeys, Outcome
from services.application.workspaces import AddCredits, CreateWorkspace
from tests.helpers import handle
from tests.idempotency_support import API_KEY
from tests.store_contract import _job_events, _overtaken_job


async def test_a_conflict_writes_nothing_not_even_the_side_effects(store: EventStore, pool):
    ws = uuid.uuid4()
    stale_b = await _overtaken_job(store, ws)

    async def side(conn):
        await conn.execute("CREATE TABLE IF NOT EXISTS side_marks (id int)")
        await conn.execute("INSERT INTO side_marks VALUES (1)")

    stale_b.start(1, "b")
    with pytest.raises(ConcurrencyError):
        await store.save(events=store.registry.to_new_events(stale_b.collect_events(), workspace_id=ws), effects=[side])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT to_regclass('side_marks')") is None
        assert await conn.fetchval("SELECT count(*) FROM events") == 2


async def test_event_data_comes_back_as_written_and_large_data_is_stored_with_lz4(store: EventStore, pool):
    """jsonb goes in PostgreSQL's binary format (an append's events as one array, each element as
    it is, with no array-literal quoting), and a large event's data is compressed with lz4."""
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    tricky = {"quotes": 'a "b" \\c\\ {d}, e', "braces": "{1,2}", "null_text": "NULL", "blank": " ",
              "unicode": "é 🇫🇷 👩‍👩‍👧 \u202e", "nested": [{"x": None, "y": [1.5, -2, True]}], "empty": ""}
    large = {"drafts": [f"{i} " + "la rénovation énergétique des copropriétés " * 60 for i in range(12)]}
    events[0] = dataclasses.replace(events[0], data={**events[0].data, "extra": tricky},
                                    meta={"note": tricky["quotes"]})
    second = NewEvent(events[0].stream_id, events[0].stream_type, 2, ws, "JobProgressed", 1,
                      {"progress": 1, "stage": "x", **large})
    await store.save(events=[events[0], second])
    stored = await store.read_stream(job.id)
    assert stored[0].data["extra"] == tricky and stored[0].meta == {"note": tricky["quotes"]}
    assert stored[1].data["drafts"] == large["drafts"]
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT data #>> '{extra,quotes}' FROM events WHERE stream_id = $1 AND version = 1",
                                   job.id) == tricky["quotes"]  # stored as JSON, not as an escaped literal
        method = await conn.fetchval("SELECT pg_column_compression(data) FROM events WHERE stream_id = $1 "
                                     "AND version = 2", job.id)
    assert method == "lz4"


async def test_group_commit_refuses_only_the_conflicting_append_of_a_group(pool, registry):
    grouped = PostgresEventStore(pool, registry, group_commit=True)
    ws = uuid.uuid4()
    job, events = _job_events(grouped, ws)
    await grouped.save(events=events)
    loaded = [await grouped.fetch_for_writing(job.id) for _ in range(20)]
    fresh_jobs = [_job_events(grouped, ws) for _ in range(20)]

    async def start(i, agg):
        agg.start(1, f"w{i}")
        try:
            return await grouped.save(events=grouped.registry.to_new_events(agg.collect_events(), workspace_id=ws))
        except ConcurrencyError:
            return None

    async def failing_side_effect(conn):
        await conn.execute("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ('d', $1, $2)",
                           uuid.uuid4(), ws)

    results = await asyncio.gather(
        *(start(i, a) for i, a in enumerate(loaded)),
        *(grouped.save(events=evs) for _, evs in fresh_jobs),
        grouped.save(events=_job_events(grouped, ws)[1], effects=[failing_side_effect]),
        grouped.save(events=_job_events(grouped, ws)[1], effects=[failing_side_effect]),  # same digest: refused
        return_exceptions=True)
    starts, creations, sides = results[:20], results[20:40], results[40:]
    assert sum(r is not None for r in starts) == 1
    assert all(isinstance(p, int) for p in creations)
    assert sum(isinstance(r, int) for r in sides) == 1
    assert sum(isinstance(r, Exception) and not isinstance(r, ConcurrencyError) for r in sides) == 1
    async with pool.acquire() as conn:
        positions = [r["position"] for r in await conn.fetch("SELECT position FROM events ORDER BY position")]
        digests = await conn.fetchval("SELECT count(*) FROM api_key_digests")
    assert positions == list(range(1, 1 + 1 + 1 + 20 + 1))  # created, started once, 20 jobs, one side job
    assert digests == 1


async def test_group_commit_returns_each_appends_own_last_position(pool, registry):
    grouped = PostgresEventStore(pool, registry, group_commit=True)
    ws = uuid.uuid4()
    batches = []
    for i in range(30):
        jobs = [Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="t") for _ in range(1 + i % 3)]
        batches.append(registry.to_new_events([e for j in jobs for e in j.collect_events()], workspace_id=ws))
    returned = await asyncio.gather(*(grouped.save(events=b) for b in batches))
    async with pool.acquire() as conn:
        where = {r["stream_id"]: r["position"] for r in await conn.fetch("SELECT stream_id, position FROM events")}
    for events, last in zip(batches, returned, strict=True):
        assert max(where[e.stream_id] for e in events) == last
    assert sorted(where.values()) == list(range(1, sum(len(b) for b in batches) + 1))


async def test_group_commit_of_one_append_answers_its_own_conflict_and_refused_side_effect(pool, registry):
    """A group of one goes as a single statement (no savepoint): its failures still reach its caller."""
    grouped = PostgresEventStore(pool, registry, group_commit=True)
    ws = uuid.uuid4()
    stale = await _overtaken_job(grouped, ws)
    stale.start(1, "w2")
    with pytest.raises(ConcurrencyError):
        await grouped.save(events=grouped.registry.to_new_events(stale.collect_events(), workspace_id=ws))

    async def claim(conn):
        await conn.execute("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ('one', $1, $2)",
                           uuid.uuid4(), ws)

    first = await grouped.save(events=_job_events(grouped, ws)[1], effects=[claim])
    with pytest.raises(asyncpg.UniqueViolationError):
        await grouped.save(events=_job_events(grouped, ws)[1], effects=[claim])  # the side effect is refused
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT max(position) FROM events") == first  # nothing of the refused one
        assert await conn.fetchval("SELECT count(*) FROM api_key_digests") == 1


@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_an_append_with_calls_rides_them_in_its_statement_all_or_nothing(pool, registry, group_commit):
    """Calls (``Call``) run in the append's own statement: when one refuses, nothing is written and
    nobody hears of a commit; when they all succeed, their effects and the events commit together
    and ``on_commit`` is called after."""
    store = PostgresEventStore(pool, registry, group_commit=group_commit)
    ws = uuid.uuid4()
    keys = IdempotencyKeys(PostgresKeyRows(pool))
    claim = await keys._claim((ws, "production", API_KEY, "test.calls", "k" * 16), "hash")
    stolen = await keys._claim((ws, "production", API_KEY, "test.calls", "s" * 16), "hash")
    await keys._release(stolen)  # this claim is no longer held: completing it refuses
    refusing = stolen.records(Outcome(200, {"data": {}}))
    _, events = _job_events(store, ws)
    with pytest.raises(ClaimLapsed):
        await store.save(events=events, effects=[claim.records(Outcome(200, {"data": {"n": 1}})), refusing])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM events WHERE workspace_id = $1", ws) == 0
        assert await conn.fetchval("SELECT state FROM idempotency_keys WHERE key = $1", "k" * 16) == "in_flight"
    assert not claim.answer_stored

    await store.save(events=events, effects=[claim.records(Outcome(201, {"data": {"n": 2}}))])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM events WHERE workspace_id = $1", ws) == len(events)
        row = await conn.fetchrow("SELECT state, status, body FROM idempotency_keys WHERE key = $1", "k" * 16)
    assert (row["state"], row["status"], row["body"]) == ("done", 201, {"data": {"n": 2}})
    assert claim.answer_stored, "on_commit was called"


@pytest.mark.parametrize("stream", ["short", "long"])
@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_charges_decided_in_turn_commit_together_and_a_refused_one_refuses_those_decided_on_it(
        pool, registry, group_commit, stream):
    """``in_turn``: in the workspace's turn a charge is decided and its append queued; the
    next charge is decided on that state before the first has committed, however short the
    workspace's stream (a new workspace's too). Both land, in order. When an append is refused
    (here its side effect), the charge decided on it is refused as a conflict, the kept state is
    dropped, and the next decision reads the stored balance."""
    store = PostgresEventStore(pool, registry, group_commit=group_commit)
    ws, _ = await handle(store, CreateWorkspace(name="turns", plan="pro", credits=100, rate_limit=600))
    added = CACHE_FROM_VERSION if stream == "long" else 0
    for _ in range(added):
        await handle(store, AddCredits(ws, amount=1))

    async def charge(amount: int, before=()) -> asyncio.Future:
        async with store.in_turn(ws) as turn:
            workspace = await turn.fetch_for_writing()
            workspace.charge(amount, f"charge of {amount}")
            await turn.save(workspace, workspace_id=ws, effects=before)
        return turn.saved

    first, second = await charge(10), await charge(20)
    assert await first < await second
    assert registry.reconstruct(await store.read_stream(ws)).credits_balance == 100 + added - 30
    if group_commit:  # the locked stream's state is kept, to decide the next charge on
        assert store._aggregates[ws].credits_balance == 100 + added - 30

    async def refused(conn):
        raise asyncpg.RaiseError("refused side effect")

    if not group_commit:  # appended at once: the refusal reaches the caller under the lock
        with pytest.raises(asyncpg.RaiseError):
            await charge(1, before=[refused])
        assert ws not in store._aggregates or store._aggregates[ws].credits_used == 30, "kept: the last saved"
    else:
        doomed = await charge(1, before=[refused])
        decided_on_it = await charge(2)
        with pytest.raises(asyncpg.RaiseError):
            await doomed
        with pytest.raises(ConcurrencyError):
            await decided_on_it
        assert ws not in store._aggregates, "a refused append drops the kept state decided on it"
    again = await charge(5)
    await again
    whole = registry.reconstruct(await store.read_stream(ws))
    assert whole.credits_balance == 100 + added - 30 - 5


async def test_an_unhurried_append_says_so_in_its_notification_unless_a_hurried_one_shares_its_group(pool, registry):
    """The relay's wake-up: "~N" when only unhurried appends (conversation turns) committed, "N"
    when any append of the group is hurried; alone or grouped."""
    heard: asyncio.Queue = asyncio.Queue()

    def hear(_conn, _pid, _channel, payload: str) -> None:
        heard.put_nowait(payload)

    async with pool.acquire() as listener:
        await listener.add_listener(NOTIFY_CHANNEL, hear)
        try:
            for store in (PostgresEventStore(pool, registry), PostgresEventStore(pool, registry, group_commit=True)):
                ws = uuid.uuid4()
                last = await store.save(events=_job_events(store, ws)[1], unhurried=True)
                assert await asyncio.wait_for(heard.get(), 10) == f"~{last}"
                last = await store.save(events=_job_events(store, ws)[1])
                assert await asyncio.wait_for(heard.get(), 10) == str(last)
            grouped = PostgresEventStore(pool, registry, group_commit=True)
            together = await asyncio.gather(grouped.save(events=_job_events(grouped, ws)[1], unhurried=True),
                                            grouped.save(events=_job_events(grouped, ws)[1]))
            assert await asyncio.wait_for(heard.get(), 10) == str(max(together))  # one group: hurried
            together = await asyncio.gather(*(grouped.save(events=_job_events(grouped, ws)[1], unhurried=True)
                                              for _ in range(3)))
            assert await asyncio.wait_for(heard.get(), 10) == f"~{max(together)}"
            assert not grouped._unhurried  # nothing kept of the groups once committed
            await asyncio.sleep(0.2)
            assert heard.empty()  # one notification per commit, never two

            # An unhurried append announces itself in its own statement, so it is heard only when it
            # commits: with a side effect run before it, and not at all when it is refused.
            async def side(conn):
                await conn.execute("SELECT 1")

            for store in (PostgresEventStore(pool, registry), PostgresEventStore(pool, registry, group_commit=True)):
                for before in ([side], [Call("pg_sleep", ("float8",), (0.0,))]):  # a transaction, one statement
                    last = await store.save(events=_job_events(store, ws)[1], effects=before, unhurried=True)
                    assert await asyncio.wait_for(heard.get(), 10) == f"~{last}"
                stale = await _overtaken_job(store, uuid.uuid4())
                stale.start(1, "b")
                with pytest.raises(ConcurrencyError):
                    await store.save(events=store.registry.to_new_events(stale.collect_events(), workspace_id=ws),
                                       unhurried=True)
                await asyncio.sleep(0.2)
                assert heard.qsize() == 2  # the overtaken job's two hurried appends; the refused one is silent
                heard.get_nowait(), heard.get_nowait()
        finally:
            await listener.remove_listener(NOTIFY_CHANNEL, hear)


async def test_the_committed_state_waits_for_the_streams_queued_appends_then_reads_what_any_process_appended(
        pool, registry):
    """A charge queued in turn is ahead of the store; another process appends a top-up first, so the
    queued charge will be refused. ``fetch_for_writing(committed=True)`` waits for it to settle and
    gives the stored stream (the top-up, not the refused charge), not the kept state decided on what
    was not written."""
    here, elsewhere = PostgresEventStore(pool, registry, group_commit=True), PostgresEventStore(pool, registry)
    ws, _ = await handle(here, CreateWorkspace(name="committed", plan="pro", credits=100, rate_limit=600))
    for _ in range(CACHE_FROM_VERSION):
        await handle(here, AddCredits(ws, amount=1))
    entered, gate = asyncio.Event(), asyncio.Event()

    async def held(conn):  # keeps the queued append's transaction open, ahead of its version check
        entered.set()
        await gate.wait()

    async with here.in_turn(ws) as turn:
        workspace = await turn.fetch_for_writing()
        workspace.charge(workspace.credits_balance, "everything")
        await turn.save(workspace, workspace_id=ws, effects=[held])
        doomed = turn.saved
        try:
            await entered.wait()
            await handle(elsewhere, AddCredits(ws, amount=50))
            reading = asyncio.create_task(turn.fetch_for_writing(committed=True))
            await asyncio.sleep(0.05)
            waited = not reading.done()
        finally:
            gate.set()
        fresh = await reading
    with pytest.raises(ConcurrencyError):
        await doomed
    assert fresh.credits_balance == 100 + CACHE_FROM_VERSION + 50
    assert waited, "waits for the queued append"
    assert fresh.version == registry.reconstruct(await here.read_stream(ws)).version


@pytest.mark.parametrize("group_commit", [False, True])
async def test_an_event_is_recorded_at_the_service_clock_not_the_databases(pool, registry, group_commit):
    """A job's due time is its JobQueued's recorded_at and a worker claims on the service's clock:
    the two must be one clock, here a fixed instant a day off the database's."""
    fixed = datetime(2031, 5, 4, 3, 2, 1, tzinfo=UTC)
    store = PostgresEventStore(pool, registry, group_commit=group_commit, clock=lambda: fixed)
    ws = uuid.uuid4()
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="t", params={}, environment="production",
                    max_attempts=1, webhook_url=None)
    await store.save(job, workspace_id=ws)
    batch = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="t", params={}, environment="production",
                      max_attempts=1, webhook_url=None)
    await store.save_batch(registry.to_new_events(batch.collect_events(), workspace_id=ws))
    async with pool.acquire() as conn:
        stamps = await conn.fetch("SELECT recorded_at FROM events ORDER BY position")
        with pytest.raises(asyncpg.NotNullViolationError):  # nothing stamps an event from the database's clock
            await conn.execute("INSERT INTO events (position, stream_id, stream_type, version, type, schema, data, "
                               "meta) VALUES (99, $1, 'Job', 1, 'JobQueued', 1, '{}', '{}')", uuid.uuid4())
    assert [r["recorded_at"] for r in stamps] == [fixed, fixed]
    assert [e.recorded_at for e in await store.read_stream(job.id)] == [fixed]
