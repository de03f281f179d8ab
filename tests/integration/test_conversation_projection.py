"""The conversations read model on PostgreSQL: the events of a turn that arrive in one batch are
written by one insert, and leave the rows that the events applied one by one leave."""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from domain.agent.conversation import Conversation
from projections.conversations import projection
from projections.plan import plan_for
from services.processes.projector.runner import execute_plan, execute_statements
from tests.helpers import snapshot
from tests.support.projection_events import WORKSPACE, stored


def conversation_events() -> list:
    """Turn 1: a message, two actions, the reply (one append, as a read-only turn is recorded).
    Turn 2: the message and an action that writes (recorded at once), then a failed action and
    the reply. Turn 3: a message left without reply (a turn in progress)."""
    conversation = Conversation.start(conversation_id=uuid.uuid4(), workspace_id=WORKSPACE, environment="production",
                                      key_id=uuid.uuid4(), text="what is my balance?", planner="offline",
                                      request_id="r1")
    conversation.record_action(1, name="get_credits", arguments={}, status="ok", result={"balance": 90},
                               error=None)
    conversation.record_action(1, name="get_me", arguments={}, status="refused", result=None,
                               error={"code": "insufficient_scope", "message": "needs me:read"})
    conversation.reply(1, "You have 90 credits.", outcome="completed", not_done=0)
    turn_1 = stored(conversation)
    turn = conversation.receive("analyse video 3", planner="offline", request_id="r2")
    conversation.record_action(turn, name="analyze_video", arguments={"id": 3}, status="ok",
                               result={"job_id": "j"}, error=None)
    turn_2_written = stored(conversation, first_position=200)
    conversation.record_action(turn, name="get_job", arguments={"id": "j"}, status="failed", result=None,
                               error={"code": "not_found", "message": "no job j"})
    conversation.reply(turn, "Queued job j; its status could not be read.", outcome="completed", not_done=0)
    turn_2_end = stored(conversation, first_position=300)
    conversation.receive("and video 4?", planner="offline", request_id="r3")
    turn_3 = stored(conversation, first_position=400)
    events = [*turn_1, *turn_2_written, *turn_2_end, *turn_3]
    return [dataclasses.replace(ev, position=i) for i, ev in enumerate(events, start=1)]


async def state(pool) -> dict:
    return {"conversations": await snapshot(pool, "agent_conversations", "id"),
            "turns": await snapshot(pool, "agent_turns", "conversation_id, turn")}


async def one_by_one(pool, events) -> None:
    async with pool.acquire() as conn, conn.transaction():
        for ev in events:
            await execute_statements(conn, projection.apply(ev))


async def in_one_batch(pool, events) -> int:
    """The batch as the runner applies it; the number of statements it sent."""
    plan = plan_for(projection, events)
    async with pool.acquire() as conn, conn.transaction():
        await execute_plan(conn, plan)
    return sum(len(many) for _, many in plan)


async def _fresh(pool) -> None:
    async with pool.acquire() as conn:
        await conn.execute("TRUNCATE agent_conversations, agent_turns")


@pytest.mark.parametrize("upto", [4, 6, 8, 9], ids=["turn_1", "turn_2_written", "turn_2_ended", "turn_3_open"])
async def test_a_batch_leaves_the_rows_its_events_leave_one_by_one(pool, upto: int):
    events = conversation_events()[:upto]
    await one_by_one(pool, events)
    expected = await state(pool)
    await _fresh(pool)

    await in_one_batch(pool, events)

    assert await state(pool) == expected
    [row] = expected["conversations"]
    last = [ev for ev in events if ev.type != "ConversationActionPerformed"][-1]  # an action changes its turn only
    assert row["version"] == last.version and row["updated_at"] == last.recorded_at


async def test_the_turns_of_a_batch_are_one_insert_each(pool):
    events = conversation_events()
    await one_by_one(pool, events)
    expected = await state(pool)
    await _fresh(pool)

    statements = await in_one_batch(pool, events)

    assert await state(pool) == expected
    assert statements == 3, "one insert per turn"
    [row] = expected["conversations"]
    assert (row["turns"], row["version"]) == (3, len(events))
    first, second, third = expected["turns"]
    assert [a["name"] for a in first["actions"]] == ["get_credits", "get_me"]
    assert first["actions"][1]["error"]["code"] == "insufficient_scope"
    assert first["reply"] == "You have 90 credits." and first["replied_at"] is not None
    assert [a["status"] for a in second["actions"]] == ["ok", "failed"] and second["outcome"] == "completed"
    assert third["reply"] is None and third["actions"] == []


async def test_each_turn_in_its_own_batch_and_every_batch_again_change_nothing_more(pool):
    events = conversation_events()
    await one_by_one(pool, events)
    expected = await state(pool)
    await _fresh(pool)

    batches = [events[:4], events[4:6], events[6:8], events[8:]]  # as the appends were made
    for batch in batches:
        await in_one_batch(pool, batch)
    assert await state(pool) == expected
    for batch in batches:  # redelivered, or a replay: nothing changes
        await in_one_batch(pool, batch)
    await in_one_batch(pool, events)
    assert await state(pool) == expected
