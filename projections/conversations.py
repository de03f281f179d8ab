"""Conversations with the assistant, turn by turn: GET /agent/conversations/{id}.

``agent_conversations`` holds one row per conversation (its workspace and environment, for the
read's 404 rule), ``agent_turns`` one row per turn: the message, the actions as a JSON array, the
reply and how the turn ended. Every statement touches only its conversation's rows and is safe
under replay: creations ``ON CONFLICT DO NOTHING``, an action appended only when the array is as
long as its index, a reply set only once, the conversation's row guarded by its version. Each event
is one statement (a turn's row and the conversation's change in one, through a ``WITH``).
"""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="conversations",
    ddl=[
        """CREATE TABLE IF NOT EXISTS agent_conversations (
            id           uuid PRIMARY KEY,
            workspace_id uuid NOT NULL,
            environment  text NOT NULL,
            turns        integer NOT NULL DEFAULT 0,
            created_at   timestamptz NOT NULL,
            updated_at   timestamptz NOT NULL,
            version      integer NOT NULL
        )""",
        """CREATE TABLE IF NOT EXISTS agent_turns (
            conversation_id uuid NOT NULL,
            turn            integer NOT NULL,
            message         text NOT NULL,
            planner         text NOT NULL,
            request_id      text NOT NULL,
            actions         jsonb NOT NULL DEFAULT '[]'::jsonb,
            reply           text,
            outcome         text,
            not_done        integer,
            created_at      timestamptz NOT NULL,
            replied_at      timestamptz,
            PRIMARY KEY (conversation_id, turn)
        )""",
    ],
    tables=["agent_conversations", "agent_turns"],
    ordering="per_stream",
)

# Each event is one statement: a turn's row and the conversation's (its turn count, last change and
# version) change together, the conversation's guarded by its version.
_TOUCH = """UPDATE agent_conversations SET updated_at = $3, version = $4, turns = greatest(turns, $2)
             WHERE id = $1 AND version < $4"""


@projection.handles("ConversationStarted")
def _started(ev) -> list[Statement]:
    d = ev.data
    return [("""WITH conversation AS (
                    INSERT INTO agent_conversations (id, workspace_id, environment, turns, created_at, updated_at,
                                                     version)
                    VALUES ($1, $2, $3, 1, $4, $4, $5) ON CONFLICT (id) DO NOTHING)
                INSERT INTO agent_turns (conversation_id, turn, message, planner, request_id, created_at)
                VALUES ($1, 1, $6, $7, $8, $4) ON CONFLICT (conversation_id, turn) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], ev.recorded_at, ev.version, d["text"], d["planner"],
              d["request_id"]))]


@projection.handles("ConversationMessageReceived")
def _message(ev) -> list[Statement]:
    d = ev.data
    return [(f"""WITH turn AS (
                     INSERT INTO agent_turns (conversation_id, turn, message, planner, request_id, created_at)
                     VALUES ($1, $2, $5, $6, $7, $3) ON CONFLICT (conversation_id, turn) DO NOTHING)
                 {_TOUCH}""",
             (ev.stream_id, d["turn"], ev.recorded_at, ev.version, d["text"], d["planner"], d["request_id"]))]


@projection.handles("ConversationActionPerformed")
def _action(ev) -> list[Statement]:
    d = ev.data
    action = {"name": d["name"], "arguments": d["arguments"], "status": d["status"], "result": d["result"]}
    if d.get("error") is not None:
        action["error"] = d["error"]
    return [("""UPDATE agent_turns SET actions = actions || jsonb_build_array($3::jsonb)
                 WHERE conversation_id = $1 AND turn = $2 AND jsonb_array_length(actions) = $4""",
             (ev.stream_id, d["turn"], action, d["index"]))]


@projection.handles("ConversationReplied")
def _replied(ev) -> list[Statement]:
    d = ev.data
    return [(f"""WITH turn AS (
                     UPDATE agent_turns SET reply = $5, outcome = $6, not_done = $7, replied_at = $3
                      WHERE conversation_id = $1 AND turn = $2 AND reply IS NULL)
                 {_TOUCH}""",
             (ev.stream_id, d["turn"], ev.recorded_at, ev.version, d["reply"], d["outcome"], d["not_done"]))]
