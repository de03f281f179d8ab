"""The ``vaeo`` command line run as a process of a test, and free ports for what it starts."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

from tests.support.stack import ROOT, env_for


async def vaeo(settings, *args: str, timeout: float = 120, env: dict | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "services.cli", *args, env=env or env_for(settings), cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode(), err.decode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
