"""The optional speech provider: an async client of the OpenAI-compatible transcription protocol.

``POST {asr_base_url}/audio/transcriptions`` with ``Authorization: Bearer <key>`` (none when the
key is empty) and a multipart form: ``file`` (one window's audio as 16 kHz mono 16-bit WAV,
decoded by ffmpeg through the same whitelisted arguments as the local engine's audio),
``model``, ``response_format=verbose_json``, ``timestamp_granularities[]`` ``word`` and
``segment``, ``language`` when it is known, and ``prompt`` (the text said before the window) when
there is one. Retries, ``Retry-After``, the size bound and the
key's redaction are the chat client's (``infra.llm.HttpProvider``).

The answer is untrusted and checked before anything of it is used: it must be a JSON object; its
``language`` (a name such as ``english`` or a code such as ``en``/``en-US``) is mapped to one of
the seven supported codes; ``words`` is a list of at most ``MAX_WORDS_PER_S`` words per second of
the window (a hostile or broken provider cannot fill the transcript), each with a non-empty text
of at most ``MAX_WORD_CHARS`` characters and finite ``start`` <= ``end`` in seconds inside the
window (``TIME_SLACK_S`` of rounding allowed, then clamped). A segment that carries Whisper's
scores and fails the local engine's not-speech rules (``infra.asr.is_speech``) has its words
dropped, as the local engine does. Anything else is a ``ProviderError`` saying what was wrong.

Spacing: a provider's words may carry their own spacing, as Whisper's do (" l'", "eau": a word
without a leading space continues the one before), or come bare ("l'eau", or "arc", "en", "ciel"
with the hyphens only in the answer's ``text``). Bare words are read against ``text``: a word
found right after the one before with nothing or only punctuation between joins it, that
punctuation written with it ("-en"); punctuation between a word and a space is the word's own
("l'eau,"), so sentence ends survive a provider whose words carry none. A word not found near
where the one before ended keeps a space before it.
"""

from __future__ import annotations

import dataclasses
import io
import math
import wave
from dataclasses import dataclass

import aiohttp
import numpy as np
import orjson
from yarl import URL

from infra.asr import LANGUAGES, SAMPLE_RATE, Word, is_speech
from infra.llm import HttpProvider, ProviderError
from infra.settings import Settings

USER_AGENT = "vaeo-asr/1"
# A verbose answer with word times runs to ~100 bytes a word: 4 MiB holds a 120 s window many times over.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
RETRY_AFTER_MAX_S = 30.0
# Fast speech is 4-5 words a second; more than 10 is not a transcript of the window.
MAX_WORDS_PER_S = 10
MAX_WORD_CHARS = 100
TIME_SLACK_S = 1.0
# Reading bare words against the answer's text: how far past where the last word ended the next is
# looked for (bounded work whatever the answer), and how much punctuation a word may take from it.
ALIGN_SLACK_CHARS = 64
MAX_ADOPTED_CHARS = 3

LANGUAGE_NAMES = {"english": "en", "french": "fr", "german": "de", "spanish": "es", "castilian": "es",
                  "italian": "it", "portuguese": "pt", "dutch": "nl", "flemish": "nl"}


def language_code(value: object) -> str:
    """One of ``LANGUAGES`` for a provider's language name or code; "" for anything else."""
    if not isinstance(value, str):
        return ""
    text = value.strip().lower()[:40]
    if text in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[text]
    code = text.replace("_", "-").split("-")[0]
    return code if code in LANGUAGES else ""


def wav_bytes(samples: np.ndarray) -> bytes:
    """16 kHz mono float32 samples as a 16-bit PCM WAV file."""
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        w.writeframes(pcm.tobytes())
    return out.getvalue()


@dataclass(frozen=True)
class Transcription:
    language: str  # one of LANGUAGES, or "" when the provider named none of them
    words: tuple[Word, ...]  # times in ms from the window's start
    dropped: int  # segments dropped as not speech
    attempts: int
    prompt: str = ""  # the text sent as said before the window


@dataclass(frozen=True, kw_only=True)
class SpeechProvider(HttpProvider):
    """Built by ``from_settings`` (the ``asr_*`` settings)."""

    retry_after_max_s: float = RETRY_AFTER_MAX_S
    max_response_bytes: int = MAX_RESPONSE_BYTES

    kind = "asr"
    user_agent = USER_AGENT

    @classmethod
    def from_settings(cls, settings: Settings) -> SpeechProvider | None:
        if not settings.asr_configured:
            return None
        return cls(base_url=settings.asr_base_url.strip(), model=settings.asr_model.strip(),
                   api_key=settings.asr_api_key.get_secret_value(), timeout_s=settings.asr_timeout_s,
                   max_attempts=max(1, settings.asr_max_attempts), backoff_s=settings.asr_retry_backoff_s,
                   clock=settings.now)

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/audio/transcriptions"

    @property
    def host(self) -> str:
        """The provider's host, as named in a transcript's source (never a path, user or key)."""
        return URL(self.base_url).host or ""

    async def transcribe(self, wav: bytes, duration_ms: int, language: str | None = None,
                         prompt: str = "") -> Transcription:
        """One window's audio (``wav``, ``duration_ms`` long) transcribed, told ``prompt`` was said
        before it; ``ProviderError`` on failure."""

        def form() -> aiohttp.FormData:
            data = aiohttp.FormData()
            data.add_field("file", wav, filename="window.wav", content_type="audio/wav")
            data.add_field("model", self.model)
            data.add_field("response_format", "verbose_json")
            data.add_field("timestamp_granularities[]", "word")
            data.add_field("timestamp_granularities[]", "segment")
            if language:
                data.add_field("language", language)
            if prompt:
                data.add_field("prompt", prompt)
            return data

        async def read(resp: aiohttp.ClientResponse, attempt: int) -> Transcription:
            found = self._transcription(await self._read_bounded(resp), duration_ms, attempt)
            return dataclasses.replace(found, prompt=prompt)

        return await self._request(form, {}, read)

    def _transcription(self, raw: bytes, duration_ms: int, attempt: int) -> Transcription:
        try:
            answer = orjson.loads(raw)
            if not isinstance(answer, dict):
                raise TypeError("the answer is not a JSON object")
            words, dropped = _words(answer, duration_ms)
        except (orjson.JSONDecodeError, KeyError, IndexError, TypeError, ValueError, AttributeError) as exc:
            sample = self._redact(raw[:120].decode("utf-8", "replace"))
            raise ProviderError(f"the provider's answer is not a transcription with word times "
                                f"({type(exc).__name__}: {self._redact(str(exc))[:160]}); it began with "
                                f"{sample!r}") from None
        return Transcription(language_code(answer.get("language")), words, dropped, attempt)


def _seconds(value: object, what: str, duration_s: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise TypeError(f"{what} is not a number of seconds")
    if value < -TIME_SLACK_S or value > duration_s + TIME_SLACK_S:
        raise ValueError(f"{what} {value:g} s is outside the window's {duration_s:g} s")
    return min(max(0.0, float(value)), duration_s)


def _words(answer: dict, duration_ms: int) -> tuple[tuple[Word, ...], int]:
    """The answer's words, checked and bounded (see the module's text), and the segments dropped."""
    duration_s = duration_ms / 1000
    items = answer.get("words")
    text = answer.get("text")
    if items is None:
        if isinstance(text, str) and text.strip():
            raise KeyError("words (the provider gave text without word times)")
        items = []
    if not isinstance(items, list):
        raise TypeError("words is not a list")
    most = int(MAX_WORDS_PER_S * max(1.0, duration_s))
    if len(items) > most:
        raise ValueError(f"{len(items)} words for {duration_s:g} s of audio (at most {most})")
    silent = []
    segments = answer.get("segments") or []
    if not isinstance(segments, list) or len(segments) > most:
        raise TypeError("segments is not a list of at most as many segments as words")
    for k, s in enumerate(segments):
        scores = [s.get(key) for key in ("no_speech_prob", "avg_logprob", "compression_ratio")]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores) and not is_speech(*scores):
            silent.append((_seconds(s.get("start"), f"segment {k}'s start", duration_s),
                           _seconds(s.get("end"), f"segment {k}'s end", duration_s)))
    raw = []
    for k, w in enumerate(items):
        word = w["word"]
        if not isinstance(word, str):
            raise TypeError(f"word {k} is not text")
        if len(word.strip()) > MAX_WORD_CHARS:
            raise ValueError(f"word {k} is longer than {MAX_WORD_CHARS} characters")
        raw.append(word)
    words = []
    for k, (w, (word, joins)) in enumerate(zip(items, spaced_words(raw, text), strict=True)):
        start = _seconds(w["start"], f"word {k}'s start", duration_s)
        end = _seconds(w["end"], f"word {k}'s end", duration_s)
        if end < start:
            raise ValueError(f"word {k} ends before it starts")
        if word and not any(a <= (start + end) / 2 <= b for a, b in silent):
            words.append(Word(int(round(start * 1000)), int(round(end * 1000)), word, joins=joins and bool(words)))
    return tuple(sorted(words, key=lambda w: (w.start_ms, w.end_ms))), len(silent)


def _punctuation(text: str) -> bool:
    return 0 < len(text) <= MAX_ADOPTED_CHARS and not any(c.isalnum() or c.isspace() for c in text)


def spaced_words(raw: list[str], text: object) -> list[tuple[str, bool]]:
    """Each word's text (no spaces around it) and whether it joins the word before it (see the
    module's text): from the words' own leading spaces when they carry any, else from ``text``."""
    if any(w[:1].isspace() for w in raw[1:]):
        return [(" ".join(w.split()), k > 0 and not w[:1].isspace()) for k, w in enumerate(raw)]
    if not isinstance(text, str):
        return [(" ".join(w.split()), False) for w in raw]
    out: list[list] = []
    cursor = 0  # where the last word found in ``text`` ended
    for w in raw:
        word = " ".join(w.split())
        at = text.find(word, cursor, cursor + len(word) + ALIGN_SLACK_CHARS) if word else -1
        if at < 0:
            out.append([word, False])
            continue
        gap = text[cursor:at]
        if out and (gap == "" or _punctuation(gap)):
            out.append([gap + word, True])  # "l" "'arc", "arc" "-en"
        else:
            out.append([_adopt(out, gap) + word, False])
        cursor = at + len(word)
    if out:
        _adopt(out, text[cursor:cursor + ALIGN_SLACK_CHARS] + " ")
    return [(word, joins) for word, joins in out]


def _adopt(out: list[list], gap: str) -> str:
    """The punctuation of ``gap`` (the text between two words, with a space in it) written with the
    word before it ("claire," and the French "ciel !") and what leads the next word ("¿")."""
    parts = gap.split()
    lead = parts.pop() if parts and not gap[-1].isspace() and _punctuation(parts[-1]) else ""
    for k, part in enumerate(parts):
        if not out or not _punctuation(part):
            break
        out[-1][0] += part if k == 0 and not gap[0].isspace() else " " + part
    return lead
