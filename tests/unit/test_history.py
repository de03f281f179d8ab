"""``vaeo jobs history``'s selection of a job's chain and its table (services.cli.history), on envelopes
as the relay writes them to Kafka."""

from __future__ import annotations

from datetime import UTC, datetime
from uuid import UUID, uuid4

from aiokafka import ConsumerRecord

from infra.codec import StoredEvent
from services.cli.history import SUMMARY_MAX, JobChain, render_table, summary

JOB = UUID("5b3c1a9e-2f4d-4e6a-8b7c-9d0e1f2a3b4c")
WS, OTHER_WS = uuid4(), uuid4()
AT = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


def event(position: int, type_: str, *, stream_id: UUID = JOB, workspace: UUID = WS, meta: dict | None = None,
          data: dict | None = None, stream_type: str = "Job") -> StoredEvent:
    return StoredEvent(position=position, stream_id=stream_id, stream_type=stream_type, version=1,
                       workspace_id=workspace, type=type_, schema=1, data=data or {}, meta=meta or {}, recorded_at=AT)


def record(ev: StoredEvent) -> ConsumerRecord:
    value = ev.to_json()
    key = str(ev.workspace_id).encode()
    return ConsumerRecord(topic="vaeo.events.v1", partition=0, offset=ev.position, timestamp=0, timestamp_type=0,
                          key=key, value=value, checksum=None, serialized_key_size=len(key),
                          serialized_value_size=len(value), headers=[("type", ev.type.encode())])


def chain(corr: str) -> dict:
    return {"correlation_id": corr, "causation_id": "event:3"}


def test_the_chain_starts_at_the_jobs_queueing_and_keeps_its_stream_and_correlated_events():
    video, workspace_stream = uuid4(), WS
    log = [
        event(1, "VideoUploaded", stream_id=video, stream_type="Video", meta=chain("req-1")),  # same id, earlier
        event(2, "JobQueued", stream_id=uuid4(), meta=chain("other-req")),  # another job
        event(3, "JobQueued", meta={"request_id": "req-1", "correlation_id": "req-1", "causation_id": "request:req-1"},
              data={"job_type": "analyze_video"}),
        event(4, "CreditsCharged", stream_id=workspace_stream, stream_type="Workspace", meta=chain("req-1"),
              data={"amount": 2, "reason": "analysis", "job_id": str(JOB)}),
        event(5, "CreditsCharged", stream_id=workspace_stream, stream_type="Workspace", meta=chain("other-req")),
        event(6, "JobStarted", meta=chain("req-1"), data={"attempt": 1, "worker": "w"}),
        event(7, "VideoAnalyzed", stream_id=video, stream_type="Video", meta=chain("req-1")),
        event(8, "CreditsCharged", stream_id=OTHER_WS, workspace=OTHER_WS, meta=chain("req-1")),  # a namesake chain
        event(9, "JobCancelled", meta={"correlation_id": "req-1", "causation_id": "request:cancel-1"}),
        event(10, "WebhookDeliveryScheduled", stream_id=uuid4(), stream_type="WebhookDelivery",
              meta={"correlation_id": "req-1", "causation_id": "event:9"}),
    ]
    keep = JobChain(JOB)

    kept = [ev.position for ev in log if keep(record(ev))]

    assert kept == [3, 4, 6, 7, 9, 10]
    assert keep.correlation_id == "req-1" and keep.queued.position == 3


def test_a_job_queued_before_correlation_ids_is_chained_by_its_request_id():
    keep = JobChain(JOB)
    log = [event(1, "JobQueued", meta={"request_id": "old-req1", "key_id": "k"}),
           event(2, "CreditsCharged", stream_id=WS, stream_type="Workspace", meta={"request_id": "old-req1"}),
           event(3, "JobStarted", meta={"worker": "w", "job_id": str(JOB)}),
           event(4, "CreditsCharged", stream_id=WS, stream_type="Workspace", meta={"request_id": "old-req2"})]

    assert [ev.position for ev in log if keep(record(ev))] == [1, 2, 3]


def test_an_id_that_is_no_jobs_is_never_found():
    other = uuid4()
    keep = JobChain(other)
    log = [event(1, "JobQueued", meta=chain("a")), event(2, "VideoUploaded", stream_id=other, stream_type="Video")]

    assert [ev.position for ev in log if keep(record(ev))] == []
    assert keep.queued is None


def test_the_summary_shows_the_telling_fields_bounded_and_on_one_line():
    failed = event(5, "JobFailed", data={"attempts": 3, "error_message": "the provider failed:\nboom " + "x" * 200,
                                         "environment": "production"})
    registered = event(6, "WebhookRegistered", stream_id=uuid4(), stream_type="Webhook",
                       data={"url": "https://h.example/x", "secret_encrypted": "c2VjcmV0", "events": ["job.completed"],
                             "workspace_id": str(WS)})

    text = summary(failed)
    assert text.startswith('attempts=3 error_message="the provider failed: boom xxx')
    assert "\n" not in text and len(text) <= SUMMARY_MAX
    assert summary(registered) == "url=https://h.example/x"  # no ciphertext, no list, no workspace
    assert summary(event(7, "JobProgressed", data={"progress": 60, "step": "building the content graph"})) == (
        'progress=60 step="building the content graph"')


def test_the_table_has_a_header_and_one_aligned_row_per_event():
    rows = [event(3, "JobQueued", data={"job_type": "analyze_video", "environment": "production", "max_attempts": 3}),
            event(12, "CreditsRefunded", stream_id=WS, stream_type="Workspace",
                  data={"amount": 2, "reason": "analyze_video job failed", "job_id": str(JOB)})]

    lines = render_table(rows).splitlines()

    assert lines[0].split() == ["POSITION", "TIME", "(UTC)", "TYPE", "STREAM", "SUMMARY"]
    assert lines[1].split() == ["3", "2026-03-04", "05:06:07", "JobQueued", "Job", "5b3c1a9e",
                                "job_type=analyze_video", "environment=production", "max_attempts=3"]
    assert lines[2].split()[:6] == ["12", "2026-03-04", "05:06:07", "CreditsRefunded", "Workspace", str(WS)[:8]]
    assert len({line.index("TYPE") if i == 0 else line.index(t) for i, (line, t) in
                enumerate(zip(lines, ["TYPE", "JobQueued", "CreditsRefunded"], strict=True))}) == 1
