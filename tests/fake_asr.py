"""A fake OpenAI-compatible speech provider for the tests: a real aiohttp server on 127.0.0.1 that
speaks ``POST /v1/audio/transcriptions`` (multipart form), with scripted answers.

Each request takes the next step of the script; the last step repeats. Every request is recorded
(its headers, its form fields, and the uploaded file's bytes, name and content type). Steps:
``words(text, language)`` (a verbose JSON answer: the text's words spread over the uploaded WAV's
length, one segment), ``spoken(pieces, text)`` (words as given, and a text), ``json_answer(body)``
(that JSON as it is), ``status(code, message)``, ``raw(code, body)`` and ``cut()`` from
``tests.fake_llm``.
"""

from __future__ import annotations

import io
import wave
from collections.abc import Awaitable, Callable

from aiohttp import web

from tests.fake_llm import FakeProvider, cut, raw, status  # noqa: F401 - steps shared with the chat fake

Step = Callable[[web.Request, dict], Awaitable[web.StreamResponse]]


def wav_seconds(data: bytes) -> float:
    with wave.open(io.BytesIO(data)) as w:
        return w.getnframes() / w.getframerate()


def words(text: str, language: str = "english") -> Step:
    async def step(request: web.Request, form: dict) -> web.StreamResponse:
        seconds = wav_seconds(form["file"]["data"])
        parts = text.split()
        each = seconds / max(1, len(parts))
        timed = [{"word": w, "start": round(k * each, 2), "end": round((k + 0.8) * each, 2)}
                 for k, w in enumerate(parts)]
        return web.json_response({
            "task": "transcribe", "language": language, "duration": seconds, "text": text, "words": timed,
            "segments": [{"id": 0, "start": 0.0, "end": seconds, "text": text, "avg_logprob": -0.2,
                          "compression_ratio": 1.3, "no_speech_prob": 0.01}]})

    return step


def spoken(pieces: list[str], text: str, language: str = "french") -> Step:
    """A verbose JSON answer whose words are ``pieces`` as given (bare, as OpenAI's are, or with
    Whisper's leading spaces), spread over the uploaded WAV's length, and whose text is ``text``."""
    async def step(request: web.Request, form: dict) -> web.StreamResponse:
        seconds = wav_seconds(form["file"]["data"])
        each = seconds / max(1, len(pieces))
        timed = [{"word": w, "start": round(k * each, 2), "end": round((k + 0.8) * each, 2)}
                 for k, w in enumerate(pieces)]
        return web.json_response({"task": "transcribe", "language": language, "duration": seconds, "text": text,
                                  "words": timed})

    return step


def json_answer(body: object) -> Step:
    async def step(request: web.Request, form: dict) -> web.StreamResponse:
        return web.json_response(body)

    return step


class FakeSpeechProvider(FakeProvider):
    PATH = "/v1/audio/transcriptions"
    MAX_BODY = 64 * 1024 * 1024

    def first_step(self) -> Step:
        return words("hello from the fake provider")

    async def _read(self, request: web.Request) -> tuple[dict, object]:
        form: dict = {}
        async for part in await request.multipart():
            if part.filename:
                form[part.name] = {"data": await part.read(), "filename": part.filename,
                                   "content_type": part.headers.get("Content-Type")}
            else:
                form.setdefault(part.name, []).append(await part.text())
        return {"headers": dict(request.headers), "form": form}, form

