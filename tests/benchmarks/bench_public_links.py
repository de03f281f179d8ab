"""Public links' answer times: ``python -m tests.benchmarks links [N]``.

``GET /v1/public/{token}`` of a revoked link (a genuine token of a real video whose links were
revoked), of a forged token (the same length, one character changed: it fails the cipher's tag)
and of a malformed one, each answered 404, through the API's app on loopback over a database of
the test stack (the client in the same process). The three are sent in turn, ``N`` times each,
after a warm-up; the figures are the median and the 90th percentile per kind, and the difference
of the medians of revoked and forged: what a prober could tell a once-genuine token by. No goal
is asserted (``tests/integration/test_public_link_work.py`` counts the work of each path).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
import uuid

import aiohttp
import asyncpg
from aiohttp import web

from domain.videos import Video
from infra import stack
from infra.codec import EventRegistry
from infra.db import create_pool, migrate
from infra.eventstore_postgres import PostgresEventStore
from infra.file_urls import public_link
from projections import all_ddl
from services.api.app import build_app
from services.application.videos import RevokePublicLinks
from tests.helpers import handle
from tests.support.stack import _admin_dsn, _base_settings, drop_isolated, make_isolated_settings


async def _tokens(settings) -> dict[str, str]:
    pool = await create_pool(settings.resolved_database_url(), max_size=2)
    try:
        store, ws = PostgresEventStore(pool, EventRegistry()), uuid.uuid4()
        video = Video.upload(video_id=7, workspace_id=ws, environment="production", name="talk",
                             storage_key=f"videos/{ws}/7/source.mp4", size_bytes=10, duration_ms=60_000,
                             demuxer="mov", audio_codec="aac")
        await store.save(video, workspace_id=ws)
        token = public_link(settings, ws, video.storage_key, 7, 0).rsplit("/", 1)[1]
        await handle(store, RevokePublicLinks(ws, "production", 7))
    finally:
        await pool.close()
    forged = token[:20] + ("A" if token[20] != "A" else "B") + token[21:]
    return {"revoked": token, "forged": forged, "malformed": "not-a-token"}


async def main(n: int) -> None:
    base = _base_settings()
    template = f"vaeo_bench_links_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(_admin_dsn(base))
    await admin.execute(f"CREATE DATABASE {template}")
    try:
        await migrate(base.resolved_database_url().rsplit("/", 1)[0] + f"/{template}", all_ddl())
        settings = await make_isolated_settings(base, template)
        try:
            tokens = await _tokens(settings)
            runner = web.AppRunner(build_app(settings), access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 (the port the OS chose)
            times: dict[str, list[float]] = {name: [] for name in tokens}
            try:
                async with aiohttp.ClientSession() as http:
                    for round_no in range(n + 50):
                        for name, token in tokens.items():
                            started = time.perf_counter()
                            async with http.get(f"http://127.0.0.1:{port}/v1/public/{token}") as resp:
                                await resp.read()
                                assert resp.status == 404, (name, resp.status)
                            if round_no >= 50:  # the first 50 rounds warm the app, the pool and the caches
                                times[name].append((time.perf_counter() - started) * 1000)
            finally:
                await runner.cleanup()
        finally:
            await drop_isolated(base, settings)
    finally:
        await admin.execute(f"DROP DATABASE IF EXISTS {template} WITH (FORCE)")
        await admin.close()
    for name, samples in times.items():
        samples.sort()
        print(f"{name:10} median {statistics.median(samples):6.3f} ms  p90 {samples[int(len(samples) * 0.9)]:6.3f} ms"
              f"  ({len(samples)} requests)")
    gap = statistics.median(times["revoked"]) - statistics.median(times["forged"])
    print(f"revoked - forged, medians: {gap:+.3f} ms")


def run(argv: list[str] | None = None) -> None:
    args = list(argv if argv is not None else sys.argv[1:])
    stack.up(_base_settings())  # synchronous: it runs its own event loop to probe the broker
    asyncio.run(main(int(args[0]) if args else 2000))


if __name__ == "__main__":
    run()
