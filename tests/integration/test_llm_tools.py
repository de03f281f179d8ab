"""The provider client's tool calling and streaming (``ChatProvider.converse``) against the fake
provider over a real socket: what it sends, tool calls read whole or assembled from a stream's
fragments, usage from the stream's last chunk, pieces handed on as they arrive, a server that
answers JSON to a stream request, retries before the first piece and none after it."""

from __future__ import annotations

import json

import pytest
from aiohttp import web

from infra.llm import ChatProvider, ProviderError
from infra.settings import Settings
from tests import fake_llm
from tests.fake_llm import FakeProvider, call

MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": "my balance"}]
TOOLS = [{"type": "function", "function": {"name": "get_credits", "description": "balance",
                                           "parameters": {"type": "object", "properties": {}}}}]


@pytest.fixture
async def fake():
    provider = await FakeProvider().start()
    yield provider
    await provider.stop()


def client(fake: FakeProvider, **overrides) -> ChatProvider:
    args = {"base_url": fake.base_url, "model": "fake-model", "api_key": "sk-tools", "timeout_s": 2.0,
            "max_attempts": 3, "retry_backoff_s": 0.01, "retry_after_max_s": 0.2, **overrides}
    return ChatProvider.from_settings(Settings(**{f"llm_{k}": v for k, v in args.items()}))


async def test_tool_calls_are_read_with_their_arguments_as_written(fake):
    fake.answer(fake_llm.tool_calls(call("get_credits", {}, call_id="a"), call("get_video", "{broken", call_id="b")))

    answer = await client(fake).converse(MESSAGES, tools=TOOLS)

    assert [(c.id, c.name, c.arguments) for c in answer.tool_calls] == [("a", "get_credits", "{}"),
                                                                       ("b", "get_video", "{broken")]
    assert answer.content == "" and answer.finish_reason == "tool_calls"
    assert (answer.prompt_tokens, answer.completion_tokens) == (fake_llm.PROMPT_TOKENS, fake_llm.COMPLETION_TOKENS)
    [request] = fake.requests
    assert request["body"] == {"model": "fake-model", "messages": MESSAGES, "tools": TOOLS}


async def test_a_last_call_may_forbid_tools(fake):
    fake.answer(fake_llm.reply("done"))
    answer = await client(fake).converse(MESSAGES, tools=TOOLS, tool_choice="none")
    assert answer.content == "done" and answer.tool_calls == ()
    assert fake.requests[0]["body"]["tool_choice"] == "none"


async def test_a_stream_hands_on_each_piece_and_assembles_tool_calls_and_usage(fake):
    text = "Let me look at your balance now."
    fake.answer(fake_llm.tool_calls(call("get_credits", {"verbose": True}, call_id="x"), text=text))
    pieces: list[str] = []

    answer = await client(fake).converse(MESSAGES, tools=TOOLS, on_delta=pieces.append)

    assert len(pieces) == 4 and "".join(pieces) == answer.content == text
    [tool] = answer.tool_calls
    assert (tool.id, tool.name, json.loads(tool.arguments)) == ("x", "get_credits", {"verbose": True})
    assert (answer.prompt_tokens, answer.finish_reason) == (fake_llm.PROMPT_TOKENS, "tool_calls")
    body = fake.requests[0]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_a_server_that_does_not_stream_is_read_whole(fake):
    async def plain(request: web.Request, body: dict) -> web.StreamResponse:
        return web.json_response(fake_llm.completion("all at once"))

    fake.answer(plain)
    pieces: list[str] = []
    answer = await client(fake).converse(MESSAGES, on_delta=pieces.append)
    assert pieces == ["all at once"] and answer.content == "all at once"


async def test_a_stream_is_retried_before_its_first_piece_and_never_after(fake):
    fake.answer(fake_llm.status(503, "busy"), fake_llm.reply("second try"))
    pieces: list[str] = []
    answer = await client(fake).converse(MESSAGES, on_delta=pieces.append)
    assert answer.content == "second try" and len(fake.requests) == 2

    async def cut_after_a_piece(request: web.Request, body: dict) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        chunk = {"choices": [{"index": 0, "delta": {"content": "half"}, "finish_reason": None}]}
        await response.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        request.transport.close()
        return response

    fake.answer(cut_after_a_piece)
    pieces.clear()
    with pytest.raises(ProviderError) as failed:
        await client(fake).converse(MESSAGES, on_delta=pieces.append)
    assert pieces == ["half"] and len(fake.requests) == 1  # what was shown cannot be shown again
    assert failed.value.transient


async def test_an_error_inside_a_stream_fails_the_call_with_its_message(fake):
    async def error_chunk(request: web.Request, body: dict) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b'data: {"error": {"message": "context length exceeded"}}\n\n')
        await response.write_eof()
        return response

    fake.answer(error_chunk)
    with pytest.raises(ProviderError, match="context length exceeded"):
        await client(fake).converse(MESSAGES, on_delta=lambda piece: None)
