"""The correlation and causation rules of every event's meta (services.application.meta)."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from infra.codec import StoredEvent
from services.application.meta import caused_by, command_meta, correlation_of, joining, request_meta

JOB = UUID("5b3c1a9e-2f4d-4e6a-8b7c-9d0e1f2a3b4c")


def stored(meta: dict, *, position: int = 41, stream_id: UUID = JOB) -> StoredEvent:
    return StoredEvent(position=position, stream_id=stream_id, stream_type="Job", version=1, workspace_id=uuid4(),
                       type="JobQueued", schema=1, data={}, meta=meta, recorded_at=datetime(2026, 1, 2, tzinfo=UTC))


def test_a_request_starts_a_chain_named_by_its_id_and_is_the_cause():
    key = uuid4()

    assert request_meta("req-12345678", key) == {"request_id": "req-12345678", "key_id": str(key),
                                                 "correlation_id": "req-12345678",
                                                 "causation_id": "request:req-12345678"}


def test_each_cli_command_starts_a_fresh_chain_it_is_the_cause_of():
    first, second = command_meta("workspace create"), command_meta("workspace create")

    assert first["cli"] == "workspace create"
    assert first["causation_id"] == f"cli:{first['correlation_id']}"
    assert len(first["correlation_id"]) == 32 and first["correlation_id"] != second["correlation_id"]
    assert "request_id" not in first


def test_what_an_event_causes_is_in_its_chain_and_quotes_its_position():
    queued = stored({"request_id": "r-abcdefgh", "key_id": "k", "correlation_id": "chain-1",
                     "causation_id": "request:r-abcdefgh"})

    assert caused_by(queued) == {"correlation_id": "chain-1", "causation_id": "event:41"}


def test_an_event_from_before_correlation_ids_belongs_to_its_request_else_its_stream():
    assert correlation_of(stored({"request_id": "r-abcdefgh", "key_id": "k"})) == "r-abcdefgh"
    assert correlation_of(stored({"worker": "w"})) == str(JOB)
    assert correlation_of(stored({})) == str(JOB)


def test_a_request_on_a_chained_stream_joins_the_chain_and_stays_the_cause():
    cancel = request_meta("cancel-req-1", uuid4())
    queued = stored({"correlation_id": "queue-req-1", "causation_id": "request:queue-req-1"})

    joined = joining(cancel, queued)

    assert joined == {**cancel, "correlation_id": "queue-req-1"}
    assert joined["causation_id"] == "request:cancel-req-1" and joined["request_id"] == "cancel-req-1"
    assert cancel["correlation_id"] == "cancel-req-1"  # the caller's meta is not changed
    assert joining(cancel, None) == cancel
    assert joining(None, queued) == {"correlation_id": "queue-req-1"}
