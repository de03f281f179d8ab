"""Webhook benchmarks: signed deliveries/s beside a raw aiohttp client, and commit-to-receipt latency.

``python -m tests.benchmarks.bench_webhooks`` (on demand, never by the suite). The receiver is an
aiohttp HTTPS server in its own process that answers 200 at once; both clients post the same
bodies at the same concurrency to it in the same run.

- throughput: ``BENCH_DELIVERIES`` rows made due at once; the dispatcher's sender claims, checks
  the destination, signs, sends, appends the attempt events and updates each row (the clock
  stops when the last attempt's events and row are committed); the raw client only posts.
  ``BENCH_ROUNDS`` rounds, the two clients in turns, each on fresh deliveries; the medians are
  compared (one round of either is about two seconds: a burst of load elsewhere on a shared
  machine moves a single round by 20 % or more).
- latency: relay + dispatcher running, ``JobCompleted`` events committed at ``BENCH_RATE``/s; the
  receiver notes each arrival; latency = arrival - the event's commit time (``created_at``).
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
import orjson

from domain.webhooks import delivery_id, payload
from infra.codec import EventRegistry
from infra.crypto import SecretBox
from infra.db import create_pool
from infra.eventstore import EventStore
from infra.eventstore_postgres import PostgresEventStore
from infra.netguard import Allowance, SystemResolver, vet
from infra.webhook_http import ssl_context
from services.application.webhooks import RegisterWebhook
from services.lib.common import freeze_startup_heap
from services.processes.dispatcher import run_dispatcher
from services.processes.dispatcher.sender import Sender
from services.processes.relay import Relay
from tests.benchmarks.bench_core import fresh, machine
from tests.helpers import handle
from tests.support.stack import _base_settings, drop_isolated
from tests.support.webhooks import TestCA, end_job

DELIVERIES = int(os.environ.get("BENCH_DELIVERIES", "5000"))
CONCURRENCY = int(os.environ.get("BENCH_CONCURRENCY", "100"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
RATE = int(os.environ.get("BENCH_RATE", "200"))
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
ADDRESS = "127.0.0.30"


def _serve(cert: str, key: str, port_q) -> None:
    import ssl

    from aiohttp import web

    async def handle(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(text="ok")

    async def main() -> None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        app = web.Application()
        app.router.add_post("/{tail:.*}", handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, ADDRESS, 0, ssl_context=ctx, backlog=1024)
        await site.start()
        port_q.put(site._server.sockets[0].getsockname()[1])
        await asyncio.Event().wait()

    asyncio.run(main())


def start_receiver(ca: TestCA) -> tuple[multiprocessing.Process, int]:
    ca.server_context([], [ADDRESS])
    cert = sorted(ca.dir.glob("srv-*.pem"))[-1]
    key = cert.with_suffix(".key")
    q = multiprocessing.Queue()
    proc = multiprocessing.Process(target=_serve, args=(str(cert), str(key), q), daemon=True)
    proc.start()
    return proc, q.get(timeout=20)


async def raw_client(url: str, bodies: list[bytes], ca_file: str) -> float:
    connector = aiohttp.TCPConnector(ssl=ssl_context(ca_file), limit=CONCURRENCY)
    sem = asyncio.Semaphore(CONCURRENCY)
    async with aiohttp.ClientSession(connector=connector) as http:
        async def one(body: bytes) -> None:
            async with sem, http.post(url, data=body, headers={"Content-Type": "application/json"}) as r:
                await r.read()
                assert r.status == 200

        started = time.perf_counter()
        await asyncio.gather(*(one(b) for b in bodies))
        return time.perf_counter() - started


async def _dispatch(settings, pool, store: EventStore, rows: list[tuple]) -> float:
    """Seconds for a sender to deliver ``rows``, made due at once, and record every attempt."""
    async with pool.acquire() as conn:
        await conn.executemany(
            "INSERT INTO webhook_deliveries (id, workspace_id, environment, webhook_id, url, event, "
            "source_position, payload, status, next_attempt_at) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,'pending',now())",
            rows)
    stop = asyncio.Event()
    sender = Sender(settings, pool, store)
    started = time.perf_counter()
    task = asyncio.create_task(sender.run(stop))
    # The clock stops when every attempt's events and row are committed (the sender counts them
    # after each commit: polling the table would load the same two cores).
    while sender.stats.recorded < len(rows):
        await asyncio.sleep(0.005)
    elapsed = time.perf_counter() - started
    stop.set()
    await task
    async with pool.acquire() as conn:
        done = await conn.fetchval("SELECT count(*) FROM webhook_deliveries WHERE status = 'succeeded' "
                                   "AND id = ANY($1::uuid[])", [r[0] for r in rows])
        events = await conn.fetchval("SELECT count(*) FROM events WHERE stream_id = ANY($1::uuid[])",
                                     [r[0] for r in rows])
    assert done == len(rows) and events == 3 * len(rows), (done, events)
    return elapsed


async def bench_throughput(base, ca: TestCA, url: str, results: dict) -> None:
    settings = (await fresh(base)).model_copy(update={
        "webhook_test_allow": f"{ADDRESS}/32", "webhook_extra_ca_file": str(ca.ca_file),
        "dispatcher_concurrency": CONCURRENCY, "dispatcher_poll_interval_s": 0.05})
    pool = await create_pool(settings.resolved_database_url(), max_size=60)
    try:
        store = PostgresEventStore(pool, EventRegistry())  # as run_dispatcher makes it: the sender batches its appends
        ws = uuid.uuid4()
        webhook, _, _ = await handle(store, RegisterWebhook(ws, environment="production", url=url, events=None),
            box=SecretBox(settings.secret_key))
        async with pool.acquire() as conn:
            await conn.execute("INSERT INTO webhook_targets VALUES ($1, $2, 'production', $3, $4, $5, 'active', 1)",
                               webhook.id, ws, url, webhook.events, webhook.secret_encrypted)
        await vet(url, SystemResolver(), Allowance.parse(f"{ADDRESS}/32"))
        raw_rates, signed_rates = [], []
        for n in range(ROUNDS):  # the two clients in turns: a burst of load elsewhere hits both alike
            rows, bodies = [], []
            for i in range(n * DELIVERIES + 1, (n + 1) * DELIVERIES + 1):
                did = delivery_id(webhook.id, i, "job.completed")
                body = payload(did, "job.completed", "2025-01-01T00:00:00Z", ws, {"job_id": str(uuid.uuid4()), "n": i})
                rows.append((did, ws, "production", webhook.id, url, "job.completed", i, body))
                bodies.append(orjson.dumps(body))
            raw_rates.append(DELIVERIES / await raw_client(url, bodies, str(ca.ca_file)))
            signed_rates.append(DELIVERIES / await _dispatch(settings, pool, store, rows))
        raw, signed = statistics.median(raw_rates), statistics.median(signed_rates)
        results["throughput"] = {
            "deliveries": DELIVERIES, "concurrency": CONCURRENCY, "rounds": ROUNDS,
            "signed_per_s": round(signed), "raw_per_s": round(raw), "ratio": round(signed / raw, 2),
            "signed_per_s_rounds": [round(r) for r in signed_rates], "raw_per_s_rounds": [round(r) for r in raw_rates],
        }
    finally:
        await pool.close()
        await drop_isolated(base, settings)


async def bench_latency(base, ca: TestCA, results: dict) -> None:
    from tests.support.webhooks import Receiver

    settings = (await fresh(base)).model_copy(update={
        "webhook_test_allow": "127.0.0.31/32", "webhook_extra_ca_file": str(ca.ca_file),
        "dispatcher_poll_interval_s": 0.5, "relay_poll_interval_s": 0.2})
    settings = settings.model_copy(update={"dispatcher_group": settings.consumer_group_prefix + "dispatcher"})
    receiver = await Receiver(ca, "127.0.0.31").start()
    pool = await create_pool(settings.resolved_database_url(), max_size=20)
    stop = asyncio.Event()
    tasks = []
    try:
        store = PostgresEventStore(pool, EventRegistry())
        ws = uuid.uuid4()
        await handle(store, RegisterWebhook(ws, environment="production", url=receiver.url(), events=["job.completed"]),
            box=SecretBox(settings.secret_key))
        tasks = [asyncio.create_task(Relay(settings).run(stop)),
                 asyncio.create_task(run_dispatcher(settings, stop))]
        await asyncio.sleep(3)  # consumers joined
        n = int(RATE * SECONDS)
        started = time.perf_counter()
        for i in range(n):
            await end_job(store, ws)
            delay = started + (i + 1) / RATE - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
        deadline = time.monotonic() + 30
        while len(receiver.hits) < n and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        import datetime as dt

        lat = []
        for h in receiver.hits:
            created = dt.datetime.fromisoformat(orjson.loads(h.body)["created_at"].replace("Z", "+00:00"))
            lat.append((h.wall - created.timestamp()) * 1000)
        lat.sort()
        results["latency"] = {"events": n, "rate_per_s": RATE, "received": len(lat),
                              "p50_ms": round(statistics.median(lat), 1),
                              "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 1), "max_ms": round(lat[-1], 1)}
    finally:
        stop.set()
        for t in tasks:
            try:
                await asyncio.wait_for(t, 15)
            except Exception:
                t.cancel()
        await receiver.stop()
        await pool.close()
        await drop_isolated(base, settings)


async def main() -> dict:
    base = _base_settings()
    results: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory() as tmp:
        ca = TestCA(Path(tmp))
        proc, port = start_receiver(ca)
        freeze_startup_heap()  # as `vaeo dispatcher` does at start-up; before both clients, so both gain
        try:
            await bench_throughput(base, ca, f"https://{ADDRESS}:{port}/hook", results)
        finally:
            proc.terminate()
        await bench_latency(base, ca, results)
    return results


def run(args: list[str] | None = None) -> None:
    print(orjson.dumps(asyncio.run(main()), option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    run()
