"""Kafka adapters (aiokafka): topics, the relay's producer, consumers that never start at latest."""

from __future__ import annotations

import functools
import random

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.partitioner import murmur2

from infra.settings import Settings


def wanted_topics(settings: Settings) -> list[NewTopic]:
    """The events topic (configured partitions, unlimited retention) and the telemetry topic."""
    return [
        NewTopic(settings.events_topic, settings.events_partitions, 1,
                 topic_configs={"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}),
        NewTopic(settings.telemetry_topic, 3, 1, topic_configs={"retention.ms": str(7 * 86400 * 1000)}),
    ]


async def ensure_topics(settings: Settings, admin: AIOKafkaAdminClient | None = None) -> None:
    """Create the topics that do not exist yet. ``admin``: a started client to use (the tests'
    one per run), else one is started and closed here."""
    own = admin is None
    if own:
        admin = AIOKafkaAdminClient(bootstrap_servers=settings.resolved_kafka_bootstrap())
        await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [t for t in wanted_topics(settings) if t.name not in existing]
        if missing:
            try:
                await admin.create_topics(missing)
            except TopicAlreadyExistsError:
                pass
    finally:
        if own:
            await admin.close()


async def start_or_stop(client: AIOKafkaConsumer | AIOKafkaProducer) -> None:
    """Start an aiokafka client; if starting fails, stop it before raising.

    A consumer's ``start`` creates its group coordinator before it waits for its first
    assignment. Left unstopped after a failure there, that coordinator lives on in the
    background: it stays in the consumer group, keeps its partitions and heartbeats for them
    while nobody fetches them, and the group's other members never get them. A broker restart
    during a projector's start left read models behind forever that way.
    """
    try:
        await client.start()
    except BaseException:
        try:
            await client.stop()
        except Exception:  # noqa: BLE001 -- the start's error is the one to raise
            pass
        raise


def make_producer(settings: Settings, **overrides) -> AIOKafkaProducer:
    """Idempotent producer with acks=all set explicitly (aiokafka's default is acks=1)."""
    opts = dict(
        bootstrap_servers=settings.resolved_kafka_bootstrap(),
        enable_idempotence=True,
        acks="all",
        linger_ms=5,
        max_batch_size=256 * 1024,
        compression_type=None,
        request_timeout_ms=30000,
        partitioner=partitioner,
    )
    opts.update(overrides)
    return AIOKafkaProducer(**opts)


def make_consumer(settings: Settings, *topics: str, group_id: str | None, **overrides) -> AIOKafkaConsumer:
    """A consumer without auto-commit that starts at the earliest offset when nothing is stored."""
    opts = dict(
        bootstrap_servers=settings.resolved_kafka_bootstrap(),
        group_id=group_id,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_partition_fetch_bytes=1024 * 1024,
        fetch_max_bytes=8 * 1024 * 1024,
        isolation_level="read_uncommitted",
    )
    opts.update(overrides)
    return AIOKafkaConsumer(*topics, **opts)


@functools.lru_cache(maxsize=1 << 16)
def _key_hash(key: bytes) -> int:
    """The Java client's murmur2 of a record key, as Kafka's default partitioner takes it. aiokafka
    computes it in pure Python for every record (about 6 % of the API's CPU under load); the keys
    are workspace ids, so each is hashed once per process."""
    return murmur2(key) & 0x7FFFFFFF


def partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """aiokafka's ``DefaultPartitioner`` with the key's hash cached: the same partition for every
    key (what consumers and the read-your-writes waits rely on); a record without key goes to a
    random available partition, as there."""
    if key is None:
        return random.choice(available or all_partitions)
    return all_partitions[_key_hash(key) % len(all_partitions)]


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives ``key`` (murmur2), as the producer does."""
    return _key_hash(key) % partitions


def key_of(workspace_id) -> bytes:
    return str(workspace_id).encode() if workspace_id else b"-"


async def topic_partitions(consumer: AIOKafkaConsumer, topic: str) -> list[TopicPartition]:
    """The topic's partitions, fetching metadata first (a consumer without subscription has none)."""
    await consumer.topics()
    return [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
