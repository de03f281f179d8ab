"""The speakers of a recognised talk: who says each segment, found from the voices in the audio.

A bounded step after the windows are recognised, not inside each window: a speaker is only known
by comparing the voices of the whole talk (clustering needs every segment), and the segments are
only final once every window's words are in (a sentence may run across two windows). It runs on
the worker's executor (``attribute``: decode the audio once more, streamed; embed each segment
with the bundled encoder, ``infra.voices``; cluster, ``domain.analysis.voices``), with
``asr_speakers_timeout_s`` as its bound (0: speakers are not looked for). The encoder takes about
1 % of the audio's length on this machine's 2 cores (a 4-hour talk: about 3 minutes), so the
default bound covers the longest recognised audio; a resumed job redoes the step, which is cheap
next to the windows it does not redo.

Speakers are an addition to the transcript, never a reason to lose it: past the bound, or if the
encoder cannot be loaded (missing, or not the pinned file), the transcript keeps one speaker and
the transcript source says why (``speakers_note``).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path

from domain.analysis.model import Segment
from domain.analysis.voices import speakers_of
from infra import asr, voices
from infra.media.ffmpeg import MediaError, scrub
from infra.settings import Settings
from services.jobs.context import JobContext

log = logging.getLogger("vaeo.voices")


def attribute(path: Path, demuxer: str, spans_ms: list[tuple[int, int]], limit_ms: int, timeout_s: float,
              cpu_threads: int) -> list[str | None]:
    """Each span's speaker (``Speaker N``), or None everywhere for one speaker (blocking)."""
    deadline = time.monotonic() + timeout_s
    embeddings = voices.segment_embeddings(path, demuxer, spans_ms, limit_ms, deadline, cpu_threads)
    return speakers_of([max(0, end - start) for start, end in spans_ms], embeddings)


async def with_speakers(ctx: JobContext, settings: Settings, path: Path, demuxer: str, segments: list[Segment],
                        limit_ms: int) -> tuple[list[Segment], dict]:
    """``segments`` with their speakers, and what the transcript source says of them."""
    if settings.asr_speakers_timeout_s <= 0 or not segments:
        return segments, {}
    await ctx.progress(ctx.job.progress, "finding the speakers in the audio")
    spans = [(s.start_ms, s.end_ms) for s in segments]
    bound_s = min(settings.asr_speakers_timeout_s, settings.media_timeout(limit_ms))  # in proportion to the price
    try:
        names = await ctx.run_blocking(attribute, path, demuxer, spans, limit_ms, bound_s, settings.asr_cpu_threads)
    except voices.VoicesTimeout:
        note = f"speakers not looked for past {bound_s:g} s"
        return segments, {"speakers": 1, "speakers_note": note}
    except (asr.AsrError, MediaError) as exc:
        log.error("finding the speakers failed: %s", scrub(str(exc)))
        return segments, {"speakers": 1, "speakers_note": f"speakers not found: {scrub(str(exc))[:200]}"}
    count = len({n for n in names if n}) or 1
    named = [dataclasses.replace(s, speaker=n) for s, n in zip(segments, names, strict=True)]
    return named, {"speakers": count, "speaker_model": voices.ENCODER_NAME}
