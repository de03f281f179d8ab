"""API benchmarks: durable POST /medias under wrk beside a bare aiohttp hello-world, and the
read-your-writes wait (commit to visibility in the read model) at a steady command rate; on
demand, the cost ladder (``api ladder``): the same command under a bare handler, without and
with the relay and projector, beside the whole API and the hello-world.

Run on demand: ``python -m tests.benchmarks api``; ``BENCH_RUNS=5`` repeats each part and prints the
median and range of the headline figures. Needs ``wrk`` (Debian package; installed when
absent). The processes are started as ``vaeo up`` starts them.
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

import orjson

from infra import stack
from infra.codec import EventRegistry
from infra.consume import PROGRESS_CHANNEL
from infra.db import connect, create_pool
from infra.eventlog import key_of, partition_for
from infra.eventstore_postgres import PostgresEventStore
from services.application.media import CreateMedia
from services.application.workspaces import CreateWorkspace
from tests.benchmarks.bench_core import fresh, machine, peak_rss_mb
from tests.helpers import handle, terminate_with_parent
from tests.support.stack import ROOT, _base_settings, drop_isolated, env_for

DURATION = int(os.environ.get("BENCH_SECONDS", "20"))
CONCURRENCY = 64

HELLO = """
import orjson
from aiohttp import web
async def hello(request):
    return web.Response(body=orjson.dumps({"data": {"hello": "world"}}), content_type="application/json")
app = web.Application()
app.router.add_get("/", hello)
web.run_app(app, host="127.0.0.1", port=int(__import__("sys").argv[1]), print=None, access_log=None)
"""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_COMMITS = "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    values = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values) - idle, sum(values)


def postgres_cpu_seconds() -> float:
    total = 0.0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if open(f"/proc/{pid}/comm").read().strip() == "postgres":
                    total += cpu_seconds(int(pid))
            except OSError:
                pass
    return total


async def postgres_cpu_by_client(pool) -> dict[str, float]:
    """CPU seconds of this database's server processes so far, by the name their clients gave
    (``vaeo-api``, ``vaeo-projector``, ...; ``infra.db.name_connections``)."""
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT pid, application_name FROM pg_stat_activity WHERE datname = current_database()")
    out: dict[str, float] = {}
    for row in rows:
        try:
            out[row["application_name"] or "?"] = out.get(row["application_name"] or "?", 0.0) + cpu_seconds(row["pid"])
        except OSError:  # the connection closed meanwhile
            pass
    return out


async def server_latencies_ms(settings, request_ids: set[str], timeout_s: float = 30.0) -> list[float]:
    """The API's own time of each call in ``request_ids`` (``latency_ms`` of its telemetry record:
    from the outer middleware's start to the handler's answer), read back from the telemetry topic
    as an analytics consumer of the stream would. The calls whose record has not arrived within
    ``timeout_s`` are missing from the list."""
    from infra.eventlog import make_consumer

    consumer = make_consumer(settings, settings.telemetry_topic, group_id=None)
    await consumer.start()
    found: dict[str, float] = {}
    deadline = time.monotonic() + timeout_s
    try:
        while len(found) < len(request_ids) and time.monotonic() < deadline:
            batches = await consumer.getmany(timeout_ms=500, max_records=5000)
            for records in batches.values():
                for record in records:
                    call = orjson.loads(record.value)
                    if call.get("request_id") in request_ids:
                        found[call["request_id"]] = float(call["latency_ms"])
    finally:
        await consumer.stop()
    return list(found.values())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_wrk() -> str:
    path = shutil.which("wrk")
    if path:
        return path
    subprocess.run(["apt-get", "install", "-y", "-q", "wrk"], check=True, capture_output=True)
    return shutil.which("wrk")


def run_wrk(url: str, script: str | None) -> dict:
    cmd = [ensure_wrk(), "-t2", f"-c{CONCURRENCY}", f"-d{DURATION}s", "--latency", "--timeout", "5s"]
    if script:
        cmd += ["-s", script]
    out = subprocess.run([*cmd, url], capture_output=True, text=True, timeout=DURATION + 60).stdout

    def ms(label: str) -> float:
        m = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value

    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {
        "req_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50_ms": ms("50"), "p99_ms": ms("99"),
        "requests": int(re.search(r"(\d+) requests in", out).group(1)),
        "non_2xx": int(non2xx.group(1)) if non2xx else 0,
        "errors": "Socket errors" in out,
    }


async def wait_http(port: int, path: str = "/healthz", timeout: float = 60) -> None:
    import aiohttp

    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            try:
                async with http.get(f"http://127.0.0.1:{port}{path}") as resp:
                    if resp.status < 500:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise TimeoutError(f"port {port}")


def batch_sizes(logdir: str) -> dict:
    """Events per relay batch and messages per projector transaction, from the stop lines of the
    logs (the whole run, warm-up included): round trips are paid per batch."""
    out = {}
    text = open(f"{logdir}/relay.log").read()
    for relayed, batches in re.findall(r"(\d+) events relayed in (\d+) batches", text):
        out["relay"] = round(int(relayed) / max(int(batches), 1), 1)
    text = open(f"{logdir}/projector.log").read()
    stops = r"\((\w+)\): stopped after \d+s, (\d+) messages applied in (\d+) batches"
    for source, applied, batches in re.findall(stops, text):
        out[f"projector_{source}"] = round(int(applied) / max(int(batches), 1), 1)
    return out


def start(name: str, env: dict, log: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "services.cli", name], env=env, cwd=ROOT,
                            stdout=open(log, "ab"), stderr=subprocess.STDOUT, preexec_fn=terminate_with_parent)


def stop_all(procs: dict[str, subprocess.Popen]) -> None:
    for p in procs.values():
        p.send_signal(signal.SIGTERM)
    for p in procs.values():
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()


def post_script(logdir: str, key: str | None) -> str:
    script = os.path.join(logdir, "post.lua")
    with open(script, "w") as f:
        f.write('wrk.method = "POST"\n'
                'wrk.headers["Content-Type"] = "application/json"\n'
                + (f'wrk.headers["Authorization"] = "Bearer {key}"\n' if key else "")
                + 'wrk.body = \'{"name": "benchmark media"}\'\n')
    return script


async def measure(base, pool, procs: dict[str, subprocess.Popen], url: str, script: str, logdir: str) -> dict:
    """A warm-up, then one wrk run at ``url`` with the CPU each part used, in cores and in ms per
    command (steadier between runs than the rate on a shared machine), and the PostgreSQL commits
    of every process per command: where a command's cost goes."""
    subprocess.run([ensure_wrk(), "-t1", "-c8", "-d3s", "-s", script, url], capture_output=True, timeout=60)
    kafka_pid = stack._kafka_pid(base)
    async with pool.acquire() as conn:
        commits_before = await conn.fetchval(_COMMITS)
    before = {n: cpu_seconds(p.pid) for n, p in procs.items()}
    kafka_before = cpu_seconds(kafka_pid) if kafka_pid else 0.0
    wrk_before = _children_cpu_seconds()
    pg_before, busy_before, started = postgres_cpu_seconds(), machine_busy(), time.monotonic()
    # BENCH_PYSPY=api,projector: py-spy samples those processes during the run (collapsed stacks).
    spies = [subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "py-spy"), "record", "-r", "50",
                               "-f", "raw", "-d", str(DURATION), "-p", str(procs[n].pid), "-o",
                               f"{logdir}/{n}.stacks"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
             for n in os.environ.get("BENCH_PYSPY", "").split(",") if n in procs]
    figures = run_wrk(url, script)
    wrk_seconds = _children_cpu_seconds() - wrk_before  # wrk is the only child waited for in between
    for spy in spies:
        spy.wait(60)
    if spies:
        print("py-spy stacks in", logdir, file=sys.stderr)
    elapsed = time.monotonic() - started
    cores = {n: round((cpu_seconds(p.pid) - before[n]) / elapsed, 2) for n, p in procs.items()}
    cores["postgres"] = round((postgres_cpu_seconds() - pg_before) / elapsed, 2)
    if kafka_pid:
        cores["kafka"] = round((cpu_seconds(kafka_pid) - kafka_before) / elapsed, 2)
    cores["wrk"] = round(wrk_seconds / elapsed, 2)
    busy_after = machine_busy()
    cores["machine_busy_fraction"] = round((busy_after[0] - busy_before[0]) / (busy_after[1] - busy_before[1]), 2)
    async with pool.acquire() as conn:
        commits = await conn.fetchval(_COMMITS) - commits_before
    return {"wrk": figures, "cpu_cores": cores,
            "cpu_ms_per_command": {n: round(c * elapsed / figures["requests"] * 1000, 3)
                                   for n, c in cores.items() if n != "machine_busy_fraction"},
            "pg_commits_per_command": round(commits / figures["requests"], 3)}


async def bench_post_medias(base, results: dict) -> None:
    settings = await fresh(base)
    port = free_port()
    env = env_for(settings) | {"VAEO_API_PORT": str(port)}
    logdir = tempfile.mkdtemp(prefix="vaeo-bench-api-")
    procs = {n: start(n, env, f"{logdir}/{n}.log") for n in ("api", "relay", "projector")}
    pool = await create_pool(settings.resolved_database_url(), max_size=4)
    try:
        store = PostgresEventStore(pool, EventRegistry())
        _, issued = await handle(store, CreateWorkspace(name="bench", plan="bench", credits=10**9, rate_limit=10**9))
        await wait_http(port)
        run = await measure(base, pool, procs, f"http://127.0.0.1:{port}/v1/medias",
                            post_script(logdir, issued.key), logdir)
        results["post_medias_cpu_cores"] = run["cpu_cores"]
        results["post_medias_cpu_ms_per_command"] = run["cpu_ms_per_command"]
        results["post_medias_pg_commits_per_command"] = run["pg_commits_per_command"]
        async with pool.acquire() as conn:
            created = await conn.fetchval("SELECT count(*) FROM events WHERE type = 'MediaCreated'")
            # Commands per group commit: the rows one transaction wrote share its xmin.
            groups = await conn.fetchval("SELECT count(DISTINCT xmin::text) FROM events WHERE type = 'MediaCreated'")
            results["post_medias_commands_per_group_commit"] = round(created / max(groups, 1), 2)
        results["post_medias"] = run["wrk"]
        results["post_medias_events_committed"] = created
        results["api_peak_rss_mb"] = peak_rss_mb(procs["api"].pid)
    finally:
        stop_all(procs)
        await pool.close()
        await drop_isolated(base, settings)
    results["post_medias_batch_sizes"] = batch_sizes(logdir)
    results["hello_world"] = await bench_hello()
    results["post_vs_hello"] = results["post_medias"]["req_per_s"] / results["hello_world"]["req_per_s"]


async def bench_hello() -> dict:
    hello_port = free_port()
    hello = subprocess.Popen([sys.executable, "-c", HELLO, str(hello_port)], cwd=ROOT)
    try:
        await wait_http(hello_port, "/")
        return run_wrk(f"http://127.0.0.1:{hello_port}/", None)
    finally:
        hello.terminate()
        hello.wait(10)


async def bench_ladder(base, results: dict) -> None:
    """The cost ladder, in one run: the bare hello-world; the durable command alone (the domain
    command and its grouped append under a bare aiohttp handler, ``ladder_app``); the same with the
    relay and the projector carrying its events to Kafka and the read models; the whole API
    (key, rate-limit window, validation, telemetry, read-your-writes wait). Each rung at the same
    concurrency, with the CPU per command of every part: what each layer costs, and the most the
    architecture allows on this machine whatever the API does."""
    for rung, pipeline in (("durable_command", ()), ("durable_command_with_pipeline", ("relay", "projector"))):
        settings = await fresh(base)
        port = free_port()
        env = env_for(settings)
        logdir = tempfile.mkdtemp(prefix=f"vaeo-bench-{rung}-")
        pool = await create_pool(settings.resolved_database_url(), max_size=4)
        procs: dict[str, subprocess.Popen] = {}
        try:
            workspace_id, _ = await handle(PostgresEventStore(pool, EventRegistry()), CreateWorkspace(name="bench",
                plan="bench", credits=10**9, rate_limit=10**9))
            procs["command"] = subprocess.Popen(
                [sys.executable, "-m", "tests.benchmarks.ladder_app", str(port), str(workspace_id)], env=env,
                cwd=ROOT, stdout=open(f"{logdir}/command.log", "ab"), stderr=subprocess.STDOUT)
            procs.update({n: start(n, env, f"{logdir}/{n}.log") for n in pipeline})
            await wait_http(port)
            results[f"ladder_{rung}"] = await measure(base, pool, procs, f"http://127.0.0.1:{port}/",
                                                      post_script(logdir, None), logdir)
        finally:
            stop_all(procs)
            await pool.close()
            await drop_isolated(base, settings)
    await bench_post_medias(base, results)
    hello = results["hello_world"]["req_per_s"]
    results["ladder_vs_hello"] = {
        "durable_command": round(results["ladder_durable_command"]["wrk"]["req_per_s"] / hello, 3),
        "durable_command_with_pipeline": round(
            results["ladder_durable_command_with_pipeline"]["wrk"]["req_per_s"] / hello, 3),
        "api": round(results["post_vs_hello"], 3)}


async def bench_read_your_writes(base, results: dict, rate: int = 500, seconds: float = 20.0) -> None:
    """Commit of MediaCreated to the medias projection having applied it, at ``rate`` commands/s."""
    settings = await fresh(base)
    env = env_for(settings)
    logdir = tempfile.mkdtemp(prefix="vaeo-bench-ryw-")
    procs = {n: start(n, env, f"{logdir}/{n}.log") for n in ("relay", "projector")}
    pool = await create_pool(settings.resolved_database_url(), max_size=8)
    listener = await connect(settings.resolved_database_url())
    committed: dict[tuple[int, int], list[tuple[int, float]]] = {}
    latencies: list[float] = []
    partitions = settings.events_partitions

    def on_progress(_conn, _pid, _channel, payload: str) -> None:
        name, partition, position = payload.rsplit(":", 2)
        if name != "medias":
            return
        now = time.monotonic()
        pending = committed.get(int(partition), [])
        while pending and pending[0][0] <= int(position):
            latencies.append((now - pending.pop(0)[1]) * 1000)

    await listener.add_listener(PROGRESS_CHANNEL, on_progress)
    try:
        store = PostgresEventStore(pool, EventRegistry(), group_commit=True)
        workspaces = [uuid.uuid4() for _ in range(12)]
        await asyncio.sleep(3)  # processes up
        interval = 1 / rate
        next_at = time.monotonic()
        deadline = next_at + seconds
        sent = 0

        async def one(ws: uuid.UUID) -> None:
            _, position = await handle(store, CreateMedia(ws, environment="production", name="ryw"))
            part = partition_for(key_of(ws), partitions)
            committed.setdefault(part, []).append((position, time.monotonic()))
            committed[part].sort()

        tasks = []
        while time.monotonic() < deadline:
            tasks.append(asyncio.create_task(one(workspaces[sent % len(workspaces)])))
            sent += 1
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        await asyncio.gather(*tasks)
        end = time.monotonic() + 15
        while any(committed.values()) and time.monotonic() < end:
            await asyncio.sleep(0.05)
        latencies.sort()
        results["ryw_commands_per_s"] = sent / seconds
        results["ryw_p50_ms"] = statistics.median(latencies)
        results["ryw_p99_ms"] = latencies[int(len(latencies) * 0.99) - 1]
        results["ryw_samples"] = len(latencies)
    finally:
        await listener.close()
        for p in procs.values():
            p.send_signal(signal.SIGTERM)
            p.wait(20)
        await pool.close()
        await drop_isolated(base, settings)


RUNS = int(os.environ.get("BENCH_RUNS", "1"))  # repeat each part; the summary gives median and range


def summarise(runs: list[dict]) -> dict:
    """Median and range of the headline figures over repeated runs: on a shared machine one run
    says little, and a change is worth keeping only when it moves the median beyond the range."""
    def spread(values: list[float]) -> dict:
        return {"median": round(statistics.median(values), 3), "min": round(min(values), 3),
                "max": round(max(values), 3)}

    figures: dict[str, list[float]] = {}
    for r in runs:
        pairs = []
        if "post_medias" in r:
            pairs += [("post_req_per_s", r["post_medias"]["req_per_s"]), ("post_p99_ms", r["post_medias"]["p99_ms"]),
                      ("hello_req_per_s", r["hello_world"]["req_per_s"]), ("post_vs_hello", r["post_vs_hello"])]
            pairs += [(f"cpu_ms_{part}", v) for part, v in r["post_medias_cpu_ms_per_command"].items()]
        for rung in ("durable_command", "durable_command_with_pipeline"):
            if f"ladder_{rung}" in r:
                measured = r[f"ladder_{rung}"]
                pairs += [(f"{rung}_req_per_s", measured["wrk"]["req_per_s"]),
                          (f"{rung}_p99_ms", measured["wrk"]["p99_ms"]),
                          (f"{rung}_vs_hello", r["ladder_vs_hello"][rung]),
                          (f"{rung}_cpu_ms", sum(measured["cpu_ms_per_command"].values()))]
        if "ryw_p99_ms" in r:
            pairs += [("ryw_p50_ms", r["ryw_p50_ms"]), ("ryw_p99_ms", r["ryw_p99_ms"])]
        for name, value in pairs:
            figures.setdefault(name, []).append(value)
    return {name: spread(values) for name, values in figures.items()}


async def main(which: list[str]) -> dict:
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    runs = []
    for _ in range(RUNS):
        results: dict = {"machine": machine()}
        if "ladder" in which:  # on demand only: it includes the post part
            await bench_ladder(base, results)
        elif not which or "post" in which:
            await bench_post_medias(base, results)
        if not which or "ryw" in which:
            await bench_read_your_writes(base, results)
        runs.append(results)
    if RUNS == 1:
        return runs[0]
    return {"machine": machine(), "runs": RUNS, "summary": summarise(runs), "each": runs}


def run(which: list[str]) -> None:
    import orjson

    results = asyncio.run(main(which))
    for k, v in results.items():
        if k == "summary":
            for name, spread in v.items():
                print(f"{name:30} {spread}")
        elif k != "each":
            print(f"{k:30} {v}")
    print(orjson.dumps(results).decode())



