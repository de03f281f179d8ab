"""Events table -> relay -> Kafka -> projections, on the real servers."""

from __future__ import annotations

import uuid

import orjson

from infra.consume import ensure_state_rows
from projections import ALL
from projections.base import Projection
from services.application.conversations import TurnRecorder
from services.application.jobs import CancelJob, QueueJob
from services.application.media import CreateMedia
from services.processes.projector.listing import list_projections
from services.processes.projector.rebuild import rebuild
from services.processes.projector.runner import ProjectionRunner, run_projector
from services.processes.relay import Relay
from tests.helpers import context, handle, kafka_messages, snapshot, wait_projected, wait_relayed


async def _drive_jobs(store, workspaces: int = 3, per_workspace: int = 10) -> list[uuid.UUID]:
    ids = []
    for w in range(workspaces):
        ws = uuid.uuid4()
        await handle(store, CreateMedia(ws, environment="production", name=f"media {w}"))
        for i in range(per_workspace):
            job, _ = await handle(store, QueueJob(ws, job_type="test", params={"i": i}))
            if i % 3 == 0:
                await handle(store, CancelJob(ws, job_id=job.id))
            ids.append(job.id)
    return ids


async def _kafka_messages(settings) -> list:
    return [m for msgs in (await kafka_messages(settings)).values() for m in msgs]


async def test_relay_publishes_every_event_keyed_by_workspace_with_type_and_position_headers(
        settings, store, pool, background):
    await _drive_jobs(store)
    background.start(Relay(settings).run)
    head = await wait_relayed(pool)
    msgs = await _kafka_messages(settings)
    positions = sorted(int(dict(m.headers)["position"]) for m in msgs)
    assert positions == list(range(1, head + 1))
    for m in msgs:
        body = orjson.loads(m.value)
        assert m.key.decode() == body["workspace_id"]
        assert dict(m.headers)["type"].decode() == body["type"]
        assert set(body) == {"position", "stream_id", "stream_type", "version", "workspace_id", "type", "schema",
                             "data", "meta", "recorded_at"}


async def test_projections_build_read_models_and_a_rebuild_equals_the_live_model(settings, store, pool, background):
    ids = await _drive_jobs(store)
    background.start(Relay(settings).run)
    background.start(lambda stop: run_projector(settings, stop))
    await wait_projected(settings, pool, list(ALL))
    jobs = await snapshot(pool, "jobs", "id")
    assert {j["id"] for j in jobs} == set(ids)
    assert sum(j["status"] == "cancelled" for j in jobs) == 12
    assert len(await snapshot(pool, "medias", "id")) == 3
    before = {name: await snapshot(pool, t, "1") for name, t in (("jobs", "jobs"), ("medias", "medias"))}
    for name in ("jobs", "medias"):
        result = await rebuild(settings, name)
        assert result["messages"] >= len(ids)
    after = {name: await snapshot(pool, t, "1") for name, t in (("jobs", "jobs"), ("medias", "medias"))}
    assert sorted(map(repr, after["jobs"])) == sorted(map(repr, before["jobs"]))
    assert sorted(map(repr, after["medias"])) == sorted(map(repr, before["medias"]))
    # The live runner resumes after the rebuild and applies what comes next.
    ws = uuid.uuid4()
    job, _ = await handle(store, QueueJob(ws, job_type="test"))
    await wait_projected(settings, pool, ["jobs"])
    async with pool.acquire() as conn:
        assert await conn.fetchval("SELECT status FROM jobs WHERE id = $1", job.id) == "pending"
    listed = {p["name"]: p for p in await list_projections(settings)}
    assert listed["jobs"]["lag"] == 0 and listed["jobs"]["status"] == "live"


async def test_a_poison_event_stops_the_projection_at_that_event_and_is_never_skipped(
        settings, store, pool, registry, background):
    settings = settings.model_copy(update={"projector_max_attempts": 2, "projector_retry_backoff_s": 0.01})
    poison = Projection(name="poison_test", ddl=["CREATE TABLE poison_seen (id uuid PRIMARY KEY)"],
                        tables=["poison_seen"])
    bad_job = uuid.uuid4()

    @poison.handles("JobQueued")
    def _queued(ev):
        if ev.stream_id == bad_job:
            return [("INSERT INTO missing_table VALUES ($1)", (ev.stream_id,))]
        return [("INSERT INTO poison_seen VALUES ($1) ON CONFLICT DO NOTHING", (ev.stream_id,))]

    async with pool.acquire() as conn:
        await conn.execute(poison.ddl[0])
        await ensure_state_rows(conn, [poison.name])
    ws = uuid.uuid4()  # one workspace: one partition, a single order
    await handle(store, QueueJob(ws, job_type="test"))
    _, bad_position = await handle(store, QueueJob(ws, job_type="test", job_id=bad_job))
    await handle(store, QueueJob(ws, job_type="test"))
    background.start(Relay(settings).run)
    await wait_relayed(pool)
    runner = ProjectionRunner(settings, [poison], pool, registry)
    await runner.run(background.stop)  # returns once the projection stopped
    async with pool.acquire() as conn:
        state = await conn.fetchrow("SELECT * FROM projection_state WHERE projection = 'poison_test'")
        seen = await conn.fetchval("SELECT count(*) FROM poison_seen")
    assert runner.status == "stopped"
    assert state["status"] == "stopped"
    assert state["error_position"] == bad_position
    assert "missing_table" in state["error"]
    assert seen == 0  # the batch holding the bad event was not half-applied, nor was anything after it


async def test_a_failing_projection_stops_alone_while_the_others_of_its_runner_apply_everything(
        settings, store, pool, registry, background):
    """One consumer and one transaction feed several read models; a poison event in one of them
    must not hold back, nor half-apply, the others."""
    import asyncio

    settings = settings.model_copy(update={"projector_max_attempts": 2, "projector_retry_backoff_s": 0.01})
    poison = Projection(name="poison_shared", ddl=["CREATE TABLE poison_shared_seen (id uuid PRIMARY KEY)"],
                        tables=["poison_shared_seen"])
    healthy = Projection(name="healthy_shared", ddl=["CREATE TABLE healthy_shared_seen (id uuid PRIMARY KEY)"],
                         tables=["healthy_shared_seen"])
    bad_job = uuid.uuid4()

    @poison.handles("JobQueued")
    def _poisoned(ev):
        if ev.stream_id == bad_job:
            return [("INSERT INTO missing_table VALUES ($1)", (ev.stream_id,))]
        return [("INSERT INTO poison_shared_seen VALUES ($1) ON CONFLICT DO NOTHING", (ev.stream_id,))]

    @healthy.handles("JobQueued")
    def _healthy(ev):
        return [("INSERT INTO healthy_shared_seen VALUES ($1) ON CONFLICT DO NOTHING", (ev.stream_id,))]

    async with pool.acquire() as conn:
        for p in (poison, healthy):
            await conn.execute(p.ddl[0])
        await ensure_state_rows(conn, [poison.name, healthy.name])
    ws = uuid.uuid4()
    queued = [(await handle(store, QueueJob(ws, job_type="test")))[0].id]
    _, bad_position = await handle(store, QueueJob(ws, job_type="test", job_id=bad_job))
    queued.append(bad_job)
    background.start(Relay(settings).run)
    runner = ProjectionRunner(settings, [poison, healthy], pool, registry)
    background.start(runner.run)
    for _ in range(3):  # after the poison: the healthy projection goes on alone
        queued.append((await handle(store, QueueJob(ws, job_type="test")))[0].id)
    await wait_projected(settings, pool, [])
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        async with pool.acquire() as conn:
            healthy_seen = {r["id"] for r in await conn.fetch("SELECT id FROM healthy_shared_seen")}
            state = await conn.fetchrow("SELECT * FROM projection_state WHERE projection = 'poison_shared'")
        if healthy_seen == set(queued) and state["status"] == "stopped":
            break
        assert asyncio.get_running_loop().time() < deadline, (healthy_seen, dict(state))
        await asyncio.sleep(0.05)
    async with pool.acquire() as conn:
        poison_seen = {r["id"] for r in await conn.fetch("SELECT id FROM poison_shared_seen")}
        healthy_state = await conn.fetchval("SELECT status FROM projection_state WHERE projection = 'healthy_shared'")
    assert state["error_position"] == bad_position and "missing_table" in state["error"]
    assert bad_job not in poison_seen and not poison_seen & set(queued[2:])  # nothing at or after the poison
    assert healthy_state == "live"
    assert runner.states == {"poison_shared": "stopped", "healthy_shared": "live"}
    assert runner.status == "live"


async def test_a_second_relay_stands_by_and_takes_over_when_the_active_one_dies(settings, store, pool, background):
    import asyncio

    first, second = Relay(settings, name="main"), Relay(settings, name="main")
    first_stop = asyncio.Event()
    first_task = asyncio.create_task(first.run(first_stop))
    await handle(store, QueueJob(uuid.uuid4(), job_type="test"))
    await wait_relayed(pool)
    background.start(second.run)
    await asyncio.sleep(0.5)
    await handle(store, QueueJob(uuid.uuid4(), job_type="test"))
    await wait_relayed(pool)
    assert (first.relayed, second.relayed) == (2, 0)  # one active relay: order is never split
    first_task.cancel()  # the active relay dies; its session lock goes with its connection
    await asyncio.gather(first_task, return_exceptions=True)
    await handle(store, QueueJob(uuid.uuid4(), job_type="test"))
    await wait_relayed(pool, timeout=30)
    assert second.relayed == 1


async def test_relay_checkpoint_rides_on_the_next_fetch_and_is_stored_on_stop(settings, store, pool):
    """The checkpoint of an acknowledged batch is written by the relay's next fetch, which follows
    at once: a relay that has caught up makes two round trips per batch (the rows, then the
    checkpoint with the rows added meanwhile) and no third one while Kafka acknowledges. A relay
    stopped right after a batch stores it on the way out."""
    import asyncio

    relay = Relay(settings.model_copy(update={"relay_poll_interval_s": 60}))  # woken by NOTIFY only
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        await handle(store, QueueJob(uuid.uuid4(), job_type="test"))
        head = await wait_relayed(pool, timeout=30)  # stored without any further event or wake-up
        assert (relay.checkpoint, relay.stored) == (head, head)
        for _ in range(3):
            fetches, batches = relay.fetches, relay.batches
            await handle(store, QueueJob(uuid.uuid4(), job_type="test"))
            head = await wait_relayed(pool, timeout=30)
            assert (relay.batches - batches, relay.fetches - fetches) == (1, 2)
        assert relay.relayed == head
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)

    stopped = Relay(settings)  # a relay whose last batch was acknowledged but not yet stored
    async with pool.acquire() as conn:
        stopped.checkpoint, stopped.stored = head + 5, head
        await stopped._store_checkpoint(conn)
        assert await conn.fetchval("SELECT position FROM relay_checkpoint WHERE name = 'main'") == head + 5
        stopped.checkpoint = head + 3  # already stored further: nothing is written
        stopped.stored = head + 5
        await stopped._store_checkpoint(conn)
        assert await conn.fetchval("SELECT position FROM relay_checkpoint WHERE name = 'main'") == head + 5


async def _turn(store, text: str) -> int:
    """A read-only turn of a new conversation, recorded as the assistant records it (unhurried)."""
    recorder = TurnRecorder(context(store), conversation_id=uuid.uuid4(), workspace_id=uuid.uuid4(),
                            environment="production", key_id=uuid.uuid4(), conversation=None)
    recorder.message(text, planner="offline", request_id=text)
    recorder.reply(f"answered {text}", outcome="completed", not_done=0)
    return await recorder.flush()


async def test_unhurried_appends_wait_for_company_and_a_hurried_one_cuts_the_wait_short(settings, store, pool):
    """An idle relay sends an unhurried append (a conversation turn) at once; the next ones, less
    than ``relay_unhurried_ms`` after its fetch, wait for that time and go together; a hurried
    append (a command whose answer waits for a read model) ends the wait at once, taking the held
    rows with it. Hurried appends alone are never held (the checkpoint test above)."""
    import asyncio
    import time

    hold = 2.0
    relay = Relay(settings.model_copy(update={"relay_poll_interval_s": 60, "relay_unhurried_ms": hold * 1000}))
    acked: list[tuple[int, int, float]] = []
    relay.on_acked = lambda first, last: acked.append((first, last, time.monotonic()))
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    try:
        await wait_relayed(pool, timeout=30)

        async def idle() -> None:
            """The relay has started and its last fetch is long past: waited for, not slept on (on a
            busy machine the relay's start alone can take longer than a fixed sleep)."""
            while not relay.fetches or time.monotonic() - relay._fetched_at < hold + 0.2:
                await asyncio.sleep(0.05)

        await idle()
        first = await _turn(store, "a")
        while not acked or acked[-1][1] < first:
            await asyncio.sleep(0.01)
        assert relay.held == 0  # at once
        acked.clear()
        started = time.monotonic()
        lasts = []
        for text in ("b", "c", "d"):
            lasts.append(await _turn(store, text))
            await asyncio.sleep(0.05)
        while not acked or acked[-1][1] < lasts[-1]:
            await asyncio.sleep(0.01)
        assert [(a, b) for a, b, _ in acked] == [(first + 1, lasts[-1])]  # one batch of the three turns
        assert acked[0][2] - started >= hold - 0.5  # held about ``hold`` after the first turn's fetch
        assert relay.held == 1

        await idle()
        await _turn(store, "e")  # idle again: at once
        head = await store_head(pool)
        while not acked or acked[-1][1] < head:
            await asyncio.sleep(0.01)
        acked.clear()
        held = await _turn(store, "f")  # less than ``hold`` after the fetch of "e": held
        await asyncio.sleep(0.1)
        assert not acked
        started = time.monotonic()
        await handle(store, QueueJob(uuid.uuid4(), job_type="test"))  # hurried
        head = await store_head(pool)
        while not acked or acked[-1][1] < head:
            await asyncio.sleep(0.01)
        assert [(a, b) for a, b, _ in acked] == [(held - 1, head)]  # the held turn went with the hurried append
        assert time.monotonic() - started < hold - 0.5
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def store_head(pool) -> int:
    async with pool.acquire() as conn:
        return await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
