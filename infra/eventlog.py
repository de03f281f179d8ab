"""Kafka adapters (aiokafka): topics, the relay's producer, consumers that never start at latest."""

from __future__ import annotations

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.partitioner import DefaultPartitioner

from infra.settings import Settings


async def ensure_topics(settings: Settings) -> None:
    """Create the events topic (configured partitions, unlimited retention) and the telemetry topic."""
    admin = AIOKafkaAdminClient(bootstrap_servers=settings.resolved_kafka_bootstrap())
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        wanted = [
            NewTopic(settings.events_topic, settings.events_partitions, 1,
                     topic_configs={"retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete"}),
            NewTopic(settings.telemetry_topic, 3, 1, topic_configs={"retention.ms": str(7 * 86400 * 1000)}),
        ]
        missing = [t for t in wanted if t.name not in existing]
        if missing:
            try:
                await admin.create_topics(missing)
            except TopicAlreadyExistsError:
                pass
    finally:
        await admin.close()


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


_partitioner = DefaultPartitioner()


def partition_for(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives ``key`` (murmur2), as the producer does."""
    all_partitions = list(range(partitions))
    return _partitioner(key, all_partitions, all_partitions)


def key_of(workspace_id) -> bytes:
    return str(workspace_id).encode() if workspace_id else b"-"


async def topic_partitions(consumer: AIOKafkaConsumer, topic: str) -> list[TopicPartition]:
    """The topic's partitions, fetching metadata first (a consumer without subscription has none)."""
    await consumer.topics()
    return [TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())]
