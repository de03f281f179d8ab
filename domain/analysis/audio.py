"""Speech-like, music-like or silent: the audio's 50 ms frames judged without a model.

Each second is judged with the two classic cues of Scheirer & Slaney and Saunders: the share of
low-energy frames (speech pauses between syllables, music rarely does) and the variation of the
zero-crossing rate (speech alternates voiced and unvoiced sounds). Seconds quieter than the
silence threshold are silence. Runs shorter than ``MIN_AUDIO_SEGMENT_MS`` merge into their
neighbours. It tells a voice from a steady tone or a dense mix; it is not a classifier of genres
and says so with a confidence. The frames are measured by ``infra.media.elements``.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from domain.analysis.model import AudioSegment

SILENCE_DB = -35.0  # a second quieter than this (mean RMS level) is silence
FRAME_MS = 50  # the frame the cues are measured on
MIN_AUDIO_SEGMENT_MS = 2000


def classify_frames(times: list[int], rms_db: list[float], zcr: list[float], duration_ms: int,
                    silence_db: float = SILENCE_DB) -> list[AudioSegment]:
    """Per-second speech / music / silence judgement from 50 ms frames, merged into segments."""
    if not times:
        return []
    seconds: dict[int, list[int]] = {}
    for k, t in enumerate(times):
        seconds.setdefault(t // 1000, []).append(k)
    labels: list[tuple[int, str, float]] = []
    for second in sorted(seconds):
        idx = seconds[second]
        levels = [rms_db[k] for k in idx]
        linear = [10 ** (level / 20) for level in levels]
        mean_linear = sum(linear) / len(linear)
        mean_db = 20 * math.log10(mean_linear) if mean_linear > 0 else -120.0
        if mean_db < silence_db:
            labels.append((second, "silence", 1.0))
            continue
        low_energy = sum(1 for v in linear if v < 0.5 * mean_linear) / len(linear)
        rates = [zcr[k] for k in idx]
        mean_rate = statistics.mean(rates)
        rate_cv = statistics.pstdev(rates) / mean_rate if mean_rate > 0 else 0.0
        speechness = 0.6 * min(1.0, low_energy / 0.3) + 0.4 * min(1.0, rate_cv / 0.5)
        kind = "speech" if speechness >= 0.5 else "music"
        labels.append((second, kind, round(min(1.0, abs(speechness - 0.5) * 2), 3)))
    # smooth isolated seconds: a second unlike both neighbours takes their label
    for k in range(1, len(labels) - 1):
        before, here, after = labels[k - 1][1], labels[k][1], labels[k + 1][1]
        if before == after != here:
            labels[k] = (labels[k][0], before, labels[k][2])
    runs: list[list[Any]] = []
    for second, kind, confidence in labels:
        start, end = second * 1000, min(duration_ms, (second + 1) * 1000)
        if runs and runs[-1][2] == kind and runs[-1][1] >= start:
            runs[-1][1] = end
            runs[-1][3].append(confidence)
        else:
            runs.append([start, end, kind, [confidence]])
    merged: list[list[Any]] = []
    for run in runs:
        if merged and run[1] - run[0] < MIN_AUDIO_SEGMENT_MS and run[2] != "silence":
            merged[-1][1] = run[1]
            continue
        if merged and merged[-1][2] == run[2]:
            merged[-1][1] = run[1]
            merged[-1][3].extend(run[3])
        else:
            merged.append(run)
    return [AudioSegment(start, end, kind, round(statistics.mean(conf), 3))
            for start, end, kind, conf in merged if end > start]
