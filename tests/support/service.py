"""The service's real processes for end-to-end tests and benchmarks: started as ``vaeo up`` starts
them, driven over HTTP."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import aiohttp
import asyncpg
import orjson

from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventstore import EventStore
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from services.application.keys import IssueKey
from services.application.workspaces import CreateWorkspace
from tests.helpers import handle, terminate_with_parent
from tests.support.stack import ROOT, drop_isolated, env_for, make_isolated_settings

# Every folder of process logs the e2e tests made: searched for credentials when the session ends.
LOG_FOLDERS: list[Path] = []


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Reply:
    status: int
    headers: Any
    body: Any

    @property
    def data(self) -> Any:
        return self.body["data"]

    @property
    def error(self) -> dict:
        assert isinstance(self.body, dict) and "error" in self.body, self.body
        return self.body["error"]


class Client:
    """A caller with (or without) a key, against one API process."""

    def __init__(self, http: aiohttp.ClientSession, base: str, key: str | None) -> None:
        self.http = http
        self.base = base
        self.key = key

    def with_key(self, key: str | None) -> Client:
        return Client(self.http, self.base, key)

    async def call(self, method: str, path: str, json: Any = None, *, headers: dict | None = None,
                   data: bytes | str | None = None, params: dict | None = None) -> Reply:
        hdrs = {"Authorization": f"Bearer {self.key}"} if self.key else {}
        hdrs.update(headers or {})
        if json is not None:
            data = orjson.dumps(json)
            hdrs.setdefault("Content-Type", "application/json")
        async with self.http.request(method, self.base + path, data=data, headers=hdrs, params=params) as resp:
            raw = await resp.read()
            try:
                body = orjson.loads(raw) if raw else None
            except orjson.JSONDecodeError:
                body = raw
            return Reply(resp.status, resp.headers, body)

    async def get(self, path: str, **kw) -> Reply:
        return await self.call("GET", path, **kw)

    async def post(self, path: str, json: Any = None, **kw) -> Reply:
        return await self.call("POST", path, json, **kw)

    async def delete(self, path: str, **kw) -> Reply:
        return await self.call("DELETE", path, **kw)


@dataclass
class Workspace:
    id: UUID
    key: str
    client: Client


@dataclass
class Service:
    settings: Settings
    bases: list[str]
    pool: asyncpg.Pool
    store: EventStore
    http: aiohttp.ClientSession
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: Path | None = None

    @property
    def base(self) -> str:
        return self.bases[0]

    def client(self, key: str | None = None, api: int = 0) -> Client:
        return Client(self.http, self.bases[api], key)

    async def workspace(self, *, name: str = "ws", plan: str = "pro", credits: int = 1000,
                        rate_limit: int = 100_000) -> Workspace:
        ws, issued = await handle(self.store, CreateWorkspace(name=name, plan=plan, credits=credits,
            rate_limit=rate_limit))
        return Workspace(ws, issued.key, self.client(issued.key))

    async def key(self, ws: Workspace, scopes: list[str], environment: str = "production") -> str:
        """A key issued directly (as an operator would), for scope and sandbox tests."""
        issued = await handle(self.store, IssueKey(ws.id, name="t", scopes=scopes, environment=environment,
            expires_at=None, issuer_scopes=None, issued_by=None))
        return issued.key


def spawn(command: str, env: dict[str, str], logs: Path, label: str | None = None) -> subprocess.Popen:
    """``python -m services.cli <command>``, as ``vaeo up`` starts it; output in ``logs/<label>.log``."""
    out = (logs / f"{label or command}.log").open("ab")
    return subprocess.Popen([sys.executable, "-m", "services.cli", command], env=env, stdout=out,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=ROOT,
                            preexec_fn=terminate_with_parent)


async def wait_healthy(http: aiohttp.ClientSession, base: str, proc: subprocess.Popen, timeout: float = 180) -> None:
    # A deadline, not a measure: an API process imports the whole service before it answers, which
    # takes seconds on a quiet machine and can take a minute when the CPU is shared.
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"API process exited with {proc.returncode}")
        try:
            async with http.get(base.removesuffix("/v1") + "/healthz") as resp:
                # Ready for commands: PostgreSQL answers and the API's link to Kafka is up (until it
                # is, commands answer 503; on a busy machine the link can take seconds to come up).
                if resp.status == 200 and (await resp.json())["data"]["kafka"]:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise TimeoutError(f"API at {base} not ready for commands")


def stop_all(procs: dict[str, subprocess.Popen]) -> None:
    for proc in procs.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + 15
    for proc in procs.values():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


async def start_api(settings: Settings, http: aiohttp.ClientSession, logs: Path, name: str = "api",
                    **env_overrides: str) -> tuple[str, subprocess.Popen]:
    port = free_port()
    env = dict(env_for(settings), VAEO_API_PORT=str(port), **env_overrides)
    proc = spawn("api", env, logs, label=name)
    base = f"http://127.0.0.1:{port}/v1"
    await wait_healthy(http, base, proc)
    return base, proc


@asynccontextmanager
async def running_service(stack_settings: Settings, template_db: str, logs: Path,
                          processes: tuple[str, ...] = ("relay", "projector", "worker"), apis: int = 2,
                          prepare: Callable[[Settings, EventStore], Awaitable[None]] | None = None,
                          **env_overrides: str) -> AsyncIterator[Service]:
    """Isolated database and topics, ``processes`` and ``apis`` API processes, each with
    ``env_for(settings)`` (and a dispatcher's consumer group of their own) plus ``env_overrides``
    (``VAEO_...`` variables); all stopped on exit. ``prepare`` appends what the log must hold
    before any process starts (a history written by an earlier build)."""
    settings = await make_isolated_settings(stack_settings, template_db)
    LOG_FOLDERS.append(logs)
    env = {**env_for(settings), "VAEO_DISPATCHER_GROUP": settings.consumer_group_prefix + "dispatcher",
           **env_overrides}
    procs: dict[str, subprocess.Popen] = {}
    http = aiohttp.ClientSession()
    pool = await create_pool(settings.resolved_database_url(), max_size=10)
    store = PostgresEventStore(pool, EventRegistry())
    try:
        if prepare is not None:
            await prepare(settings, store)
        for name in processes:
            procs[name] = spawn(name, env, logs)
        bases = []
        for i in range(apis):
            base, proc = await start_api(settings, http, logs, name="api" if i == 0 else f"api{i}", **env_overrides)
            procs[f"api{i}"] = proc
            bases.append(base)
        yield Service(settings, bases, pool, store, http, procs, logs)
    finally:
        await tear_down(procs, http, pool, stack_settings, settings, logs)


async def tear_down(procs: dict[str, subprocess.Popen], http: aiohttp.ClientSession, pool: asyncpg.Pool,
                    stack_settings: Settings, settings: Settings, logs: Path) -> None:
    """What a running service's fixture undoes: its processes, its client, its pool, its database;
    with ``VAEO_E2E_SHOW_LOGS`` set, the end of every process's log printed."""
    stop_all(procs)
    await http.close()
    await pool.close()
    await drop_isolated(stack_settings, settings)
    if os.environ.get("VAEO_E2E_SHOW_LOGS"):
        for f in sorted(logs.iterdir()):
            print(f"----- {f.name}\n{f.read_text()[-4000:]}")
