"""Conversations with the assistant: load one in the caller's workspace, record a turn as it goes."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any
from uuid import UUID

from domain.agent.conversation import Conversation
from infra.eventstore import ConcurrencyError
from services.application.context import CONFLICT_RETRIES, Context, missing


async def load_conversation(ctx: Context, conversation_id: UUID, workspace_id: UUID, environment: str, *,
                            key_id: UUID, scopes: Collection[str]) -> Conversation:
    """The conversation, when the key ``key_id`` (with ``scopes``) of this workspace and environment
    may continue it (``Conversation.open_to``: the key that started it, or a wildcard key); another
    key's, workspace's or environment's is 404 like a missing one."""
    conversation: Conversation = await ctx.load_in(conversation_id, Conversation, workspace_id, environment,
                                                   "conversation")
    if not conversation.open_to(key_id, scopes):
        raise missing("conversation", conversation_id, None)
    return conversation


class TurnRecorder:
    """Records one turn of a conversation: the message, each action, the reply.

    What is decided is kept in memory and saved by ``flush``, at the points where something must be
    durable: after an action that writes (what it changed is then recorded before the next step),
    and at the end of the turn (reads are recorded with the reply: a crash before it loses the
    record of a read, never of a change). A flush that meets a conflict (another turn of the same
    conversation saved in between) reloads the conversation and applies what it holds again; the
    turn's number is the one its message got when it was first saved. A new conversation is started
    by its first message (``ConversationStarted`` is turn 1's message).

    The turn's events are unhurried appends: no answer waits for the conversations read model, so
    the relay may send them with the turns of other conversations (``services/processes/relay.py``).
    """

    def __init__(self, ctx: Context, *, conversation_id: UUID, workspace_id: UUID, environment: str,
                 key_id: UUID, conversation: Conversation | None) -> None:
        self.ctx = ctx
        self.conversation_id = conversation_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.key_id = key_id
        self.conversation = conversation  # as last saved; None: not saved yet (a new conversation)
        self.turn: int | None = None
        self._stale = False  # the aggregate in memory differs from the store (a failed save): reload it
        self._pending: list[Callable[[Conversation | None], Conversation]] = []

    def message(self, text: str, *, planner: str, request_id: str) -> None:
        def receive(conversation: Conversation | None) -> Conversation:
            if conversation is None:
                self.turn = 1
                return Conversation.start(conversation_id=self.conversation_id, workspace_id=self.workspace_id,
                                          environment=self.environment, key_id=self.key_id, text=text,
                                          planner=planner, request_id=request_id)
            self.turn = conversation.receive(text, planner=planner, request_id=request_id)
            return conversation

        self._pending.append(receive)

    def action(self, *, name: str, arguments: dict[str, Any], status: str, result: dict[str, Any] | None,
               error: dict[str, Any] | None) -> None:
        def record(conversation: Conversation | None) -> Conversation:
            assert conversation is not None and self.turn is not None  # the turn's message comes first
            conversation.record_action(self.turn, name=name, arguments=arguments, status=status, result=result,
                                       error=error)
            return conversation

        self._pending.append(record)

    def reply(self, text: str, *, outcome: str, not_done: int) -> None:
        def end(conversation: Conversation | None) -> Conversation:
            assert conversation is not None and self.turn is not None  # the turn's message comes first
            conversation.reply(self.turn, text, outcome=outcome, not_done=not_done)
            return conversation

        self._pending.append(end)

    async def flush(self) -> int | None:
        """Save what was decided since the last flush; the position of the last event, or None."""
        if not self._pending:
            return None
        for attempt in range(CONFLICT_RETRIES):
            if self._stale:
                self.conversation = await self.ctx.store.fetch_for_writing(self.conversation_id)
                self._stale = False
            conversation, turn_before = self.conversation, self.turn
            try:
                for apply in self._pending:
                    conversation = apply(conversation)
                position = await self.ctx.save(conversation, workspace_id=self.workspace_id, unhurried=True)
            except BaseException as exc:
                # The aggregate in memory holds what was not saved: the next flush reloads it.
                self.turn, self._stale = turn_before, True
                if not isinstance(exc, ConcurrencyError) or attempt == CONFLICT_RETRIES - 1:
                    raise
                continue
            self.conversation = conversation
            self._pending.clear()
            return position
        raise AssertionError("unreachable")
