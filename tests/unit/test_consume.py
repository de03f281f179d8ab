"""Reading the log back (infra/consume.py): headers, duplicate skipping by offset and position,
decoding with upcasting, and the cause a reader's appended events carry."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import orjson
import pytest
from aiokafka.structs import ConsumerRecord

from infra.codec import EventRegistry, StoredEvent, UnknownEventType
from infra.consume import Mark, ParsedBatch, advance, caused_by, headers_of, take_fresh

REGISTRY = EventRegistry()
WS = uuid.uuid4()


def envelope(position: int, kind: str = "JobQueued", schema: int = 1, data: dict | None = None,
             meta: dict | None = None) -> dict:
    return {"position": position, "stream_id": str(uuid.uuid4()), "stream_type": "Job", "version": 1,
            "workspace_id": str(WS), "type": kind, "schema": schema, "data": data or {}, "meta": meta or {},
            "recorded_at": "2026-11-23T12:00:00+00:00"}


def record(partition: int, offset: int, position: int, kind: str = "JobQueued", *, headers: bool = True,
           **fields) -> ConsumerRecord:
    value = orjson.dumps(envelope(position, kind, **fields))
    hdrs = [("type", kind.encode()), ("position", str(position).encode())] if headers else []
    return ConsumerRecord("t", partition, offset, 0, 0, str(WS).encode(), value, None, len(value), len(value), hdrs)


def batch(parts: dict[int, list[ConsumerRecord]]) -> ParsedBatch:
    return ParsedBatch("events", REGISTRY, parts)


def test_headers_give_type_and_position_and_the_value_is_read_only_without_them():
    assert headers_of(record(0, 0, 7, "JobStarted")) == ("JobStarted", 7)
    assert headers_of(record(0, 0, 9, headers=False)) == ("", 9)


def test_take_fresh_skips_what_was_applied_by_offset_and_the_relay_s_resends_by_position():
    # Partition 0: offsets 0-1 applied already; offset 3 repeats position 12 (a resend after a crash).
    parts = {0: [record(0, 0, 1), record(0, 1, 2), record(0, 2, 12), record(0, 3, 12), record(0, 4, 13,
                                                                                              "JobStarted")],
             1: [record(1, 0, 5)]}
    stored = {0: Mark(2, 2)}
    fresh = take_fresh(batch(parts), stored, lambda kind: kind == "JobQueued")
    assert [(m.partition, m.position) for m in fresh.messages] == [(0, 12), (1, 5)]  # JobStarted: tracking only
    assert (fresh.applied, fresh.duplicates) == (3, 1)
    assert fresh.moved == stored == {0: Mark(5, 13), 1: Mark(1, 5)}
    again = take_fresh(batch(parts), stored)  # the same fetch again: nothing new, nothing moves
    assert again.messages == [] and again.moved == {} and again.applied == 0


def test_marks_advance_to_the_further_of_two():
    marks = {0: Mark(5, 10)}
    advance(marks, {0: Mark(3, 12), 1: Mark(2, 4)})
    assert marks == {0: Mark(5, 12), 1: Mark(2, 4)}


def test_a_batch_decodes_each_payload_once_and_upcasts_it():
    data = {"video_id": 1, "workspace_id": str(WS), "environment": "production", "media_id": None, "name": "v",
            "description": None, "language": "fr", "storage_key": "k", "captions_key": None, "size_bytes": 1,
            "duration_ms": 1, "width": 1, "height": 1, "frame_rate": 1.0, "video_codec": "h264",
            "audio_codec": None, "subtitle_tracks": 0, "caption_cues": 0}
    b = batch({0: [record(0, 0, 1, "VideoUploaded", schema=1, data=data)]})
    [msg] = b.parts[0]
    event = b.payload(msg)
    assert event.schema >= 2 and event.data["demuxer"] is None  # upcast through every later schema
    assert b.payload(msg) is event


def test_a_schema_without_upcaster_fails_the_decoding_and_an_unknown_type_passes_as_stored():
    b = batch({0: [record(0, 0, 1, schema=0), record(0, 1, 2, "FromANewerBuild", data={"x": 1})]})
    with pytest.raises(UnknownEventType):
        b.payload(b.parts[0][0])
    assert b.payload(b.parts[0][1]).data == {"x": 1}


def _event(meta) -> StoredEvent:
    return StoredEvent(41, uuid.UUID(int=7), "Job", 2, WS, "JobCompleted", 2, {}, meta, datetime.now(UTC))


def test_the_cause_names_the_event_and_carries_its_chain_on_bounded():
    assert caused_by(_event({"correlation_id": "req-7f3a", "request_id": "r"})) == {
        "causation_id": "event:41", "correlation_id": "req-7f3a"}
    # Written before events carried a correlation id: the request's, else the event's own stream.
    assert caused_by(_event({"request_id": "r-1"}))["correlation_id"] == "r-1"
    assert caused_by(_event({}))["correlation_id"] == str(uuid.UUID(int=7))
    for hostile in ("x" * 129, "two words", "line\nbreak", 42):
        assert caused_by(_event({"correlation_id": hostile})) == {"causation_id": "event:41"}
