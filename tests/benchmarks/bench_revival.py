"""Revival benchmarks: ``python -m tests.benchmarks revival [complete] [candidates]``.

complete: a 60-minute captioned video (the podcast fixture's captions three times over, a tiny
test-pattern picture) uploaded, analysed and made a candidate on the real processes, then
``POST /production/descriptions/complete`` for all ten platforms, each request with its own
idempotency key, ``BENCH_REQUESTS`` (400) requests at concurrency 8; p50 and p99 of the server's
time (``complete_concurrency_8_server``: the API's own latency of each call, read back from its
telemetry records on the telemetry topic) and of the time to the answer as the client on loopback
sees it (``complete_concurrency_8``: the server's time, plus the wait of a request the API has
received but not yet begun, the body's transfer and the client's own turn). Goal: server time's
p99 at most 100 ms.

candidates: 10,000 candidates in one workspace (the read model's rows, written by its own
statements from generated events), then ``GET /production/revival/candidates?query=...`` at
concurrency 8 for a selective query and a common one, with the trigram index and, for
comparison, without it. Goal: p99 at most 50 ms.

hostile: the microblog's weighted count (its link detection) of long dotted tokens, in process,
the best of five runs each: the 4,988-character description of the end-to-end test
(tests/e2e/test_revival.py), four and ten times longer, and the unit test's tokens. Linear: the
time grows with the length, not with its square. Needs no stack.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import aiohttp

from domain.analysis.text import fold
from domain.videos import Video
from infra import stack
from infra.codec import EventRegistry, StoredEvent
from projections import revival_candidates
from projections.revival_candidates_queries import SEARCH_WALK_ROWS
from services.processes.projector.runner import execute_statements
from tests.benchmarks.bench_api import (
    cpu_seconds,
    machine_busy,
    postgres_cpu_by_client,
    postgres_cpu_seconds,
    server_latencies_ms,
)
from tests.benchmarks.bench_core import TEMPLATE, core_speed_ms, fresh, machine
from tests.media_factory import make_captioned_video, podcast_cues
from tests.support.service import running_service
from tests.support.stack import _base_settings, drop_isolated

_T0 = datetime(2025, 1, 1, tzinfo=UTC)
REQUESTS = int(os.environ.get("BENCH_REQUESTS", "400"))
CONCURRENCY = 8
# API processes for the completions (``BENCH_APIS``, 1): with more, the client spreads its requests
# over them in turn, as a load balancer in front of several API processes would.
APIS = int(os.environ.get("BENCH_APIS", "1"))
PLATFORMS = ["videosite_long", "videosite_shorts", "professional_network_long", "social_network_a_video",
             "social_network_a_reels", "social_network_b_reels", "short_video_app", "microblog_video",
             "pinboard_site", "blog_embed"]


def percentiles(samples: list[float]) -> dict:
    ordered = sorted(samples)
    return {"n": len(ordered), "p50_ms": round(statistics.median(ordered) * 1000, 1),
            "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 1),
            "max_ms": round(ordered[-1] * 1000, 1)}


async def timed_requests(count: int, concurrency: int, send) -> list[float]:
    """``count`` calls of ``send(i)`` with at most ``concurrency`` in flight; each one's seconds."""
    samples: list[float] = []
    queue = iter(range(count))

    async def worker() -> None:
        for i in queue:
            started = time.perf_counter()
            await send(i)
            samples.append(time.perf_counter() - started)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return samples


async def database_activity(pool) -> dict[str, int]:
    """This database's transactions and rows touched so far (PostgreSQL's statistics)."""
    async with pool.acquire() as conn:
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        row = await conn.fetchrow(
            "SELECT xact_commit + xact_rollback AS transactions, tup_returned + tup_fetched AS rows_read, "
            "tup_inserted + tup_updated + tup_deleted AS rows_written FROM pg_stat_database "
            "WHERE datname = current_database()")
    return dict(row)


async def events_by_type(pool) -> dict[str, int]:
    async with pool.acquire() as conn:
        rows = await conn.fetch("SELECT type, count(*) AS n FROM events GROUP BY type")
    return {row["type"]: row["n"] for row in rows}


async def upload_and_analyse(http: aiohttp.ClientSession, base: str, key: str, video: Path, vtt: Path,
                             media_id: int) -> tuple[int, float]:
    headers = {"Authorization": f"Bearer {key}"}
    form = aiohttp.FormData()
    form.add_field("file", video.read_bytes(), filename=video.name, content_type="video/mp4")
    form.add_field("captions", vtt.read_bytes(), filename=vtt.name, content_type="text/vtt")
    for name, value in (("name", "Rénovation énergétique, une heure"), ("media_id", str(media_id)),
                        ("language", "fr"), ("published_at", "2018-09-01T08:00:00Z")):
        form.add_field(name, value)
    async with http.post(f"{base}/videos", data=form, headers=headers) as resp:
        assert resp.status == 201, await resp.text()
        video_id = (await resp.json())["data"]["id"]
    started = time.perf_counter()
    async with http.post(f"{base}/videos/{video_id}/analyze", json={"language": "fr"}, headers=headers) as resp:
        assert resp.status == 202, await resp.text()
        job_id = (await resp.json())["data"]["job_id"]
    while True:
        async with http.get(f"{base}/jobs/{job_id}", headers=headers) as resp:
            job = (await resp.json())["data"]
        if job["status"] in ("completed", "failed", "cancelled"):
            assert job["status"] == "completed", job
            return video_id, time.perf_counter() - started
        await asyncio.sleep(0.5)


async def bench_complete(base_settings, results: dict) -> None:
    root = Path(tempfile.mkdtemp(prefix="vaeo-bench-revival-"))
    made = await asyncio.to_thread(make_captioned_video, root, 3600, podcast_cues(3600), "hour.mp4")
    async with running_service(base_settings, TEMPLATE, root, apis=APIS) as svc:
        ws = await svc.workspace(credits=10 * REQUESTS + 1000)
        headers = {"Authorization": f"Bearer {ws.key}"}
        async with svc.http.post(f"{svc.base}/medias", json={"name": "bench"}, headers=headers) as resp:
            media_id = (await resp.json())["data"]["id"]
        video_id, analysis_s = await upload_and_analyse(svc.http, svc.base, ws.key, made["video"], made["vtt"],
                                                        media_id)
        results["complete_analysis_s"] = round(analysis_s, 1)
        for _ in range(200):
            async with svc.http.get(f"{svc.base}/production/revival/candidates", headers=headers) as resp:
                listed = (await resp.json())["data"]
            if listed:
                break
            await asyncio.sleep(0.1)
        [candidate] = listed
        async with svc.pool.acquire() as conn:
            graph_bytes = await conn.fetchval("SELECT length(graph::text) FROM content_graphs")
            article_bytes = await conn.fetchval("SELECT length(content::text) FROM articles")
        results["complete_graph_kb"] = round(graph_bytes / 1024)
        results["complete_article_kb"] = round(article_bytes / 1024)
        body = {"media_id": media_id, "candidate_id": candidate["id"], "platforms": PLATFORMS}

        run = uuid.uuid4().hex[:8]

        async def send(i: int, prefix: str = "warm") -> None:
            payload = {**body, "idempotency_key": f"bench-complete-{i:08d}-{uuid.uuid4().hex[:8]}"}
            base = svc.bases[i % len(svc.bases)]
            async with svc.http.post(f"{base}/production/descriptions/complete", json=payload,
                                     headers={**headers, "X-Request-Id": f"{prefix}-{run}-{i:08d}"}) as resp:
                assert resp.status == 200, await resp.text()
                await resp.read()

        await timed_requests(16, 1, send)  # warm-up
        alone = await timed_requests(50, 1, send)
        results["complete_one_at_a_time"] = percentiles(alone)
        speed_before = core_speed_ms()  # outside the CPU figures: it runs in the client's process
        pids = {name: proc.pid for name, proc in svc.procs.items()} | {"client": os.getpid()}
        kafka_pid = stack._kafka_pid(base_settings)  # the broker: its CPU per completion too
        if kafka_pid:
            pids["kafka"] = kafka_pid
        cpu_before = {name: cpu_seconds(pid) for name, pid in pids.items()} | {"postgres": postgres_cpu_seconds()}
        busy_before = machine_busy()
        db_before = await database_activity(svc.pool)
        by_client_before = await postgres_cpu_by_client(svc.pool)
        events_before = await events_by_type(svc.pool)
        apis = ", ".join(str(pids[f"api{i}"]) for i in range(APIS))
        print(f"completions at concurrency {CONCURRENCY} ({APIS} API process(es), pid {apis}; "
              f"relay pid {pids.get('relay')}, projector pid {pids.get('projector')})", flush=True)
        results["complete_api_processes"] = APIS
        samples = await timed_requests(REQUESTS, CONCURRENCY, lambda i: send(i, "c8"))
        busy_after = machine_busy()
        cpu_after = {name: cpu_seconds(pid) for name, pid in pids.items()} | {"postgres": postgres_cpu_seconds()}
        db_after = await database_activity(svc.pool)
        by_client_after = await postgres_cpu_by_client(svc.pool)
        events_after = await events_by_type(svc.pool)
        results["complete_core_speed_ms"] = [speed_before, core_speed_ms()]
        results["complete_concurrency_8"] = percentiles(samples)
        server = await server_latencies_ms(svc.settings, {f"c8-{run}-{i:08d}" for i in range(REQUESTS)})
        results["complete_concurrency_8_server"] = percentiles([ms / 1000 for ms in server])
        results["complete_database_per_request"] = {name: round((db_after[name] - db_before[name]) / REQUESTS, 1)
                                                     for name in db_after}
        results["complete_cpu_ms_per_request"] = {name: round((cpu_after[name] - cpu_before[name]) * 1000 / REQUESTS, 1)
                                                  for name in cpu_after}
        results["complete_postgres_cpu_ms_by_client"] = {
            name: round((seconds - by_client_before.get(name, 0.0)) * 1000 / REQUESTS, 2)
            for name, seconds in sorted(by_client_after.items()) if seconds > by_client_before.get(name, 0.0)}
        results["complete_events_per_request"] = {kind: round((n - events_before.get(kind, 0)) / REQUESTS, 2)
                                                  for kind, n in events_after.items() if n > events_before.get(kind, 0)}
        results["complete_machine_busy_pct"] = round(100 * (busy_after[0] - busy_before[0])
                                                     / max(1, busy_after[1] - busy_before[1]), 1)
        results["complete_video_id"] = video_id
        async with svc.pool.acquire() as conn:
            sizes = await conn.fetchrow(
                "SELECT avg(length(data::text))::int AS event, avg(pg_column_size(data))::int AS stored "
                "FROM events WHERE type = 'DescriptionsCompleted'")
            answer = await conn.fetchval("SELECT avg(length(body::text))::int FROM idempotency_keys "
                                         "WHERE operation = 'complete_descriptions'")
        results["complete_bytes"] = {"event_json": sizes["event"], "event_stored": sizes["stored"],
                                     "idempotency_answer_json": answer}


def candidate_events(workspace_id: uuid.UUID, count: int, seed: int = 7) -> list[StoredEvent]:
    """Upload, graph and analysis events of ``count`` videos with titles and descriptions drawn from
    the podcast's sentences (so that a query matches a realistic share of them)."""
    rng = random.Random(seed)
    sentences = [c.text for c in podcast_cues(1300)]
    registry = EventRegistry()
    out: list[StoredEvent] = []
    position = 0
    for n in range(1, count + 1):
        title = " ".join(rng.choice(sentences).split()[:8])
        description = " ".join(rng.sample(sentences, rng.randint(0, 6)))
        video = Video.upload(video_id=n, workspace_id=workspace_id, environment="production", name=title,
                             storage_key="k", size_bytes=1, duration_ms=rng.randint(20, 3600) * 1000, media_id=1,
                             description=description or None, caption_cues=1)
        claims = [{"id": f"c{k}"} for k in range(rng.randint(0, 30))]
        intents = [{"answered": rng.random() < 0.5} for _ in range(rng.randint(0, 8))]
        video.record_analysis(job_id=uuid.uuid4(), graph={"durationMs": video.duration_ms, "claims": claims,
                                                          "searchIntents": intents, "chapters": []},
                              analysis_mode="standard", article_id=n)
        for new in registry.to_new_events(video.collect_events(), workspace_id=workspace_id):
            position += 1
            out.append(StoredEvent(position, new.stream_id, new.stream_type, new.version, workspace_id, new.type,
                                   new.schema, new.data, {}, _T0))
    return out




async def bench_candidates(base_settings, results: dict) -> None:
    root = Path(tempfile.mkdtemp(prefix="vaeo-bench-candidates-"))
    async with running_service(base_settings, TEMPLATE, root, processes=(), apis=1) as svc:
        ws = await svc.workspace(credits=10)
        events = candidate_events(ws.id, 10_000)
        async with svc.pool.acquire() as conn, conn.transaction():
            for ev in events:
                await execute_statements(conn, revival_candidates.projection.apply(ev))
        async with svc.pool.acquire() as conn:
            await conn.execute("ANALYZE revival_candidates")
            total = await conn.fetchval("SELECT count(*) FROM revival_candidates WHERE is_candidate")
        results["candidates"] = total
        speed_before = core_speed_ms()
        headers = {"Authorization": f"Bearer {ws.key}"}
        # a query no candidate matches (every row must be looked at, unless an index says none
        # match), a rare one, a common one
        for label, query in (("no_match", "éolienne flottante"), ("rare", "copropriété"),
                             ("common", "rénovation")):
            async with svc.pool.acquire() as conn:
                matching = await conn.fetchval("SELECT count(*) FROM revival_candidates WHERE search_text LIKE $1",
                                               "%" + fold(query) + "%")
                # how many of them the first step finds (the best SEARCH_WALK_ROWS in score order)
                first_step = await conn.fetchval(
                    f"SELECT count(*) FROM (SELECT search_text FROM revival_candidates WHERE is_candidate "
                    f"ORDER BY score DESC, video_id LIMIT {SEARCH_WALK_ROWS}) AS best WHERE search_text LIKE $1",
                    "%" + fold(query) + "%")
            for indexed in (True, False):
                if not indexed:
                    async with svc.pool.acquire() as conn:
                        await conn.execute("DROP INDEX revival_candidates_search")

                async def send(i: int, query=query) -> None:
                    async with svc.http.get(f"{svc.base}/production/revival/candidates",
                                            params={"query": query, "limit": "30"}, headers=headers) as resp:
                        assert resp.status == 200, await resp.text()
                        await resp.read()

                await timed_requests(20, 1, send)
                samples = await timed_requests(REQUESTS, CONCURRENCY, send)
                name = f"candidates_{label}_{'trigram_index' if indexed else 'no_index'}"
                results[name] = percentiles(samples) | {"matching": matching, "in_first_step": first_step}
                if not indexed:
                    async with svc.pool.acquire() as conn:
                        await conn.execute(revival_candidates.projection.ddl[2])
        async with svc.pool.acquire() as conn:
            plan = await conn.fetch("EXPLAIN SELECT video_id FROM revival_candidates WHERE workspace_id = $1 AND "
                                    "environment = 'production' AND is_candidate AND search_text LIKE '%eolienne "
                                    "flottante%' ORDER BY score DESC, video_id LIMIT 30", ws.id)
        results["candidates_plan"] = " / ".join(r[0].strip() for r in plan[:4])
        results["candidates_core_speed_ms"] = [speed_before, core_speed_ms()]


HOSTILE_TOKENS = {
    "https:// + a. x 2,490 (4,988 characters)": "https://" + "a." * 2490,
    "https:// + a. x 10,000 (20,008 characters)": "https://" + "a." * 10_000,
    "https:// + a. x 25,000 (50,008 characters)": "https://" + "a." * 25_000,
    "a. x 10,000 + 1 (no top-level domain)": "a." * 10_000 + "1",
    "a-b. x 5,000 + -": "a-b." * 5_000 + "-",
}


def bench_hostile(results: dict) -> None:
    from domain.platforms import weighted_length

    for name, token in HOSTILE_TOKENS.items():
        best = float("inf")
        for _ in range(5):
            started = time.perf_counter()
            weighted_length(token)
            best = min(best, time.perf_counter() - started)
        results[f"hostile_weighted_length_ms {name}"] = round(best * 1000, 2)


async def main(which: list[str]) -> dict:
    if which == ["hostile"]:
        results: dict = {"machine": machine()}
        bench_hostile(results)
        return results
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    await drop_isolated(base, await fresh(base))  # (re)makes the benchmarks' migrated template
    results = {"machine": machine()}
    if not which or "complete" in which:
        await bench_complete(base, results)
    if not which or "candidates" in which:
        await bench_candidates(base, results)
    if not which or "hostile" in which:
        bench_hostile(results)
    return results


def run(which: list[str]) -> None:
    import orjson

    results = asyncio.run(main(which))
    for k, v in results.items():
        print(f"{k:45} {v}")
    print(orjson.dumps(results).decode())


if __name__ == "__main__":
    import sys

    run(sys.argv[1:])

