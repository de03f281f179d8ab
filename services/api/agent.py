"""POST /agent/chat, POST /agent/stream (the assistant) and GET /agent/conversations/{id} (extension).

Both operations take ``{"message", "conversationId"?}`` (scope ``agent:use``) and run one turn
(``services/api/assistant/turn.py``): the chat answers ``data {conversationId, reply, actions[]}`` at the end;
the stream sends the same turn as Server-Sent Events while it runs: ``conversation``
(``{conversationId}``), ``action.started`` and ``action.completed`` (an action as in the chat
answer, with its ``index``), ``message.delta`` (``{text}``, pieces of the reply in order: joined,
they are the reply), then ``done`` (the whole chat answer) or ``error`` (an error envelope), each
with an increasing ``id``. Everything that can refuse the call (401, 403, 429, 400, a 404 for a
conversation of another workspace, a 409 for a full one) is answered before the stream starts, as
JSON. A stream whose client leaves ends its turn after the action in progress, which is recorded.

A provider failure mid-turn is 502 ``provider_error`` (an ``error`` event on the stream), with the
conversation's id and the actions done in ``details``: they are recorded.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, Literal
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field, RootModel

from domain.agent.conversation import reads_every_conversation
from domain.agent.policy import MAX_ACTIONS, MAX_MESSAGE_CHARS
from domain.agent.results import without_file_links
from infra.llm import ChatProvider
from projections import conversations_queries as queries
from services.api.assistant.actions import ASSISTANT_ACTIONS
from services.api.assistant.turn import ProviderFailed, Turn, TurnEvents
from services.api.base import HEX_ID, REQUEST_ID, SETTINGS, WINDOW, ApiError, Call, Route, not_found
from services.api.errors import found, to_api_error
from services.api.models import VISIBLE_TEXT_PATTERN, ErrorBody, ErrorEnvelope
from services.api.streams import EventBatch, Opening, ServerSentEvent
from services.application.conversations import load_conversation

# ------------------------------------------------------------------------------------ models


class AgentMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=VISIBLE_TEXT_PATTERN,
                         description=f"what the person asks, in English or French: 1 to {MAX_MESSAGE_CHARS} "
                                     "characters with at least one visible")
    conversationId: UUID | None = Field(default=None, description=(
        "continue this conversation (its earlier turns are the context); omitted: a new conversation"))


class AgentAction(BaseModel):
    name: str = Field(description="the operation id of the route the action ran (get_credits, analyze_video, ...)")
    arguments: dict[str, Any] = Field(description="path parameters, query parameters and body fields, flat")
    status: Literal["ok", "refused", "failed"]
    result: dict[str, Any] | None = Field(description="what a person needs of the answer: ids, counts, links")
    error: ErrorBody | None = Field(default=None, description="when not ok: the error envelope's error")


class AgentReply(BaseModel):
    conversationId: UUID
    reply: str = Field(description="what was done, for a person, with the numbers and ids found")
    actions: list[AgentAction] = Field(max_length=MAX_ACTIONS)


class AgentChatResponse(BaseModel):
    data: AgentReply


class ConversationOpened(BaseModel):
    conversationId: UUID


class ActionStarted(BaseModel):
    index: int
    name: str
    arguments: dict[str, Any]


class ActionCompleted(AgentAction):
    index: int


class MessageDelta(BaseModel):
    text: str


class AgentStreamData(RootModel):
    """The data of one event of POST /agent/stream, by event: conversation, action.started,
    action.completed, message.delta, done (the chat answer's data) or error (an error envelope)."""

    root: ConversationOpened | ActionStarted | ActionCompleted | MessageDelta | AgentReply | ErrorEnvelope


class TurnView(BaseModel):
    turn: int
    message: str
    planner: Literal["offline", "provider"]
    requestId: str = Field(description="the X-Request-Id of the call that made the turn: the events its actions "
                                       "caused carry it as meta.request_id, with the action's index as "
                                       "meta.agent_action")
    actions: list[AgentAction]
    reply: str | None = Field(description="null while the turn runs")
    outcome: Literal["completed", "stopped", "failed"] | None
    notDone: int | None = Field(description="requested actions that were not done (the cap, the rate limit, a stop)")
    createdAt: datetime
    repliedAt: datetime | None


class ConversationView(BaseModel):
    id: UUID
    createdAt: datetime
    updatedAt: datetime
    turns: list[TurnView]


class ConversationResponse(BaseModel):
    data: ConversationView


STREAM_EVENTS = ("conversation", "action.started", "action.completed", "message.delta", "done")

# ------------------------------------------------------------------------------------ handlers


async def _open_turn(call: Call, *, stream: bool) -> Turn:
    """The turn, once the conversation is known to be the caller's and to have room (404, 409)."""
    body: AgentMessage = call.body
    conversation = None
    if body.conversationId is not None:
        conversation = await load_conversation(call.context, body.conversationId, call.workspace_id,
                                               call.environment, key_id=call.principal.key_id,
                                               scopes=call.principal.scopes)
        conversation.check_room()
    return Turn(call, body.message, body.conversationId or uuid4(), conversation,
                ChatProvider.from_settings(call.app[SETTINGS]), stream=stream, actions=call.app[ASSISTANT_ACTIONS])


def provider_error(exc: ProviderFailed) -> ApiError:
    return ApiError(502, "provider_error", f"the language model provider failed: {exc}; what was done before is "
                    "recorded and listed in details.actions",
                    {"conversationId": exc.answer["conversationId"], "actions": exc.answer["actions"]})


async def agent_chat(call: Call) -> dict:
    turn = await _open_turn(call, stream=False)
    try:
        answer = await turn.run(asyncio.Event())
    except ProviderFailed as exc:
        raise provider_error(exc) from None
    if turn.runner is not None and turn.runner.window is not None:
        call.request[WINDOW] = turn.runner.window  # the answer's rate-limit headers count the actions too
    return {"data": answer}


async def agent_stream(call: Call) -> Opening:
    return turn_stream(await _open_turn(call, stream=True))


def turn_stream(turn: Turn) -> Opening:
    """The turn as a stream: the conversation's id is known before anything runs, so it leaves with
    the headers, at once; the turn starts when the next event is awaited."""
    return Opening(ServerSentEvent("conversation", {"conversationId": str(turn.conversation_id)}, id=1),
                   _turn_events(turn))


async def _turn_events(turn: Turn) -> AsyncIterator[ServerSentEvent | EventBatch]:
    """The turn's events after ``conversation`` (see the module's text); those ready together are
    sent as one batch (one write). The turn runs in a task of its own, so that a client that leaves
    stops it between actions, never inside one: closing this iterator sets ``stop`` and waits for
    the turn to record where it stopped."""
    ids = itertools.count(2)
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    events = TurnEvents(started=lambda data: queue.put_nowait(("action.started", data)),
                        completed=lambda data: queue.put_nowait(("action.completed", data)),
                        delta=lambda text: queue.put_nowait(("message.delta", {"text": text})))
    stop = asyncio.Event()

    async def drive() -> None:
        try:
            queue.put_nowait(("done", await turn.run(stop, events)))
        except ProviderFailed as exc:
            queue.put_nowait(("error", provider_error(exc).envelope()))
        except Exception as exc:  # an outage or a bug: the stream's error event (logged there)
            queue.put_nowait(("raise", exc))

    task = asyncio.create_task(drive())
    try:
        while True:
            ready = [await queue.get()]
            while not queue.empty():
                ready.append(queue.get_nowait())
            batch: list[ServerSentEvent] = []
            for name, data in ready:
                if name == "raise":  # the error event, numbered as every event of the turn
                    request = turn.call.request
                    name, data = "error", to_api_error(data, request, request[REQUEST_ID]).envelope()  # logs it
                batch.append(ServerSentEvent(name, data, id=next(ids)))
                if name in ("done", "error"):
                    yield EventBatch(tuple(batch))
                    return
            yield batch[0] if len(batch) == 1 else EventBatch(tuple(batch))
    finally:
        stop.set()
        await asyncio.wait([task])


async def get_agent_conversation(call: Call) -> dict:
    try:
        conversation_id = UUID(call.path("id"))
    except ValueError:
        raise not_found("conversation", call.path("id")) from None
    row, turns = found(await queries.with_turns(call.pool, conversation_id, call.workspace_id, call.environment,
                                                call.principal.key_id, reads_every_conversation(call.principal.scopes)),
                       "conversation", conversation_id)
    # Turns recorded before results were kept without signed file links may still hold one: left out.
    return {"data": {"id": row["id"], "createdAt": row["created_at"], "updatedAt": row["updated_at"],
                     "turns": [{"turn": t["turn"], "message": without_file_links(t["message"]),
                                "planner": t["planner"], "requestId": t["request_id"],
                                "actions": without_file_links(t["actions"]), "reply": without_file_links(t["reply"]),
                                "outcome": t["outcome"], "notDone": t["not_done"], "createdAt": t["created_at"],
                                "repliedAt": t["replied_at"]}
                               for t in turns]}}


ROUTES = [
    Route("POST", "/agent/chat", agent_chat, scope="agent:use", tag="Agent", body=AgentMessage,
          response=AgentChatResponse, writes=True, errors=(404, 409, 502),
          summary=f"The assistant: one message, up to {MAX_ACTIONS} actions through the API's own operations with "
                  "the caller's key, one reply (docs/agent.md); 502 provider_error when the model provider fails"),
    Route("POST", "/agent/stream", agent_stream, scope="agent:use", tag="Agent", body=AgentMessage,
          response=AgentStreamData, writes=True, stream=True, events=STREAM_EVENTS, errors=(404, 409),
          summary="The assistant as Server-Sent Events: conversation, action.started, action.completed, "
                  "message.delta (the reply in pieces), done (the chat answer) or error"),
    Route("GET", "/agent/conversations/{id}", get_agent_conversation, scope="agent:use", tag="Agent",
          response=ConversationResponse, errors=(404,), patterns=(("id", HEX_ID),),
          summary="Extension: a conversation with the assistant, turn by turn (message, actions, reply), from its "
                  "read model"),
]
