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
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from pydantic import SecretStr

from infra import llama_server, provision, stack
from infra.codec import EventRegistry
from infra.db import create_pool, migrate
from infra.eventlog import ensure_topics, wanted_topics
from infra.eventstore import EventStore
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from projections import all_ddl

ROOT = Path(__file__).resolve().parent.parent
# One template per checkout and per pytest-xdist worker: two clones (or worktrees), and the
# parallel workers of one run, share the test stack without dropping each other's template.
TEMPLATE_DB = ("vaeo_template_" + hashlib.sha256(str(ROOT).encode()).hexdigest()[:8]
               + "_" + os.environ.get("PYTEST_XDIST_WORKER", "main"))


def _base_settings() -> Settings:
    return Settings(
        stack_instance="test",
        stack_pg_port=25433,
        stack_kafka_port=29092,
        stack_s3_port=28333,
        stack_llm_port=28360,
        database_url=os.environ.get("VAEO_TEST_DATABASE_URL", ""),
        kafka_bootstrap=os.environ.get("VAEO_TEST_KAFKA_BOOTSTRAP", ""),
        secret_key="00" * 32,
        relay_poll_interval_s=0.2,
        worker_poll_interval_s=0.1,
    )


def _admin_dsn(settings: Settings) -> str:
    return settings.resolved_database_url().rsplit("/", 1)[0] + "/postgres"


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


def stack_up(settings: Settings) -> None:
    """``stack.up`` one at a time across the run's workers: on a fresh machine the first one
    resolves Kafka's jars with Maven (the system packages are in place already: ``pytest_configure``),
    and a stack is started once."""
    lock = Path(tempfile.gettempdir()) / "vaeo-test-stack.lock"
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        stack.up(settings)


# The timeout of a test file using ``object_store``: its first test may build SeaweedFS (about 4 minutes).
BUILD_TIMEOUT = pytest.mark.timeout(1200)


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


# The timeout of a test file using ``llm_server``: its first test may build llama.cpp's server from
# source (about half an hour on two busy cores, docs/operations.md) and run a small model on the CPU.
LLAMA_BUILD_TIMEOUT = pytest.mark.timeout(3600)


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


def s3_settings(base: Settings, cache_dir: Path, **overrides) -> Settings:
    """``base`` on the S3 backend: the test stack's SeaweedFS, the tests' bucket (``vaeo-test``: the
    keys hold fresh workspace ids, so tests do not meet; a bucket is a volume of the server's few), a
    local read cache in ``cache_dir``, the credentials the stack generated."""
    access, secret = stack.seaweedfs_credentials(base)
    return base.model_copy(update={
        "storage_backend": "s3", "s3_endpoint_url": base.resolved_s3_endpoint(),
        "s3_bucket": "vaeo-test", "s3_access_key_id": access,
        "s3_secret_access_key": SecretStr(secret), "media_cache_dir": str(cache_dir), **overrides})


def s3_env(settings: Settings) -> dict[str, str]:
    """The environment naming ``settings``' object store, for a process of ours."""
    return {"VAEO_STORAGE_BACKEND": "s3", "VAEO_S3_ENDPOINT_URL": settings.s3_endpoint_url,
            "VAEO_S3_BUCKET": settings.s3_bucket, "VAEO_S3_REGION": settings.s3_region,
            "VAEO_S3_ACCESS_KEY_ID": settings.s3_access_key_id,
            "VAEO_S3_SECRET_ACCESS_KEY": settings.s3_secret_access_key.get_secret_value()}


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


@dataclass
class StackAdmin:
    """One PostgreSQL connection and one Kafka admin client to a stack, kept for a whole run: a
    test's database and topics are made and dropped through them (a connection and a client per
    test cost a good part of the suite's CPU)."""

    postgres: asyncpg.Connection
    kafka: AIOKafkaAdminClient


async def _admin_execute(base: Settings, admin: StackAdmin | None, sql: str) -> None:
    """``sql`` on the stack's admin database: on the run's shared connection, else on one of its own."""
    if admin is not None:
        await admin.postgres.execute(sql)
        return
    conn = await asyncpg.connect(_admin_dsn(base))
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def make_isolated_settings(base: Settings, template: str, *, admin: StackAdmin | None = None,
                                 **overrides) -> Settings:
    """A database of its own (from the migrated template) and topics of their own."""
    tag = uuid.uuid4().hex[:10]
    await _admin_execute(base, admin, f"CREATE DATABASE t_{tag} TEMPLATE {template}")
    settings = base.model_copy(update={
        "database_url": base.resolved_database_url().rsplit("/", 1)[0] + f"/t_{tag}",
        "kafka_bootstrap": base.resolved_kafka_bootstrap(),
        "events_topic": f"t.{tag}.events",
        "telemetry_topic": f"t.{tag}.telemetry",
        "consumer_group_prefix": f"t.{tag}.",
        **overrides,
    })
    if admin is not None:  # new names: nothing to look up first
        await admin.kafka.create_topics(wanted_topics(settings))
    else:
        await ensure_topics(settings)
    return settings


async def drop_isolated(base: Settings, settings: Settings, *, admin: StackAdmin | None = None) -> None:
    dbname = settings.database_url.rsplit("/", 1)[1]
    await _admin_execute(base, admin, f"DROP DATABASE IF EXISTS {dbname} WITH (FORCE)")
    client = admin.kafka if admin is not None else AIOKafkaAdminClient(bootstrap_servers=settings.kafka_bootstrap)
    if admin is None:
        await client.start()
    try:
        await client.delete_topics([settings.events_topic, settings.telemetry_topic])
    except Exception:
        pass  # a test that broke the broker on purpose may leave topics behind; harmless
    finally:
        if admin is None:
            await client.close()


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


def env_for(settings: Settings) -> dict[str, str]:
    """Environment for a subprocess of ours that must use this test's isolated resources."""
    env = dict(os.environ)
    env.update({
        "VAEO_DATABASE_URL": settings.resolved_database_url(),
        "VAEO_KAFKA_BOOTSTRAP": settings.resolved_kafka_bootstrap(),
        "VAEO_EVENTS_TOPIC": settings.events_topic,
        "VAEO_TELEMETRY_TOPIC": settings.telemetry_topic,
        "VAEO_CONSUMER_GROUP_PREFIX": settings.consumer_group_prefix,
        "VAEO_SECRET_KEY": settings.secret_key,
        "VAEO_STACK_INSTANCE": settings.stack_instance,
        "VAEO_RELAY_POLL_INTERVAL_S": str(settings.relay_poll_interval_s),
        "VAEO_WORKER_POLL_INTERVAL_S": str(settings.worker_poll_interval_s),
        "PYTHONPATH": str(ROOT),
    })
    if settings.storage_backend == "s3":  # the same object store and read cache
        env.update(s3_env(settings), VAEO_MEDIA_CACHE_DIR=str(settings.media_cache_path))
    return env


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
