"""The test stack: its settings, a test's own database and topics, the environment of a process of ours."""

from __future__ import annotations

import fcntl
import os
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import pytest
from aiokafka.admin import AIOKafkaAdminClient
from pydantic import SecretStr

from infra import stack
from infra.eventlog import ensure_topics, wanted_topics
from infra.settings import Settings

ROOT = Path(__file__).resolve().parent.parent.parent


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
        # One thread for each compute library (Whisper, the voice encoder, llama.cpp): the suite's
        # workers keep both cores busy, and threads that wait for each other by spinning then burn
        # a core while the thread they wait for has none (docs/benchmarks.md, "What the suite's CPU goes to").
        asr_cpu_threads=1,
        stack_llm_threads=1,
    )


def _admin_dsn(settings: Settings) -> str:
    return settings.resolved_database_url().rsplit("/", 1)[0] + "/postgres"


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


# The timeout of a test file using ``llm_server``: its first test may build llama.cpp's server from
# source (about half an hour on two busy cores, docs/operations.md) and run a small model on the CPU.
LLAMA_BUILD_TIMEOUT = pytest.mark.timeout(3600)


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
        "VAEO_ASR_CPU_THREADS": str(settings.asr_cpu_threads),
        "PYTHONPATH": str(ROOT),
    })
    if settings.storage_backend == "s3":  # the same object store and read cache
        env.update(s3_env(settings), VAEO_MEDIA_CACHE_DIR=str(settings.media_cache_path))
    return env
