"""Core benchmarks: relay throughput and latency, projection rebuild, footprint, NOTIFY cost.

Run on demand (``make bench`` or ``python -m tests.benchmarks core``), never by the suite. Each
figure is printed beside its raw baseline measured in the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime

import asyncpg
import orjson

from domain.jobs import Job
from infra import stack
from infra.codec import EventRegistry
from infra.db import create_pool, migrate
from infra.eventlog import ensure_topics, make_consumer, make_producer, topic_partitions
from infra.eventstore_postgres import PostgresEventStore
from infra.eventstore_sql import APPEND, append_args
from infra.settings import Settings
from projections import ALL, all_ddl
from services.processes.projector.rebuild import rebuild
from services.processes.relay import _FETCH, Relay, encode
from tests.helpers import terminate_with_parent
from tests.support.stack import ROOT, _base_settings, drop_isolated, env_for, make_isolated_settings

EVENTS = int(os.environ.get("BENCH_EVENTS", "200000"))
TEMPLATE = "vaeo_bench_template"


def machine() -> str:
    cpu = "?"
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores ({cpu}), {mem:.0f} GiB, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def core_speed_ms() -> float:
    """The CPU milliseconds of a fixed pure-Python loop on one core (30 million additions). This
    machine is a virtual one whose cores are shared with other machines: the same loop has taken
    from 420 to 770 ms within an hour, and every figure measured meanwhile moves with it. Benchmarks
    that depend on it print it beside their figures (lower is faster)."""
    started = time.process_time()
    sum(range(30_000_000))
    return round((time.process_time() - started) * 1000)


async def fresh(base: Settings) -> Settings:
    admin = await asyncpg.connect(base.resolved_database_url().rsplit("/", 1)[0] + "/postgres")
    try:
        exists = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", TEMPLATE)
        if exists:
            await admin.execute(f"DROP DATABASE {TEMPLATE} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {TEMPLATE}")
    finally:
        await admin.close()
    await migrate(base.resolved_database_url().rsplit("/", 1)[0] + f"/{TEMPLATE}", all_ddl())
    return await make_isolated_settings(base, TEMPLATE)


def job_events(registry: EventRegistry, n_events: int, workspaces: int = 16) -> list:
    out = []
    wss = [uuid.uuid4() for _ in range(workspaces)]
    i = 0
    while len(out) < n_events:
        ws = wss[i % workspaces]
        i += 1
        job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="bench", params={"n": i})
        job.start(1, "bench")
        job.report_progress(30, "step one")
        job.report_progress(60, "step two")
        job.complete({"ok": True})
        out.extend(registry.to_new_events(job.collect_events(), workspace_id=ws))
    return out[:n_events - n_events % 5] if n_events % 5 else out


def job_row_states(rows) -> list[dict]:
    """The jobs read-model row after each event, computed up front (the raw baseline's input)."""
    state: dict = {}
    out = []
    for r in rows:
        d, at = r["data"], datetime.now(UTC)
        if r["type"] == "JobQueued":
            state[r["stream_id"]] = {
                "id": r["stream_id"], "workspace_id": d["workspace_id"], "environment": d["environment"],
                "type": d["job_type"], "status": "pending", "progress": 0, "step": "queued", "article_id": None,
                "error_message": None, "attempts": 0, "max_attempts": d["max_attempts"], "params": d["params"],
                "result": None, "webhook_url": d.get("webhook_url"), "created_at": at, "updated_at": at,
                "started_at": None, "finished_at": None, "version": r["version"]}
        row = dict(state[r["stream_id"]])
        if r["type"] == "JobStarted":
            row.update(status="running", step="started", attempts=d["attempt"], started_at=at)
        elif r["type"] == "JobProgressed":
            row.update(progress=d["progress"], step=d["step"])
        elif r["type"] == "JobCompleted":
            row.update(status="completed", progress=100, step="completed", result=d["result"], finished_at=at)
        row.update(version=r["version"], updated_at=at)
        row["workspace_id"] = uuid.UUID(str(row["workspace_id"]))
        state[r["stream_id"]] = row
        out.append(row)
    return out


async def bulk_append(pool: asyncpg.Pool, events: list, batch: int = 5000) -> None:
    async with pool.acquire() as conn:
        for i in range(0, len(events), batch):
            chunk = events[i:i + batch]
            await conn.fetchval(APPEND, *append_args(chunk, datetime.now(UTC)))


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a running process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def wait_value(pool, sql: str, target: int, timeout: float = 600) -> float:
    """Poll ``sql`` until it reaches ``target``; return the monotonic time it first moved."""
    first_move = None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        async with pool.acquire() as conn:
            value = await conn.fetchval(sql) or 0
        if value > 0 and first_move is None:
            first_move = time.monotonic()
        if value >= target:
            return first_move or time.monotonic()
        await asyncio.sleep(0.01)
    raise TimeoutError(sql)


async def bench_relay(base: Settings, results: dict) -> Settings:
    settings = await fresh(base)
    pool = await create_pool(settings.resolved_database_url(), max_size=8)
    registry = EventRegistry()
    events = job_events(registry, EVENTS)
    t = time.monotonic()
    await bulk_append(pool, events)
    results["bulk_append_events_per_s"] = len(events) / (time.monotonic() - t)
    head = len(events)

    # Raw aiokafka: the same payloads, the same producer settings, to a topic of its own.
    async with pool.acquire() as conn:
        rows = await conn.fetch(_FETCH, 0, head)
    payloads = [(encode(r), str(r["workspace_id"]).encode(), r["type"].encode(), str(r["position"]).encode())
                for r in rows]
    raw_settings = settings.model_copy(update={"events_topic": settings.events_topic + ".raw"})
    await ensure_topics(raw_settings)
    producer = make_producer(raw_settings)
    await producer.start()
    try:
        t = time.monotonic()
        futures = []
        for value, key, typ, pos in payloads:
            futures.append(await producer.send(raw_settings.events_topic, value, key=key,
                                               headers=[("type", typ), ("position", pos)]))
            if len(futures) >= settings.relay_batch_size:
                await asyncio.gather(*futures)
                futures = []
        await asyncio.gather(*futures)
        raw_rate = head / (time.monotonic() - t)
    finally:
        await producer.stop()
    results["raw_producer_events_per_s"] = raw_rate
    del payloads, rows

    # The relay as its own process, started after the events are in the table.
    out = open(f"/tmp/vaeo-bench-relay-{os.getpid()}.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "services.cli", "relay"], env=env_for(settings), cwd=ROOT,
                            stdout=out, stderr=subprocess.STDOUT, preexec_fn=terminate_with_parent)
    try:
        start = await wait_value(pool, "SELECT max(position) FROM relay_checkpoint", 1)
        start = min(start, time.monotonic())
        await wait_value(pool, "SELECT max(position) FROM relay_checkpoint", head)
        relay_rate = head / (time.monotonic() - start)
        results["relay_events_per_s"] = relay_rate
        results["relay_vs_raw"] = relay_rate / raw_rate
        results["relay_peak_rss_mb"] = peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)
    await pool.close()
    return settings


async def bench_latency(base: Settings, results: dict, rate: int = 1000, seconds: float = 20.0) -> None:
    """Commit-to-Kafka-ack under a steady load: appends of 10 events at rate/10 per second."""
    settings = await fresh(base)
    pool = await create_pool(settings.resolved_database_url(), max_size=8)
    registry = EventRegistry()
    store = PostgresEventStore(pool, registry)
    committed: dict[int, float] = {}
    latencies: list[float] = []
    relay = Relay(settings)

    def acked(first: int, last: int) -> None:
        now = time.monotonic()
        for p in range(first, last + 1):
            t = committed.pop(p, None)
            if t is not None:
                latencies.append((now - t) * 1000)

    relay.on_acked = acked
    stop = asyncio.Event()
    task = asyncio.create_task(relay.run(stop))
    await asyncio.sleep(1.0)
    per_append = 10
    interval = per_append / rate
    ws = uuid.uuid4()
    deadline = time.monotonic() + seconds
    next_at = time.monotonic()
    appended = 0
    while time.monotonic() < deadline:
        events = []
        for _ in range(per_append):
            job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="lat")
            events.extend(registry.to_new_events(job.collect_events(), workspace_id=ws))
        last = await store.save(events=events)
        t = time.monotonic()
        for p in range(last - per_append + 1, last + 1):
            committed[p] = t
        appended += per_append
        next_at += interval
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
    while committed and time.monotonic() < deadline + 10:
        await asyncio.sleep(0.05)
    stop.set()
    await task
    latencies.sort()
    results["latency_load_events_per_s"] = appended / seconds
    results["commit_to_ack_p50_ms"] = statistics.median(latencies)
    results["commit_to_ack_p99_ms"] = latencies[int(len(latencies) * 0.99) - 1]
    results["commit_to_ack_max_ms"] = latencies[-1]
    await pool.close()
    await drop_isolated(base, settings)


async def bench_rebuild(base: Settings, settings: Settings, results: dict) -> None:
    """The jobs projection over the relayed topic, beside a raw consumer and a raw upsert."""
    pool = await create_pool(settings.resolved_database_url(), max_size=8)
    # Raw consumer draining the same topic.
    consumer = make_consumer(settings, group_id=None)
    await consumer.start()
    try:
        tps = await topic_partitions(consumer, settings.events_topic)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        total = sum(end.values())
        t = time.monotonic()
        n = 0
        reached = {tp: 0 for tp in tps}
        while any(reached[tp] < end[tp] for tp in tps):
            fetched = await consumer.getmany(timeout_ms=1000, max_records=settings.projector_max_records)
            for tp, msgs in fetched.items():
                n += len(msgs)
                reached[tp] = msgs[-1].offset + 1
        results["raw_consumer_events_per_s"] = n / (time.monotonic() - t)
    finally:
        await consumer.stop()
    # Raw asyncpg batched upsert: one row write per event, in transactions of a batch each.
    async with pool.acquire() as conn:
        await conn.execute("CREATE TABLE raw_jobs (id uuid PRIMARY KEY, status text, progress int, step text, "
                           "version int, data jsonb)")
        rows = await conn.fetch("SELECT stream_id, version, type, data FROM events ORDER BY position")
        args = [(r["stream_id"], r["type"], r["version"], r["version"] * 20, r["data"]) for r in rows]
        t = time.monotonic()
        for i in range(0, len(args), settings.projector_max_records):
            async with conn.transaction():
                await conn.executemany(
                    "INSERT INTO raw_jobs (id, status, progress, step, version, data) VALUES ($1, $2, $4, $2, $3, $5) "
                    "ON CONFLICT (id) DO UPDATE SET status = excluded.status, progress = excluded.progress, "
                    "step = excluded.step, version = excluded.version WHERE raw_jobs.version < excluded.version",
                    args[i:i + settings.projector_max_records])
        results["raw_upsert_events_per_s"] = len(args) / (time.monotonic() - t)
        # The same rows as the jobs read model (every column), one full-row upsert per event.
        await conn.execute("CREATE TABLE raw_jobs_full (LIKE jobs INCLUDING ALL)")
        full_rows = job_row_states(rows)
        cols = list(full_rows[0])
        placeholders = ", ".join(f"${i + 1}" for i in range(len(cols)))
        sql = (f"INSERT INTO raw_jobs_full ({', '.join(cols)}) VALUES ({placeholders}) "
               f"ON CONFLICT (id) DO UPDATE SET {', '.join(f'{c} = excluded.{c}' for c in cols if c != 'id')} "
               "WHERE raw_jobs_full.version < excluded.version")
        values = [tuple(r.values()) for r in full_rows]
        t = time.monotonic()
        for i in range(0, len(values), settings.projector_max_records):
            async with conn.transaction():
                await conn.executemany(sql, values[i:i + settings.projector_max_records])
        results["raw_upsert_same_rows_events_per_s"] = len(values) / (time.monotonic() - t)
    # The rebuild itself.
    result = await rebuild(settings, "jobs")
    results["rebuild_jobs_events_per_s"] = result["events_per_s"]
    slower = min(results["raw_consumer_events_per_s"], results["raw_upsert_events_per_s"])
    results["rebuild_vs_slower_raw"] = result["events_per_s"] / slower
    slower_same = min(results["raw_consumer_events_per_s"], results["raw_upsert_same_rows_events_per_s"])
    results["rebuild_vs_slower_raw_same_rows"] = result["events_per_s"] / slower_same
    # The projector as a process (all projections) from scratch: its peak RSS.
    async with pool.acquire() as conn:
        await conn.execute("UPDATE projection_state SET status = 'live'")
        for p in ALL.values():
            for stmt in p.teardown:
                await conn.execute(stmt)
        await conn.execute("DELETE FROM projection_offsets")
    out = open(f"/tmp/vaeo-bench-projector-{os.getpid()}.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "services.cli", "projector"], env=env_for(settings), cwd=ROOT,
                            stdout=out, stderr=subprocess.STDOUT, preexec_fn=terminate_with_parent)
    try:
        t = time.monotonic()
        await wait_value(pool, "SELECT sum(next_offset) FROM projection_offsets WHERE projection = 'jobs'", total)
        results["projector_all_catch_up_s"] = time.monotonic() - t
        results["projector_all_catch_up_cpu_s"] = cpu_seconds(proc.pid)
        results["projector_peak_rss_mb"] = peak_rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(30)
    await pool.close()


async def bench_notify(base: Settings, results: dict, seconds: float = 5.0, writers: int = 16) -> None:
    """Single-event appends/s from 16 writers: no NOTIFY, NOTIFY after commit (the default), NOTIFY
    inside the transaction, and group commit (NOTIFY after)."""
    settings = await fresh(base)
    pool = await create_pool(settings.resolved_database_url(), max_size=writers + 2)
    registry = EventRegistry()

    async def run(mode: str) -> float:
        store = PostgresEventStore(pool, registry, notify=(mode in ("after", "group")), group_commit=(mode == "group"))
        count = 0
        deadline = time.monotonic() + seconds

        async def writer() -> None:
            nonlocal count
            ws = uuid.uuid4()
            while time.monotonic() < deadline:
                job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="n")
                events = registry.to_new_events(job.collect_events(), workspace_id=ws)
                if mode == "inside":
                    async def notify(conn):
                        await conn.execute("SELECT pg_notify('vaeo_events', 'x')")
                    # NOTIFY queued inside the transaction (taken at commit, under the table lock).
                    async with pool.acquire() as conn:
                        async with conn.transaction():
                            await conn.fetchval(APPEND, *append_args(events, datetime.now(UTC)))
                            await notify(conn)
                else:
                    await store.save(events=events)
                count += 1

        await asyncio.gather(*(writer() for _ in range(writers)))
        return count / seconds

    for mode in ("none", "after", "inside", "group"):
        results[f"appends_per_s_notify_{mode}"] = await run(mode)
    await pool.close()
    await drop_isolated(base, settings)


def bench_broker(results: dict) -> None:
    settings = Settings(stack_instance="bench-broker", stack_pg_port=25435, stack_kafka_port=29096)
    stack.kafka_down(settings)
    import shutil

    shutil.rmtree(settings.instance_dir / "kafka", ignore_errors=True)
    t = time.monotonic()
    stack.kafka_up(settings)
    results["broker_cold_start_to_ready_s"] = time.monotonic() - t
    time.sleep(5)
    results["broker_idle_rss_mb"] = stack.kafka_rss_mb(settings)
    stack.kafka_down(settings)


async def main(which: list[str]) -> dict:
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    results: dict = {"machine": machine(), "events": EVENTS}
    if not which or "relay" in which or "rebuild" in which:
        relayed = await bench_relay(base, results)
        await bench_rebuild(base, relayed, results)
        await drop_isolated(base, relayed)
    if not which or "latency" in which:
        await bench_latency(base, results)
    if not which or "notify" in which:
        await bench_notify(base, results)
    if not which or "broker" in which:
        await asyncio.to_thread(bench_broker, results)
    return results


def run(which: list[str]) -> None:
    results = asyncio.run(main(which))
    for k, v in results.items():
        print(f"{k:34} {v:,.2f}" if isinstance(v, float) else f"{k:34} {v}")
    print(orjson.dumps(results).decode())
