"""The API process's one link to Kafka: telemetry out, and whether Kafka answers at all.

- Telemetry: each call's record (workspace, route, status, latency, timestamp) is put on a
  bounded in-memory queue and sent to ``telemetry_topic`` by one producer in the background, so
  a slow broker never delays a response. When the queue is full, records are dropped and
  counted (usage figures are then a lower bound; responses are never held for them).
- Health: every ``api_kafka_check_interval_s`` it fetches the cluster metadata. While that fails,
  commands answer 503 before writing anything: their events would be durable but could not
  reach the read models, and the client would not read its write. Reads keep working.
- The events topic's real partition count comes from the same metadata (read-your-writes waits
  on the partition of the workspace's key).
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from aiokafka import AIOKafkaProducer

from infra.eventlog import make_producer, start_or_stop
from infra.settings import Settings
from services.lib.common import backoff_delays, sleep_until_stopped

log = logging.getLogger("vaeo.api.kafka")


class KafkaLink:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.available = False
        self.partitions = settings.events_partitions
        self.sent = 0
        self.dropped = 0
        self._queue: asyncio.Queue[tuple[bytes | None, bytes]] = asyncio.Queue(settings.api_telemetry_buffer)
        self._producer: AIOKafkaProducer | None = None

    def record(self, workspace_id: str | None, record: dict) -> None:
        """Queue one telemetry record; never waits."""
        try:
            self._queue.put_nowait((workspace_id.encode() if workspace_id else None, orjson.dumps(record)))
        except asyncio.QueueFull:
            self.dropped += 1

    async def start(self, timeout_s: float) -> None:
        """First connection, bounded: the API starts (and serves reads) even when Kafka is down."""
        try:
            await asyncio.wait_for(self._connect(), timeout_s)
        except Exception as exc:
            log.warning("kafka unreachable at start (%s: %s); commands answer 503 until it is back",
                        type(exc).__name__, exc)
            await self._close()

    async def _connect(self) -> None:
        # Telemetry is not read back at once: a longer linger makes fewer, larger produce requests
        # (and larger batches for the projections that read them).
        producer = make_producer(self.settings, request_timeout_ms=10000, linger_ms=50)
        await start_or_stop(producer)
        self._producer = producer
        await self._check()

    async def _close(self) -> None:
        if self._producer is not None:
            producer, self._producer = self._producer, None
            try:
                await producer.stop()
            except Exception as exc:
                log.debug("producer stop: %s", exc)

    async def _check(self) -> None:
        assert self._producer is not None
        try:
            metadata = await asyncio.wait_for(self._producer.client.fetch_all_metadata(),
                                              max(1.0, self.settings.api_kafka_check_interval_s))
        except Exception as exc:
            if self.available:
                log.warning("kafka unreachable: %s: %s", type(exc).__name__, exc)
            self.available = False
            return
        partitions = metadata.partitions_for_topic(self.settings.events_topic)
        if partitions:
            self.partitions = len(partitions)
        if not self.available:
            log.info("kafka reachable; events topic has %d partitions", self.partitions)
        self.available = True

    async def run(self, stop: asyncio.Event) -> None:
        delays = backoff_delays(first=0.5, cap=5.0)
        while not stop.is_set():
            if self._producer is None:
                try:
                    await asyncio.wait_for(self._connect(), 15)
                    delays = backoff_delays(first=0.5, cap=5.0)
                except Exception as exc:
                    log.debug("kafka still unreachable: %s", exc)
                    await self._close()
                    if await sleep_until_stopped(stop, next(delays)):
                        break
                    continue
            drain = asyncio.create_task(self._drain())
            try:
                while not stop.is_set():
                    if await sleep_until_stopped(stop, self.settings.api_kafka_check_interval_s):
                        break
                    await self._check()
            finally:
                drain.cancel()
                try:
                    await drain
                except asyncio.CancelledError:
                    pass
        await self._flush_and_close()

    async def _drain(self) -> None:
        assert self._producer is not None
        while True:
            key, value = await self._queue.get()
            try:
                fut = await self._producer.send(self.settings.telemetry_topic, value, key=key)
                fut.add_done_callback(self._delivered)
            except Exception as exc:
                self.dropped += 1
                log.debug("telemetry record dropped: %s", exc)

    def _delivered(self, fut: asyncio.Future) -> None:
        if fut.cancelled() or fut.exception() is not None:
            self.dropped += 1
        else:
            self.sent += 1

    async def _flush_and_close(self) -> None:
        """On shutdown: send what is queued (bounded), then stop the producer."""
        if self._producer is not None and self.available:
            try:
                async with asyncio.timeout(5):
                    while not self._queue.empty():
                        key, value = self._queue.get_nowait()
                        await self._producer.send(self.settings.telemetry_topic, value, key=key)
                    await self._producer.flush()
            except Exception as exc:
                log.warning("telemetry not flushed at shutdown: %s", exc)
        await self._close()
