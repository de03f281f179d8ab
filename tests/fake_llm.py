"""A fake OpenAI-compatible provider for the tests: a real aiohttp server on 127.0.0.1 that speaks
the Chat Completions protocol (``POST /v1/chat/completions``), with scripted answers.

Each request takes the next step of the script; the last step repeats. Steps: ``article()`` (a
valid answer to each call of the premium writing, built from the material the request carried:
the outline, the article, the descriptions), ``premium(outline=..., article=..., descriptions=...)``
(the same, with the answer to the calls named changed into another text, with its own
``finish_reason`` when given), ``translation(prefix)`` (a
valid translation of the article the request carried: each text with ``prefix``), ``content(text)`` (a valid
protocol answer whose content is ``text``), ``status(code, message)`` (an error answer in the
OpenAI error shape), ``raw(code, body)``, ``slow(seconds)`` (answers an article, too late),
``cut()`` (closes the connection without answering). ``stop()`` closes the port (connection
refused) and ``start()`` opens it again on the same port.

For the assistant's tool calling: ``reply(text)`` answers ``text`` as the assistant's message,
``tool_calls(call(name, arguments), ...)`` answers with tool calls (``arguments`` a dict, or a
string sent as it is, malformed JSON included), ``decide(fn)`` answers what ``fn(body)`` returns
(a text or a list of calls), from what the request carried. All three answer as the protocol's
stream (``text/event-stream`` of ``chat.completion.chunk``s, the text in ``pieces``, each tool
call's arguments in fragments, usage last, then ``data: [DONE]``) when the request asks for
``stream: true``, and as one JSON answer otherwise. ``hold(seconds, step)`` waits before answering.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

Step = Callable[[web.Request, dict], Awaitable[web.StreamResponse]]

PROMPT_TOKENS, COMPLETION_TOKENS = 321, 123
INTRO = "PROVIDER-INTRO: introduction written by fake provider."


TITLE = "Fusion, told by the provider"
SUMMARY = "PROVIDER-SUMMARY: talk summarised by fake provider."
SHORT = "PROVIDER-SHORT: the talk, told short by the fake provider."
LONG = "PROVIDER-LONG: long description written by fake provider; PROVIDER-LONG, PROVIDER-LONG, PROVIDER-LONG."


def outline_for(material: dict) -> dict:
    """A valid outline (title, summary, chapters) for the outline call's material."""
    return {"title": TITLE, "summary": SUMMARY,
            "chapters": [{"startMs": c["startMs"], "title": f"Provider chapter {c['index'] + 1}"}
                         for c in material["chapters"]]}


def answer_for(material: dict) -> dict:
    """A valid article for the article call's material: one section per chapter, key facts from its claims."""
    return {
        "introduction": INTRO,
        "sections": [{"heading": f"Provider section {c['index'] + 1}",
                      "paragraphs": [f"PROVIDER-PARAGRAPH {c['index'] + 1}.", "PROVIDER-PARAGRAPH-2."]}
                     for c in material["chapters"]],
        "key_facts": [{"claim_id": c["id"], "text": f"PROVIDER-FACT {c['text']}"} for c in material["claims"][:3]],
        "faq": [{"question": f"{i['query'].rstrip('?')}?", "answer": "PROVIDER-ANSWER."}
                for i in material["searchIntents"][:2]],
        "conclusion": "PROVIDER-CONCLUSION.",
    }


def descriptions_for(material: dict) -> dict:
    return {"short": SHORT, "long": LONG}


def premium_for(material: dict) -> dict:
    """The valid answer to whichever premium call ``material`` is the material of."""
    if "workingTitle" in material:
        return outline_for(material)
    if "writingStyle" in material:
        return answer_for(material)
    return descriptions_for(material)


def translation_for(material: dict, prefix: str = "EN: ") -> dict:
    """A valid translation of an article's material: every text kept in place, with ``prefix``."""

    def tr(value):
        if isinstance(value, str):
            return prefix + value if value else value
        if isinstance(value, list):
            return [tr(v) for v in value]
        if isinstance(value, dict):
            return {k: tr(v) for k, v in value.items()}
        return value

    return tr(material)


def completion(content: str, finish_reason: str = "stop") -> dict:
    return {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                      "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}}


def article() -> Step:
    """A valid answer to each call of a premium writing (the outline, the article, the descriptions)."""
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        material = json.loads(body["messages"][-1]["content"])
        return web.json_response(completion(json.dumps(premium_for(material))))

    return step


def premium(**changes: Callable[[dict], str | tuple[str, str]]) -> Step:
    """Like ``article()``, but the answer to the calls named (``outline``, ``article``,
    ``descriptions``) is what the function given makes of the valid answer: a text, or a text and
    its ``finish_reason``."""
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        material = json.loads(body["messages"][-1]["content"])
        kind = "outline" if "workingTitle" in material else "article" if "writingStyle" in material else "descriptions"
        answer = premium_for(material)
        changed = changes[kind](answer) if kind in changes else json.dumps(answer)
        text, finish = changed if isinstance(changed, tuple) else (changed, "stop")
        return web.json_response(completion(text, finish))

    return step


def translation(prefix: str = "EN: ", alter=None) -> Step:
    """A translation of the article the request carried (``alter`` may change it before it is sent)."""

    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        answer = translation_for(json.loads(body["messages"][-1]["content"]), prefix)
        return web.json_response(completion(json.dumps(alter(answer) if alter else answer)))

    return step


def content(text: str, finish_reason: str = "stop") -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        return web.json_response(completion(text, finish_reason))

    return step


def status(code: int, message: str, headers: dict | None = None) -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        return web.json_response({"error": {"message": message, "type": "fake_error"}}, status=code, headers=headers)

    return step


def raw(code: int, text: str, content_type: str = "text/html") -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        return web.Response(status=code, text=text, content_type=content_type)

    return step


def slow(seconds: float) -> Step:
    answer = article()

    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return await answer(request, body)

    return step


def cut() -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        request.transport.close()
        await asyncio.sleep(10)  # cancelled with the connection (handler_cancellation)
        raise web.HTTPInternalServerError()

    return step


def call(name: str, arguments: dict | str, call_id: str | None = None) -> dict:
    """One tool call of an answer."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{name}_{abs(hash(text)) % 10**8}", "type": "function",
            "function": {"name": name, "arguments": text}}


def _message(text: str | None, calls: list[dict] | None) -> dict:
    return {"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}


async def _answer(request: web.Request, body: dict, text: str | None, calls: list[dict] | None,
                  pieces: int = 4) -> web.StreamResponse:
    finish = "tool_calls" if calls else "stop"
    if not body.get("stream"):
        answer = completion("", finish)
        answer["choices"][0]["message"] = _message(text, calls)
        return web.json_response(answer)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)

    async def send(chunk: dict) -> None:
        await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}

    await send(chunk({"role": "assistant"}))
    if text:
        size = max(1, -(-len(text) // pieces))
        for start in range(0, len(text), size):
            await send(chunk({"content": text[start:start + size]}))
            await asyncio.sleep(0.01)
    for index, c in enumerate(calls or []):
        arguments = c["function"]["arguments"]
        half = len(arguments) // 2
        first = {"name": c["function"]["name"], "arguments": arguments[:half]}
        await send(chunk({"tool_calls": [{"index": index, "id": c["id"], "type": "function", "function": first}]}))
        await send(chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}))
    await send(chunk({}, finish))
    await send({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [],
                "usage": {"prompt_tokens": PROMPT_TOKENS, "completion_tokens": COMPLETION_TOKENS,
                          "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS}})
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


def reply(text: str, pieces: int = 4) -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        return await _answer(request, body, text, None, pieces)

    return step


def tool_calls(*calls: dict, text: str | None = None) -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        return await _answer(request, body, text, list(calls))

    return step


def decide(fn: Callable[[dict], str | list[dict]]) -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        outcome = fn(body)
        if isinstance(outcome, str):
            return await _answer(request, body, outcome, None)
        return await _answer(request, body, None, outcome)

    return step


def hold(seconds: float, then: Step) -> Step:
    async def step(request: web.Request, body: dict) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return await then(request, body)

    return step


class FakeProvider:
    """The chat fake; a subclass speaks another route of the same protocol family (``PATH``, what
    ``_read`` makes of a request, its first answer ``first_step``)."""

    PATH = "/v1/chat/completions"
    MAX_BODY = 1024 * 1024

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.script: list[Step] = [self.first_step()]
        self.port = 0
        self._runner: web.AppRunner | None = None

    def first_step(self) -> Step:
        return article()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def answer(self, *steps: Step) -> None:
        """Script the next requests (the last step repeats) and forget the requests seen so far."""
        self.script = list(steps)
        self.requests.clear()

    async def _read(self, request: web.Request) -> tuple[dict, object]:
        """What is recorded of a request, and what its step is given."""
        body = await request.json()
        return {"headers": dict(request.headers), "body": body}, body

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        record, given = await self._read(request)
        self.requests.append(record)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return await step(request, given)

    async def start(self):
        app = web.Application(client_max_size=self.MAX_BODY)
        app.router.add_post(self.PATH, self._handle)
        self._runner = web.AppRunner(app, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port, reuse_address=True)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


async def serving() -> AsyncIterator[FakeProvider]:
    """A started fake for as long as the generator runs (a fixture: ``pytest.fixture()(serving)``)."""
    fake = await FakeProvider().start()
    try:
        yield fake
    finally:
        await fake.stop()
