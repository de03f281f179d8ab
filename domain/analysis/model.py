"""Inputs of the analysis: transcript segments and the facts ffmpeg measured on the media.

Times are integer milliseconds from the start of the video everywhere in the analysis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Segment:
    """One caption (or ASR) segment; ``speaker`` is None when the source names nobody."""

    start_ms: int
    end_ms: int
    text: str
    speaker: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"startMs": self.start_ms, "endMs": self.end_ms, "text": self.text, "speaker": self.speaker}


@dataclass(frozen=True, slots=True)
class SceneChange:
    time_ms: int
    score: float  # ffmpeg's scene score, 0-1


@dataclass(frozen=True, slots=True)
class TimeRange:
    start_ms: int
    end_ms: int


@dataclass(frozen=True, slots=True)
class AudioSegment:
    start_ms: int
    end_ms: int
    kind: str  # speech, music, silence
    confidence: float = 0.5


@dataclass(frozen=True, slots=True)
class Loudness:
    integrated_lufs: float | None = None
    range_lu: float | None = None
    true_peak_dbtp: float | None = None


@dataclass(frozen=True, slots=True)
class MediaFacts:
    """What the media analysis found; every member is optional (a caption-only analysis has none)."""

    duration_ms: int | None = None
    scene_changes: tuple[SceneChange, ...] = ()
    silences: tuple[TimeRange, ...] = ()
    audio_segments: tuple[AudioSegment, ...] = ()
    loudness: Loudness | None = None
    has_audio: bool | None = None
    has_video: bool | None = None


@dataclass(slots=True)
class Sentence:
    """A sentence rebuilt from captions: it may span cues, never speakers."""

    index: int
    text: str
    start_ms: int
    end_ms: int
    speaker: str | None
    first_segment: int
    last_segment: int
    tokens: list[str] = field(default_factory=list)
    is_question: bool = False

    @property
    def duration_ms(self) -> int:
        return max(0, self.end_ms - self.start_ms)
