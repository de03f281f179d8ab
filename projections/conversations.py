"""Conversations with the assistant, turn by turn: GET /agent/conversations/{id}.

``agent_conversations`` holds one row per conversation (its workspace, environment and the key that
started it, for the read's 404 rule), ``agent_turns`` one row per turn: the message, the actions as
a JSON array, the reply and how the turn ended. Every statement touches only its conversation's
rows and is safe under replay: creations ``ON CONFLICT DO NOTHING``, an action appended only when
the array is as long as its index, a reply set only once, the conversation's row guarded by its
version. Each event is one statement (a turn's row and the conversation's change in one, through a
``WITH``), and the events of one turn that arrive in one batch are one insert.
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
        # The key that started it (ConversationStarted.key_id): a row projected before this column
        # has none, and is read by a wildcard key only until the projection is rebuilt.
        "ALTER TABLE agent_conversations ADD COLUMN IF NOT EXISTS key_id uuid",
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
# version) change together, the conversation's guarded by its version. A turn's opening statement
# holds every column of the turn, so that the events of one turn in one batch (a read-only turn is
# recorded in one append: its message, actions and reply) are written by one insert (``_merge``).
_TOUCH = """UPDATE agent_conversations SET updated_at = $3, version = $4, turns = greatest(turns, $2)
             WHERE id = $1 AND version < $4"""
_TURN_COLUMNS = "conversation_id, turn, message, planner, request_id, created_at, actions, reply, outcome, " \
                "not_done, replied_at"
# Arguments: id, workspace, environment, created_at, text, planner, request_id, key, then the tail.
_STARTED = f"""WITH conversation AS (
                   INSERT INTO agent_conversations (id, workspace_id, environment, key_id, turns, created_at,
                                                    updated_at, version)
                   VALUES ($1, $2, $3, $8, 1, $4, $10, $9) ON CONFLICT (id) DO NOTHING)
               INSERT INTO agent_turns ({_TURN_COLUMNS})
               VALUES ($1, 1, $5, $6, $7, $4, $11::jsonb, $12, $13, $14, $15)
               ON CONFLICT (conversation_id, turn) DO NOTHING"""
# Arguments: id, turn, created_at, text, planner, request_id, then the tail.
_RECEIVED = f"""WITH turn AS (
                    INSERT INTO agent_turns ({_TURN_COLUMNS})
                    VALUES ($1, $2, $4, $5, $6, $3, $9::jsonb, $10, $11, $12, $13)
                    ON CONFLICT (conversation_id, turn) DO NOTHING)
                UPDATE agent_conversations SET updated_at = $8, version = $7, turns = greatest(turns, $2)
                 WHERE id = $1 AND version < $7"""
# The tail of both: the conversation's version and last change, the turn's actions, reply,
# outcome, actions not done and reply time (an opening alone: its own version and time, no action,
# no reply).
_TAIL = 7
_ACTION = """UPDATE agent_turns SET actions = actions || jsonb_build_array($3::jsonb)
              WHERE conversation_id = $1 AND turn = $2 AND jsonb_array_length(actions) = $4"""
_REPLIED = f"""WITH turn AS (
                   UPDATE agent_turns SET reply = $5, outcome = $6, not_done = $7, replied_at = $3
                    WHERE conversation_id = $1 AND turn = $2 AND reply IS NULL)
               {_TOUCH}"""


@projection.handles("ConversationStarted")
def _started(ev) -> list[Statement]:
    d = ev.data
    return [(_STARTED, (ev.stream_id, ev.workspace_id, d["environment"], ev.recorded_at, d["text"], d["planner"],
                        d["request_id"], d["key_id"], ev.version, ev.recorded_at, [], None, None, None, None))]


@projection.handles("ConversationMessageReceived")
def _message(ev) -> list[Statement]:
    d = ev.data
    return [(_RECEIVED, (ev.stream_id, d["turn"], ev.recorded_at, d["text"], d["planner"], d["request_id"],
                         ev.version, ev.recorded_at, [], None, None, None, None))]


@projection.handles("ConversationActionPerformed")
def _action(ev) -> list[Statement]:
    d = ev.data
    action = {"name": d["name"], "arguments": d["arguments"], "status": d["status"], "result": d["result"]}
    if d.get("error") is not None:
        action["error"] = d["error"]
    return [(_ACTION, (ev.stream_id, d["turn"], action, d["index"]))]


@projection.handles("ConversationReplied")
def _replied(ev) -> list[Statement]:
    d = ev.data
    return [(_REPLIED, (ev.stream_id, d["turn"], ev.recorded_at, ev.version, d["reply"], d["outcome"],
                        d["not_done"]))]


def _merge(first: Statement, second: Statement) -> Statement | None:
    """A turn's opening and the next event of that turn in one batch as one insert: what the two
    leave in sequence (an action appended when it is the next one, the reply with the
    conversation's version and last change). Anything else is kept apart."""
    sql, args = first
    if sql not in (_STARTED, _RECEIVED):
        return None
    turn = 1 if sql == _STARTED else args[1]
    version, updated_at, actions, reply, outcome, not_done, replied_at = args[-_TAIL:]
    if reply is not None:  # the turn has ended: what follows belongs to another turn
        return None
    following, values = second
    if following == _ACTION:
        _, action_turn, action, index = values
        if action_turn != turn or index != len(actions):
            return None
        tail = (version, updated_at, [*actions, action], None, None, None, None)
    elif following == _REPLIED:
        _, reply_turn, at, reply_version, text, ended, left = values
        if reply_turn != turn:
            return None
        tail = (reply_version, at, actions, text, ended, left, at)
    else:
        return None
    return sql, (*args[:-_TAIL], *tail)


projection.merge = _merge
