"""File download benchmark: ``python -m tests.benchmarks.bench_files [--mib N] [--ranges N]``.

The body of ``GET /v1/files/{token}`` (``services.api.files.FileSlice``: chunks read off the event
loop from the opened stored file) beside aiohttp's ``web.FileResponse`` (sendfile) on the same
file, in one aiohttp app on loopback, client in the same process:

1. whole-file throughput (MB/s), each side three times, alternating;
2. seeks: ``--ranges`` requests of a random 64 KiB range each, one at a time (requests/s), as a
   video player's seeking does.

No goal is asserted: a video stream needs a few MB/s; the figures say what the chunked body
costs against sendfile.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time

import aiohttp
from aiohttp import web

from infra.storage import LocalStorage
from services.api.files import FileSlice, parse_range

KEY = "bench/files/big.bin"


async def main(mib: int, ranges: int) -> None:
    storage = LocalStorage(tempfile.mkdtemp(prefix="vaeo-bench-files-"))
    storage.write_bytes(KEY, os.urandom(1 << 20) * mib)
    size = storage.size(KEY)

    async def chunked(request: web.Request) -> web.Response:
        opened = await asyncio.to_thread(storage.open, KEY)
        wanted = parse_range(request.headers.get("Range"), size)
        start, length, status = (wanted.start, wanted.length, 206) if wanted else (0, size, 200)
        return web.Response(status=status, body=FileSlice(opened, start, length, "application/octet-stream",
                                                          send_timeout=60.0, release=lambda: None))

    async def sendfile(request: web.Request) -> web.FileResponse:
        return web.FileResponse(storage.path(KEY))

    app = web.Application()
    app.router.add_get("/chunked", chunked)
    app.router.add_get("/sendfile", sendfile)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # noqa: SLF001 (the port the OS chose)
    base = f"http://127.0.0.1:{port}"
    rng = random.Random(7)
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(3):
                for name in ("chunked", "sendfile"):
                    started, received = time.perf_counter(), 0
                    async with http.get(f"{base}/{name}") as resp:
                        async for chunk in resp.content.iter_chunked(1 << 20):
                            received += len(chunk)
                    took = time.perf_counter() - started
                    print(f"whole file   {name:9} {received / took / 1e6:8.0f} MB/s  ({mib} MiB in {took:.2f} s)")
            for name in ("chunked", "sendfile"):
                started = time.perf_counter()
                for _ in range(ranges):
                    first = rng.randrange(0, size - 65536)
                    async with http.get(f"{base}/{name}", headers={"Range": f"bytes={first}-{first + 65535}"}) as resp:
                        assert resp.status == 206 and len(await resp.read()) == 65536
                took = time.perf_counter() - started
                print(f"64 KiB seeks {name:9} {ranges / took:8.0f} requests/s ({ranges} in {took:.2f} s)")
    finally:
        await runner.cleanup()
        storage.delete(KEY)


def run(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=256, help="file size, MiB")
    parser.add_argument("--ranges", type=int, default=500, help="range requests per side")
    args = parser.parse_args(argv)
    asyncio.run(main(args.mib, args.ranges))


if __name__ == "__main__":
    run()
