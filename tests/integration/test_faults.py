"""Fault injection on real processes and real servers: kill -9, broker restart, database restart.

These tests own a stack instance of their own (``fault``: PostgreSQL on 25434, Kafka on 29094),
because they stop and restart the servers. Every loop is bounded in count and time.
"""

from __future__ import annotations

import asyncio
import fcntl
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from domain.jobs import Job
from infra import stack
from infra.codec import EventRegistry
from infra.consume import position_of
from infra.db import create_pool, migrate
from infra.eventstore import ConcurrencyError, EventStore
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from projections import ALL, all_ddl
from services.lib.common import is_transient
from services.processes.projector.rebuild import rebuild
from tests.helpers import kafka_messages, snapshot, until, wait_projected, wait_relayed
from tests.support.stack import ROOT, drop_isolated, env_for, make_isolated_settings, stack_up

pytestmark = pytest.mark.slow

FAULT_TEMPLATE = "vaeo_fault_template"


@pytest.fixture(scope="module")
def fault_stack() -> Iterator[Settings]:
    """A PostgreSQL and a Kafka of their own (these tests stop and kill them), stopped at the end of
    the module: left running, they took CPU from every test after them.

    One worker at a time holds them: when parallel workers share this module's tests, one's
    broker restart or final stop would land in the middle of another's test."""
    settings = Settings(stack_instance="fault", stack_pg_port=25434, stack_kafka_port=29094, secret_key="00" * 32,
                        relay_poll_interval_s=0.2)
    with (Path(tempfile.gettempdir()) / "vaeo-fault-stack.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        stack_up(settings)
        try:
            yield settings
        finally:
            stack.down(settings)


@pytest.fixture(scope="module")
async def fault_template(fault_stack: Settings) -> str:
    admin = await asyncpg.connect(fault_stack.resolved_database_url().rsplit("/", 1)[0] + "/postgres")
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {FAULT_TEMPLATE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {FAULT_TEMPLATE}")
    finally:
        await admin.close()
    await migrate(fault_stack.resolved_database_url().rsplit("/", 1)[0] + f"/{FAULT_TEMPLATE}", all_ddl())
    return FAULT_TEMPLATE


@pytest.fixture
async def fsettings(fault_stack, fault_template):
    isolated = await make_isolated_settings(fault_stack, fault_template)
    yield isolated
    try:
        await drop_isolated(fault_stack, isolated)
    except Exception:
        pass


async def projected(settings: Settings, pool: asyncpg.Pool, logdir: Path, timeout: float) -> None:
    """``wait_projected`` for every read model; if they stay behind, the processes' warnings and
    errors are printed with the failure (a run on another machine leaves nothing else to read)."""
    try:
        await wait_projected(settings, pool, list(ALL), timeout=timeout)
    except TimeoutError:
        for log in sorted(logdir.glob("*.log")):
            lines = [line for line in log.read_text(errors="replace").splitlines() if '"level":"debug"' not in line]
            print(f"--- {log.name}: the last of {len(lines)} lines above debug", *lines[-40:], sep="\n")
        raise


class Proc:
    """One of our processes, started as `vaeo up` starts it: `python -m services.cli NAME`."""

    def __init__(self, name: str, settings: Settings, logdir: Path) -> None:
        self.name = name
        self.env = env_for(settings)
        self.log = logdir / f"{name}.log"
        self.proc: subprocess.Popen | None = None
        self.kills = 0

    def start(self) -> None:
        out = self.log.open("ab")
        self.proc = subprocess.Popen([sys.executable, "-m", "services.cli", self.name], env=self.env, cwd=ROOT,
                                     stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    def kill9(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()
        self.kills += 1

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


class Load:
    """Job lifecycles across several workspaces; records every append that was acknowledged."""

    def __init__(self, store: EventStore, workspaces: int) -> None:
        self.store = store
        self.workspaces = [uuid.uuid4() for _ in range(workspaces)]
        self.acknowledged_jobs: list[uuid.UUID] = []
        self.events = 0
        self.failures = 0

    async def _append(self, agg: Job) -> None:
        pending = agg.collect_events()
        interrupted = False
        while True:
            try:
                await self.store.save(events=self.store.registry.to_new_events(pending, workspace_id=agg.workspace_id))
                self.events += len(pending)
                return
            except ConcurrencyError:
                # Only legitimate after an interrupted try whose commit went through before the
                # connection dropped: then the stream holds exactly our events.
                stored = await self.store.read_stream(agg.id)
                assert interrupted and stored[-1].version == pending[-1].originator_version
                self.events += len(pending)
                return
            except Exception as exc:
                if not is_transient(exc):
                    raise
                # The database is restarting: retry the same events.
                interrupted = True
                self.failures += 1
                await asyncio.sleep(0.2)

    async def one_job(self, ws: uuid.UUID) -> None:
        job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="load")
        await self._append(job)
        job.start(1, "load")
        job.report_progress(30, "step one")
        job.report_progress(60, "step two")
        job.complete({"ok": True})
        await self._append(job)
        self.acknowledged_jobs.append(job.id)

    async def run(self, jobs: int, writers: int = 8, deadline_s: float = 120,
                  until: asyncio.Event | None = None) -> None:
        """``jobs`` job lifecycles; with ``until``, as many as it takes for ``until`` to be set (at
        most ``jobs``): a fault injected meanwhile then always meets appends in flight, however
        fast the machine is."""
        deadline = time.monotonic() + deadline_s
        queue = list(range(jobs))

        async def writer(i: int) -> None:
            while queue and time.monotonic() < deadline and not (until is not None and until.is_set()):
                queue.pop()
                await self.one_job(self.workspaces[random.randrange(len(self.workspaces))])

        await asyncio.gather(*(writer(i) for i in range(writers)))


async def _kafka_positions(settings: Settings) -> tuple[list[int], int]:
    positions = [position_of(m) for msgs in (await kafka_messages(settings)).values() for m in msgs]
    return positions, len(positions)


async def _assert_read_models_exact(settings: Settings, pool: asyncpg.Pool, load: Load) -> None:
    """0 lost, 0 applied twice, and every read model equal to a from-scratch rebuild."""
    async with pool.acquire() as conn:
        stored_counts = {(r["workspace_id"], r["type"]): r["n"] for r in await conn.fetch(
            "SELECT workspace_id, type, count(*) AS n FROM events GROUP BY 1, 2")}
        projected_counts = {(r["workspace_id"], r["type"]): r["count"] for r in await conn.fetch(
            "SELECT workspace_id, type, count FROM event_counts")}
        jobs = await conn.fetch("SELECT id, status, progress, version FROM jobs")
    assert projected_counts == stored_counts, "an event was lost or applied twice"
    by_id = {r["id"]: r for r in jobs}
    missing = [j for j in load.acknowledged_jobs if j not in by_id]
    assert missing == []
    assert all((by_id[j]["status"], by_id[j]["progress"], by_id[j]["version"]) == ("completed", 100, 5)
               for j in load.acknowledged_jobs)
    tables = {"jobs": ("jobs", "id"), "medias": ("medias", "id"), "event_counts": ("event_counts", "1, 2"),
              "scheduler": ("job_queue", "job_id")}
    live = {name: await snapshot(pool, t, order) for name, (t, order) in tables.items()}
    for name in tables:
        await rebuild(settings, name)
    rebuilt = {name: await snapshot(pool, t, order) for name, (t, order) in tables.items()}
    for name in tables:
        assert rebuilt[name] == live[name], f"{name} differs from its rebuild"


async def test_kill_minus_nine_of_relay_and_projector_loses_nothing_and_duplicates_nothing(fsettings, tmp_path):
    pool = await create_pool(fsettings.resolved_database_url(), max_size=20)
    relay, projector = Proc("relay", fsettings, tmp_path), Proc("projector", fsettings, tmp_path)
    try:
        relay.start()
        projector.start()
        load = Load(PostgresEventStore(pool, EventRegistry()), workspaces=7)
        load_task = asyncio.create_task(load.run(jobs=4000))  # 5 events a job: 20,000 events
        rng = random.Random(20261122)
        deadline = time.monotonic() + 150
        while (relay.kills < 10 or projector.kills < 10) and time.monotonic() < deadline:
            await asyncio.sleep(rng.uniform(0.4, 1.6))
            victim = relay if relay.kills <= projector.kills else projector
            if victim.kills < 10:
                victim.kill9()
                victim.start()
        await load_task
        assert (relay.kills, projector.kills) == (10, 10)
        assert load.events >= 20000
        head = await wait_relayed(pool, timeout=120)
        positions, sent = await _kafka_positions(fsettings)
        assert set(positions) == set(range(1, head + 1)), "an event never reached Kafka"
        print(f"\nkill -9 x20: {head} events, {sent - head} duplicate sends on Kafka (deduplicated by readers)")
        await projected(fsettings, pool, tmp_path, timeout=120)
        relay.stop()
        projector.stop()
        await _assert_read_models_exact(fsettings, pool, load)
    finally:
        relay.stop()
        projector.stop()
        await pool.close()


async def test_kafka_stopped_and_restarted_during_load_loses_nothing(fault_stack, fsettings, tmp_path):
    pool = await create_pool(fsettings.resolved_database_url(), max_size=20)
    relay, projector = Proc("relay", fsettings, tmp_path), Proc("projector", fsettings, tmp_path)
    try:
        relay.start()
        projector.start()
        load = Load(PostgresEventStore(pool, EventRegistry()), workspaces=5)
        restarted = asyncio.Event()
        load_task = asyncio.create_task(load.run(jobs=20_000, until=restarted))
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.kafka_down, fault_stack)
        await asyncio.sleep(4)  # appends go on while the broker is away
        await asyncio.to_thread(stack.kafka_up, fault_stack)
        await asyncio.sleep(1)  # and after it is back
        restarted.set()
        await load_task
        head = await wait_relayed(pool, timeout=180)
        positions, _ = await _kafka_positions(fsettings)
        assert set(positions) == set(range(1, head + 1))
        # The projector's consumer groups join again once the broker is back; on a machine whose
        # cores the whole suite keeps busy, that has once taken two minutes (the broker's member
        # ids lapse, the heartbeat is refused, the group rejoins) before the catch-up began.
        await projected(fsettings, pool, tmp_path, timeout=300)
        assert relay.alive() and projector.alive(), "the processes should have resumed, not died"
        relay.stop()
        projector.stop()
        await _assert_read_models_exact(fsettings, pool, load)
    finally:
        relay.stop()
        projector.stop()
        await pool.close()


async def test_postgres_restarted_during_load_processes_reconnect_and_nothing_is_lost(fault_stack, fsettings,
                                                                                      tmp_path):
    pool = await create_pool(fsettings.resolved_database_url(), max_size=20)
    relay, projector = Proc("relay", fsettings, tmp_path), Proc("projector", fsettings, tmp_path)
    try:
        relay.start()
        projector.start()
        load = Load(PostgresEventStore(pool, EventRegistry()), workspaces=5)
        restarted = asyncio.Event()
        load_task = asyncio.create_task(load.run(jobs=20_000, until=restarted))
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.pg_down, fault_stack, "fast")
        await asyncio.sleep(2)
        await asyncio.to_thread(stack.pg_up, fault_stack)
        await asyncio.sleep(1)  # appends resume on the restarted server
        restarted.set()
        await load_task
        assert load.failures > 0, "the restart should have interrupted some appends"
        head = await wait_relayed(pool, timeout=120)
        positions, _ = await _kafka_positions(fsettings)
        assert set(positions) == set(range(1, head + 1))
        await projected(fsettings, pool, tmp_path, timeout=120)
        assert relay.alive() and projector.alive()
        relay.stop()
        projector.stop()
        await _assert_read_models_exact(fsettings, pool, load)
    finally:
        relay.stop()
        projector.stop()
        await pool.close()



async def test_processes_started_while_postgres_is_down_wait_for_it(fault_stack, fsettings, tmp_path):
    relay, projector = Proc("relay", fsettings, tmp_path), Proc("projector", fsettings, tmp_path)
    await asyncio.to_thread(stack.pg_down, fault_stack, "fast")
    try:
        relay.start()
        projector.start()
        # Each has tried, failed and is retrying (however long a busy machine takes to start them).
        await until(lambda: all("retrying in" in p.log.read_text() for p in (relay, projector)),
                    timeout=90, what="both processes retrying their connection")
        assert relay.alive() and projector.alive(), "a process exited instead of waiting for the database"
    finally:
        await asyncio.to_thread(stack.pg_up, fault_stack)
    pool = await create_pool(fsettings.resolved_database_url(), max_size=5)
    try:
        load = Load(PostgresEventStore(pool, EventRegistry()), workspaces=2)
        await load.run(jobs=20)
        await projected(fsettings, pool, tmp_path, timeout=60)
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM jobs WHERE status = 'completed'") == 20
    finally:
        relay.stop()
        projector.stop()
        await pool.close()
