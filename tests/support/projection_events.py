"""Aggregates' events as the projections read them: a workspace, a start time, stored events."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from eventsourcing.domain import Aggregate

from infra.codec import EventRegistry, StoredEvent

WORKSPACE = uuid.UUID("55555555-5555-4555-8555-555555555555")


T0 = datetime(2026, 4, 1, 8, 0, tzinfo=UTC)


REGISTRY = EventRegistry()


def stored(agg: Aggregate, first_position: int = 100) -> list[StoredEvent]:
    """The aggregate's pending events as Kafka delivers them (through their JSON form)."""
    new = REGISTRY.to_new_events(agg.collect_events(), workspace_id=WORKSPACE)
    return [
        StoredEvent.from_json(StoredEvent(
            position=first_position + i, stream_id=e.stream_id, stream_type=e.stream_type, version=e.version,
            workspace_id=e.workspace_id, type=e.type, schema=e.schema, data=e.data, meta=e.meta,
            recorded_at=T0 + timedelta(minutes=e.version),
        ).to_json())
        for i, e in enumerate(new)
    ]
