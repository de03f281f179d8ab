"""The consumers with effects on the real servers: the dispatcher's intake and the credits watch
stop on an event they cannot apply, report it where ``vaeo projections list`` and ``vaeo status``
show it, keep their process up, never skip the event, and resume from it after a restart; what
they append carries its cause; ``vaeo events tail`` decodes and upcasts.

The poison is real: an event appended to the events table and relayed to Kafka at a schema this
build has no upcaster for (what a log written by a newer build holds). The fix is the build that
has it: the restarted reader gets a registry with the missing upcaster.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import uuid

import orjson

from domain.jobs import Job
from infra.codec import EventRegistry, NewEvent
from services.application.media import CreateMedia
from services.application.workspaces import CreateWorkspace
from services.cli.tail import tail
from services.lib.status import collect
from services.lib.status import render as render_status
from services.processes.credits_watch import CreditsWatch
from services.processes.dispatcher import run_dispatcher
from services.processes.dispatcher.intake import NAME as INTAKE
from services.processes.dispatcher.intake import Intake
from services.processes.projector.listing import list_projections, render
from services.processes.relay import Relay
from tests.helpers import handle, wait_relayed
from tests.support.monitoring import charge, wait_for
from tests.support.webhooks import Receiver, TestCA, _register, wait_until, webhook_settings

FAST_POLICY = {"projector_max_attempts": 2, "projector_retry_backoff_s": 0.01}


def at_schema_zero(events: list[NewEvent], **meta) -> list[NewEvent]:
    """The events as a build with a schema this one cannot upcast would have written them."""
    return [dataclasses.replace(e, schema=0, meta=meta) for e in events]


def fixed_registry(event_type: str) -> EventRegistry:
    registry = EventRegistry()
    registry.register_upcaster(event_type, 0, lambda data: data)
    return registry


async def reader_row(pool, name: str) -> dict:
    async with pool.acquire() as conn:
        row = await conn.fetchrow("SELECT status, error, error_position FROM projection_state WHERE projection = $1",
                                  name)
    return dict(row) if row else {}


async def stopped(pool, name: str) -> dict | None:
    row = await reader_row(pool, name)
    return row if row.get("status") == "stopped" else None


async def listed(settings, name: str) -> dict:
    return {r["name"]: r for r in await list_projections(settings)}[name]


async def finish_job(store, ws, *, correlation_id: str) -> tuple[uuid.UUID, int]:
    """A job queued and completed; its JobCompleted carries ``correlation_id`` in its meta."""
    job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="analyze")
    await store.save(events=store.registry.to_new_events(job.collect_events(), workspace_id=ws))
    job.start(1, "test")
    job.complete({"ok": True}, article_id=3)
    events = store.registry.to_new_events(job.collect_events(), workspace_id=ws,
                                          meta={"correlation_id": correlation_id})
    return job.id, await store.save(events=events)


async def test_the_intake_stops_on_an_event_it_cannot_apply_and_resumes_from_it_after_a_restart(
        settings, store, pool, background, tmp_path):
    ca = TestCA(tmp_path)
    settings = webhook_settings(settings, ca).model_copy(update=FAST_POLICY)
    receiver = await Receiver(ca, "127.0.0.21").start()
    try:
        ws = uuid.uuid4()
        await _register(store, settings, ws, receiver.url(), ["job.completed"])
        background.start(Relay(settings).run)
        first_stop = asyncio.Event()
        first = asyncio.create_task(run_dispatcher(settings, first_stop))
        before, _ = await finish_job(store, ws, correlation_id="corr-before")
        await wait_until(lambda: len(receiver.hits) >= 1, what="delivery before the poison")
        poison_job = Job.queue(job_id=uuid.uuid4(), workspace_id=ws, job_type="analyze")
        poison = await store.save(events=at_schema_zero(store.registry.to_new_events(poison_job.collect_events(),
                                                                                workspace_id=ws)))
        after, after_position = await finish_job(store, ws, correlation_id="corr-after")

        state = await wait_for(lambda: stopped(pool, INTAKE), what="intake stopped")
        assert state["error_position"] == poison and "no upcaster for JobQueued schema 0" in state["error"]
        assert receiver.bodies()[0]["data"]["id"] == str(before)
        # Nothing at or after the poison was taken in: the intake's marks stay below it.
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT max(max_position) FROM projection_offsets WHERE projection = $1",
                                       INTAKE) < poison
            assert await conn.fetchval("SELECT count(*) FROM webhook_jobs WHERE job_id = $1", poison_job.id) == 0
        # Reported where the operator looks, with its lag; the process is still up, the sender too.
        row = await listed(settings, INTAKE)
        assert row["status"] == "stopped" and row["error_position"] == poison and row["lag"] >= 3
        assert f"at {poison}: UnknownEventType" in render(await list_projections(settings))
        screen = render_status(await collect(settings), settings.heartbeat_interval_s)
        assert "CONSUMERS WITH EFFECTS" in screen and f"stopped at {poison}" in screen
        await asyncio.sleep(0.5)
        assert not first.done()
        first_stop.set()
        await asyncio.wait_for(first, 15)  # a clean stop, no exception
        assert len(receiver.hits) == 1

        # The restart, with the build that can read the event: it resumes from the poison.
        background.start(lambda stop: Intake().runner(settings, pool, fixed_registry("JobQueued")).serve(stop))
        background.start(lambda stop: run_dispatcher(settings, stop, intake=False))
        await wait_until(lambda: len(receiver.hits) >= 2, what="delivery after the poison")
        assert [b["data"]["id"] for b in receiver.bodies()] == [str(before), str(after)]
        assert (await reader_row(pool, INTAKE)) == {"status": "live", "error": None, "error_position": None}
        async with pool.acquire() as conn:
            assert await conn.fetchval("SELECT count(*) FROM webhook_jobs WHERE job_id = $1", poison_job.id) == 1
            delivery = await conn.fetchval("SELECT id FROM webhook_deliveries WHERE source_position = $1",
                                           after_position)

        async def recorded() -> list | None:  # the attempt is recorded once the receiver has answered
            async with pool.acquire() as conn:
                rows = await conn.fetch("SELECT type, meta FROM events WHERE stream_id = $1 ORDER BY version",
                                        delivery)
            return rows if rows and rows[-1]["type"] == "WebhookDelivered" else None

        metas = await wait_for(recorded, what="the delivery's attempt recorded")
        # The delivery's events carry their cause: the JobCompleted and its correlation id.
        assert [m["type"] for m in metas] == ["WebhookDeliveryScheduled", "WebhookDeliveryAttempted",
                                              "WebhookDelivered"]
        assert [m["meta"] for m in metas] == 3 * [{"causation_id": f"event:{after_position}",
                                                    "correlation_id": "corr-after"}]
        await wait_for(lambda: _lag_is_zero(settings, INTAKE), what="intake caught up")
    finally:
        await receiver.stop()


async def _lag_is_zero(settings, name: str) -> bool:
    row = await listed(settings, name)
    return row["status"] == "live" and row["lag"] == 0


async def test_the_credits_watch_stops_on_a_charge_it_cannot_judge_and_resumes_from_it_after_a_restart(
        settings, store, pool, background):
    settings = settings.model_copy(update=FAST_POLICY)
    ws, _ = await handle(store, CreateWorkspace(name="watch", plan="pro", credits=100, rate_limit=1000))
    await charge(store, ws, 70)  # 30 % left: above the warning threshold (20 %)
    workspace = await store.fetch_for_writing(ws)
    workspace.charge(15, "test")  # 15 % left: crosses; written at a schema this build cannot read
    poison = await store.save(events=at_schema_zero(store.registry.to_new_events(workspace.collect_events(),
                                                                            workspace_id=ws),
                                               correlation_id="req-42"))
    background.start(Relay(settings).run)
    await wait_relayed(pool)

    first_stop = asyncio.Event()
    watch = CreditsWatch(settings)
    first = asyncio.create_task(watch.run(first_stop))
    state = await wait_for(lambda: stopped(pool, "credits_watch"), what="watch stopped")
    assert state["error_position"] == poison and "no upcaster for CreditsCharged schema 0" in state["error"]
    row = await listed(settings, "credits_watch")
    assert row["status"] == "stopped" and row["error_position"] == poison and row["lag"] >= 1
    await asyncio.sleep(0.5)
    assert not first.done() and watch.appended == 0
    first_stop.set()
    await asyncio.wait_for(first, 15)

    fixed = CreditsWatch(settings, registry=fixed_registry("CreditsCharged"))
    background.start(fixed.run)

    async def low():
        return [e for e in await store.read_stream(ws) if e.type == "CreditsLow"]

    [credits_low] = await wait_for(low, what="CreditsLow after the restart")
    assert credits_low.data["crossing_version"] == 3 and credits_low.data["balance"] == 15
    assert credits_low.meta == {"causation_id": f"event:{poison}", "correlation_id": "req-42"}
    await wait_until(lambda: fixed.appended == 1, what="the watch counted its append")  # counted after the commit
    await wait_for(lambda: _lag_is_zero(settings, "credits_watch"), what="watch caught up")


async def test_tail_prints_events_decoded_and_upcast_and_keeps_what_the_predicate_accepts(
        settings, store, pool, background):
    ws = uuid.uuid4()
    registry = store.registry
    data = {"video_id": 7, "workspace_id": str(ws), "environment": "production", "media_id": None, "name": "v",
            "description": None, "language": "fr", "storage_key": "k", "captions_key": None, "size_bytes": 10,
            "duration_ms": 1000, "width": 640, "height": 360, "frame_rate": 25.0, "video_codec": "h264",
            "audio_codec": "aac", "subtitle_tracks": 0, "caption_cues": 0}  # schema 1: no demuxer yet
    old = NewEvent(uuid.uuid4(), "Video", 1, ws, "VideoUploaded", 1, data)
    position = await store.save(events=[old])
    await handle(store, CreateMedia(ws, environment="production", name="m"))
    background.start(Relay(settings).run)
    head = await wait_relayed(pool)
    out = io.StringIO()
    assert await tail(settings, out) == head
    printed = {e["position"]: e for e in map(orjson.loads, out.getvalue().splitlines())}
    assert sorted(printed) == list(range(1, head + 1))
    uploaded = printed[position]
    assert uploaded["schema"] == registry.current_schema("VideoUploaded") > 1  # stored at 1, printed upcast
    assert {k: uploaded["data"][k] for k in data} == data and uploaded["data"]["demuxer"] is None
    kept = io.StringIO()
    asked = []

    def video_only(record) -> bool:  # asked about the raw message, in offset order
        asked.append(record.offset)
        return orjson.loads(record.value)["type"] == "VideoUploaded"

    assert await tail(settings, kept, keep=video_only) == 1
    assert len(asked) == head
    assert orjson.loads(kept.getvalue())["position"] == position
