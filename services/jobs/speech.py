"""The speech stage of an analysis: a video without a transcript gets one from its audio.

1. **Voice activity** (``find_speech``, on the worker's executor): the first audio stream is decoded
   by ffmpeg (whitelisted, 16 kHz mono, streamed in blocks: memory stays one block whatever the
   length) and the Silero VAD marks where speech is, up to the priced duration and at most
   ``asr_max_duration_s``. No speech: the stage ends with "no speech found", nothing is invented.
2. **Windows**: the speech regions grouped into windows of at most ``asr_window_s`` seconds, cut
   at pauses (``domain.analysis.speech.plan_windows``). Each window is an item of the job
   (``JobContext.run_items``, ``chained``): its words are its item result, appended the moment it
   is done; a window that fails is recorded with its error, the attempt stops there and the next
   one starts again at it, on the job's schedule; a cancellation stops between two windows; a
   worker killed mid-job leaves the windows it finished in the log, and the next attempt skips them
   (their names are their time ranges, found again identically from the same audio).
   Each window is told the text recognised before it (``domain.analysis.speech.prompt_for``: the
   tail of the earlier windows' recorded words, Whisper's ``initial_prompt``, a provider's
   ``prompt``), and the prompt is recorded with its words. The windows run in order, since each
   needs the one before: the items of a job are done one after the other by the one worker that
   holds its lease (sharing a slot at an item boundary pauses the job, it never reorders it), and
   a failed window stops the attempt, so no window is recognised before the one it follows. The
   prompt comes only from what is recorded, so a retried window is told exactly what it was told,
   or would have been, the first time.
3. **Language**: the analyze request's ``language`` when it gave one; otherwise the first window
   is asked which of the seven languages it is in, and a guess below
   ``asr_language_min_probability`` fails the job with a message asking for ``language``. The
   video's upload language is not taken as said: it is ``fr`` whenever none was given.
4. **Recognition** runs out of the event loop: the local engine in a child process of its own
   (``LocalRecogniser``, the models loaded once in it and kept for the worker's life), killed at
   ``asr_window_timeout_s`` (the window then fails, and the next attempt starts again at it), at the job's
   cancellation, and with the worker itself (the parent-death signal); or the configured
   OpenAI-compatible provider (``ProviderRecogniser``).
5. **Speakers** (``services.jobs.voices``, on the worker's executor, bounded by ``asr_speakers_timeout_s``):
   each recognised segment attributed to a speaker found from the voices of the whole talk.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import signal
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

from domain.analysis.model import Segment
from domain.analysis.speech import item_name, item_window, pad_windows, plan_windows, prompt_for, segments_from_words
from infra import asr
from infra.asr_provider import SpeechProvider, wav_bytes
from infra.llm import ProviderError
from infra.media.ffmpeg import MediaError, scrub
from infra.media.probe import probe
from infra.settings import Settings
from services.jobs.context import ItemDone, JobContext
from services.jobs.errors import PermanentJobError
from services.jobs.stoppable import until_cancelled
from services.jobs.voices import with_speakers

log = logging.getLogger("vaeo.speech")

NO_SPEECH = "no speech found in the audio"
NO_AUDIO = "the video has no audio stream"
WINDOW_PAD_MS = 500


class RecognitionTimeout(Exception):
    """A window ran past its time limit (its process was killed); another attempt may finish it."""


@dataclass(frozen=True)
class SpeechTranscript:
    segments: list[Segment]
    source: dict  # transcriptSource: kind, engine, model, language, ...
    language: str | None  # None when nothing was recognised
    note: str | None = None  # why there are no words (no audio, no speech)


# ---- voice activity, on the worker's executor


def find_speech(path: Path, demuxer: str, limit_ms: int, max_window_ms: int,
                timeout: float | None = None, stop: threading.Event | None = None
                ) -> tuple[bool, list[tuple[int, int]]]:
    """Whether the file has an audio stream, and the windows of speech in its first ``limit_ms``
    (the whole pass bounded by ``timeout`` seconds: ``MediaError`` past it; ended by ``stop``:
    ``Stopped``)."""
    info = probe(path, demuxer=demuxer)
    if not info.has_audio:
        return False, []
    regions = asr.speech_regions(asr.stream_audio(path, demuxer, limit_ms, timeout=timeout, stop=stop),
                                 max_window_ms)
    return True, pad_windows(plan_windows(regions, max_window_ms, limit_ms), WINDOW_PAD_MS, limit_ms)


# ---- the local engine in a process of its own


def _die_with_parent() -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _serve(conn: Connection, model_dir: str, cpu_threads: int, decode_timeout: float) -> None:
    """The recogniser process: one request at a time,
    ``(op, path, demuxer, start_ms, end_ms, language, prompt)``."""
    _die_with_parent()
    engine = asr.LocalEngine(Path(model_dir), cpu_threads)
    while True:
        try:
            op, path, demuxer, start_ms, end_ms, language, prompt = conn.recv()
        except (EOFError, OSError):
            return
        try:
            audio = asr.decode_audio(path, demuxer, start_ms, end_ms, decode_timeout)
            if op == "detect":
                answer = ("ok", engine.detect_language(audio))
            else:
                recognition = engine.transcribe(audio, language, prompt)
                answer = ("ok", ([w.to_list() for w in recognition.words], recognition.dropped, recognition.prompt))
        except (asr.AsrError, MediaError) as exc:
            answer = ("refused", scrub(str(exc)))
        except Exception as exc:  # noqa: BLE001 - reported to the job, which retries the window
            answer = ("error", f"{type(exc).__name__}: {scrub(str(exc))[:300]}")
        try:
            conn.send(answer)
        except (BrokenPipeError, OSError):
            return


class LocalRecogniser:
    """faster-whisper in a child process, one window at a time (windows of concurrent jobs queue)."""

    engine = asr.ENGINE

    def __init__(self, settings: Settings) -> None:
        self.model_dir = str(settings.asr_models_path)
        self.cpu_threads = settings.asr_cpu_threads
        self.timeout_s = settings.asr_window_timeout_s
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: Connection | None = None
        self._lock: asyncio.Lock | None = None

    def model_name(self, language: str) -> str:
        return asr.model_for(language)

    def _start(self) -> Connection:
        if self._process is None or not self._process.is_alive():
            context = multiprocessing.get_context("spawn")
            mine, theirs = context.Pipe()
            self._process = context.Process(target=_serve, args=(theirs, self.model_dir, self.cpu_threads,
                                                                  self.timeout_s),
                                            daemon=True, name="vaeo-speech")
            self._process.start()
            theirs.close()
            self._conn = mine
        return self._conn

    def close(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join(5)
            self._process = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def _ask(self, request: tuple):
        self._lock = self._lock or asyncio.Lock()
        async with self._lock:
            conn = self._start()
            conn.send(request)
            try:
                answer = await asyncio.wait_for(asyncio.to_thread(_receive, conn), self.timeout_s)
            except TimeoutError:
                self.close()
                raise RecognitionTimeout(f"recognising the window took longer than {self.timeout_s:g} s") from None
            except BaseException:
                self.close()  # cancelled: the window's work is abandoned with its process
                raise
        if answer is None:
            self.close()
            raise asr.AsrError("the speech recogniser process ended without an answer")
        status, value = answer
        if status == "refused":
            raise PermanentJobError(f"speech recognition: {value}")
        if status == "error":
            raise asr.AsrError(f"speech recognition failed: {value}")
        return value

    async def detect(self, path: Path, demuxer: str, window: tuple[int, int]) -> tuple[str, float]:
        language, probability = await self._ask(("detect", str(path), demuxer, *window, "", ""))
        return language, probability

    async def recognise(self, path: Path, demuxer: str, window: tuple[int, int], language: str,
                        prompt: str = "") -> asr.Recognition:
        """The window's words (times from the window's start), how many segments were dropped as
        not speech, and the prompt the engine recorded it was given (``prompt``: what was said
        before the window)."""
        words, dropped, used = await self._ask(("recognise", str(path), demuxer, *window, language, prompt))
        return asr.Recognition(tuple(asr.Word.from_list(w) for w in words), dropped, used)


class ProviderRecogniser:
    """The configured OpenAI-compatible provider (``infra.asr_provider``), one request per window:
    the window's audio is decoded here (whitelisted ffmpeg, on a thread) and sent; no local model
    is loaded. A transient failure (after the client's own retries) fails the window, which the
    job retries alone; a refusal or an answer that is not a transcription fails it for good."""

    engine = "provider"

    def __init__(self, settings: Settings) -> None:
        self.client = SpeechProvider.from_settings(settings)
        self.decode_timeout_s = settings.asr_window_timeout_s

    @property
    def host(self) -> str:
        return self.client.host

    def model_name(self, language: str) -> str:
        return self.client.model

    def close(self) -> None:
        pass

    async def _transcribe(self, path: Path, demuxer: str, window: tuple[int, int], language: str | None,
                          prompt: str = ""):
        start, end = window
        try:
            audio = await asyncio.to_thread(asr.decode_audio, path, demuxer, start, end, self.decode_timeout_s)
        except MediaError as exc:
            raise PermanentJobError(f"speech recognition: {scrub(str(exc))}") from None
        try:
            return await self.client.transcribe(await asyncio.to_thread(wav_bytes, audio), end - start, language,
                                                prompt)
        except ProviderError as exc:
            if exc.transient:
                raise asr.AsrError(f"speech provider: {exc}") from None
            raise PermanentJobError(f"speech provider: {exc}") from None

    async def detect(self, path: Path, demuxer: str, window: tuple[int, int]) -> tuple[str, float]:
        """The language the provider names for the window (certain when it is one of the seven)."""
        found = await self._transcribe(path, demuxer, window, None)
        return (found.language, 1.0) if found.language else ("", 0.0)

    async def recognise(self, path: Path, demuxer: str, window: tuple[int, int], language: str,
                        prompt: str = "") -> asr.Recognition:
        found = await self._transcribe(path, demuxer, window, language, prompt)
        return asr.Recognition(found.words, found.dropped, found.prompt)


def _receive(conn: Connection):
    try:
        return conn.recv()
    except (EOFError, OSError):
        return None


# ---- the stage


async def transcribe(ctx: JobContext, settings: Settings, recogniser, path: Path, demuxer: str, duration_ms: int,
                     language: str | None, *, progress: tuple[int, int] = (6, 19)) -> SpeechTranscript:
    """The video's speech as a transcript (see the module's text). ``language`` None: detected."""
    limit_ms = min(duration_ms, int(settings.asr_max_duration_s * 1000))
    window_ms = settings.asr_window_s * 1000
    base = {"kind": "speech", "engine": recogniser.engine}
    if getattr(recogniser, "host", None):
        base["host"] = recogniser.host
    await ctx.progress(progress[0], "finding speech in the audio")
    try:  # a cancellation stops the pass within about a second, its ffmpeg first
        has_audio, windows = await until_cancelled(ctx, find_speech, path, demuxer, limit_ms, window_ms,
                                                   settings.media_timeout(limit_ms))
    except MediaError as exc:
        raise PermanentJobError(f"reading the audio: {scrub(str(exc))}") from None
    if not has_audio or not windows:
        note = NO_AUDIO if not has_audio else NO_SPEECH
        return SpeechTranscript([], {**base, "windows": 0, "audio_ms": limit_ms, "note": note}, None, note)
    detected = None
    if language is None:
        await ctx.progress(progress[0], "detecting the spoken language")
        guess, probability = await recogniser.detect(path, demuxer, windows[0])
        if not guess or probability < settings.asr_language_min_probability:
            raise PermanentJobError(
                f"could not tell which language is spoken (best guess {guess or 'none'} at "
                f"{probability:.2f}, below {settings.asr_language_min_probability:g}); analyse again with "
                f"`language` in the request (one of {', '.join(asr.LANGUAGES)}); what the job was charged is refunded")
        language, detected = guess, round(probability, 3)
    elif language not in asr.LANGUAGES:
        raise PermanentJobError(f"speech recognition supports {', '.join(asr.LANGUAGES)}, not {language!r}; "
                                f"upload captions for this language")
    names = [item_name(k, w) for k, w in enumerate(windows)]
    model = recogniser.model_name(language)

    async def work(name: str) -> ItemDone:
        start, end = item_window(name)
        index = names.index(name)
        await ctx.progress(ctx.job.progress, f"recognising speech: window {index + 1} of {len(names)}")
        done = ctx.job.items_done
        prompt = prompt_for([done[n]["words"] for n in names[:index] if n in done], settings.asr_prompt_chars)
        found = await recogniser.recognise(path, demuxer, (start, end), language, prompt=prompt)
        shifted = [[min(end, w.start_ms + start), min(end, max(w.start_ms, w.end_ms) + start), w.text,
                    round(w.probability, 3), int(w.joins)] for w in found.words]
        return ItemDone({"words": shifted, "dropped": found.dropped, "language": language, "model": model,
                         "prompt": found.prompt})

    results = await ctx.run_items(names, work, progress=(progress[0], progress[1]), chained=True)
    words = [w for name in names for w in results[name]["words"]]
    source = {**base, "model": model, "language": language, "windows": len(names), "audio_ms": limit_ms,
              "words": len(words), "dropped_segments": sum(int(r.get("dropped", 0)) for r in results.values())}
    if detected is not None:
        source["language_probability"] = detected
    if not words:
        return SpeechTranscript([], {**source, "note": NO_SPEECH}, language, NO_SPEECH)
    segments, speakers = await with_speakers(ctx, settings, path, demuxer, segments_from_words(words), limit_ms)
    return SpeechTranscript(segments, {**source, **speakers}, language)


def recogniser_for(settings: Settings):
    """The configured provider when there is one, else the local engine."""
    return ProviderRecogniser(settings) if settings.asr_configured else LocalRecogniser(settings)
