"""``vaeo up`` serves the API, and the curl line it prints works as pasted."""

from __future__ import annotations

import asyncio
import re
import shlex
import shutil
import signal
import subprocess
import sys

import orjson

from tests.support.service import free_port
from tests.support.stack import ROOT, env_for


async def test_vaeo_up_prints_a_curl_line_that_answers_get_me(settings):
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", "up", "--port", str(port), env=env_for(settings), cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[str] = []
    try:
        while not lines or not lines[-1].startswith("Ctrl-C"):
            line = (await asyncio.wait_for(proc.stdout.readline(), 120)).decode()
            assert line, "vaeo up exited early:\n" + "".join(lines)
            lines.append(line)
        curl = next(line for line in lines if line.startswith("try: curl")).removeprefix("try: ").strip()
        key = re.search(r"Bearer (service_live_\S+)'", curl).group(1)
        assert curl.endswith(f"http://127.0.0.1:{port}/v1/me")
        argv = shlex.split(curl) if shutil.which("curl") else None
        for _ in range(100):  # the API process may still be starting
            if argv:
                out = await asyncio.create_subprocess_exec(*argv, stdout=subprocess.PIPE)
                body, _ = await out.communicate()
            else:  # no curl on this machine: the same request with aiohttp
                import aiohttp

                async with aiohttp.ClientSession() as http:
                    try:
                        async with http.get(f"http://127.0.0.1:{port}/v1/me",
                                            headers={"Authorization": f"Bearer {key}"}) as resp:
                            body = await resp.read()
                    except aiohttp.ClientConnectionError:
                        body = b""
            if body:
                break
            await asyncio.sleep(0.1)
        me = orjson.loads(body)
        assert me["data"]["workspace"]["name"] == "default"
        assert me["data"]["apiKey"] == {"id": me["data"]["apiKey"]["id"], "scopes": ["*"], "environment": "production"}
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.stdout.read(), 60)
        assert await asyncio.wait_for(proc.wait(), 60) == 0
