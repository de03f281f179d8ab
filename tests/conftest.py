"""Test fixtures: the real stack, started once per run; every test isolated.

The test stack is the project's own local stack under the instance name ``test`` (PostgreSQL on
25433, Kafka on 29092), so it never disturbs a running ``vaeo up``. Point
``VAEO_TEST_DATABASE_URL`` / ``VAEO_TEST_KAFKA_BOOTSTRAP`` at existing servers to use those.

Isolation: each test gets its own database (created from a migrated template) and its own
topics and consumer-group prefix, so tests never see each other's events or offsets.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from aiokafka.admin import AIOKafkaAdminClient

from infra import llama_server, provision, stack
from infra.codec import EventRegistry
from infra.db import create_pool, migrate
from infra.eventstore import EventStore
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from projections import all_ddl
from tests.support.stack import (
    ROOT,
    StackAdmin,
    _admin_dsn,
    _base_settings,
    drop_isolated,
    make_isolated_settings,
    stack_up,
)

# One template per checkout and per pytest-xdist worker: two clones (or worktrees), and the
# parallel workers of one run, share the test stack without dropping each other's template.
TEMPLATE_DB = ("vaeo_template_" + hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]
               + "_" + os.environ.get("PYTEST_XDIST_WORKER", "main"))


def pytest_configure(config) -> None:
    """The system packages of the service and the tests (``infra.provision``), installed by the
    run's controller before pytest-xdist starts its workers: the workers, their fixtures and any
    ``vaeo up`` a test starts then find them present, instead of racing each other for apt."""
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its controller did it
        return
    settings = _base_settings()
    try:
        provision.provision(provision.wanted(local_postgres=not settings.database_url,
                                             local_kafka=not settings.kafka_bootstrap, tests=True))
    except provision.ProvisionError as exc:
        raise pytest.UsageError(f"system packages: {exc}") from exc


@pytest.fixture(scope="session")
def stack_settings() -> Settings:
    """The test stack, up. The parallel workers of one run (``make test`` runs several) start it
    one at a time: the first starts the servers, the others find them running."""
    settings = _base_settings()
    stack_up(settings)
    return settings


@pytest.fixture(scope="session")
def object_store(stack_settings: Settings) -> Settings:
    """The test stack with its SeaweedFS up (on 28333; built from the Go module proxy the first
    time, docs/operations.md), started once per run like PostgreSQL and Kafka. The build (minutes,
    once per machine) holds a lock of its own, not the stack's: other workers' tests go on meanwhile;
    the files that use this fixture allow for it in their timeout (``BUILD_TIMEOUT``)."""
    stack.seaweedfs_binary(stack_settings)
    lock = Path(tempfile.gettempdir()) / "vaeo-test-stack.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        stack.seaweed_up(stack_settings)
    return stack_settings


@dataclass(frozen=True)
class LanguageModel:
    """The test stack's language-model server: where it answers and the model's name there."""

    base_url: str
    model: str
    pid: int
    start_seconds: float


@pytest.fixture(scope="session")
def llm_server(stack_settings: Settings) -> LanguageModel:
    """llama.cpp's OpenAI-compatible server with SmolLM2-135M-Instruct, on loopback (28360), started
    once like SeaweedFS and left running for later runs (``make stop`` stops it). Its build (once per
    machine, ``infra.llama_server``) holds a lock of its own: other workers' tests go on meanwhile;
    the files that use this fixture allow for it in their timeout (``LLAMA_BUILD_TIMEOUT``)."""
    llama_server.server_python(stack_settings)
    llama_server.model_file(stack_settings)
    lock = Path(tempfile.gettempdir()) / "vaeo-test-stack.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        seconds = llama_server.llama_up(stack_settings)
    return LanguageModel(base_url=llama_server.llama_base_url(stack_settings), model=llama_server.MODEL_NAME,
                         pid=llama_server.llama_pid(stack_settings) or 0, start_seconds=seconds)


@pytest.fixture(scope="session")
async def template_db(stack_settings: Settings) -> str:
    admin = await asyncpg.connect(_admin_dsn(stack_settings))
    try:
        await admin.execute(f"DROP DATABASE IF EXISTS {TEMPLATE_DB} WITH (FORCE)")
        await admin.execute(f"CREATE DATABASE {TEMPLATE_DB}")
    finally:
        await admin.close()
    dsn = stack_settings.resolved_database_url().rsplit("/", 1)[0] + f"/{TEMPLATE_DB}"
    await migrate(dsn, all_ddl())
    return TEMPLATE_DB


@pytest.fixture(scope="session")
async def stack_admin(stack_settings: Settings) -> AsyncIterator[StackAdmin]:
    kafka = AIOKafkaAdminClient(bootstrap_servers=stack_settings.resolved_kafka_bootstrap())
    await kafka.start()
    postgres = await asyncpg.connect(_admin_dsn(stack_settings))
    try:
        yield StackAdmin(postgres, kafka)
    finally:
        await postgres.close()
        await kafka.close()


@pytest.fixture
async def settings(stack_settings: Settings, template_db: str, stack_admin: StackAdmin) -> AsyncIterator[Settings]:
    isolated = await make_isolated_settings(stack_settings, template_db, admin=stack_admin)
    yield isolated
    await drop_isolated(stack_settings, isolated, admin=stack_admin)


@pytest.fixture
async def pool(settings: Settings) -> AsyncIterator[asyncpg.Pool]:
    p = await create_pool(settings.resolved_database_url(), max_size=40)
    yield p
    await p.close()


@pytest.fixture
def registry() -> EventRegistry:
    return EventRegistry()


@pytest.fixture
def store(pool: asyncpg.Pool, registry: EventRegistry) -> EventStore:
    return PostgresEventStore(pool, registry)


class Background:
    """Run coroutines of ours as tasks for the length of a test; cancel them at the end."""

    def __init__(self) -> None:
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []

    def start(self, coro_fn) -> asyncio.Task:
        task = asyncio.create_task(coro_fn(self.stop))
        self.tasks.append(task)
        return task

    async def close(self) -> None:
        self.stop.set()
        done, pending = await asyncio.wait(self.tasks, timeout=15) if self.tasks else (set(), set())
        for t in pending:
            t.cancel()
        for t in done:
            if not t.cancelled() and t.exception():
                raise t.exception()


@pytest.fixture
async def background() -> AsyncIterator[Background]:
    bg = Background()
    yield bg
    await bg.close()


_KIND_ORDER = {"e2e": 0, "integration": 1, "unit": 2}


def pytest_collection_modifyitems(config, items):
    """The costly files first, the cheap ones last. ``make test`` hands whole files to parallel
    workers (``--dist loadfile``, in this order): a file's module fixtures (a stack of processes,
    an analysed video) are then set up once, not once per worker that took a share of its tests,
    and a long file that started last would hold the end of the run. So: files with a slow
    fault-injection test, then the end-to-end files, the integration files, and the unit files,
    which fill the gaps at the end."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}

    def cost_rank(item) -> tuple[int, int]:
        kind = item.path.relative_to(ROOT / "tests").parts[0] if item.path.is_relative_to(ROOT / "tests") else ""
        return (item.path not in slow_files, _KIND_ORDER.get(kind, 1))

    items.sort(key=cost_rank)
