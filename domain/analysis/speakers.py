"""Speaker diarisation summary from speaker-tagged segments.

A turn is a run of consecutive segments by one speaker; a pause longer than ``TURN_GAP_MS`` inside
the run starts a new turn of the same speaker. Talk time is the sum of that speaker's segment
durations (the caption time, gaps excluded), so it matches the captions exactly. Without any tag
the transcript has one unnamed speaker and ``diarised`` is false.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.model import Segment
from domain.analysis.text import words

TURN_GAP_MS = 5000
UNKNOWN = "unknown"


@dataclass(slots=True)
class Turn:
    speaker: str
    start_ms: int
    end_ms: int
    words: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"speaker": self.speaker, "startMs": self.start_ms, "endMs": self.end_ms, "words": self.words}


@dataclass(slots=True)
class Speaker:
    name: str
    talk_time_ms: int = 0
    words: int = 0
    turns: list[Turn] = field(default_factory=list)
    share: float = 0.0

    @property
    def words_per_minute(self) -> float:
        return round(self.words * 60000 / self.talk_time_ms, 1) if self.talk_time_ms else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "talkTimeMs": self.talk_time_ms, "share": self.share, "words": self.words,
                "wordsPerMinute": self.words_per_minute, "turnCount": len(self.turns),
                "turns": [{"startMs": t.start_ms, "endMs": t.end_ms} for t in self.turns]}


@dataclass(slots=True)
class Diarisation:
    diarised: bool
    speakers: list[Speaker]
    turns: list[Turn]

    def to_dict(self) -> dict[str, Any]:
        return {"diarised": self.diarised, "speakerCount": len(self.speakers),
                "speakers": [s.to_dict() for s in self.speakers], "turns": [t.to_dict() for t in self.turns]}


def diarise(segments: Sequence[Segment]) -> Diarisation:
    diarised = any(seg.speaker for seg in segments)
    by_name: dict[str, Speaker] = {}
    turns: list[Turn] = []
    for seg in segments:
        if not seg.text.strip():
            continue
        name = seg.speaker or UNKNOWN
        speaker = by_name.setdefault(name, Speaker(name))
        duration = max(0, seg.end_ms - seg.start_ms)
        count = len(words(seg.text))
        speaker.talk_time_ms += duration
        speaker.words += count
        last = turns[-1] if turns else None
        if last and last.speaker == name and seg.start_ms - last.end_ms <= TURN_GAP_MS:
            last.end_ms = max(last.end_ms, seg.end_ms)
            last.words += count
        else:
            turn = Turn(name, seg.start_ms, max(seg.end_ms, seg.start_ms), count)
            turns.append(turn)
            speaker.turns.append(turn)
    total = sum(s.talk_time_ms for s in by_name.values()) or 1
    speakers = sorted(by_name.values(), key=lambda s: (-s.talk_time_ms, s.name))
    for speaker in speakers:
        speaker.share = round(speaker.talk_time_ms / total, 4)
    return Diarisation(diarised, speakers, turns)
