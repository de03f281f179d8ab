"""The event store on a real PostgreSQL: optimistic concurrency, gap-free positions, loading."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid

import asyncpg
import pytest

from domain.jobs import Job
from infra.codec import NewEvent
from infra.eventstore import Call, ConcurrencyError, EventStore


def _job_events(store: EventStore, ws: uuid.UUID) -> tuple[Job, list[NewEvent]]:
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="test")
    return job, store.registry.to_new_events(job.collect_events(), workspace_id=ws)


async def _overtaken_job(store: EventStore, ws: uuid.UUID) -> Job:
    """A queued job loaded twice; the first copy is started and appended: the second, returned, is stale."""
    job, events = _job_events(store, ws)
    await store.append(events)
    current = await store.load_aggregate(job.id)
    stale = await store.load_aggregate(job.id)
    current.start(1, "first")
    await store.append(store.registry.to_new_events(current.collect_events(), workspace_id=ws))
    return stale


async def test_fifty_concurrent_appends_at_one_version_exactly_one_wins(store: EventStore, pool):
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    await store.append(events)
    loaded = [await store.load_aggregate(job.id) for _ in range(50)]  # all at version 1

    async def attempt(i: int, agg: Job) -> bool:
        agg.start(1, f"worker-{i}")
        try:
            await store.append(store.registry.to_new_events(agg.collect_events(), workspace_id=ws))
            return True
        except ConcurrencyError:
            return False

    results = await asyncio.gather(*(attempt(i, a) for i, a in enumerate(loaded)))
    assert results.count(True) == 1
    assert results.count(False) == 49
    async with pool.acquire() as conn:
        positions = [r["position"] for r in await conn.fetch("SELECT position FROM events ORDER BY position")]
        versions = [r["version"] for r in await conn.fetch(
            "SELECT version FROM events WHERE stream_id = $1 ORDER BY version", job.id)]
    assert positions == list(range(1, len(positions) + 1)) == [1, 2]
    assert versions == [1, 2]


async def test_positions_are_gap_free_under_concurrent_appends_to_many_streams(store: EventStore, pool):
    ws = uuid.uuid4()

    async def writer() -> list[int]:
        out = []
        for _ in range(20):
            _, events = _job_events(store, ws)
            out.append(await store.append(events))
        return out

    returned = [p for ps in await asyncio.gather(*(writer() for _ in range(10))) for p in ps]
    async with pool.acquire() as conn:
        positions = [r["position"] for r in await conn.fetch("SELECT position FROM events ORDER BY position")]
    assert positions == list(range(1, 201))
    assert sorted(returned) == positions


async def test_an_append_expecting_a_future_version_is_refused(store: EventStore):
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    await store.append(events)
    job.start(1, "w")
    (started,) = store.registry.to_new_events(job.collect_events(), workspace_id=ws)
    skipped = NewEvent(started.stream_id, started.stream_type, 5, ws, started.type, started.schema, started.data)
    with pytest.raises(ConcurrencyError):
        await store.append([skipped])


async def test_a_conflict_writes_nothing_not_even_the_side_effects(store: EventStore, pool):
    ws = uuid.uuid4()
    stale_b = await _overtaken_job(store, ws)

    async def side(conn):
        await conn.execute("CREATE TABLE IF NOT EXISTS side_marks (id int)")
        await conn.execute("INSERT INTO side_marks VALUES (1)")

    stale_b.start(1, "b")
    with pytest.raises(ConcurrencyError):
        await store.append(store.registry.to_new_events(stale_b.collect_events(), workspace_id=ws), before=[side])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT to_regclass('side_marks')") is None
        assert await conn.fetchval("SELECT count(*) FROM events") == 2


async def test_load_rebuilds_the_aggregate_with_its_state(store: EventStore):
    ws = uuid.uuid4()
    job, events = _job_events(store, ws)
    await store.append(events)
    job.start(1, "w")
    job.report_progress(40, "transcribing")
    job.complete({"words": 12}, article_id=7)
    await store.append(store.registry.to_new_events(job.collect_events(), workspace_id=ws, meta={"request_id": "r1"}))
    loaded = await store.load_aggregate(job.id)
    assert (loaded.status, loaded.progress, loaded.article_id, loaded.version) == ("completed", 100, 7, 4)
    assert loaded.workspace_id == ws
    stored = await store.load(job.id)
    assert [e.type for e in stored] == ["JobQueued", "JobStarted", "JobProgressed", "JobCompleted"]
    assert stored[-1].meta == {"request_id": "r1"}
    assert await store.load_aggregate(uuid.uuid4()) is None


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
    await store.append([events[0], second])
    stored = await store.load(job.id)
    assert stored[0].data["extra"] == tricky and stored[0].meta == {"note": tricky["quotes"]}
    assert stored[1].data["drafts"] == large["drafts"]
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT data #>> '{extra,quotes}' FROM events WHERE stream_id = $1 AND version = 1",
                                   job.id) == tricky["quotes"]  # stored as JSON, not as an escaped literal
        method = await conn.fetchval("SELECT pg_column_compression(data) FROM events WHERE stream_id = $1 "
                                     "AND version = 2", job.id)
    assert method == "lz4"


async def test_group_commit_refuses_only_the_conflicting_append_of_a_group(pool, registry):
    grouped = EventStore(pool, registry, group_commit=True)
    ws = uuid.uuid4()
    job, events = _job_events(grouped, ws)
    await grouped.append(events)
    loaded = [await grouped.load_aggregate(job.id) for _ in range(20)]
    fresh_jobs = [_job_events(grouped, ws) for _ in range(20)]

    async def start(i, agg):
        agg.start(1, f"w{i}")
        try:
            return await grouped.append(grouped.registry.to_new_events(agg.collect_events(), workspace_id=ws))
        except ConcurrencyError:
            return None

    async def failing_side_effect(conn):
        await conn.execute("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ('d', $1, $2)",
                           uuid.uuid4(), ws)

    results = await asyncio.gather(
        *(start(i, a) for i, a in enumerate(loaded)),
        *(grouped.append(evs) for _, evs in fresh_jobs),
        grouped.append(_job_events(grouped, ws)[1], before=[failing_side_effect]),
        grouped.append(_job_events(grouped, ws)[1], before=[failing_side_effect]),  # same digest: refused
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
    grouped = EventStore(pool, registry, group_commit=True)
    ws = uuid.uuid4()
    batches = []
    for i in range(30):
        jobs = [Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="t") for _ in range(1 + i % 3)]
        batches.append(registry.to_new_events([e for j in jobs for e in j.collect_events()], workspace_id=ws))
    returned = await asyncio.gather(*(grouped.append(b) for b in batches))
    async with pool.acquire() as conn:
        where = {r["stream_id"]: r["position"] for r in await conn.fetch("SELECT stream_id, position FROM events")}
    for events, last in zip(batches, returned, strict=True):
        assert max(where[e.stream_id] for e in events) == last
    assert sorted(where.values()) == list(range(1, sum(len(b) for b in batches) + 1))


async def test_group_commit_of_one_append_answers_its_own_conflict_and_refused_side_effect(pool, registry):
    """A group of one goes as a single statement (no savepoint): its failures still reach its caller."""
    grouped = EventStore(pool, registry, group_commit=True)
    ws = uuid.uuid4()
    stale = await _overtaken_job(grouped, ws)
    stale.start(1, "w2")
    with pytest.raises(ConcurrencyError):
        await grouped.append(grouped.registry.to_new_events(stale.collect_events(), workspace_id=ws))

    async def claim(conn):
        await conn.execute("INSERT INTO api_key_digests (digest, key_id, workspace_id) VALUES ('one', $1, $2)",
                           uuid.uuid4(), ws)

    first = await grouped.append(_job_events(grouped, ws)[1], before=[claim])
    with pytest.raises(asyncpg.UniqueViolationError):
        await grouped.append(_job_events(grouped, ws)[1], before=[claim])  # the side effect is refused
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT max(position) FROM events") == first  # nothing of the refused one
        assert await conn.fetchval("SELECT count(*) FROM api_key_digests") == 1


async def test_a_long_stream_loads_from_its_kept_state_plus_what_any_process_appended_since(pool, registry):
    """The in-memory state of a long stream (a busy workspace's) plus the events after it is what the
    whole stream gives, whoever appended them; a caller's copy never changes the kept state."""
    from infra.eventstore import CACHE_FROM_VERSION
    from services.commands import add_credits, create_workspace

    here, elsewhere = EventStore(pool, registry), EventStore(pool, registry)  # two processes' stores
    ws, _ = await create_workspace(here, name="busy", plan="pro", credits=0, rate_limit=600)
    for _ in range(CACHE_FROM_VERSION + 4):
        await add_credits(here, ws, 1)
    first = await here.load_aggregate(ws)
    assert ws in here._aggregates, "a long stream's state is kept"
    loaded_at = first.version
    for _ in range(3):
        await add_credits(elsewhere, ws, 10)  # another process moves the stream
    first.add_credits(1000)  # decided on, never saved: the kept state must not see it
    again = await here.load_aggregate(ws)
    whole = registry.reconstruct(await here.load(ws))
    assert again.version == whole.version == loaded_at + 3
    assert vars(again).keys() == vars(whole).keys()
    assert {k: v for k, v in vars(again).items() if k != "_pending_events"} == \
        {k: v for k, v in vars(whole).items() if k != "_pending_events"}
    assert again.credits_total == whole.credits_total == CACHE_FROM_VERSION + 4 + 30


async def test_a_stream_read_only_is_shared_until_it_moves_and_then_rebuilt_on_a_copy(pool, registry):
    """``read_aggregate`` hands every reader the same kept object while the stream stands still; once
    another process appends, the next read is the whole stream's state on a new object, and the
    object an earlier reader holds has not changed under it."""
    from services.commands import add_credits, create_workspace

    here, elsewhere = EventStore(pool, registry), EventStore(pool, registry)
    ws, _ = await create_workspace(here, name="read", plan="pro", credits=5, rate_limit=600)
    first = await here.read_aggregate(ws)
    assert await here.read_aggregate(ws) is first, "a stream that did not move is not rebuilt"
    held_version, held_total = first.version, first.credits_total
    await add_credits(elsewhere, ws, 7)
    moved = await here.read_aggregate(ws)
    assert moved is not first
    assert (first.version, first.credits_total) == (held_version, held_total), "a held reading never changes"
    whole = registry.reconstruct(await here.load(ws))
    assert (moved.version, moved.credits_total) == (whole.version, whole.credits_total) == (held_version + 1,
                                                                                           held_total + 7)
    assert await here.read_aggregate(uuid.uuid4()) is None

    other, _ = await create_workspace(elsewhere, name="other", plan="pro", credits=9, rate_limit=600)
    both = await here.read_aggregates(other, uuid.uuid4(), ws)  # one never read, one empty, one kept
    assert [getattr(a, "credits_total", None) for a in both] == [9, None, held_total + 7]
    assert both[2] is moved, "the kept one did not move"


@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_an_append_with_calls_rides_them_in_its_statement_all_or_nothing(pool, registry, group_commit):
    """Calls (``Call``) run in the append's own statement: when one refuses, nothing is written and
    nobody hears of a commit; when they all succeed, their effects and the events commit together
    and ``on_commit`` is called after."""
    from services.idempotency import IdempotencyKeys, Outcome

    store = EventStore(pool, registry, group_commit=group_commit)
    ws = uuid.uuid4()
    keys = IdempotencyKeys(pool)
    claim = await keys._claim(ws, "production", "test.calls", "k" * 16, "hash")
    stolen = await keys._claim(ws, "production", "test.calls", "s" * 16, "hash")
    await keys._release(stolen)  # this claim is no longer held: completing it refuses
    refusing = stolen.records(Outcome(200, {"data": {}}))
    _, events = _job_events(store, ws)
    with pytest.raises(asyncpg.PostgresError):
        await store.append(events, before=[claim.records(Outcome(200, {"data": {"n": 1}})), refusing])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM events WHERE workspace_id = $1", ws) == 0
        assert await conn.fetchval("SELECT state FROM idempotency_keys WHERE key = $1", "k" * 16) == "in_flight"
    assert not claim.answer_stored

    await store.append(events, before=[claim.records(Outcome(201, {"data": {"n": 2}}))])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT count(*) FROM events WHERE workspace_id = $1", ws) == len(events)
        row = await conn.fetchrow("SELECT state, status, body FROM idempotency_keys WHERE key = $1", "k" * 16)
    assert (row["state"], row["status"], row["body"]) == ("done", 201, {"data": {"n": 2}})
    assert claim.answer_stored, "on_commit was called"


async def test_a_kept_state_is_decided_on_without_a_query_and_a_stale_one_costs_one_retry(pool, registry):
    """``load_kept`` gives this process's kept state (updated by its own saves); when another process
    moved the stream, the decision's append is refused, the kept state dropped, and the next load
    reads the stream: the charge then lands on the true balance."""
    from infra.eventstore import CACHE_FROM_VERSION, ConcurrencyError
    from services.commands import add_credits, create_workspace

    here, elsewhere = EventStore(pool, registry), EventStore(pool, registry)
    ws, _ = await create_workspace(here, name="kept", plan="pro", credits=100, rate_limit=600)
    for _ in range(CACHE_FROM_VERSION):
        await add_credits(here, ws, 1)
    workspace = await here.load_kept(ws)
    workspace.charge(10, "first")
    await here.save(workspace, workspace_id=ws)
    assert here._aggregates[ws].version == workspace.version, "a save keeps the state it saved"

    await add_credits(elsewhere, ws, 1000)  # another process moves the stream
    stale = await here.load_kept(ws)
    assert stale.version == workspace.version, "no query: the kept state, not the stream"
    stale.charge(5, "decided on a stale state")
    with pytest.raises(ConcurrencyError):
        await here.save(stale, workspace_id=ws)
    assert ws not in here._aggregates
    fresh = await here.load_kept(ws)
    fresh.charge(5, "again")
    await here.save(fresh, workspace_id=ws)
    whole = registry.reconstruct(await here.load(ws))
    assert whole.credits_balance == 100 + CACHE_FROM_VERSION + 1000 - 10 - 5


@pytest.mark.parametrize("stream", ["short", "long"])
@pytest.mark.parametrize("group_commit", [False, True], ids=["one_by_one", "group_commit"])
async def test_charges_decided_in_turn_commit_together_and_a_refused_one_refuses_those_decided_on_it(
        pool, registry, group_commit, stream):
    """``save_in_turn``: under the workspace's lock a charge is decided and its append queued; the
    next charge is decided on that state before the first has committed, however short the
    workspace's stream (a new workspace's too). Both land, in order. When an append is refused
    (here its side effect), the charge decided on it is refused as a conflict, the kept state is
    dropped, and the next decision reads the stored balance."""
    from infra.eventstore import CACHE_FROM_VERSION
    from services.commands import add_credits, create_workspace

    store = EventStore(pool, registry, group_commit=group_commit)
    ws, _ = await create_workspace(store, name="turns", plan="pro", credits=100, rate_limit=600)
    added = CACHE_FROM_VERSION if stream == "long" else 0
    for _ in range(added):
        await add_credits(store, ws, 1)

    async def charge(amount: int, before=()) -> asyncio.Future:
        async with store.stream_lock(ws):
            workspace = await store.load_kept(ws)
            workspace.charge(amount, f"charge of {amount}")
            return await store.save_in_turn(workspace, turn=workspace, workspace_id=ws, before=before)

    first, second = await charge(10), await charge(20)
    assert await first < await second
    assert registry.reconstruct(await store.load(ws)).credits_balance == 100 + added - 30
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
    whole = registry.reconstruct(await store.load(ws))
    assert whole.credits_balance == 100 + added - 30 - 5


async def test_an_unhurried_append_says_so_in_its_notification_unless_a_hurried_one_shares_its_group(pool, registry):
    """The relay's wake-up: "~N" when only unhurried appends (conversation turns) committed, "N"
    when any append of the group is hurried; alone or grouped."""
    from infra.eventstore import NOTIFY_CHANNEL

    heard: asyncio.Queue = asyncio.Queue()

    def hear(_conn, _pid, _channel, payload: str) -> None:
        heard.put_nowait(payload)

    async with pool.acquire() as listener:
        await listener.add_listener(NOTIFY_CHANNEL, hear)
        try:
            for store in (EventStore(pool, registry), EventStore(pool, registry, group_commit=True)):
                ws = uuid.uuid4()
                last = await store.append(_job_events(store, ws)[1], unhurried=True)
                assert await asyncio.wait_for(heard.get(), 10) == f"~{last}"
                last = await store.append(_job_events(store, ws)[1])
                assert await asyncio.wait_for(heard.get(), 10) == str(last)
            grouped = EventStore(pool, registry, group_commit=True)
            together = await asyncio.gather(grouped.append(_job_events(grouped, ws)[1], unhurried=True),
                                            grouped.append(_job_events(grouped, ws)[1]))
            assert await asyncio.wait_for(heard.get(), 10) == str(max(together))  # one group: hurried
            together = await asyncio.gather(*(grouped.append(_job_events(grouped, ws)[1], unhurried=True)
                                              for _ in range(3)))
            assert await asyncio.wait_for(heard.get(), 10) == f"~{max(together)}"
            assert not grouped._unhurried  # nothing kept of the groups once committed
            await asyncio.sleep(0.2)
            assert heard.empty()  # one notification per commit, never two

            # An unhurried append announces itself in its own statement, so it is heard only when it
            # commits: with a side effect run before it, and not at all when it is refused.
            async def side(conn):
                await conn.execute("SELECT 1")

            for store in (EventStore(pool, registry), EventStore(pool, registry, group_commit=True)):
                for before in ([side], [Call("pg_sleep", ("float8",), (0.0,))]):  # a transaction, one statement
                    last = await store.append(_job_events(store, ws)[1], before=before, unhurried=True)
                    assert await asyncio.wait_for(heard.get(), 10) == f"~{last}"
                stale = await _overtaken_job(store, uuid.uuid4())
                stale.start(1, "b")
                with pytest.raises(ConcurrencyError):
                    await store.append(store.registry.to_new_events(stale.collect_events(), workspace_id=ws),
                                       unhurried=True)
                await asyncio.sleep(0.2)
                assert heard.qsize() == 2  # the overtaken job's two hurried appends; the refused one is silent
                heard.get_nowait(), heard.get_nowait()
        finally:
            await listener.remove_listener(NOTIFY_CHANNEL, hear)


async def test_load_committed_waits_for_the_streams_queued_appends_then_reads_what_any_process_appended(
        pool, registry):
    """A charge queued in turn is ahead of the store; another process appends a top-up first, so the
    queued charge will be refused. ``load_committed`` waits for it to settle and gives the stored
    stream (the top-up, not the refused charge), not the kept state decided on what was not written."""
    from infra.eventstore import CACHE_FROM_VERSION
    from services.commands import add_credits, create_workspace

    here, elsewhere = EventStore(pool, registry, group_commit=True), EventStore(pool, registry)
    ws, _ = await create_workspace(here, name="committed", plan="pro", credits=100, rate_limit=600)
    for _ in range(CACHE_FROM_VERSION):
        await add_credits(here, ws, 1)
    entered, gate = asyncio.Event(), asyncio.Event()

    async def held(conn):  # keeps the queued append's transaction open, ahead of its version check
        entered.set()
        await gate.wait()

    async with here.stream_lock(ws):
        workspace = await here.load_kept(ws)
        workspace.charge(workspace.credits_balance, "everything")
        doomed = await here.save_in_turn(workspace, turn=workspace, workspace_id=ws, before=[held])
        try:
            await entered.wait()
            await add_credits(elsewhere, ws, 50)
            reading = asyncio.create_task(here.load_committed(ws))
            await asyncio.sleep(0.05)
            waited = not reading.done()
        finally:
            gate.set()
        fresh = await reading
    with pytest.raises(ConcurrencyError):
        await doomed
    assert fresh.credits_balance == 100 + CACHE_FROM_VERSION + 50
    assert waited, "waits for the queued append"
    assert fresh.version == registry.reconstruct(await here.load(ws)).version
