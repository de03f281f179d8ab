"""A scaled-out stack (several APIs, workers, projectors, dispatchers, relays) and what its logs say."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from tests.helpers import until

SCALE = ("--api", "2", "--workers", "2", "--projectors", "2", "--dispatchers", "2")  # and 2 relays


async def _healthy(http: aiohttp.ClientSession, base: str) -> bool:
    try:
        async with http.get(f"{base}/healthz") as resp:
            return resp.status == 200
    except aiohttp.ClientError:
        return False


async def _said(log: Path, text: str) -> bool:
    return log.exists() and text in log.read_text()


async def relay_roles(logs: Path) -> tuple[str, str]:
    """The names of the active relay and of the one standing by, once their logs say so."""

    async def roles():
        said = {n: (logs / f"{n}.log").read_text() if (logs / f"{n}.log").exists() else "" for n in
                ("relay", "relay-2")}
        active = [n for n, t in said.items() if "started at checkpoint" in t]
        standby = [n for n, t in said.items() if "standing by" in t]
        return (active[0], standby[0]) if len(active) == 1 and len(standby) == 1 else None

    return await until(roles, 60, "one active relay and one standing by")
