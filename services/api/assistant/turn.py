"""One turn of the assistant: a message in, actions run, a reply out, all of it recorded.

Two ways to decide the actions:

- **offline** (no provider configured): the planner (``domain.agent.planner``) reads the message
  and the conversation's earlier actions; its actions run in order, an action's missing argument
  taken from an earlier answer of the plan (``resolve``); the reply is composed from their results
  (``domain.agent.reply``).
- **provider** (``VAEO_LLM_BASE_URL`` and ``VAEO_LLM_MODEL`` set): a tool-calling loop. The model
  gets the rules, the conversation's last turns, the message and the actions as tools; each tool
  call runs as an action (malformed arguments, an unknown tool or a refusal are an action
  ``failed`` or ``refused`` that the model reads back, never an exception); the answers go back as
  ``tool`` messages marked as data; the loop ends when the model answers without tool calls, or
  after 15 actions with one last call that may not call tools. Writes need the person's message to
  ask for them (``asked_writes``); once an action has answered (or the conversation already held
  actions), reads need the person's messages to name their kind of resource (``asked_reads``); a
  refusal for a missing scope that the model's text does not name is named after it. Each
  answered model call records ``LlmUsageRecorded`` (operation ``agent.chat``) at once, in its own
  append: the tokens were spent whatever happens next. A provider failure (after the client's
  bounded retries) ends the turn ``failed``: ``ProviderFailed``, which the routes answer as 502
  ``provider_error`` with what was done.

Either way: at most 15 actions (what is left is counted and said), the rate limit counted per
action (``services.api.assistant.actions``), and a ``stop`` event (the stream's client left, the API shuts
down) that ends the turn after the action in progress: a model call in flight is abandoned, an
action in flight completes and is recorded. Every turn is recorded (``TurnRecorder``): after each
action that writes, and at the end with the reply, including a turn stopped or failed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

import orjson

from domain.agent import grammar, planner, resolution
from domain.agent.conversation import Conversation
from domain.agent.policy import CONTEXT_TURNS, MAX_ACTIONS, asked_reads, asked_writes
from domain.agent.prompt import history_messages, system_prompt, tool_content
from domain.agent.reply import ActionView, compose, left_undone, missing_scopes, model_failed
from domain.llm_usage import LlmUsage
from infra.eventstore import ConcurrencyError
from infra.llm import ChatProvider, ProviderError
from services.api.assistant.actions import ActionRunner, Catalog, Outcome, refusal
from services.api.base import REQUEST_ID, Call
from services.application.conversations import TurnRecorder
from services.lib.common import redact

log = logging.getLogger("vaeo.agent")

USAGE_OPERATION = "agent.chat"  # LlmUsageRecorded.operation of the assistant's model calls (GET /usage/llm)
MODEL_ROUNDS = MAX_ACTIONS + 2  # model calls per turn: one per action at the most, and the answer


def _ignore(_: Any) -> None:
    return None


@dataclass
class TurnEvents:
    """What a stream shows while a turn runs (the chat route shows nothing until the end)."""

    started: Callable[[dict], None] = _ignore  # {index, name, arguments}
    completed: Callable[[dict], None] = _ignore  # the action as in the answer, with its index
    delta: Callable[[str], None] = _ignore  # a piece of the reply, in order


class ProviderFailed(Exception):
    """The model provider failed mid-turn; ``answer`` is what was done (recorded)."""

    def __init__(self, message: str, answer: dict) -> None:
        super().__init__(message)
        self.answer = answer


def _views(outcomes: list[Outcome]) -> list[ActionView]:
    return [ActionView(o.name, o.arguments, o.status, o.result, o.error) for o in outcomes]


def _pieces(text: str) -> list[str]:
    """The reply as the pieces a stream sends: one line each (their concatenation is the reply)."""
    return text.splitlines(keepends=True) or ([text] if text else [])


@dataclass
class Turn:
    call: Call
    message: str
    conversation_id: UUID
    conversation: Conversation | None  # None: the turn starts the conversation
    provider: ChatProvider | None
    stream: bool = False  # the reply is streamed: ask the provider for a stream
    actions: Catalog = field(kw_only=True)  # the app's (ASSISTANT_ACTIONS)

    def __post_init__(self) -> None:
        p = self.call.principal
        self.recorder = TurnRecorder(self.call.context, conversation_id=self.conversation_id,
                                     workspace_id=p.workspace_id, environment=p.environment, key_id=p.key_id,
                                     conversation=self.conversation)
        self.request_id = self.call.request[REQUEST_ID]
        self.outcomes: list[Outcome] = []
        self.runner: ActionRunner | None = None
        self._usage_key: str | None = None

    @property
    def usage_key(self) -> str:
        """Names this turn's model calls in LlmUsageRecorded (recorded once each); drawn when first needed."""
        if self._usage_key is None:
            self._usage_key = uuid4().hex
        return self._usage_key

    def answer(self, reply: str) -> dict:
        return {"conversationId": str(self.conversation_id), "reply": reply,
                "actions": [o.public() for o in self.outcomes]}

    async def run(self, stop: asyncio.Event, events: TurnEvents | None = None) -> dict:
        """The turn to its end; the chat answer. Raises ``ProviderFailed``."""
        events = events or TurnEvents()
        text = redact(self.message)  # a credential pasted into a message is not kept
        self.recorder.message(text, planner="provider" if self.provider else "offline", request_id=self.request_id)
        try:
            if self.provider is None:
                return await self._offline(text, stop, events)
            return await self._with_model(text, stop, events)
        except ProviderFailed:
            raise
        except BaseException:
            # An outage or a bug mid-turn: keep what was done (best effort), then let the error answer.
            if self.recorder.turn is not None or self.outcomes:
                try:
                    self.recorder.reply("The turn failed; see the actions done.", outcome="failed",
                                        not_done=0)
                    await asyncio.shield(self.recorder.flush())
                except Exception:  # noqa: BLE001  the store is what failed: nothing more can be kept
                    log.warning("request %s: the failed turn could not be recorded", self.request_id)
            raise

    # ------------------------------------------------------------------------------ recording

    async def _record(self, index: int, outcome: Outcome, events: TurnEvents) -> None:
        self.outcomes.append(outcome)
        self.recorder.action(name=outcome.name, arguments=outcome.arguments, status=outcome.status,
                             result=outcome.result, error=outcome.error)
        if outcome.writes and outcome.status == "ok":
            await self.recorder.flush()
        events.completed({"index": index, **outcome.public()})

    async def _finish(self, reply: str, *, outcome: str, left: int) -> dict:
        self.recorder.reply(reply, outcome=outcome, not_done=left)
        await self.recorder.flush()
        return self.answer(reply)

    # ------------------------------------------------------------------------------ offline

    async def _offline(self, text: str, stop: asyncio.Event, events: TurnEvents) -> dict:
        earlier = self.conversation.actions_so_far() if self.conversation is not None else []
        plan = planner.plan(text, resolution.context_from(earlier))
        self.runner = runner = ActionRunner(self.call, self.actions, asked_writes=None)
        # The plan is known: the actions that will reach the rate-limit check are counted together.
        runner.count_ahead(sum(runner.counts(p.name, p.arguments) for p in plan.actions[:MAX_ACTIONS]))
        reason = "cap"
        try:
            for index, planned in enumerate(plan.actions):
                if index >= MAX_ACTIONS:
                    break
                if stop.is_set():
                    reason = "stopped"
                    break
                if runner.limited:
                    reason = "rate_limited"
                    break
                try:
                    arguments = resolution.resolve(planned, [(o.name, o.status, o.data) for o in self.outcomes])
                except resolution.Unresolved as exc:
                    events.started({"index": index, "name": planned.name, "arguments": planned.arguments})
                    outcome = refusal(planned.name, dict(planned.arguments), "not_resolved", f"not done: {exc}",
                                      {"reason": exc.reason, **exc.values}, status="failed")
                else:
                    events.started({"index": index, "name": planned.name, "arguments": arguments})
                    outcome = await runner.run(index, planned.name, arguments)
                await self._record(index, outcome, events)
        finally:
            try:
                await runner.give_back()
            except Exception:  # noqa: BLE001  the window then counts more than ran: it forgives less, for a minute
                log.warning("request %s: unused rate-limit counts could not be given back", self.request_id)
        left = len(plan.actions) - len(self.outcomes)
        if left and runner.limited:
            reason = "rate_limited"
        reply = compose(plan.language, _views(self.outcomes), notes=plan.notes, not_understood=plan.not_understood,
                        asked_help=plan.asked_help, left=left, left_reason=reason, cap=MAX_ACTIONS,
                        retry_after_s=runner.window.reset_in if runner.window else None)
        for piece in _pieces(reply):
            events.delta(piece)
        return await self._finish(reply, outcome="stopped" if reason == "stopped" else "completed", left=left)

    # ------------------------------------------------------------------------------ with a model

    async def _with_model(self, text: str, stop: asyncio.Event, events: TurnEvents) -> dict:
        language = grammar.detect_language_of(text)
        history = self.conversation.history(CONTEXT_TURNS) if self.conversation is not None else []
        messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(language)},
                                          *history_messages(history), {"role": "user", "content": text}]
        # The person's own words: this message and those of the turns the model is shown.
        said = [text, *(t.message for t in history)]
        self.runner = runner = ActionRunner(self.call, self.actions, asked_writes=asked_writes(text),
                                            asked_reads=asked_reads(said),
                                            read_content=any(t.actions for t in history))
        tools = self.actions.tools()
        parts: list[str] = []  # the reply, piece by piece: what the deltas sent, in order
        left, reason, index = 0, "cap", 0

        def say(piece: str) -> None:
            parts.append(piece)
            events.delta(piece)

        for round_number in range(MODEL_ROUNDS):
            last_round = index >= MAX_ACTIONS or runner.limited or round_number == MODEL_ROUNDS - 1
            separate = bool(parts)  # the text of two model calls is two paragraphs

            def on_delta(piece: str) -> None:
                nonlocal separate
                if separate:
                    say("\n\n")
                    separate = False
                say(piece)

            try:
                answer = await self._ask(messages, tools, "none" if last_round else None, stop,
                                         on_delta if self.stream else None)
            except ProviderError as exc:
                return await self._provider_failed(str(exc), language)
            if answer is None:  # the client left while the model was answering
                reason = "stopped"
                break
            if not self.stream and answer.content:
                on_delta(answer.content)
            if not answer.tool_calls or last_round:
                left += len(answer.tool_calls)
                break
            messages.append({"role": "assistant", "content": answer.content or None,
                             "tool_calls": [{"id": c.id, "type": "function",
                                             "function": {"name": c.name, "arguments": c.arguments}}
                                            for c in answer.tool_calls]})
            for tool_call in answer.tool_calls:
                if index >= MAX_ACTIONS or runner.limited or stop.is_set():
                    left += 1
                    why = ("the person left" if stop.is_set() else "the workspace's rate limit is reached"
                           if runner.limited else f"the limit of {MAX_ACTIONS} actions per message is reached")
                    messages.append({"role": "tool", "tool_call_id": tool_call.id,
                                     "content": tool_content("not_done", None, {"message": f"not done: {why}"}, None)})
                    continue
                outcome = await self._model_action(index, tool_call, events)
                await self._record(index, outcome, events)
                index += 1
                messages.append({"role": "tool", "tool_call_id": tool_call.id,
                                 "content": tool_content(outcome.status, outcome.result, outcome.error,
                                                         outcome.answer)})
            if stop.is_set():
                reason = "stopped"
                break
        if runner.limited:
            reason = "rate_limited"
        if not parts:  # a model that said nothing: the offline account of what was done
            say(compose(language, _views(self.outcomes)))
        unnamed = missing_scopes(_views(self.outcomes), "".join(parts), language)
        if unnamed:  # the person learns which scope their key lacks, whatever the model wrote
            say("\n\n" + unnamed)
        if left:
            say("\n\n" + left_undone(left, reason, language, cap=MAX_ACTIONS,
                                      retry_after_s=runner.window.reset_in if runner.window else None))
        return await self._finish("".join(parts), outcome="stopped" if reason == "stopped" else "completed",
                                  left=left)

    async def _ask(self, messages: list[dict], tools: list[dict], tool_choice: str | None, stop: asyncio.Event,
                   on_delta: Callable[[str], None] | None):
        """One model call, abandoned when ``stop`` is set first (then None); its usage recorded."""
        call = asyncio.ensure_future(self.provider.converse(messages, tools=tools, tool_choice=tool_choice,
                                                            on_delta=on_delta))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait([call, stopped], return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not call.done():
                call.cancel()
                await asyncio.wait([call])
        if call.cancelled():
            return None
        answer = call.result()
        await self._record_usage(answer.prompt_tokens, answer.completion_tokens, len(messages))
        return answer

    async def _record_usage(self, prompt_tokens: int, completion_tokens: int, call_number: int) -> None:
        p = self.call.principal
        usage = LlmUsage.record(call_key=f"agent:{self.usage_key}:{call_number}", workspace_id=p.workspace_id,
                                environment=p.environment, operation=USAGE_OPERATION, prompt_tokens=prompt_tokens,
                                completion_tokens=completion_tokens)
        try:
            await self.call.context.save(usage, workspace_id=p.workspace_id)
        except ConcurrencyError:
            pass  # this call is recorded already

    async def _model_action(self, index: int, tool_call, events: TurnEvents) -> Outcome:
        name = tool_call.name
        try:
            arguments = orjson.loads(tool_call.arguments or "{}")
            problem = None if isinstance(arguments, dict) else "the arguments must be a JSON object"
        except orjson.JSONDecodeError as exc:
            problem = f"the arguments are not valid JSON ({exc})"
        if problem is not None:
            raw = {"raw": tool_call.arguments[:500]}
            events.started({"index": index, "name": name, "arguments": raw})
            return refusal(name, raw, "invalid_arguments", problem, status="failed")
        events.started({"index": index, "name": name, "arguments": arguments})
        return await self.runner.run(index, name, arguments)

    async def _provider_failed(self, message: str, language: str) -> dict:
        done = compose(language, _views(self.outcomes)) if self.outcomes else ""
        reply = model_failed(message, language) + (("\n" + done) if done else "")
        self.recorder.reply(reply, outcome="failed", not_done=0)
        await self.recorder.flush()
        raise ProviderFailed(message, self.answer(reply))
