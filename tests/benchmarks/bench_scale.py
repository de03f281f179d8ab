"""Several of each process: ``python -m tests.benchmarks scale [api] [jobs] [events]`` (all by default).

Each figure beside its single-process baseline, measured in the same run on the same machine:

1. api: durable POST /v1/medias under wrk (as ``bench_api``: 64 connections, ``BENCH_SECONDS``,
   default 15, after a 3 s warm-up) with one API process, then with two on the same port
   (``VAEO_API_REUSE_PORT``, as ``vaeo up --api 2`` starts them); a relay and a projector run
   beside them. Requests/s, p50/p99, non-2xx and socket errors, and the CPU each API process used
   (both must have served for the two-process figure to mean anything); PostgreSQL commits, WAL
   flushes and WAL records per request, and appends per group commit (docs/benchmarks.md, "Why two
   API processes commit twice as often").
   ``BENCH_API_ROUNDS`` (2) rounds, alternated: 1, 2, 1, 2.
2. jobs: ``JOBS`` analyses of a ``VIDEO_S`` s generated captioned video and ``RENDERS`` template
   renders (``RENDER_CLIPS`` clips of ``RENDER_CLIP_S`` s each, 9:16, from the article of one
   analysis made before the clock starts), queued at once, with one worker process (2 slots) and
   with two; the time from the first request to the last ``completed``, as jobs per minute. Then
   one worker of 4 slots: as many slots as the two workers, in one process.

3. events: ``BENCH_SCALE_EVENTS`` (100,000) job events appended in bulk, then relayed and
   projected with one projector process and with two (one consumer group over the 6 partitions).

``core_speed_ms`` is printed before and after: the cores of this virtual machine are shared and
every figure moves with it. Bounded: each wrk run lasts ``BENCH_SECONDS``, each batch of jobs at
most ``JOB_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from infra import stack
from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventstore_postgres import PostgresEventStore
from services.application.workspaces import CreateWorkspace
from tests.benchmarks.bench_api import (
    _COMMITS,
    cpu_seconds,
    ensure_wrk,
    free_port,
    machine_busy,
    post_script,
    postgres_cpu_seconds,
    run_wrk,
    start,
    stop_all,
    wait_http,
)
from tests.benchmarks.bench_clips import _wait
from tests.benchmarks.bench_core import TEMPLATE, bulk_append, core_speed_ms, fresh, job_events, machine, wait_value
from tests.benchmarks.bench_fairness import make_source
from tests.helpers import handle
from tests.support.stack import _base_settings, drop_isolated, env_for

JOBS = int(os.environ.get("BENCH_JOBS", "12"))
VIDEO_S = 180
JOB_TIMEOUT_S = 150
RENDERS = int(os.environ.get("BENCH_RENDERS", "4"))  # template renders queued with the analyses
RENDER_CLIPS, RENDER_CLIP_S = 2, 10
API_ROUNDS = int(os.environ.get("BENCH_API_ROUNDS", "2"))  # 1, 2, 1, 2 API processes: alternated


EVENTS = int(os.environ.get("BENCH_SCALE_EVENTS", "100000"))
_WAL = "SELECT wal_sync, wal_records FROM pg_stat_wal"  # the server's WAL counters (PostgreSQL 14 and later)
_JOBS_PROJECTED = "SELECT sum(next_offset) FROM projection_offsets WHERE projection = 'jobs'"


def cpu_with_children(pid: int) -> float:
    """CPU seconds of a process and of its children it has waited for (ffmpeg and the like)."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


async def api_run(base, apis: int) -> dict:
    """wrk against POST /v1/medias with ``apis`` API processes on one port."""
    settings = await fresh(base)
    port = free_port()
    env = env_for(settings) | {"VAEO_API_PORT": str(port)}
    if apis > 1:
        env["VAEO_API_REUSE_PORT"] = "1"
    logdir = tempfile.mkdtemp(prefix=f"vaeo-bench-scale-api{apis}-")
    procs = {n: start(n, env, f"{logdir}/{n}.log") for n in ("relay", "projector")}
    for i in range(apis):
        procs[f"api{i}"] = start("api", env, f"{logdir}/api{i}.log")
    pool = await create_pool(settings.resolved_database_url(), max_size=4)
    try:
        store = PostgresEventStore(pool, EventRegistry())
        _, issued = await handle(store, CreateWorkspace(name="bench", plan="bench", credits=10**9, rate_limit=10**9))
        await wait_http(port)
        await asyncio.sleep(2)  # every API process listening, not only the first
        script = post_script(logdir, issued.key)
        url = f"http://127.0.0.1:{port}/v1/medias"
        subprocess.run([ensure_wrk(), "-t1", "-c8", "-d3s", "-s", script, url], capture_output=True, timeout=60)
        async with pool.acquire() as conn:
            commits_before = await conn.fetchval(_COMMITS)
            wal_before = await conn.fetchrow(_WAL)
            head_before = await conn.fetchval("SELECT coalesce(max(position), 0) FROM events")
        before = {n: cpu_seconds(p.pid) for n, p in procs.items()}
        pg_before, busy_before, started = postgres_cpu_seconds(), machine_busy(), time.monotonic()
        figures = run_wrk(url, script)
        elapsed = time.monotonic() - started
        busy_after = machine_busy()
        figures["cpu_cores"] = {n: round((cpu_seconds(p.pid) - before[n]) / elapsed, 2) for n, p in procs.items()}
        figures["cpu_cores"]["postgres"] = round((postgres_cpu_seconds() - pg_before) / elapsed, 2)
        api_cores = sum(c for n, c in figures["cpu_cores"].items() if n.startswith("api"))
        figures["api_cpu_ms_per_request"] = round(api_cores * elapsed / figures["requests"] * 1000, 3)
        async with pool.acquire() as conn:
            commits = await conn.fetchval(_COMMITS) - commits_before
            wal = await conn.fetchrow(_WAL)
        figures["pg_commits_per_request"] = round(commits / figures["requests"], 3)
        # What a commit costs when it writes: WAL flushes (fsync) and WAL records per request. The
        # server's counters are for the whole cluster: other databases' work counts too.
        figures["wal_syncs_per_request"] = round((wal["wal_sync"] - wal_before["wal_sync"]) / figures["requests"], 3)
        figures["wal_records_per_request"] = round(
            (wal["wal_records"] - wal_before["wal_records"]) / figures["requests"], 2)
        figures["machine_busy_fraction"] = round(
            (busy_after[0] - busy_before[0]) / (busy_after[1] - busy_before[1]), 2)
        for n, p in procs.items():
            if p.poll() is not None:
                figures.setdefault("exited", []).append(n)
        async with pool.acquire() as conn:
            figures["events_committed"] = await conn.fetchval("SELECT count(*) FROM events WHERE type = 'MediaCreated'")
            # Appends per commit during the measured run: the rows of one transaction share its xmin.
            run = await conn.fetchrow("SELECT count(*) AS n, count(DISTINCT xmin::text) AS commits FROM events "
                                      "WHERE type = 'MediaCreated' AND position > $1", head_before)
            figures["appends_per_commit"] = round(run["n"] / max(1, run["commits"]), 2)
    finally:
        stop_all(procs)
        await pool.close()
        await drop_isolated(base, settings)
    print(f"api x{apis}: {figures['req_per_s']:.0f} req/s, p50 {figures['p50_ms']:.1f} ms, p99 "
          f"{figures['p99_ms']:.1f} ms, non-2xx {figures['non_2xx']}, cores {figures['cpu_cores']}, API CPU "
          f"{figures['api_cpu_ms_per_request']} ms/request, {figures['pg_commits_per_request']} commits/request "
          f"({figures['wal_syncs_per_request']} WAL flushes, {figures['wal_records_per_request']} WAL records, "
          f"{figures['appends_per_commit']} appends per group commit), "
          f"machine {figures['machine_busy_fraction']} busy", flush=True)
    return figures


async def _upload(svc, ws, video: Path, captions: Path) -> int:
    form = aiohttp.FormData()
    form.add_field("file", video.read_bytes(), filename="talk.mp4", content_type="video/mp4")
    form.add_field("captions", captions.read_bytes(), filename="talk.vtt", content_type="text/vtt")
    async with svc.http.post(svc.base + "/videos", data=form, headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        body = await resp.json()
        assert resp.status == 201, body
        return body["data"]["id"]


async def _article_of(svc, ws, video_id: int) -> int:
    r = await ws.client.post(f"/videos/{video_id}/analyze", {})
    assert r.status == 202, r.data
    done = await _wait(svc.http, svc.base, ws.key, f"/jobs/{r.data['job_id']}", timeout=JOB_TIMEOUT_S)
    assert done["status"] == "completed", done
    return done["article_id"]


def _render_request(article_id: int, k: int) -> dict:
    """Render ``k``: ``RENDER_CLIPS`` clips of the article's video in the 9:16 centre-crop template,
    each request's clips at their own times (an identical request would be reused, not queued)."""
    clips = []
    for c in range(RENDER_CLIPS):
        start = (k * RENDER_CLIPS + c) * RENDER_CLIP_S * 1000 % ((VIDEO_S - RENDER_CLIP_S) * 1000)
        clips.append({"id": f"r{k}c{c}", "title": f"Render {k}, clip {c}", "start_ms": start,
                      "end_ms": start + RENDER_CLIP_S * 1000, "duration_ms": RENDER_CLIP_S * 1000,
                      "viral_score": 50})
    return {"article_id": article_id, "template_id": 1, "clips": clips}


async def jobs_run(base, workers: int, video: Path, captions: Path, slots: int = 2) -> dict:
    """``JOBS`` analyses queued at once with ``workers`` worker processes: time to the last one."""
    from tests.support.service import running_service

    with tempfile.TemporaryDirectory() as logs:
        async with running_service(base, TEMPLATE, Path(logs), processes=("relay", "projector", "worker"),
                                   apis=1, VAEO_WORKER_CONCURRENCY=str(slots)) as svc:
            env = env_for(svc.settings) | {"VAEO_WORKER_CONCURRENCY": str(slots)}
            extra = [start("worker", env, f"{logs}/worker{i}.log") for i in range(1, workers)]
            try:
                ws = await svc.workspace(credits=10**7)
                videos = [await _upload(svc, ws, video, captions) for _ in range(JOBS + 1)]
                article_id = await _article_of(svc, ws, videos.pop())  # the renders' article, made first
                await asyncio.sleep(2)  # every worker polling
                before = {p.pid: cpu_with_children(p.pid) for p in [svc.procs["worker"], *extra]}
                busy_before, t0 = machine_busy(), time.perf_counter()
                jobs = []
                for v in videos:
                    r = await ws.client.post(f"/videos/{v}/analyze", {})
                    assert r.status == 202, r.data
                    jobs.append(r.data["job_id"])
                for k in range(RENDERS):
                    r = await ws.client.post("/production/clips/render", _render_request(article_id, k))
                    assert r.status == 202, r.data
                    jobs.append(r.data["job_id"])
                done = await asyncio.gather(*(_wait(svc.http, svc.base, ws.key, f"/jobs/{j}", timeout=JOB_TIMEOUT_S)
                                              for j in jobs))
                elapsed = time.perf_counter() - t0
                busy_after = machine_busy()
                cpu = [round(cpu_with_children(pid) - s, 1) for pid, s in before.items()]
            finally:
                stop_all({str(i): p for i, p in enumerate(extra)})
    failed = [d["status"] for d in done if d["status"] != "completed"]
    busy = round((busy_after[0] - busy_before[0]) / (busy_after[1] - busy_before[1]), 2)
    out = {"jobs": len(jobs), "analyses": JOBS, "renders": RENDERS, "seconds": round(elapsed, 1),
           "jobs_per_min": round(len(jobs) / elapsed * 60, 1),
           "not_completed": failed, "worker_cpu_s": cpu, "slots_per_worker": slots, "machine_busy_fraction": busy}
    print(f"jobs x{workers} workers of {slots} slots (machine {busy} busy): {JOBS} analyses of a {VIDEO_S} s "
          f"video and {RENDERS} renders of {RENDER_CLIPS} clips in {elapsed:.1f} s = "
          f"{out['jobs_per_min']} jobs/min; worker CPU s {cpu}; not completed {failed}", flush=True)
    return out


async def events_run(base, projectors: int) -> dict:
    """``EVENTS`` job events appended in bulk, then carried by the relay to Kafka and by
    ``projectors`` projector processes (one consumer group, all projections) into the read
    models: events/s from the relay's start to the jobs projection's last offset."""
    from infra.eventlog import ensure_topics

    settings = await fresh(base)
    env = env_for(settings)
    logdir = tempfile.mkdtemp(prefix=f"vaeo-bench-scale-projector{projectors}-")
    pool = await create_pool(settings.resolved_database_url(), max_size=4)
    procs: dict = {}
    try:
        await ensure_topics(settings)
        events = job_events(EventRegistry(), EVENTS)
        await bulk_append(pool, events)
        for i in range(projectors):
            procs[f"projector{i}"] = start("projector", env, f"{logdir}/projector{i}.log")
        await asyncio.sleep(12)  # both in the group and its partitions assigned before any event arrives
        before = {n: cpu_seconds(p.pid) for n, p in procs.items()}
        busy_before, t0 = machine_busy(), time.monotonic()
        procs["relay"] = start("relay", env, f"{logdir}/relay.log")
        await wait_value(pool, _JOBS_PROJECTED, len(events), timeout=120)
        elapsed = time.monotonic() - t0
        busy_after = machine_busy()
        cpu = {n: round(cpu_seconds(p.pid) - before[n], 1) for n, p in procs.items() if n in before}
    finally:
        stop_all(procs)
        await pool.close()
        await drop_isolated(base, settings)
    out = {"events": len(events), "seconds": round(elapsed, 1), "events_per_s": round(len(events) / elapsed),
           "projector_cpu_s": cpu,
           "machine_busy_fraction": round((busy_after[0] - busy_before[0]) / (busy_after[1] - busy_before[1]), 2)}
    print(f"events x{projectors} projectors: {len(events)} in {elapsed:.1f} s = {out['events_per_s']} events/s "
          f"(relay start to the jobs projection's last offset, relay start-up included); projector CPU s {cpu}; "
          f"machine {out['machine_busy_fraction']} busy", flush=True)
    return out


async def main(which: list[str]) -> dict:
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    results: dict = {"machine": machine(), "core_speed_ms_before": core_speed_ms()}
    print("core_speed_ms before", results["core_speed_ms_before"], flush=True)
    if not which or "api" in which:
        for _ in range(API_ROUNDS):
            for apis in (1, 2):
                results.setdefault(f"api_{apis}", []).append(await api_run(base, apis))
        results["api_2_vs_1"] = [round(two["req_per_s"] / one["req_per_s"], 2)
                                 for one, two in zip(results["api_1"], results["api_2"], strict=True)]
    if not which or "jobs" in which:
        from infra.provision import ensure

        ensure("ffmpeg")
        scratch = await fresh(base)  # migrates the benchmark template; this copy of it is not used
        await drop_isolated(base, scratch)
        with tempfile.TemporaryDirectory() as tmp:
            video, captions = make_source(Path(tmp), VIDEO_S)
            results["jobs_1"] = await jobs_run(base, 1, video, captions)
            results["jobs_2"] = await jobs_run(base, 2, video, captions)
            # The same four slots in one process: more slots against more processes.
            results["jobs_1_of_4_slots"] = await jobs_run(base, 1, video, captions, slots=4)
        results["jobs_2_vs_1"] = round(results["jobs_2"]["jobs_per_min"] / results["jobs_1"]["jobs_per_min"], 2)
    if not which or "events" in which:
        results["events_1"] = await events_run(base, 1)
        results["events_2"] = await events_run(base, 2)
        results["events_2_vs_1"] = round(results["events_2"]["events_per_s"] / results["events_1"]["events_per_s"], 2)
    results["core_speed_ms_after"] = core_speed_ms()
    print("core_speed_ms after", results["core_speed_ms_after"], flush=True)
    return results


def run(which: list[str]) -> None:
    results = asyncio.run(main(which))
    print(orjson.dumps(results).decode())
    sys.stdout.flush()
