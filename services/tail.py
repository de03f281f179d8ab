"""``vaeo events tail``: the log from Kafka as JSON lines, for audit and replay.

Without ``--follow`` it reads every partition up to the end offsets seen at start and prints the
events in position order. With ``--follow`` it prints events as they arrive (in order within a
workspace; the ``position`` field orders them globally). Duplicates that the at-least-once relay
may have written are dropped by position. ``keep``, if given, is asked last about each message
(after the duplicate, position, type and workspace filters), in offset order per partition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from aiokafka import ConsumerRecord, TopicPartition

from infra.codec import StoredEvent
from infra.eventlog import make_consumer, topic_partitions
from infra.settings import Settings
from services.projector import position_of


async def tail(settings: Settings, out: TextIO, *, from_position: int = 1, types: set[str] | None = None,
               workspace: str | None = None, follow: bool = False,
               keep: Callable[[ConsumerRecord], bool] | None = None) -> int:
    consumer = make_consumer(settings, group_id=None)
    await consumer.start()
    printed = 0
    try:
        tps = await topic_partitions(consumer, settings.events_topic)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        seen_max = {tp: 0 for tp in tps}
        pending: list[tuple[int, bytes]] = []
        remaining = {tp for tp in tps if end[tp] > 0}

        def wanted(tp: TopicPartition, msg) -> bool:
            position = position_of(msg)
            if position <= seen_max[tp]:
                return False
            seen_max[tp] = position
            if position < from_position:
                return False
            headers = dict(msg.headers)
            if types and headers.get("type", b"").decode() not in types:
                return False
            if workspace and (msg.key or b"").decode() != workspace:
                return False
            return keep is None or keep(msg)

        while remaining or follow:
            batches = await consumer.getmany(timeout_ms=500, max_records=5000)
            for tp, msgs in batches.items():
                for msg in msgs:
                    if wanted(tp, msg):
                        if follow and not remaining:
                            out.write(msg.value.decode() + "\n")
                            printed += 1
                        else:
                            pending.append((position_of(msg), msg.value))
                    if tp in remaining and msg.offset + 1 >= end[tp]:
                        remaining.discard(tp)
            if not remaining and pending:
                pending.sort()
                out.writelines(value.decode() + "\n" for _, value in pending)
                printed += len(pending)
                pending.clear()
                out.flush()
            if follow and not remaining:
                out.flush()
        return printed
    finally:
        await consumer.stop()


def parse_line(line: str) -> StoredEvent:
    return StoredEvent.from_json(line.encode())
