"""The Chat Completions client (infra/llm.py) against a fake provider that speaks the protocol over
a real socket: what it sends, what it reads, which failures it retries and how often, and that
the API key never shows in an error."""

from __future__ import annotations

import asyncio
import email.utils
import json
from datetime import UTC, datetime, timedelta

import pytest

from infra.llm import ChatProvider, ProviderError, _retry_after
from infra.settings import Settings
from tests import fake_llm
from tests.fake_llm import FakeProvider

KEY = "sk-test-4f7c0c2a9b"
MESSAGES = [{"role": "system", "content": "rules"}, {"role": "user", "content": json.dumps({"chapters": []})}]


@pytest.fixture
async def fake():
    provider = await FakeProvider().start()
    yield provider
    await provider.stop()


def client(fake: FakeProvider, **overrides) -> ChatProvider:
    """The client as a worker builds it, from settings (``llm_`` + the override's name)."""
    args = {"base_url": fake.base_url, "model": "fake-model", "api_key": KEY, "timeout_s": 1.0, "max_attempts": 3,
            "retry_backoff_s": 0.01, "retry_after_max_s": 0.2}
    return ChatProvider.from_settings(Settings(**{f"llm_{k}": v for k, v in {**args, **overrides}.items()}))


async def test_a_call_sends_the_protocol_and_reads_content_and_usage(fake):
    fake.answer(fake_llm.content('{"ok": true}'))

    done = await client(fake).complete(MESSAGES)

    assert (done.content, done.prompt_tokens, done.completion_tokens) == ('{"ok": true}', 321, 123)
    assert (done.finish_reason, done.attempts) == ("stop", 1)
    [request] = fake.requests
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["body"] == {"model": "fake-model", "messages": MESSAGES, "response_format": {"type": "json_object"}}


async def test_without_a_key_no_authorization_is_sent_and_json_mode_can_be_off(fake):
    fake.answer(fake_llm.content("text"))

    await client(fake, api_key="", json_mode=False).complete(MESSAGES)

    [request] = fake.requests
    assert "Authorization" not in request["headers"] and "response_format" not in request["body"]


SCHEMA = ("outline", {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]})


async def test_a_schema_is_asked_for_in_the_first_form_the_server_accepts_and_kept(fake):
    refuse_schema = fake_llm.status(422, "response_format.type: Input should be 'text' or 'json_object'")
    refuse_mode = fake_llm.status(400, "Unknown field: response_format.schema")
    fake.answer(refuse_schema, refuse_mode, fake_llm.content('{"title": "t"}'))
    provider = client(fake)

    done = await provider.complete(MESSAGES, schema=SCHEMA, max_tokens=300)

    assert done.content == '{"title": "t"}'
    forms = [r["body"].get("response_format") for r in fake.requests]
    assert forms == [{"type": "json_schema", "json_schema": {"name": "outline", "schema": SCHEMA[1], "strict": False}},
                     {"type": "json_object", "schema": SCHEMA[1]}, {"type": "json_object"}]
    assert all(r["body"]["max_tokens"] == 300 for r in fake.requests)
    fake.answer(fake_llm.content('{"title": "u"}'))
    await provider.complete(MESSAGES, schema=SCHEMA)
    [again] = fake.requests  # the plain JSON mode straight away: the server refused the other forms
    assert again["body"]["response_format"] == {"type": "json_object"} and "max_tokens" not in again["body"]


async def test_a_server_that_refuses_every_format_is_asked_with_the_prompt_alone(fake):
    fake.answer(fake_llm.status(400, "response_format is not supported"),
                fake_llm.status(400, "response_format.schema: extra inputs are not permitted"),
                fake_llm.status(400, "response_format: json_object is not supported"), fake_llm.content("{}"))

    await client(fake).complete(MESSAGES, schema=SCHEMA)

    assert [r["body"].get("response_format", {}).get("type") for r in fake.requests] == [
        "json_schema", "json_object", "json_object", None]


async def test_a_server_error_naming_the_format_is_not_retried_but_the_next_form_is_asked(fake):
    # llama-cpp-python's server answers a body it cannot validate with a 500 carrying the validation error
    fake.answer(fake_llm.status(500, "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type')}]"),
                fake_llm.content("{}"))

    await client(fake).complete(MESSAGES, schema=SCHEMA)

    assert [r["body"]["response_format"]["type"] for r in fake.requests] == ["json_schema", "json_object"]
    assert "schema" in fake.requests[1]["body"]["response_format"]


async def test_the_output_ceiling_lowers_every_answers_bound(fake):
    fake.answer(fake_llm.content("{}"))
    capped = client(fake, max_output_tokens=120)

    await capped.complete(MESSAGES, schema=SCHEMA, max_tokens=300)
    await capped.complete(MESSAGES, schema=SCHEMA, max_tokens=80)
    await capped.converse(MESSAGES)
    await client(fake).converse(MESSAGES)

    assert [r["body"].get("max_tokens") for r in fake.requests] == [120, 80, 120, None]


async def test_a_client_error_that_is_not_about_the_format_fails_at_once(fake):
    fake.answer(fake_llm.status(400, "the context is too long for this model"))

    with pytest.raises(ProviderError, match="400 Bad Request: the context is too long"):
        await client(fake).complete(MESSAGES, schema=SCHEMA)
    assert len(fake.requests) == 1


@pytest.mark.parametrize("code", [429, 500, 502, 503, 408])
async def test_transient_answers_are_retried_then_the_call_succeeds(fake, code: int):
    fake.answer(fake_llm.status(code, "busy", headers={"Retry-After": "0"}), fake_llm.content("late"))

    done = await client(fake).complete(MESSAGES)

    assert (done.content, done.attempts, len(fake.requests)) == ("late", 2, 2)


async def test_transient_failures_are_retried_a_bounded_number_of_times(fake):
    fake.answer(fake_llm.status(503, "overloaded"))

    with pytest.raises(ProviderError) as raised:
        await client(fake, max_attempts=4).complete(MESSAGES)

    assert len(fake.requests) == 4
    assert str(raised.value) == "the provider answered 503 Service Unavailable: overloaded (after 4 attempts)"
    assert raised.value.transient and raised.value.status == 503


@pytest.mark.parametrize(("code", "reason"), [(400, "Bad Request"), (401, "Unauthorized"), (404, "Not Found")])
async def test_other_client_errors_fail_at_once_with_the_providers_message(fake, code: int, reason: str):
    fake.answer(fake_llm.status(code, f"Incorrect API key provided: {KEY}"))

    with pytest.raises(ProviderError) as raised:
        await client(fake).complete(MESSAGES)

    assert len(fake.requests) == 1 and not raised.value.transient
    assert str(raised.value) == f"the provider answered {code} {reason}: Incorrect API key provided: ***"


async def test_no_answer_within_the_timeout_is_retried_then_fails(fake):
    fake.answer(fake_llm.slow(2.0))

    with pytest.raises(ProviderError) as raised:
        await client(fake, timeout_s=0.3, max_attempts=2).complete(MESSAGES)

    assert len(fake.requests) == 2
    assert str(raised.value) == (f"the provider at 127.0.0.1:{fake.port} did not answer within 0.3 s "
                                 "(after 2 attempts)")


async def test_a_refused_connection_is_retried_then_fails(fake):
    provider = client(fake, max_attempts=2)
    await fake.stop()

    with pytest.raises(ProviderError) as raised:
        await provider.complete(MESSAGES)

    assert str(raised.value).startswith(f"could not connect to the provider at 127.0.0.1:{fake.port}: ")
    assert "refused" in str(raised.value).lower() and str(raised.value).endswith("(after 2 attempts)")


async def test_a_connection_cut_before_the_answer_is_retried(fake):
    fake.answer(fake_llm.cut(), fake_llm.content("second"))

    done = await client(fake).complete(MESSAGES)

    assert (done.content, done.attempts) == ("second", 2)


@pytest.mark.parametrize(("step", "expected"), [
    (fake_llm.raw(200, "<html>gateway</html>"), "JSONDecodeError"),
    (fake_llm.raw(200, json.dumps({"choices": []}), "application/json"), "IndexError"),
    (fake_llm.raw(200, json.dumps({"choices": [{"message": {"content": None}}]}), "application/json"), "TypeError"),
])
async def test_a_2xx_that_is_not_a_chat_completion_fails_at_once(fake, step, expected: str):
    fake.answer(step)

    with pytest.raises(ProviderError) as raised:
        await client(fake).complete(MESSAGES)

    assert len(fake.requests) == 1 and not raised.value.transient
    assert str(raised.value).startswith("the provider's answer is not a Chat Completions response")
    assert expected in str(raised.value)


async def test_an_answer_over_the_size_bound_fails(fake):
    fake.answer(fake_llm.content("x" * 5000))

    with pytest.raises(ProviderError, match="larger than 1000 bytes"):
        await client(fake, max_response_bytes=1000).complete(MESSAGES)


async def test_a_redirect_is_not_followed(fake):
    fake.answer(fake_llm.raw(307, ""))

    with pytest.raises(ProviderError, match="answered 307"):
        await client(fake).complete(MESSAGES)
    assert len(fake.requests) == 1


async def test_missing_usage_counts_as_zero_tokens(fake):
    fake.answer(fake_llm.raw(200, json.dumps({"choices": [{"message": {"content": "hi"}}]}), "application/json"))

    done = await client(fake).complete(MESSAGES)

    assert (done.content, done.prompt_tokens, done.completion_tokens, done.finish_reason) == ("hi", 0, 0, None)


def test_settings_configure_a_provider_only_with_a_base_url_and_a_model():
    assert ChatProvider.from_settings(Settings(llm_base_url="http://127.0.0.1:1/v1")) is None
    assert ChatProvider.from_settings(Settings(llm_model="m")) is None
    provider = ChatProvider.from_settings(Settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m",
                                                   llm_api_key=KEY, llm_max_attempts=5))
    assert (provider.endpoint, provider.model, provider.api_key, provider.max_attempts) == (
        "http://127.0.0.1:1/v1/chat/completions", "m", KEY, 5)
    assert KEY not in repr(provider) and KEY not in repr(Settings(llm_api_key=KEY))


async def test_a_long_retry_after_is_clamped_to_the_setting(fake):
    fake.answer(fake_llm.status(429, "come back in an hour", headers={"Retry-After": "3600"}), fake_llm.content("ok"))

    done = await asyncio.wait_for(client(fake, retry_after_max_s=0.1).complete(MESSAGES), 30)

    assert (done.content, done.attempts) == ("ok", 2)


def test_retry_after_reads_seconds_and_http_dates():
    now = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)  # the provider's clock, fixed: dates are counted from it
    soon = email.utils.format_datetime(now + timedelta(seconds=30), usegmt=True)
    gone = email.utils.format_datetime(now - timedelta(seconds=30), usegmt=True)

    assert [_retry_after(v, now) for v in ("7", "0.5", None, "soon")] == [7.0, 0.5, None, None]
    assert _retry_after(soon, now) == 30.0
    assert _retry_after(gone, now) == 0.0
