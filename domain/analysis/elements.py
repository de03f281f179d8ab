"""Visual and audio elements: the media facts as records with time ranges.

Visual elements are shots: the spans between scene changes, each with the cut's score, its length
and what is said during it (the transcript). A run of short shots (under ``FAST_SHOT_MS``) is also
reported as a ``fast_cutting`` sequence. (What the person in the picture does is
``domain.analysis.behavioral``: its elements come first in ``analysis_mode=behavioral``.) Audio
elements are the silences, the speech-like and music-like segments, and one ``loudness`` record
for the whole track (integrated loudness, range, true peak).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from domain.analysis.model import MediaFacts, Sentence
from domain.analysis.text import words

FAST_SHOT_MS = 2000
EXCERPT_WORDS = 25


def _id(prefix: str, *parts: object) -> str:
    return prefix + hashlib.sha1("|".join(map(str, parts)).encode()).hexdigest()[:12]


def _said(sentences: Sequence[Sentence], start: int, end: int) -> tuple[str, str | None]:
    inside = [s for s in sentences if s.start_ms < end and s.end_ms > start]
    if not inside:
        return "", None
    text = " ".join(words(" ".join(s.text for s in inside))[:EXCERPT_WORDS])
    speakers = [s.speaker for s in inside if s.speaker]
    return text, max(set(speakers), key=lambda n: (speakers.count(n), n)) if speakers else None


def visual_elements(facts: MediaFacts | None, duration_ms: int,
                    sentences: Sequence[Sentence] = ()) -> list[dict[str, Any]]:
    if facts is None or facts.has_video is False:
        return []
    cuts = sorted((c for c in facts.scene_changes if 0 < c.time_ms < duration_ms), key=lambda c: c.time_ms)
    bounds = [0, *[c.time_ms for c in cuts], duration_ms]
    cut_score = {c.time_ms: c.score for c in cuts}
    out: list[dict[str, Any]] = []
    for k, (start, end) in enumerate(zip(bounds, bounds[1:], strict=False), start=1):
        if end <= start:
            continue
        said, speaker = _said(sentences, start, end)
        out.append({"id": _id("vis_", "shot", start, end), "type": "shot", "index": k, "startMs": start,
                    "endMs": end, "durationMs": end - start, "changeScore": round(cut_score.get(start, 0.0), 3),
                    "speaker": speaker, "transcriptExcerpt": said,
                    "description": f"shot {k}, {(end - start) / 1000:.1f} s"})
    run: list[dict[str, Any]] = []
    for shot in [*out, None]:
        if shot is not None and shot["durationMs"] < FAST_SHOT_MS:
            run.append(shot)
            continue
        if len(run) >= 3:
            out.append({"id": _id("vis_", "fast", run[0]["startMs"]), "type": "fast_cutting",
                        "startMs": run[0]["startMs"], "endMs": run[-1]["endMs"],
                        "durationMs": run[-1]["endMs"] - run[0]["startMs"], "shotCount": len(run),
                        "description": f"{len(run)} shots under {FAST_SHOT_MS / 1000:.0f} s each"})
        run = []
    out.sort(key=lambda e: (e["startMs"], e["type"]))
    return out


def audio_elements(facts: MediaFacts | None, duration_ms: int) -> list[dict[str, Any]]:
    if facts is None or facts.has_audio is False:
        return []
    out: list[dict[str, Any]] = []
    for r in facts.silences:
        start, end = max(0, r.start_ms), min(duration_ms, r.end_ms)
        if end > start:
            out.append({"id": _id("aud_", "silence", start, end), "type": "silence", "startMs": start, "endMs": end,
                        "durationMs": end - start})
    for seg in facts.audio_segments:
        start, end = max(0, seg.start_ms), min(duration_ms, seg.end_ms)
        if end > start and seg.kind != "silence":
            out.append({"id": _id("aud_", seg.kind, start, end), "type": seg.kind, "startMs": start, "endMs": end,
                        "durationMs": end - start, "confidence": round(seg.confidence, 2)})
    if facts.loudness is not None and duration_ms > 0:
        loud = facts.loudness
        out.append({"id": _id("aud_", "loudness", 0, duration_ms), "type": "loudness", "startMs": 0,
                    "endMs": duration_ms, "durationMs": duration_ms, "integratedLufs": loud.integrated_lufs,
                    "loudnessRangeLu": loud.range_lu, "truePeakDbtp": loud.true_peak_dbtp})
    out.sort(key=lambda e: (e["startMs"], e["type"]))
    return out
