"""The speech provider client (infra/asr_provider.py) against a fake provider that speaks the
transcription protocol over a real socket: what it sends, what it reads, which failures it retries,
how it refuses a hostile answer, and that the API key never shows in a log record or an error."""

from __future__ import annotations

import dataclasses
import logging

import numpy as np
import pytest

from domain.analysis.speech import words_text
from infra.asr_provider import SpeechProvider, language_code, wav_bytes
from infra.llm import ProviderError
from infra.settings import Settings
from tests import fake_asr
from tests.fake_asr import FakeSpeechProvider

KEY = "sk-asr-test-91b2e7c4d0"
WAV = wav_bytes(np.zeros(16_000 * 3, dtype=np.float32))  # 3 s of silence, as a window is sent
WINDOW_MS = 3000


@pytest.fixture
async def fake():
    provider = await FakeSpeechProvider().start()
    yield provider
    await provider.stop()


def client(fake: FakeSpeechProvider, **overrides) -> SpeechProvider:
    args = {"base_url": fake.base_url, "model": "whisper-fake", "api_key": KEY, "timeout_s": 2.0,
            "max_attempts": 3, "retry_backoff_s": 0.01}
    return SpeechProvider.from_settings(Settings(**{f"asr_{k}": v for k, v in {**args, **overrides}.items()}))


async def test_a_window_is_sent_as_the_protocol_asks_and_its_words_are_read(fake):
    fake.answer(fake_asr.words("solar panels convert sunlight"))

    done = await client(fake).transcribe(WAV, WINDOW_MS, "en")

    [request] = fake.requests
    assert request["headers"]["Authorization"] == f"Bearer {KEY}"
    form = request["form"]
    assert (form["file"]["data"], form["file"]["filename"], form["file"]["content_type"]) == (
        WAV, "window.wav", "audio/wav")
    assert form["model"] == ["whisper-fake"] and form["response_format"] == ["verbose_json"]
    assert form["timestamp_granularities[]"] == ["word", "segment"] and form["language"] == ["en"]
    assert done.language == "en" and done.attempts == 1 and done.dropped == 0
    assert [w.text for w in done.words] == ["solar", "panels", "convert", "sunlight"]
    assert [(w.start_ms, w.end_ms) for w in done.words[:2]] == [(0, 600), (750, 1350)]


async def test_the_text_said_before_is_sent_and_bare_words_are_joined_as_the_text_spells_them(fake):
    """OpenAI's words are bare and carry no punctuation: "l'arc", "en", "ciel" are one word in its
    text, which says so; Whisper-style words say it with their leading spaces."""
    fake.answer(fake_asr.spoken(["Aujourd'hui", "c'est", "l'arc", "en", "ciel"], "Aujourd'hui, c'est l'arc-en-ciel."),
                fake_asr.spoken([" l", "'eau", " claire"], " l'eau claire"))

    bare = await client(fake).transcribe(WAV, WINDOW_MS, "fr", prompt="Bonjour à tous.")
    spaced = await client(fake).transcribe(WAV, WINDOW_MS, "fr")

    assert fake.requests[0]["form"]["prompt"] == ["Bonjour à tous."] and bare.prompt == "Bonjour à tous."
    assert "prompt" not in fake.requests[1]["form"] and spaced.prompt == ""
    assert [(w.text, w.joins) for w in bare.words] == [("Aujourd'hui,", False), ("c'est", False), ("l'arc", False),
                                                       ("-en", True), ("-ciel.", True)]
    assert words_text([w.to_list() for w in bare.words]) == "Aujourd'hui, c'est l'arc-en-ciel."
    assert [(w.text, w.joins) for w in spaced.words] == [("l", False), ("'eau", True), ("claire", False)]


async def test_without_a_language_none_is_sent_and_the_providers_is_read(fake):
    fake.answer(fake_asr.words("bonjour à tous", language="french"))

    done = await client(fake, api_key="").transcribe(WAV, WINDOW_MS)

    [request] = fake.requests
    assert "language" not in request["form"] and "Authorization" not in request["headers"]
    assert done.language == "fr"


async def test_a_429_with_retry_after_is_waited_out_then_the_window_succeeds(fake):
    fake.answer(fake_asr.status(429, "slow down", headers={"Retry-After": "0.05"}), fake_asr.words("late words"))

    done = await client(fake).transcribe(WAV, WINDOW_MS, "en")

    assert [w.text for w in done.words] == ["late", "words"] and done.attempts == 2 and len(fake.requests) == 2


async def test_a_500_three_times_fails_clearly_and_the_key_is_in_no_log_record(fake, caplog):
    fake.answer(fake_asr.status(500, f"internal error for key {KEY}"))
    caplog.set_level(logging.DEBUG)

    with pytest.raises(ProviderError) as raised:
        await client(fake).transcribe(WAV, WINDOW_MS, "en")

    assert len(fake.requests) == 3 and raised.value.transient and raised.value.status == 500
    assert str(raised.value) == ("the provider answered 500 Internal Server Error: internal error for key *** "
                                 "(after 3 attempts)")
    warnings = [r for r in caplog.records if r.name == "vaeo.asr"]
    assert len(warnings) == 2
    assert all(KEY not in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(("step", "expected"), [
    (fake_asr.raw(200, "<html>gateway</html>"), "JSONDecodeError"),
    (fake_asr.json_answer(["not", "an", "object"]), "not a JSON object"),
    (fake_asr.json_answer({"text": "words but no times"}), "without word times"),
    (fake_asr.json_answer({"words": [{"word": "x", "start": -5, "end": 1}]}), "outside the window"),
    (fake_asr.json_answer({"words": [{"word": "x", "start": 0.5, "end": 99}]}), "outside the window"),
    (fake_asr.json_answer({"words": [{"word": "x", "start": 2, "end": 1}]}), "ends before it starts"),
    (fake_asr.json_answer({"words": [{"word": "x", "start": "0", "end": 1}]}), "not a number"),
    (fake_asr.json_answer({"words": [{"start": 0, "end": 1}]}), "KeyError"),
    (fake_asr.json_answer({"words": [{"word": "x" * 500, "start": 0, "end": 1}]}), "longer than 100"),
    (fake_asr.json_answer({"words": [{"word": "x", "start": 0, "end": 1}] * 1000}), "1000 words for 3 s"),
])
async def test_an_answer_that_is_not_a_transcription_fails_at_once_and_clearly(fake, step, expected: str):
    fake.answer(step)

    with pytest.raises(ProviderError) as raised:
        await client(fake).transcribe(WAV, WINDOW_MS, "en")

    assert len(fake.requests) == 1 and not raised.value.transient
    assert str(raised.value).startswith("the provider's answer is not a transcription with word times")
    assert expected in str(raised.value)


async def test_an_oversized_answer_fails(fake):
    fake.answer(fake_asr.json_answer({"text": "x" * 200_000, "words": []}))

    with pytest.raises(ProviderError, match="larger than 100000 bytes"):
        await dataclasses.replace(client(fake), max_response_bytes=100_000).transcribe(WAV, WINDOW_MS, "en")


async def test_words_of_a_segment_that_is_not_speech_are_dropped(fake):
    fake.answer(fake_asr.json_answer({
        "language": "en", "text": "hello thank you",
        "words": [{"word": " hello", "start": 0.1, "end": 0.5}, {"word": "Thank", "start": 2.0, "end": 2.3},
                  {"word": "you.", "start": 2.3, "end": 2.6}],
        "segments": [{"start": 0.0, "end": 1.0, "avg_logprob": -0.1, "compression_ratio": 1.2, "no_speech_prob": 0.0},
                     {"start": 1.9, "end": 2.7, "avg_logprob": -1.1, "compression_ratio": 1.0,
                      "no_speech_prob": 0.9}]}))

    done = await client(fake).transcribe(WAV, WINDOW_MS, "en")

    assert [w.text for w in done.words] == ["hello"] and done.dropped == 1


def test_language_names_and_codes_map_to_the_seven():
    assert [language_code(v) for v in ("english", "English", "en", "en-US", "pt_BR", "dutch", "flemish",
                                       "castilian", "japanese", "ja", "", None, 7)] == [
        "en", "en", "en", "en", "pt", "nl", "nl", "es", "", "", "", "", ""]


def test_settings_configure_the_provider_only_with_a_base_url_and_a_model():
    assert SpeechProvider.from_settings(Settings(asr_base_url="http://127.0.0.1:1/v1")) is None
    assert SpeechProvider.from_settings(Settings(asr_model="whisper-1")) is None
    provider = SpeechProvider.from_settings(Settings(asr_base_url="https://user@asr.example.com/v1",
                                                     asr_model="whisper-1", asr_api_key=KEY))
    assert (provider.endpoint, provider.model, provider.host) == (
        "https://user@asr.example.com/v1/audio/transcriptions", "whisper-1", "asr.example.com")
    assert KEY not in repr(provider)
