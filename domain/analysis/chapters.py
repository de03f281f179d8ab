"""The chapters of a video as video sites take them: the first starts at 0:00, there are at least three,
each lasts at least ten seconds, starts strictly ascend. ``validate_chapters`` states every broken rule;
``format_timestamp`` prints a time as a description's chapter line does.

Where the chapters fall is ``structure``'s work, what they are called ``titles``'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MIN_CHAPTER_MS = 10_000


@dataclass(slots=True)
class Chapter:
    start_ms: int
    end_ms: int
    title: str
    first_sentence: int
    last_sentence: int

    def to_dict(self) -> dict[str, Any]:
        return {"startMs": self.start_ms, "endMs": self.end_ms, "title": self.title,
                "timestamp": format_timestamp(self.start_ms)}


def format_timestamp(ms: int) -> str:
    """0:00, 4:05, 1:02:03: the form video sites parse in descriptions."""
    seconds = max(0, ms) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def chapters_text(chapters: Sequence[Chapter]) -> str:
    return "\n".join(f"{format_timestamp(c.start_ms)} {c.title}" for c in chapters)


def validate_chapters(chapters: Sequence[Chapter | dict[str, Any]], duration_ms: int) -> list[str]:
    """Every video-site rule the chapter list breaks (empty when it is valid)."""
    starts = [c["startMs"] if isinstance(c, dict) else c.start_ms for c in chapters]
    titles = [c["title"] if isinstance(c, dict) else c.title for c in chapters]
    problems = []
    if len(starts) < 3:
        problems.append(f"at least 3 chapters are needed, found {len(starts)}")
    if starts and starts[0] != 0:
        problems.append(f"the first chapter must start at 0:00, it starts at {format_timestamp(starts[0])}")
    for i, (a, b) in enumerate(zip(starts, starts[1:], strict=False), start=1):
        if b <= a:
            problems.append(f"chapter {i + 1} does not start after chapter {i}")
        elif b - a < MIN_CHAPTER_MS:
            problems.append(f"chapter {i} lasts {(b - a) / 1000:.1f} s, under 10 s")
    if starts and duration_ms - starts[-1] < MIN_CHAPTER_MS:
        problems.append(f"the last chapter lasts {(duration_ms - starts[-1]) / 1000:.1f} s, under 10 s")
    for i, title in enumerate(titles, start=1):
        if not title or not title.strip():
            problems.append(f"chapter {i} has no title")
    return problems
