"""Conversation: a person's exchanges with the assistant, one stream per conversation.

A turn is a message, the actions it led to (each with its outcome), and the reply. Turns are
numbered from 1, and a conversation starts with its first message (``ConversationStarted`` is turn
1's message, ``ConversationMessageReceived`` each later one). Several turns may be open at once
(two requests continuing one conversation concurrently each get their own number, and their actions
name it). Each value stored is bounded here, before it reaches an event or a read model
(``domain.agent.policy``): a message at most 4,000 characters, a reply 16,000, an action's
arguments and result 4,000 characters of JSON each (larger ones are replaced by a marker saying
so), an error message 500; at most 200 turns.

The events an action's operation appends carry, in their ``meta``, the request id of the call to
the assistant; the message's event and ``ActionPerformed`` carry the same ``request_id``, which is
how a turn is tied to what its actions did (a job queued, credits charged).

A conversation is its key's: what its actions returned (a balance, the key's own details, a
video) was for that key to see. Only that key, or a wildcard key of the same workspace and
environment (its administrator: the one kind of key that may issue and revoke any other), reads or
continues it (``open_to``). And nothing recorded holds a signed file URL
(``results.without_file_links``): events are kept for good, a URL would download the file without
a key for as long as it is valid, and the record is read by more than the key that got it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

import pydantic_core
from eventsourcing.domain import Aggregate, event

from domain.agent.policy import (
    ACTION_STATUSES,
    MAX_ARGUMENTS_CHARS,
    MAX_ERROR_CHARS,
    MAX_MESSAGE_CHARS,
    MAX_REPLY_CHARS,
    MAX_RESULT_CHARS,
    MAX_TURNS,
)
from domain.agent.results import without_file_links
from domain.base import DomainError, InvalidTransition, aggregate

OUTCOMES = ("completed", "stopped", "failed")
PLANNERS = ("offline", "provider")
# The scope of a key that reads and continues every conversation of its workspace and environment:
# a wildcard key holds every scope, and only such a key issues or revokes any key (domain.api_keys).
ADMIN_SCOPE = "*"


def reads_every_conversation(scopes: Collection[str]) -> bool:
    """Whether a key with ``scopes`` may read and continue the conversations of other keys."""
    return ADMIN_SCOPE in scopes


class ConversationFull(DomainError):
    code = "conversation_full"
    status = 409


def _bounded_json(value: Any, limit: int, what: str) -> Any:
    """``value`` if its JSON fits ``limit`` characters, else a marker saying it was left out."""
    encoded = pydantic_core.to_json(value, fallback=str)
    size = len(encoded) if len(encoded) <= limit else len(encoded.decode())  # UTF-8: bytes >= characters
    if size <= limit:
        return pydantic_core.from_json(encoded)  # plain JSON values, as the event will be read back
    return {"omitted": f"{what} of {size} characters, over the {limit} kept"}


def _check_message(text: str, planner: str) -> None:
    if not text.strip() or len(text) > MAX_MESSAGE_CHARS:
        raise DomainError(f"a message is 1 to {MAX_MESSAGE_CHARS} characters", field="message")
    if planner not in PLANNERS:
        raise DomainError(f"planner must be one of {', '.join(PLANNERS)}", field="planner")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


@dataclass
class TurnState:
    number: int
    message: str
    planner: str
    request_id: str
    actions: list[dict[str, Any]] = field(default_factory=list)
    reply: str | None = None
    outcome: str | None = None


@aggregate("Conversation")
class Conversation(Aggregate):
    class Started(Aggregate.Created):
        """A person's first message opened a conversation: the conversation belongs to the key that
        sent it, in its workspace and environment (only that key, or a wildcard key of the same
        workspace and environment, can continue or read it); the event is also turn 1's message,
        with its planner and the request id that the events of its actions carry.

        Read by the `conversations` read model (the conversation's row, whose workspace, environment
        and key decide who may read it, and turn 1 of GET /agent/conversations/{id})."""

        published_as = "ConversationStarted"
        conversation_id: UUID
        workspace_id: UUID
        environment: str
        key_id: UUID
        text: str
        planner: str
        request_id: str

    class MessageReceived(Aggregate.Event):
        """A turn after the first began: the person's message, the planner that reads it (offline or
        provider), and the request id that the events of its actions carry in their meta.

        Read by the `conversations` read model (the turn's row: its message, planner and request
        id)."""

        published_as = "ConversationMessageReceived"
        turn: int
        text: str
        planner: str
        request_id: str

    class ActionPerformed(Aggregate.Event):
        """One action of a turn ran (or was refused, or failed): the operation, its arguments, its
        short result or error, without any signed file URL (the caller's answer had it; the record
        is kept for good). Recorded as it ends, so a turn cut short keeps what it did.

        Read by the `conversations` read model (appended to its turn's actions, at its index)."""

        published_as = "ConversationActionPerformed"
        turn: int
        index: int
        name: str
        arguments: dict[str, Any]
        status: str
        result: dict[str, Any] | None
        error: dict[str, Any] | None
        request_id: str

    class Replied(Aggregate.Event):
        """A turn ended: the reply the person got, how the turn ended (completed, stopped by a client
        that left, failed with the model provider) and how many requested actions were not done.

        Read by the `conversations` read model (the turn's reply, outcome and count of actions not
        done)."""

        published_as = "ConversationReplied"
        turn: int
        reply: str
        outcome: str
        not_done: int

    @staticmethod
    def create_id(conversation_id: UUID) -> UUID:
        return conversation_id

    @event(Started)
    def __init__(self, conversation_id: UUID, workspace_id: UUID, environment: str, key_id: UUID, text: str,
                 planner: str, request_id: str):
        self.workspace_id = workspace_id
        self.environment = environment
        self.key_id = key_id
        self.turns: list[TurnState] = [TurnState(1, text, planner, request_id)]

    @classmethod
    def start(cls, *, conversation_id: UUID, workspace_id: UUID, environment: str, key_id: UUID, text: str,
              planner: str, request_id: str) -> Conversation:
        """A new conversation whose turn 1 is ``text``."""
        _check_message(text, planner)
        return cls(conversation_id=conversation_id, workspace_id=workspace_id, environment=environment, key_id=key_id,
                   text=without_file_links(text), planner=planner, request_id=request_id[:64])

    # ------------------------------------------------------------------------------ decisions

    def open_to(self, key_id: UUID, scopes: Collection[str]) -> bool:
        """Whether the key ``key_id`` with ``scopes`` (of this conversation's workspace and
        environment) may read or continue it: the key that started it, or a wildcard key. Any
        other is answered as for an unknown conversation."""
        return str(key_id) == str(self.key_id) or reads_every_conversation(scopes)

    def check_room(self) -> None:
        if len(self.turns) >= MAX_TURNS:
            raise ConversationFull(f"a conversation keeps at most {MAX_TURNS} turns; start a new one "
                                   "(send no conversationId)", turns=len(self.turns))

    def receive(self, text: str, *, planner: str, request_id: str) -> int:
        """Open a turn with ``text``; returns its number."""
        self.check_room()
        _check_message(text, planner)
        number = len(self.turns) + 1
        self._message_received(turn=number, text=without_file_links(text), planner=planner,
                               request_id=request_id[:64])
        return number

    @event(MessageReceived)
    def _message_received(self, turn: int, text: str, planner: str, request_id: str) -> None:
        self.turns.append(TurnState(turn, text, planner, request_id))

    def record_action(self, turn: int, *, name: str, arguments: dict[str, Any], status: str,
                      result: dict[str, Any] | None, error: dict[str, Any] | None) -> None:
        state = self._open(turn)
        if status not in ACTION_STATUSES:
            raise DomainError(f"an action's status is one of {', '.join(ACTION_STATUSES)}", field="status")
        if error is not None:
            error = {"code": _cut(str(error.get("code", "")), 64),
                     "message": _cut(str(error.get("message", "")), MAX_ERROR_CHARS),
                     "details": _bounded_json(error.get("details") or {}, MAX_ERROR_CHARS, "details")}
            error = without_file_links(error)
        arguments = without_file_links(_bounded_json(arguments, MAX_ARGUMENTS_CHARS, "arguments"))
        if result is not None:
            result = without_file_links(_bounded_json(result, MAX_RESULT_CHARS, "result"))
        self._action_performed(turn=turn, index=len(state.actions), name=_cut(name, 64), arguments=arguments,
                               status=status, result=result, error=error, request_id=state.request_id)

    @event(ActionPerformed)
    def _action_performed(self, turn: int, index: int, name: str, arguments: dict[str, Any], status: str,
                          result: dict[str, Any] | None,
                          error: dict[str, Any] | None, request_id: str) -> None:
        self.turns[turn - 1].actions.append({"name": name, "arguments": arguments, "status": status,
                                             "result": result, **({"error": error} if error else {})})

    def reply(self, turn: int, text: str, *, outcome: str, not_done: int) -> None:
        self._open(turn)
        if outcome not in OUTCOMES:
            raise DomainError(f"a turn ends {', '.join(OUTCOMES)}", field="outcome")
        self._replied(turn=turn, reply=_cut(without_file_links(text), MAX_REPLY_CHARS), outcome=outcome,
                      not_done=max(0, not_done))

    @event(Replied)
    def _replied(self, turn: int, reply: str, outcome: str, not_done: int) -> None:
        state = self.turns[turn - 1]
        state.reply, state.outcome = reply, outcome

    def _open(self, turn: int) -> TurnState:
        if not 1 <= turn <= len(self.turns):
            raise DomainError(f"no turn {turn} in this conversation", field="turn")
        state = self.turns[turn - 1]
        if state.reply is not None:
            raise InvalidTransition(f"turn {turn} has ended", turn=turn)
        return state

    # ------------------------------------------------------------------------------ reads

    def history(self, last: int) -> list[TurnState]:
        """The last ``last`` turns that ended, oldest first: the context of the next one."""
        return [t for t in self.turns if t.reply is not None][-last:]

    def actions_so_far(self) -> list[tuple[str, dict[str, Any], str, dict[str, Any] | None]]:
        """Every action of the conversation, in order, as ``(name, arguments, status, result)``."""
        return [(a["name"], a["arguments"], a["status"], a["result"]) for t in self.turns for a in t.actions]
