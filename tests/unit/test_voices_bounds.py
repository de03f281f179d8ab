"""The speaker step is an addition, never a loss: past its time bound, or with an encoder that is
not the pinned file, the transcript keeps its segments with one speaker and says why."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from types import SimpleNamespace

import pytest

from domain.analysis.model import Segment
from infra import asr, voices
from infra.settings import Settings
from services.jobs.voices import with_speakers
from tests.media_factory import run

SEGMENTS = [Segment(k * 2000, k * 2000 + 1500, f"sentence {k}.") for k in range(6)]


class Ctx:
    """The part of a job's context the step uses: progress, and the executor."""

    job = SimpleNamespace(progress=10)

    def __init__(self):
        self.steps = []

    async def progress(self, progress, step):
        self.steps.append(step)

    async def run_blocking(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(None, fn, *args)


@pytest.fixture(scope="module")
def tone(tmp_path_factory):
    path = tmp_path_factory.mktemp("voices") / "tone.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=200:sample_rate=16000:duration=13",
         str(path)])
    return path


def settings(**more):
    return Settings().model_copy(update=more)


def test_embedding_stops_at_its_deadline(tone):
    with pytest.raises(voices.VoicesTimeout):
        voices.segment_embeddings(tone, "wav", [(0, 1000), (2000, 3000)], 13_000, time.monotonic() - 1)


async def test_past_the_bound_the_transcript_keeps_one_speaker(tone):
    ctx = Ctx()
    segments, source = await with_speakers(ctx, settings(asr_speakers_timeout_s=1e-9), tone, "wav", SEGMENTS,
                                           13_000)
    assert segments == SEGMENTS and source["speakers"] == 1
    assert "not looked for past" in source["speakers_note"]
    assert ctx.steps == ["finding the speakers in the audio"]


async def test_an_altered_encoder_keeps_the_transcript_with_one_speaker(tone, monkeypatch):
    monkeypatch.setattr(voices, "ENCODER", dataclasses.replace(voices.ENCODER, sha256="0" * 64))
    monkeypatch.setattr(voices.Encoder, "_sessions", {})
    segments, source = await with_speakers(Ctx(), settings(), tone, "wav", SEGMENTS, 13_000)
    assert segments == SEGMENTS and source["speakers"] == 1 and "SHA-256" in source["speakers_note"]


async def test_speakers_are_not_looked_for_when_turned_off(tone):
    ctx = Ctx()
    segments, source = await with_speakers(ctx, settings(asr_speakers_timeout_s=0), tone, "wav", SEGMENTS, 13_000)
    assert segments == SEGMENTS and source == {} and ctx.steps == []


async def test_a_tone_is_one_speaker(tone):
    segments, source = await with_speakers(Ctx(), settings(), tone, "wav", SEGMENTS, 13_000)
    assert segments == SEGMENTS and source["speakers"] == 1 and "speakers_note" not in source


def test_spans_across_blocks_get_the_audio_of_their_own_time(tmp_path):
    """Streamed in one-second blocks, spans that cross blocks, overlap, come out of order or reach
    past the end embed exactly the samples of their own time range."""
    chirp = tmp_path / "chirp.wav"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i",
         "aevalsrc=0.5*sin(2*PI*(100+60*t)*t):s=16000:d=6", str(chirp)])
    spans = [(2500, 4700), (300, 1250), (900, 3100), (4000, 4100), (5500, 9000), (7000, 8000), (3000, 2000)]
    streamed = voices.segment_embeddings(chirp, "wav", spans, 9000, time.monotonic() + 60, 1, block_s=1)
    whole = asr.decode_audio(chirp, "wav", 0, 6000, 30)
    encoder = voices.Encoder(1)
    for (start, end), got in zip(spans, streamed, strict=True):
        piece = whole[start * 16:end * 16]
        if piece.size < voices.HOP * 10:
            assert got is None, (start, end)
        else:
            assert float(got @ encoder.embed(piece)) > 0.9999, (start, end)
