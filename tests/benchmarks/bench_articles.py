"""Article exports benchmark: ``python -m tests.benchmarks articles [--minutes N] [--seconds S]``.

The article of a 60-minute captioned video (the interview fixture repeated for an hour, on a
small generated video), written by the real pipeline: upload, ``analyze_video`` on the worker.
Then each of the six export formats, and ``GET /v1/articles/{id}`` beside them, at concurrency 8
for 15 s each, one after the other against one API process (with the relay, projector and worker
running, as ``vaeo up`` starts them). Each format is exported once first: its first export reports
itself for ``ExportReady`` (recorded by the exports watch in the worker), which later ones do not.

Each format is then measured a second time with every request naming another canonical address
(``?url=``): none is an export the API process has rendered before, so each is rendered (the
cost of a first export in its hour, and of an API process that keeps nothing).

Server time is what the API measured of each call (the ``latency_ms`` of its telemetry record:
from the request's arrival to its answer), read back from the telemetry topic by the request ids
the client sent; the client's own round trip is printed beside it. Goals: p99 server time at most
50 ms for every format, and the slowest export within 3x of the detail read.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from domain.exports import FORMATS
from infra import stack
from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventstore_postgres import PostgresEventStore
from services.application.workspaces import CreateWorkspace
from tests.benchmarks.bench_analysis import hour_of_captions
from tests.benchmarks.bench_api import free_port, start, stop_all, wait_http
from tests.benchmarks.bench_core import fresh, machine
from tests.helpers import handle, kafka_messages
from tests.support.stack import _base_settings, drop_isolated, env_for

CONCURRENCY = 8


def make_video(path: Path, minutes: int) -> None:
    """A small video of ``minutes``: one frame a second, a cut every 5 minutes, a tone."""
    seconds = minutes * 60
    video = f"testsrc=s=320x180:r=1:d={seconds},hue=h='if(lt(mod(t,600),300),0,120)'"
    audio = f"sine=frequency=330:sample_rate=16000:duration={seconds}"
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i", video, "-f", "lavfi",
                    "-i", audio, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac",
                    "-b:a", "24k", "-shortest", str(path)], check=True, timeout=1800)


async def load(http: aiohttp.ClientSession, url: str, key: str, label: str, seconds: float,
               fresh: bool = False) -> dict:
    """``CONCURRENCY`` clients calling ``url`` for ``seconds``; each request tagged ``label-...``.
    ``fresh``: each request names another canonical address (``?url=``), so none is the export an
    earlier request rendered: every one is rendered."""
    client_ms: list[float] = []
    sizes: set[int] = set()
    deadline = time.monotonic() + seconds

    async def one_client(n: int) -> None:
        k = 0
        while time.monotonic() < deadline:
            k += 1
            started = time.perf_counter()
            params = {"url": f"https://publisher.example/{label}/{n}/{k}"} if fresh else None
            async with http.get(url, params=params, headers={"Authorization": f"Bearer {key}",
                                                             "X-Request-Id": f"{label}-{n}-{k}"}) as resp:
                body = await resp.read()
                assert resp.status == 200, (resp.status, body[:300])
            client_ms.append((time.perf_counter() - started) * 1000)
            sizes.add(len(body))

    await asyncio.gather(*(one_client(n) for n in range(CONCURRENCY)))
    return {"client_ms": client_ms, "bytes": max(sizes)}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def main(minutes: int, seconds: float) -> dict:
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    settings = await fresh(base)
    port = free_port()
    env = env_for(settings) | {"VAEO_API_PORT": str(port)}
    logdir = tempfile.mkdtemp(prefix="vaeo-bench-articles-")
    procs = {n: start(n, env, f"{logdir}/{n}.log") for n in ("api", "relay", "projector", "worker")}
    pool = await create_pool(settings.resolved_database_url(), max_size=4)
    results: dict = {"machine": machine(), "minutes": minutes, "concurrency": CONCURRENCY, "seconds": seconds}
    try:
        _, issued = await handle(PostgresEventStore(pool, EventRegistry()), CreateWorkspace(name="bench", plan="bench",
            credits=10**6, rate_limit=10**9))
        key = issued.key
        await wait_http(port)
        api = f"http://127.0.0.1:{port}/v1"
        tmp = Path(logdir)
        started = time.perf_counter()
        await asyncio.to_thread(make_video, tmp / "hour.mp4", minutes)
        (tmp / "hour.vtt").write_text(hour_of_captions(minutes), encoding="utf-8")
        results["media_generated_s"] = round(time.perf_counter() - started, 1)
        async with aiohttp.ClientSession() as http:
            auth = {"Authorization": f"Bearer {key}"}
            form = aiohttp.FormData()
            form.add_field("file", (tmp / "hour.mp4").read_bytes(), filename="hour.mp4", content_type="video/mp4")
            form.add_field("captions", (tmp / "hour.vtt").read_bytes(), filename="hour.vtt", content_type="text/vtt")
            async with http.post(f"{api}/videos", data=form, headers=auth) as resp:
                video = orjson.loads(await resp.read())
                assert resp.status == 201, video
            started = time.perf_counter()
            async with http.post(f"{api}/videos/{video['data']['id']}/analyze", json={}, headers=auth) as resp:
                job_id = orjson.loads(await resp.read())["data"]["job_id"]
            while True:
                async with http.get(f"{api}/jobs/{job_id}", headers=auth) as resp:
                    job = orjson.loads(await resp.read())["data"]
                if job["status"] in ("completed", "failed"):
                    break
                await asyncio.sleep(0.5)
            assert job["status"] == "completed", job
            results["analysis_s"] = round(time.perf_counter() - started, 1)
            article = job["article_id"]
            async with http.get(f"{api}/articles/{article}", headers=auth) as resp:
                detail = orjson.loads(await resp.read())["data"]
            results["article"] = {"sections": len(detail["content"]["sections"]),
                                  "words": detail["content"]["word_count"], "faq": len(detail["content"]["faq"])}
            targets = {"detail": f"{api}/articles/{article}"}
            targets.update({name: f"{api}/articles/{article}/export/{name}" for name in FORMATS})
            for name in FORMATS:  # the first export: reported for ExportReady
                first = time.perf_counter()
                async with http.get(targets[name], headers=auth) as resp:
                    assert resp.status == 200, await resp.text()
                results.setdefault("first_export_ms", {})[name] = round((time.perf_counter() - first) * 1000, 1)
            runs = {}
            for name, url in targets.items():
                runs[name] = await load(http, url, key, f"bench-{name}", seconds)
            for name in FORMATS:  # the same exports, each request rendered anew
                runs[f"{name}.rendered"] = await load(http, targets[name], key, f"bench-{name}.rendered", seconds,
                                                      fresh=True)
        await asyncio.sleep(3)  # the API's telemetry buffer is flushed to Kafka
        server: dict[str, list[float]] = {name: [] for name in runs}
        for messages in (await kafka_messages(settings, settings.telemetry_topic)).values():
            for message in messages:
                record = orjson.loads(message.value)
                label = str(record.get("request_id", ""))
                if label.startswith("bench-"):
                    server[label.split("-")[1]].append(record["latency_ms"])
        figures = {}
        for name, run in runs.items():
            figures[name] = {"requests": len(run["client_ms"]),
                             "req_per_s": round(len(run["client_ms"]) / seconds, 1), "bytes": run["bytes"],
                             "server_p50_ms": round(statistics.median(server[name]), 2) if server[name] else None,
                             "server_p99_ms": round(pct(server[name], 99), 2) if server[name] else None,
                             "client_p50_ms": round(statistics.median(run["client_ms"]), 2),
                             "client_p99_ms": round(pct(run["client_ms"], 99), 2),
                             "server_records": len(server[name])}
        results["figures"] = figures
        slowest = max(FORMATS, key=lambda n: figures[n]["server_p99_ms"] or 0)
        results["slowest_export"] = slowest
        detail_p99 = figures["detail"]["server_p99_ms"]
        results["slowest_vs_detail_p99"] = round(figures[slowest]["server_p99_ms"] / detail_p99, 2)
        results["slowest_vs_detail_p50"] = round(max(figures[n]["server_p50_ms"] for n in FORMATS)
                                                 / figures["detail"]["server_p50_ms"], 2)
        results["every_export_p99_within_50_ms"] = all(figures[n]["server_p99_ms"] <= 50 for n in FORMATS)
        rendered = [f"{n}.rendered" for n in FORMATS]
        slowest = max(rendered, key=lambda n: figures[n]["server_p99_ms"] or 0)
        results["rendered_slowest"] = slowest
        results["rendered_slowest_vs_detail_p99"] = round(figures[slowest]["server_p99_ms"] / detail_p99, 2)
        results["rendered_every_export_p99_within_50_ms"] = all(figures[n]["server_p99_ms"] <= 50 for n in rendered)
    finally:
        stop_all(procs)
        await pool.close()
        await drop_isolated(base, settings)
    return results


def run(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.benchmarks articles")
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=15.0)
    args = parser.parse_args(argv or [])
    results = asyncio.run(main(args.minutes, args.seconds))
    for name, figure in results.pop("figures").items():
        print(f"{name:18} {figure['requests']:6d} requests {figure['req_per_s']:7.1f}/s {figure['bytes']:8d} B  "
              f"server p50 {figure['server_p50_ms']:6.2f} ms p99 {figure['server_p99_ms']:6.2f} ms  "
              f"client p50 {figure['client_p50_ms']:6.2f} ms p99 {figure['client_p99_ms']:6.2f} ms")
    for k, v in results.items():
        print(f"{k:30} {v}")


if __name__ == "__main__":
    run(sys.argv[1:])
