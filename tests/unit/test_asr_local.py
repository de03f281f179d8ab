"""The local speech engine: models from the installed packages, checked, loaded without any network."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from infra import asr
from infra.asr import AsrError, LocalEngine, decode_audio, speech_regions, stream_audio
from infra.media.ffmpeg import MediaError
from tests.media_factory import ensure_tools

SENTENCE = ("Solar panels convert sunlight into electricity. "
            "Why does this matter? Because solar power is now the cheapest source of electricity.")


@pytest.fixture(scope="module")
def talk(tmp_path_factory) -> Path:
    ensure_tools()
    root = tmp_path_factory.mktemp("asr")
    speech = root / "speech.wav"
    subprocess.run(["espeak-ng", "-v", "en", "-s", "160", "-w", str(speech), SENTENCE], check=True, timeout=60)
    # two seconds of silence, the sentence, three seconds of silence, in stereo at 44.1 kHz
    out = root / "talk.wav"
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-i", str(speech), "-af",
                    "adelay=2000,apad=pad_dur=3", "-ar", "44100", "-ac", "2", str(out)], check=True, timeout=60)
    return out


def _offline(monkeypatch) -> list:
    """Any connection but to the loopback is refused (and recorded); Hugging Face is told offline."""
    attempts = []
    real_connect = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and self.family != socket.AF_UNIX:
            attempts.append(address)
            raise OSError("network access is forbidden in this test")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return attempts


def test_models_load_from_the_installed_packages_and_transcribe_without_network(talk, tmp_path, monkeypatch):
    attempts = _offline(monkeypatch)
    monkeypatch.setattr(LocalEngine, "_models", {})  # loaded here, under the guard
    engine = LocalEngine(tmp_path / "models", cpu_threads=1)  # the suite keeps both cores busy
    audio = decode_audio(talk, "wav", 0, 60_000, timeout=60)
    assert audio.dtype == np.float32 and 8 * 16_000 < audio.size < 25 * 16_000
    recognition = engine.transcribe(audio, "en")
    text = " ".join(w.text for w in recognition.words).lower()
    assert "solar panels convert sunlight into electricity" in text
    assert "cheapest" in text and text.count("electricity") == 2
    first = recognition.words[0]
    assert 1500 <= first.start_ms <= 2800, first  # the two seconds of silence come first
    assert all(w.start_ms <= w.end_ms for w in recognition.words)
    assert [w.start_ms for w in recognition.words] == sorted(w.start_ms for w in recognition.words)
    language, probability = engine.detect_language(audio[2 * 16_000:])
    assert language == "en" and probability > 0.8
    assert attempts == []
    assert {name for name, _ in LocalEngine._models} == {"base"}  # one model for every language
    assert (tmp_path / "models" / "base" / "model.bin").is_file()  # joined once, checked


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    spec = asr.MODELS["base"]
    wrong = asr.ModelFile(spec.files["config.json"].package, spec.files["config.json"].path, "0" * 64)
    monkeypatch.setitem(asr.MODELS, "base", asr.ModelSpec("base", {**spec.files, "config.json": wrong},
                                                          spec.parts, spec.joined_sha256))
    with pytest.raises(AsrError, match="pinned SHA-256"):
        asr.model_path("base", tmp_path)


def test_a_damaged_joined_model_is_joined_again(tmp_path):
    folder = asr.model_path("base", tmp_path)
    joined = folder / "model.bin"
    with open(joined, "r+b") as f:
        f.write(b"\0" * 64)
    assert asr.model_path("base", tmp_path) == folder
    assert asr.sha256_of(joined) == asr.MODELS["base"].joined_sha256


def test_silence_gives_no_words(tmp_path):
    silence = tmp_path / "silence.wav"
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                    "anullsrc=r=16000:cl=mono", "-t", "20", str(silence)], check=True, timeout=60)
    audio = decode_audio(silence, "wav", 0, 20_000, timeout=60)
    assert speech_regions(stream_audio(silence, "wav", 20_000), 30_000) == []
    # Whisper alone writes a word over silence; the engine drops it as not speech.
    assert LocalEngine(tmp_path / "models").transcribe(audio, "en").words == ()


def test_speech_regions_are_found_block_by_block(talk):
    regions = speech_regions(stream_audio(talk, "wav", 60_000, block_s=4), 30_000, block_s=4)
    assert regions and 1500 <= regions[0][0] <= 2500
    assert regions[-1][1] <= 60_000
    assert all(a < b for a, b in regions)


def test_a_decode_that_stalls_is_killed_at_its_bound(tmp_path):
    """A source that never delivers a byte (here a FIFO nobody writes to) would hold the worker's
    thread forever: the watchdog kills ffmpeg at the bound and the pass fails clearly."""
    stalled = tmp_path / "stalled.wav"
    os.mkfifo(stalled)
    started = time.monotonic()
    with pytest.raises(MediaError, match="longer than"):
        list(stream_audio(stalled, "wav", 60_000, timeout=1.0))
    assert time.monotonic() - started < 30


def test_the_bound_covers_the_work_on_the_blocks_too(tmp_path):
    silence = tmp_path / "silence.wav"
    subprocess.run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                    "anullsrc=r=16000:cl=mono", "-t", "30", str(silence)], check=True, timeout=60)
    with pytest.raises(MediaError, match="longer than"):
        for _ in stream_audio(silence, "wav", 30_000, block_s=1, timeout=0.5):
            time.sleep(0.2)  # a slow consumer: 30 blocks take 6 s
    assert sum(len(b) for b in stream_audio(silence, "wav", 30_000, block_s=1, timeout=60)) == 30 * 16_000
