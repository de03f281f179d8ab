"""Chapters and narrative structure.

Chapters follow the video-site rules: the first starts at 0:00, there are at least three, each
lasts at least ten seconds, starts strictly ascend. ``validate_chapters`` states every broken rule.

Boundaries are chosen at sentence starts where the vocabulary changes most: for each sentence,
the cosine distance between the content words of a window before and a window after it, plus
cues that a new part starts (a discourse marker such as "passons à" / "let's move on", a question,
a pause, a scene change, the end of a silence). The longest chapter is split at its best-scored
candidate until the count is reached, each cut at least ``min_gap`` away from the others and from
both ends. The count aims at one chapter
per ``CHAPTER_TARGET_MS`` (between 3 and ``MAX_CHAPTERS``). Times are floored to whole seconds, as
in a video description; the minimum gap is kept above 10 s so that flooring never breaks a rule.

Titles are the chapter's most distinctive phrases (frequent in the chapter, rare in the others).
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from domain.analysis.claims import Claim
from domain.analysis.model import MediaFacts, Sentence
from domain.analysis.text import capitalise, fold, labels, strip_leading_fillers, words
from domain.analysis.topics import _display, candidates

MIN_CHAPTER_MS = 10_000
SAFE_GAP_MS = 11_000
CHAPTER_TARGET_MS = 150_000
MAX_CHAPTERS = 20

MARKER_RE = re.compile(
    r"^(?:\W*)(?:(?:et\s+)?maintenant|passons|parlons|venons-en|abordons|ensuite|deuxième(?:ment)?|troisième(?:ment)?|"
    r"premièrement|d['’]abord|tout d['’]abord|pour commencer|pour conclure|en conclusion|pour finir|enfin|"
    r"autre (?:point|question|sujet)|revenons|"
    r"now|next|let['’]s (?:move|talk|turn|look|start)|moving on|first(?:ly)?|second(?:ly)?|third(?:ly)?|"
    r"finally|to conclude|in conclusion|another (?:point|question|topic)|turning to|so let['’]s)\b",
    re.IGNORECASE)
CONCLUSION_RE = re.compile(
    r"\ben conclusion\b|\bpour conclure\b|\bpour résumer\b|\ben résumé\b|\bpour finir\b|\ben somme\b|"
    r"\bin conclusion\b|\bto conclude\b|\bto sum up\b|\bto summari[sz]e\b|\bin summary\b|\bwrapping up\b|"
    r"\bto wrap up\b|\ble mot de la fin\b|\bfinal(?:ly)? (?:thought|word)", re.IGNORECASE)


@dataclass(slots=True)
class Chapter:
    start_ms: int
    end_ms: int
    title: str
    first_sentence: int
    last_sentence: int

    def to_dict(self) -> dict:
        return {"startMs": self.start_ms, "endMs": self.end_ms, "title": self.title,
                "timestamp": format_timestamp(self.start_ms)}


@dataclass(slots=True)
class NarrativePart:
    part: str
    label: str
    start_ms: int
    end_ms: int
    summary: str
    sentences: int

    def to_dict(self) -> dict:
        return {"part": self.part, "label": self.label, "startMs": self.start_ms, "endMs": self.end_ms,
                "summary": self.summary, "sentenceCount": self.sentences}


def format_timestamp(ms: int) -> str:
    """0:00, 4:05, 1:02:03: the form video sites parse in descriptions."""
    seconds = max(0, ms) // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def chapters_text(chapters: Sequence[Chapter]) -> str:
    return "\n".join(f"{format_timestamp(c.start_ms)} {c.title}" for c in chapters)


def validate_chapters(chapters: Sequence[Chapter | dict], duration_ms: int) -> list[str]:
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


class _Windows:
    """Word counts of the sentences before and after a point, with their dot product and squared
    norms kept up to date word by word, so the cosine at each point costs the words that moved
    rather than the windows' whole vocabulary (the counts are integers: the same cosine exactly)."""

    def __init__(self) -> None:
        self.before: dict[str, int] = {}
        self.after: dict[str, int] = {}
        self.squares = {"before": 0, "after": 0}
        self.dot = 0

    def add(self, side: str, tokens: Sequence[str]) -> None:
        counts, other = (self.before, self.after) if side == "before" else (self.after, self.before)
        for token in tokens:
            count = counts.get(token, 0)
            counts[token] = count + 1
            self.squares[side] += 2 * count + 1
            self.dot += other.get(token, 0)

    def remove(self, side: str, tokens: Sequence[str]) -> None:
        """Words that leave a window are dropped from its counts (a ``Counter.subtract`` keeps them
        at zero, which made every step cost the vocabulary of the whole transcript)."""
        counts, other = (self.before, self.after) if side == "before" else (self.after, self.before)
        for token in tokens:
            count = counts[token]
            if count > 1:
                counts[token] = count - 1
            else:
                del counts[token]
            self.squares[side] -= 2 * count - 1
            self.dot -= other.get(token, 0)

    def cosine(self) -> float:
        if not self.before or not self.after:
            return 0.0
        norm = math.sqrt(self.squares["before"]) * math.sqrt(self.squares["after"])
        return self.dot / norm if norm else 0.0


def _near(sorted_times: Sequence[int], t: int, within: int) -> bool:
    k = bisect.bisect_left(sorted_times, t - within)
    return k < len(sorted_times) and sorted_times[k] <= t + within


def boundary_scores(sentences: Sequence[Sentence], facts: MediaFacts | None, window: int) -> list[float]:
    """Score of starting a new chapter at each sentence (index 0 is never a boundary).

    The two windows slide by one sentence per step, and scene changes and silence ends are found
    by bisection, so the pass is linear in the number of sentences (times the window).
    """
    n = len(sentences)
    scores = [0.0] * n
    windows = _Windows()
    for s in sentences[1:1 + window]:
        windows.add("after", s.tokens)
    scene_times = sorted(c.time_ms for c in facts.scene_changes) if facts else []
    silence_ends = sorted(r.end_ms for r in facts.silences) if facts else []
    for i in range(1, n):
        windows.add("before", sentences[i - 1].tokens)
        if i - 1 - window >= 0:
            windows.remove("before", sentences[i - 1 - window].tokens)
        if i > 1:
            windows.remove("after", sentences[i - 1].tokens)
        if i + window - 1 < n and i > 1:
            windows.add("after", sentences[i + window - 1].tokens)
        sentence = sentences[i]
        score = 1.0 - windows.cosine()
        if MARKER_RE.match(sentence.text):
            score += 0.35
        if sentence.is_question:
            score += 0.1
        if sentence.start_ms - sentences[i - 1].end_ms > 2000:
            score += 0.15
        if sentence.speaker != sentences[i - 1].speaker:
            score += 0.05
        if _near(scene_times, sentence.start_ms, 1500):
            score += 0.15
        if _near(silence_ends, sentence.start_ms, 1500):
            score += 0.1
        scores[i] = score
    return scores


def build_chapters(sentences: Sequence[Sentence], duration_ms: int, facts: MediaFacts | None = None,
                   language: str | None = "fr") -> list[Chapter]:
    if duration_ms < 3 * SAFE_GAP_MS or not sentences:
        return []
    target = max(3, min(MAX_CHAPTERS, round(duration_ms / CHAPTER_TARGET_MS)))
    min_gap = max(SAFE_GAP_MS, duration_ms // (target * 3))
    window = max(3, min(25, len(sentences) // (target * 2)))
    scores = boundary_scores(sentences, facts, window)

    def fits(t: int, chosen: list[int]) -> bool:
        return t >= min_gap and duration_ms - t >= min_gap and all(abs(t - c) >= min_gap for c in chosen)

    # Divisive: split the longest chapter at its best-scored sentence, until the target count.
    # Greedy picks over the whole video leave one chapter holding half of it; splitting the
    # longest keeps chapters comparable while the cut itself still follows the vocabulary.
    candidates_at = [(sentences[i].start_ms // 1000 * 1000, i) for i in range(1, len(sentences))]
    chosen_times: list[int] = []
    blocked: set[int] = set()
    while len(chosen_times) < target - 1:
        bounds = sorted([0, *chosen_times, duration_ms])
        spans = sorted(((b - a, a, b) for a, b in zip(bounds, bounds[1:], strict=False)
                        if (a, b) not in blocked and b - a >= 2 * min_gap), reverse=True)
        if not spans:
            break
        _, a, b = spans[0]
        inside = [(scores[i], -i, t) for t, i in candidates_at if a + min_gap <= t <= b - min_gap
                  and fits(t, chosen_times)]
        if not inside:
            blocked.add((a, b))
            continue
        chosen_times.append(max(inside)[2])
    if len(chosen_times) < 2:
        # too few sentences to cut on: evenly spaced cuts, at a sentence start when one is near
        starts = [s.start_ms // 1000 * 1000 for s in sentences]
        for k in range(1, 3):
            ideal = duration_ms * k // 3 // 1000 * 1000
            near = min(starts, key=lambda t: abs(t - ideal))
            t = near if fits(near, chosen_times) and abs(near - ideal) < min_gap else ideal
            if fits(t, chosen_times):
                chosen_times.append(t)
        chosen_times = chosen_times[:2] if len(chosen_times) >= 2 else chosen_times
    starts = sorted([0, *chosen_times])
    chapters: list[Chapter] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else duration_ms
        inside = [s.index for s in sentences if start <= s.start_ms // 1000 * 1000 < end]
        first = inside[0] if inside else 0
        last = inside[-1] if inside else first
        chapters.append(Chapter(start, end, "", first, last))
    _title_chapters(chapters, sentences, language)
    return chapters


def _title_chapters(chapters: list[Chapter], sentences: Sequence[Sentence], language: str | None) -> None:
    per_chapter: list[Counter] = []
    surfaces: dict[tuple[str, ...], Counter] = {}
    for chapter in chapters:
        counts: Counter = Counter()
        if chapter.first_sentence <= chapter.last_sentence and sentences:
            for s in sentences[chapter.first_sentence:chapter.last_sentence + 1]:
                for key, surface in candidates(s.text):
                    counts[key] += 1
                    surfaces.setdefault(key, Counter())[surface] += 1
        per_chapter.append(counts)
    df: Counter = Counter()
    for counts in per_chapter:
        df.update(counts.keys())
    n = len(chapters)
    joiner = labels(language)["and"]
    used: set[str] = set()
    for chapter, counts in zip(chapters, per_chapter, strict=True):
        ranked = sorted(counts, key=lambda k: (-(counts[k] * (1.0 if len(k) == 1 else 2.5)
                                                 * math.log(1 + n / df[k])), k))
        picked: list[tuple[str, ...]] = []
        for key in ranked:
            if counts[key] < 2 and picked:
                break
            label = fold(_display(surfaces[key]))
            if label in used or any(set(key) & set(p) for p in picked):
                continue
            picked.append(key)
            if len(picked) == 2:
                break
        names = [_display(surfaces[k]) for k in picked]
        title = f" {joiner} ".join(names) if names else ""
        if not title or fold(title) in used:
            first = sentences[chapter.first_sentence].text if sentences else ""
            title = " ".join(words(strip_leading_fillers(first))[:6]) or f"{chapter.start_ms // 1000} s"
        used.update(fold(name) for name in names)
        used.add(fold(title))
        chapter.title = capitalise(title)


def build_narrative(sentences: Sequence[Sentence], duration_ms: int, chapters: Sequence[Chapter],
                    claims: Sequence[Claim], language: str | None = "fr") -> list[NarrativePart]:
    """Hook, context, development, conclusion: contiguous ranges from 0 to the end of the video."""
    label = labels(language)
    if not sentences or duration_ms <= 0:
        return []
    ends = [s.end_ms for s in sentences]
    starts = [s.start_ms for s in sentences]

    def nearest(values: list[int], target: int, low: int, high: int) -> int:
        inside = [v for v in values if low < v < high]
        return min(inside, key=lambda v: (abs(v - target), v)) if inside else max(low, min(high, target))

    hook_end = nearest(ends, min(45_000, max(15_000, duration_ms * 8 // 100)), 0, duration_ms)
    marked = [s.start_ms for s in sentences if s.start_ms >= duration_ms * 65 // 100 and CONCLUSION_RE.search(s.text)]
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
            summary = strip_leading_fillers(max(inside, key=lambda s: (len(s.tokens), -s.index)).text)
        else:
            summary = ""
        key = "conclusion_part" if name == "conclusion" else name
        parts.append(NarrativePart(name, label[key], start, end, summary, len(inside)))
    return parts
