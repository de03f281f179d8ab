"""``vaeo events tail``: the log from Kafka as JSON lines, for audit and replay.

Without ``--follow`` it reads every partition up to the end offsets seen at start and prints the
events in position order. With ``--follow`` it prints events as they arrive (in order within a
workspace; the ``position`` field orders them globally). Events are read as every reader of the
log reads them (``infra/consume.py``): headers first, duplicates the at-least-once relay may have
written dropped by position, each event decoded and upcast, and printed as its envelope at its
type's current schema. An event whose old schema this build cannot upcast is printed as stored,
with a warning on stderr. ``keep``, if given, is asked last about each message (after the
duplicate, position, type and workspace filters), in offset order per partition, before the
message is decoded: a caller that selects a few events of a long log (``vaeo jobs history``)
pays a test per message, not a decoding.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TextIO

from aiokafka.structs import ConsumerRecord

from infra.codec import EventRegistry, StoredEvent, UnknownEventType
from infra.consume import Marks, Message, ParsedBatch, take_fresh
from infra.eventlog import make_consumer, start_or_stop, topic_partitions
from infra.settings import Settings

log = logging.getLogger("vaeo.tail")


async def tail(settings: Settings, out: TextIO, *, from_position: int = 1, types: set[str] | None = None,
               workspace: str | None = None, follow: bool = False,
               keep: Callable[[ConsumerRecord], bool] | None = None) -> int:
    """Print the events at ``from_position`` or later, of ``types`` and ``workspace`` when given,
    that ``keep`` accepts; return how many were printed."""
    registry = EventRegistry()
    consumer = make_consumer(settings, group_id=None)
    await start_or_stop(consumer)
    printed = 0
    try:
        tps = await topic_partitions(consumer, settings.events_topic)
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        end = await consumer.end_offsets(tps)
        seen: Marks = {}
        pending: list[tuple[int, str]] = []
        remaining = {tp for tp in tps if end[tp] > 0}

        def line_of(batch: ParsedBatch, msg: Message) -> str | None:
            if msg.position < from_position or (types and msg.kind not in types):
                return None
            if workspace and (msg.record.key or b"").decode() != workspace:
                return None
            if keep is not None and not keep(msg.record):
                return None
            try:
                event = batch.payload(msg)
            except UnknownEventType as exc:
                log.warning("position %d: %s; printed as stored", msg.position, exc)
                event = StoredEvent.from_json(msg.record.value)
            return event.to_json().decode()

        while remaining or follow:
            fetched = await consumer.getmany(timeout_ms=500, max_records=5000)
            catching_up = bool(remaining)
            batch = ParsedBatch("events", registry, {tp.partition: msgs for tp, msgs in fetched.items()})
            for msg in take_fresh(batch, seen).messages:
                line = line_of(batch, msg)
                if line is None:
                    continue
                if catching_up:
                    pending.append((msg.position, line))
                else:
                    out.write(line + "\n")
                    printed += 1
            for tp, msgs in fetched.items():
                if msgs[-1].offset + 1 >= end[tp]:
                    remaining.discard(tp)
            if not remaining and pending:
                pending.sort()
                out.writelines(line + "\n" for _, line in pending)
                printed += len(pending)
                pending.clear()
            if not remaining:
                out.flush()
        return printed
    finally:
        await consumer.stop()


def parse_line(line: str) -> StoredEvent:
    return StoredEvent.from_json(line.encode())
