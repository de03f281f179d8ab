"""The narrative structure of a talk: hook, context, development, conclusion, contiguous from 0 to the end."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.analysis.chapters import Chapter
from domain.analysis.claims import Claim
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import labels, strip_leading_fillers
from domain.languages import DEFAULT_LANGUAGE


@dataclass(slots=True)
class NarrativePart:
    part: str
    label: str
    start_ms: int
    end_ms: int
    summary: str
    sentences: int

    def to_dict(self) -> dict[str, Any]:
        return {"part": self.part, "label": self.label, "startMs": self.start_ms, "endMs": self.end_ms,
                "summary": self.summary, "sentenceCount": self.sentences}


def build_narrative(sentences: Sequence[Sentence], duration_ms: int, chapters: Sequence[Chapter],
                    claims: Sequence[Claim], language: str | None = DEFAULT_LANGUAGE) -> list[NarrativePart]:
    """Hook, context, development, conclusion: contiguous ranges from 0 to the end of the video."""
    label = labels(language)
    conclusion_re = language_of(language).conclusion_re
    if not sentences or duration_ms <= 0:
        return []
    ends = [s.end_ms for s in sentences]
    starts = [s.start_ms for s in sentences]

    def nearest(values: list[int], target: int, low: int, high: int) -> int:
        inside = [v for v in values if low < v < high]
        return min(inside, key=lambda v: (abs(v - target), v)) if inside else max(low, min(high, target))

    hook_end = nearest(ends, min(45_000, max(15_000, duration_ms * 8 // 100)), 0, duration_ms)
    marked = [s.start_ms for s in sentences if s.start_ms >= duration_ms * 65 // 100 and conclusion_re.search(s.text)]
    conclusion_start = marked[0] if marked else nearest(starts, duration_ms * 85 // 100, hook_end, duration_ms)
    conclusion_start = max(conclusion_start, hook_end)
    chapter_cut = [c.start_ms for c in chapters if hook_end < c.start_ms < conclusion_start]
    context_end = chapter_cut[0] if chapter_cut and chapter_cut[0] <= duration_ms * 40 // 100 else nearest(
        starts, duration_ms * 25 // 100, hook_end, conclusion_start)
    context_end = min(max(context_end, hook_end), conclusion_start)
    after_hook = sorted(v for v in starts if hook_end <= v < conclusion_start)
    if not any(v < context_end for v in after_hook) and len(after_hook) >= 2:
        context_end = after_hook[1]  # a short video: the context is at least the sentence after the hook
    bounds = [("hook", 0, hook_end), ("context", hook_end, context_end),
              ("development", context_end, conclusion_start), ("conclusion", conclusion_start, duration_ms)]
    by_sentence = {c.sentence: c for c in claims}
    parts = []
    for name, start, end in bounds:
        inside = [s for s in sentences if start <= s.start_ms < end] if end > start else []
        best = max((by_sentence[s.index] for s in inside if s.index in by_sentence),
                   key=lambda c: (c.confidence, -c.start_ms), default=None)
        if best is not None:
            summary = best.text
        elif inside:
            summary = strip_leading_fillers(max(inside, key=lambda s: (len(s.tokens), -s.index)).text, language)
        else:
            summary = ""
        key = "conclusion_part" if name == "conclusion" else name
        parts.append(NarrativePart(name, label[key], start, end, summary, len(inside)))
    return parts
