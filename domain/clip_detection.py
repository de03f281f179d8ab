"""Clip detection: the moments of a video worth cutting out, from its transcript and content graph.

Pure: sentences (rebuilt from the captions, ``domain.analysis.sentences``) and the content graph
the analysis recorded (claims, search intents, entities, clip moments, visual and audio elements)
in, scored non-overlapping clips out. The worker feeds it; nothing here reads a file.

**Windows.** With ``protect_sentence_boundaries`` a clip is a run of whole sentences: it starts in
the pause before its first sentence and ends in the pause after its last, never inside speech.
Up to ``MAX_PAD_MS`` of each pause may be taken to reach the target (half of a pause between two
sentences, so that neighbouring clips never share it), which lets a run of sentences last a
given duration exactly. Without it (or without a transcript) windows start at
sentence starts, scene changes and speech onsets, and last the target.

**Durations.** A clip lasts between ``min_ms`` and ``max_ms``: the target, less the margin when
``allow_shorter_duration``, plus the margin when ``allow_longer_duration`` (margin: the target's
``duration_margin_percent`` when ``duration_margin_enabled``, else none). Each clip lasts as near
the target as its sentences and pauses allow.

**Signals**, by ``analysis_mode`` (``multimodal``: all of them):

- ``transcript``: a hook in the first sentence (a question, a number, an opening formula), a
  self-contained start (not a connective such as "and", "but", "donc"), an answered search intent
  inside, statistics and other factual claims, a quotation or an attribution ("selon", "according
  to"), the entities it introduces, the analysis's clip moments it covers, and the ``prompt``'s
  terms (offline: the prompt's content words found in the clip's sentences weigh heavily);
- ``visual``: a scene change at its start, scene changes inside (visual energy), fast cutting;
- ``audio``: speech entering after a pause or music (an energy change), the share of speech, a
  clean exit into a pause, dead air (long silences) counted against it.

**The prompt through a provider.** When an OpenAI-compatible provider is configured, the job
sends it the prompt and the ``MAX_RATED`` best windows (by the offline score, with an excerpt of
what is said in each: ``shortlist``, ``rating_messages``), and its relevance ratings (0-100,
``parse_ratings``) give ``RATING_POINTS`` per point instead of the offline matching of the terms.

Each signal adds points (a hook 8 to 18, an answered search intent 16 or more, a statistic 12 or
more, a quotation 10, the prompt 40 to 80 (it steers: the clips that
match it come first), a scene change at the start 8, ...; a connective start
-12, dead air -6); ``viral_score`` is ``100 * (1 - exp(-(20 + points) / 70))`` (``viral_score``),
and the ``rationale`` names the strongest signals, so the score can be read. Clips are chosen best
first without overlapping, then returned best first. When fewer than ``requested_clip_count``
fit, ``shortfall_reason`` says why.
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import content_tokens

MODES = ("transcript", "visual", "audio", "multimodal")
SIGNALS_OF_MODE = {
    "transcript": ("transcript",),
    "visual": ("visual",),
    "audio": ("audio",),
    "multimodal": ("transcript", "visual", "audio"),
}
MAX_PAD_MS = 1500  # of a pause taken before or after a run of sentences
SCENE_AT_START_MS = 600  # a scene change this close to a clip's start opens it
BASE_SCORE = 20
SCORE_SCALE = 70.0
MAX_TITLE_CHARS = 100
MAX_THUMBNAIL_TITLE_CHARS = 40
MAX_RATIONALE_CHARS = 500
GRID_STARTS = 2000  # windows without sentences: at most this many start points are tried

NUMBER = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class DetectionRequest:
    target_ms: int
    requested_clip_count: int = 10
    analysis_mode: str = "multimodal"
    prompt: str | None = None
    protect_sentence_boundaries: bool = True
    duration_margin_enabled: bool = True
    duration_margin_percent: int = 10
    allow_shorter_duration: bool = True
    allow_longer_duration: bool = False

    @property
    def margin_ms(self) -> int:
        return self.target_ms * self.duration_margin_percent // 100 if self.duration_margin_enabled else 0

    @property
    def min_ms(self) -> int:
        return self.target_ms - self.margin_ms if self.allow_shorter_duration else self.target_ms

    @property
    def max_ms(self) -> int:
        return self.target_ms + self.margin_ms if self.allow_longer_duration else self.target_ms


@dataclass(slots=True)
class Candidate:
    start_ms: int
    end_ms: int
    first: int | None = None  # sentence indexes (None: a window without sentences)
    last: int | None = None
    score: float = 0.0
    reasons: list[tuple[float, str, object]] = field(default_factory=list)  # (points, signal, found)

    @property
    def duration_ms(self) -> int:
        return self.end_ms - self.start_ms


@dataclass(frozen=True, slots=True)
class Detection:
    clips: list[dict[str, Any]]
    shortfall_reason: str | None
    signals: list[str]


class _Index:
    """What scoring looks up, prepared once: sorted starts of each kind of element (range counts by
    bisection) and each sentence's own features (so a window costs a few lookups, not a rescan)."""

    def __init__(self, graph: dict[str, Any], sentences: Sequence[Sentence], prompt: str | None) -> None:
        self.duration_ms = int(graph.get("durationMs") or (sentences[-1].end_ms if sentences else 0))
        self.claims = sorted(graph.get("claims") or [], key=lambda c: c.get("startMs", 0))
        self.claim_starts = [int(c.get("startMs", 0)) for c in self.claims]
        self.stat_before = [0]  # statistics among the first k claims
        for c in self.claims:
            self.stat_before.append(self.stat_before[-1] + ("statistic" in (c.get("kinds") or [])))
        intents = [i for i in graph.get("searchIntents") or [] if i.get("answered") and i.get("startMs") is not None]
        self.intents = sorted(intents, key=lambda i: i["startMs"])
        self.intent_starts = [int(i["startMs"]) for i in self.intents]
        entities = [e for e in graph.get("entities") or [] if e.get("firstMs") is not None]
        self.entities = sorted(entities, key=lambda e: e["firstMs"])
        self.entity_starts = [int(e["firstMs"]) for e in self.entities]
        self.moments = sorted((m for m in graph.get("clipMoments") or [] if m.get("endMs", 0) > m.get("startMs", 0)),
                              key=lambda m: m["startMs"])
        self.moment_starts = [int(m["startMs"]) for m in self.moments]
        self.longest_moment = max((m["endMs"] - m["startMs"] for m in self.moments), default=0)
        visual = graph.get("visualElements") or []
        self.cuts = sorted(int(v["startMs"]) for v in visual if v.get("type") == "shot" and v.get("startMs", 0) > 0)
        self.fast = [v for v in visual if v.get("type") == "fast_cutting"]
        audio = sorted((a for a in graph.get("audioElements") or [] if a.get("type") in ("speech", "music", "silence")),
                       key=lambda a: a.get("startMs", 0))
        self.audio = audio
        self.audio_starts = [int(a.get("startMs", 0)) for a in audio]
        self.prompt_terms = set(content_tokens(prompt)) if prompt else set()
        self.rated: dict[tuple[int, int], int] | None = None  # the provider's ratings, when it rated
        self.prompt_hits = [0]
        # Per sentence: its opening (question, hook formula, figure), a connective first word, and
        # the first sentence from it on that quotes or attributes.
        self.opening: list[str | None] = []
        self.connective: list[str | None] = []
        kit = language_of(graph.get("language"))
        for sentence in sentences:
            hits = len(self.prompt_terms & set(sentence.tokens or content_tokens(sentence.text))) \
                if self.prompt_terms else 0
            self.prompt_hits.append(self.prompt_hits[-1] + hits)
            text = sentence.text
            self.opening.append("question" if sentence.is_question else "hook" if kit.hook_re.search(text)
                                else "figure" if NUMBER.search(text) else None)
            first_word = kit.first_word(text)
            self.connective.append(first_word if first_word in kit.connectives else None)
        self.next_quote = [len(sentences)] * (len(sentences) + 1)
        for k in range(len(sentences) - 1, -1, -1):
            self.next_quote[k] = k if kit.attribution_re.search(sentences[k].text) else self.next_quote[k + 1]

    def between(self, starts: list[int], a: int, b: int) -> tuple[int, int]:
        return bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)

    def audio_at(self, t: int) -> dict[str, Any] | None:
        k = bisect.bisect_right(self.audio_starts, t) - 1
        if k >= 0 and self.audio[k].get("endMs", 0) > t:
            segment: dict[str, Any] = self.audio[k]
            return segment
        return None


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    cut = cut[:cut.rfind(" ")] if " " in cut else cut
    return cut.rstrip(" ,;:") + "…"


def _sentence_windows(sentences: Sequence[Sentence], request: DetectionRequest, duration_ms: int) -> list[Candidate]:
    """Runs of whole sentences that can last between ``min_ms`` and ``max_ms``, padded into the
    pauses around them, each as near the target as the pauses allow."""
    out: list[Candidate] = []
    lo_ms, hi_ms, target = request.min_ms, request.max_ms, request.target_ms
    n = len(sentences)
    for i in range(n):
        before_room = min(MAX_PAD_MS, (sentences[i].start_ms - sentences[i - 1].end_ms) // 2 if i
                          else sentences[i].start_ms)
        for j in range(i, n):
            core = sentences[j].end_ms - sentences[i].start_ms
            if core > hi_ms:
                break
            after_room = min(MAX_PAD_MS, (sentences[j + 1].start_ms - sentences[j].end_ms) // 2 if j + 1 < n
                             else duration_ms - sentences[j].end_ms)
            low, high = max(lo_ms, core), min(hi_ms, core + max(0, before_room) + max(0, after_room))
            if low > high:
                continue
            length = min(max(target, low), high)
            extra = length - core
            before = min(max(0, before_room), max(extra - max(0, after_room), extra // 3))
            start = sentences[i].start_ms - before
            out.append(Candidate(start, start + length, i, j))
    return out


def _grid_windows(index: _Index, sentences: Sequence[Sentence], request: DetectionRequest) -> list[Candidate]:
    """Windows of the target's length starting at sentence starts, scene changes, audio onsets and
    a regular grid (when sentence boundaries are not protected, or there are no sentences)."""
    duration = index.duration_ms
    length = min(request.target_ms, duration)
    if length < request.min_ms or length <= 0:
        return []
    step = max(1000, request.target_ms // 4)
    points = {s.start_ms for s in sentences} | set(index.cuts) | set(index.audio_starts) | set(range(0, duration, step))
    starts = sorted(p for p in points if 0 <= p <= duration - length)
    if len(starts) > GRID_STARTS:
        starts = starts[::len(starts) // GRID_STARTS + 1]
    sentence_starts = [s.start_ms for s in sentences]
    out = []
    for start in starts:
        first = bisect.bisect_left(sentence_starts, start)
        last = bisect.bisect_left(sentence_starts, start + length) - 1
        out.append(Candidate(start, start + length, first if first <= last else None, last if first <= last else None))
    return out


def _score(c: Candidate, sentences: Sequence[Sentence], index: _Index, signals: tuple[str, ...]) -> None:
    """Points per signal, with what each found (``_reason`` words it for the chosen clips only)."""
    points: list[tuple[float, str, object]] = []
    a, b = c.start_ms, c.end_ms
    if "transcript" in signals and c.first is not None and c.last is not None:
        opening = index.opening[c.first]
        if opening is not None:
            points.append(({"question": 18, "hook": 12, "figure": 8}[opening], opening, c.first))
        connective = index.connective[c.first]
        points.append((-12, "connective", connective) if connective else (6, "self_contained", None))
        lo, hi = index.between(index.intent_starts, a, b)
        if hi > lo:
            points.append((16 + 3 * min(2, hi - lo - 1), "intent", index.intents[lo].get("query", "")))
        lo, hi = index.between(index.claim_starts, a, b)
        stats = index.stat_before[hi] - index.stat_before[lo]
        if stats:
            points.append((12 + 4 * min(2, stats - 1), "statistic", (lo, hi)))
        if hi - lo - stats:
            points.append((4 * min(3, hi - lo - stats), "claims", hi - lo - stats))
        if index.next_quote[c.first] <= c.last:
            points.append((10, "quotation", index.next_quote[c.first]))
        lo, hi = index.between(index.entity_starts, a, b)
        if hi > lo:
            points.append((3 * min(3, hi - lo), "entities", (lo, hi)))
        best_moment = 0.0
        for m in index.moments[bisect.bisect_left(index.moment_starts, a - index.longest_moment):
                               bisect.bisect_left(index.moment_starts, b)]:
            overlap = min(b, m["endMs"]) - max(a, m["startMs"])
            if overlap > 0:
                best_moment = max(best_moment, overlap / (m["endMs"] - m["startMs"]) * float(m.get("geoScore") or 0))
        if best_moment >= 20:
            points.append((best_moment * 0.2, "moment", None))
        if index.rated is None and index.prompt_terms:
            hits = index.prompt_hits[c.last + 1] - index.prompt_hits[c.first]
            if hits:
                points.append((40 + 40 * min(1.0, hits / len(index.prompt_terms)), "prompt", None))
    if index.rated is not None and index.rated.get((a, b)):
        relevance = index.rated[(a, b)]
        points.append((RATING_POINTS * relevance, "provider", relevance))
    if "visual" in signals and index.cuts:
        k = bisect.bisect_left(index.cuts, a - SCENE_AT_START_MS)
        if k < len(index.cuts) and index.cuts[k] <= a + SCENE_AT_START_MS:
            points.append((8, "scene_start", None))
        lo, hi = index.between(index.cuts, a + SCENE_AT_START_MS, b)
        if hi > lo:
            points.append((3 * min(4, hi - lo), "scene_changes", hi - lo))
        if any(min(b, f["endMs"]) > max(a, f["startMs"]) for f in index.fast):
            points.append((6, "fast_cutting", None))
    if "audio" in signals and index.audio:
        before = index.audio_at(max(0, a - 300))
        inside = index.audio_at(a + 300)
        if before and inside and before.get("type") in ("silence", "music") and inside.get("type") == "speech":
            points.append((8, "energy_change", before["type"]))
        speech = music = silence = 0
        lo = max(0, bisect.bisect_right(index.audio_starts, a) - 1)
        for el in index.audio[lo:bisect.bisect_left(index.audio_starts, b)]:
            overlap = min(b, el.get("endMs", 0)) - max(a, el.get("startMs", 0))
            if overlap <= 0:
                continue
            if el["type"] == "speech":
                speech += overlap
            elif el["type"] == "music":
                music += overlap
            elif overlap >= 1500:
                silence += overlap
        share = speech / max(1, b - a)
        if share >= 0.3:
            points.append((10 * share, "speech", share))
        if music >= 1000:
            points.append((4, "music", None))
        if silence:
            points.append((-6, "dead_air", silence))
        after = index.audio_at(b + 200)
        if after and after.get("type") == "silence":
            points.append((4, "clean_exit", None))
    c.reasons = points
    c.score = BASE_SCORE + sum(p for p, _, _ in points)


def _reason(kind: str, found: Any, sentences: Sequence[Sentence], index: _Index) -> str:
    """A signal in words, quoting what it found."""
    if kind in ("question", "hook"):
        text = _short(sentences[found].text, 80)
        return f"opens with a question (a hook): “{text}”" if kind == "question" else f"opens with a hook: “{text}”"
    if kind == "statistic":
        lo, hi = found
        stat = next(c for c in index.claims[lo:hi] if "statistic" in (c.get("kinds") or []))
        return f"states a statistic: “{_short(stat.get('text', ''), 90)}”"
    if kind == "entities":
        lo, hi = found
        return "introduces " + ", ".join(e.get("name", "") for e in index.entities[lo:min(hi, lo + 3)])
    if kind == "quotation":
        return f"a quotation or attribution: “{_short(sentences[found].text, 80)}”"
    if kind == "intent":
        return f"answers the search intent “{_short(str(found), 80)}”"
    words = {
        "figure": "opens on a figure", "connective": f"starts mid-thought (“{found}”)",
        "self_contained": "starts a self-contained thought", "moment": "covers a clip moment of the analysis",
        "prompt": "matches the prompt", "scene_start": "starts on a scene change", "fast_cutting": "fast cutting",
        "music": "music", "clean_exit": "ends into a pause (a clean exit)",
    }
    if kind in words:
        return words[kind]
    if kind == "claims":
        return f"{found} factual claim{'s' if found != 1 else ''}"
    if kind == "scene_changes":
        return f"{found} scene change{'s' if found != 1 else ''} (visual energy)"
    if kind == "energy_change":
        return f"speech enters after {'a pause' if found == 'silence' else 'music'} (an energy change)"
    if kind == "speech":
        return f"{round(found * 100)} % speech"
    if kind == "provider":
        return f"the provider rates it {found}/100 for the prompt"
    return f"{found / 1000:.1f} s of dead air"  # dead_air


def _title(c: Candidate, sentences: Sequence[Sentence], index: _Index) -> tuple[str, str]:
    lo, hi = index.between(index.claim_starts, c.start_ms, c.end_ms)
    moment = next((m for m in index.moments if m["startMs"] >= c.start_ms and m["endMs"] <= c.end_ms
                   and m.get("title")), None)
    if c.first is not None and sentences[c.first].is_question:
        title = sentences[c.first].text
    elif moment is not None:
        title = moment["title"]
    elif hi > lo:
        title = max(index.claims[lo:hi], key=lambda cl: cl.get("confidence", 0)).get("text", "")
    elif c.first is not None:
        title = sentences[c.first].text
    else:
        title = f"Clip at {c.start_ms // 60000}:{c.start_ms // 1000 % 60:02d}"
    title = _short(title, MAX_TITLE_CHARS) or "Clip"
    return title, _short(title, MAX_THUMBNAIL_TITLE_CHARS)


def _rationale(c: Candidate, sentences: Sequence[Sentence], index: _Index) -> str:
    good = sorted((r for r in c.reasons if r[0] > 0), key=lambda r: -r[0])
    bad = [r for r in c.reasons if r[0] < 0]
    parts = [_reason(kind, found, sentences, index) for _, kind, found in good[:5]]
    parts += [f"but {_reason(kind, found, sentences, index)}" for _, kind, found in bad[:2]]
    text = "; ".join(parts) or "the best remaining stretch of the video"
    return _short(text[0].upper() + text[1:] + ".", MAX_RATIONALE_CHARS)


def _choose(candidates: list[Candidate], request: DetectionRequest) -> list[Candidate]:
    """The most clips (up to the count asked), then the highest total score, without overlaps,
    best first.

    Each start keeps its best window (then the one nearest the target); then weighted interval
    scheduling with a count: ``best[k][i]`` is the highest total of ``k`` non-overlapping windows
    among the first ``i`` by end time (a dynamic program of count x windows, which a greedy pick
    of the best first would not reach: one strong clip can straddle two good ones)."""
    per_start: dict[int, Candidate] = {}
    for c in candidates:
        kept = per_start.get(c.start_ms)
        if kept is None or (c.score, -abs(c.duration_ms - request.target_ms)) > \
                (kept.score, -abs(kept.duration_ms - request.target_ms)):
            per_start[c.start_ms] = c
    ordered = sorted(per_start.values(), key=lambda c: (c.end_ms, c.start_ms))
    n = len(ordered)
    ends = [c.end_ms for c in ordered]
    fits_before = [bisect.bisect_right(ends, c.start_ms) for c in ordered]  # windows ending before it starts
    none = float("-inf")
    previous = [0.0] * (n + 1)
    taken_rows: list[bytearray] = []
    best_k = 0
    for k in range(1, min(request.requested_clip_count, n) + 1):
        current = [none] * (n + 1)
        taken = bytearray(n + 1)
        for i in range(1, n + 1):
            with_it = previous[fits_before[i - 1]] + ordered[i - 1].score
            if with_it > current[i - 1]:
                current[i], taken[i] = with_it, 1
            else:
                current[i] = current[i - 1]
        if current[n] == none:
            break
        taken_rows.append(taken)
        previous = current
        best_k = k
    chosen: list[Candidate] = []
    i = n
    for k in range(best_k, 0, -1):
        while not taken_rows[k - 1][i]:
            i -= 1
        chosen.append(ordered[i - 1])
        i = fits_before[i - 1]
    return sorted(chosen, key=lambda c: (-c.score, c.start_ms))


def viral_score(points: float) -> int:
    """0-100 from a window's points: ``100 * (1 - exp(-points / SCORE_SCALE))``, which keeps
    strong windows apart instead of capping them all at 100 (20 points: 25; 60: 58; 120: 82)."""
    return max(0, min(100, round(100 * (1 - math.exp(-max(0.0, points) / SCORE_SCALE)))))


def _scored(sentences: Sequence[Sentence], graph: dict[str, Any], request: DetectionRequest,
            rated: dict[tuple[int, int], int] | None) -> tuple[_Index, list[Candidate], bool]:
    """Every window of the request, scored: (the index, the windows, whether they follow sentences)."""
    if request.analysis_mode not in MODES:
        raise ValueError(f"analysis_mode must be one of {', '.join(MODES)}")
    index = _Index(graph, sentences, request.prompt)
    index.rated = rated
    by_sentences = request.protect_sentence_boundaries and bool(sentences)
    if by_sentences:
        candidates = _sentence_windows(sentences, request, index.duration_ms)
    else:
        candidates = _grid_windows(index, sentences, request)
    signals = SIGNALS_OF_MODE[request.analysis_mode]
    for c in candidates:
        _score(c, sentences, index, signals)
    return index, candidates, by_sentences


def detect(sentences: Sequence[Sentence], graph: dict[str, Any], request: DetectionRequest,
           rated: dict[tuple[int, int], int] | None = None) -> Detection:
    """Up to ``requested_clip_count`` non-overlapping clips, best first, and the shortfall's reason.

    ``rated``: the provider's relevance to the prompt (0-100) of the windows it was shown
    (``shortlist``), by ``(start_ms, end_ms)``; it replaces the offline matching of the prompt's
    terms (``rating_points``), and windows it did not rate get no prompt points."""
    signals = SIGNALS_OF_MODE[request.analysis_mode] if request.analysis_mode in MODES else ()
    used = [*signals, *((("prompt:provider" if rated is not None else "prompt:terms"),) if request.prompt else ())]
    sentences = list(sentences)
    if "transcript" in signals and not sentences and request.analysis_mode == "transcript":
        return Detection([], "the video has no transcript, which analysis_mode transcript reads: upload it with "
                             "captions, or use visual, audio or multimodal", used)
    index, candidates, by_sentences = _scored(sentences, graph, request, rated)
    duration = index.duration_ms
    chosen = _choose(candidates, request)
    clips = []
    for c in chosen:
        title, thumbnail_title = _title(c, sentences, index)
        clips.append({"id": f"clip_{c.start_ms}_{c.end_ms}", "title": title, "thumbnail_title": thumbnail_title,
                      "start_ms": c.start_ms, "end_ms": c.end_ms, "duration_ms": c.duration_ms,
                      "viral_score": viral_score(c.score), "rationale": _rationale(c, sentences, index)})
    shortfall = None
    if len(clips) < request.requested_clip_count:
        bounds = f"{request.min_ms / 1000:g}-{request.max_ms / 1000:g} s" if request.min_ms != request.max_ms \
            else f"{request.max_ms / 1000:g} s"
        how = "starting and ending on sentence boundaries" if by_sentences else "in the video"
        shortfall = (f"the video ({duration / 1000:.0f} s) gives {len(clips)} non-overlapping clip"
                     f"{'s' if len(clips) != 1 else ''} of {bounds} {how}; {request.requested_clip_count} were asked")
        if not clips and by_sentences and request.min_ms == request.max_ms:
            shortfall += " (a duration margin or allow_shorter_duration widens the choice)"
    return Detection(clips, shortfall, used)


# ------------------------------------------------------------------------------------ the prompt, by a provider

MAX_RATED = 40  # windows a provider rates for a prompt: the best offline ones (a bounded prompt, a bounded answer)
EXCERPT_CHARS = 600  # of each window's transcript in that prompt
RATING_POINTS = 0.8  # points per point of the provider's relevance (0-100): up to 80, as the offline matching

RATING_SYSTEM = """You choose short clips of a video for a request.
For each candidate clip (its id, its time range and what is said in it), rate from 0 to 100 how well
it answers the request: 100 when it is exactly what is asked, 0 when it has nothing to do with it.
Judge only from the text given. Answer with one JSON object and nothing else:
{"ratings": [{"id": "<candidate id>", "relevance": <integer 0-100>}, ...]}, one entry per candidate."""


def shortlist(sentences: Sequence[Sentence], graph: dict[str, Any], request: DetectionRequest,
              size: int = MAX_RATED) -> list[dict[str, Any]]:
    """The windows a provider rates: the best window of each start by the offline score (the
    prompt's terms included), the ``size`` best, each with an id and an excerpt of its transcript."""
    sentences = list(sentences)
    _, candidates, _ = _scored(sentences, graph, request, None)
    per_start: dict[int, Candidate] = {}
    for c in candidates:
        if c.start_ms not in per_start or c.score > per_start[c.start_ms].score:
            per_start[c.start_ms] = c
    best = sorted(per_start.values(), key=lambda c: (-c.score, c.start_ms))[:size]
    out = []
    for k, c in enumerate(best):
        said = (" ".join(s.text for s in sentences[c.first:c.last + 1])
                if c.first is not None and c.last is not None else "")
        out.append({"id": f"w{k + 1}", "start_ms": c.start_ms, "end_ms": c.end_ms, "text": _short(said, EXCERPT_CHARS)})
    return out


def rating_messages(prompt: str, windows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Chat Completions messages asking a provider to rate ``windows`` for ``prompt``."""
    material = {"request": prompt, "candidates": [
        {"id": w["id"], "from_s": round(w["start_ms"] / 1000, 1), "to_s": round(w["end_ms"] / 1000, 1),
         "text": w["text"]} for w in windows]}
    return [{"role": "system", "content": RATING_SYSTEM},
            {"role": "user", "content": json.dumps(material, ensure_ascii=False)}]


class InvalidRatings(ValueError):
    """A provider's answer that is not the ratings asked for."""


def parse_ratings(answer: str, windows: Sequence[dict[str, Any]]) -> dict[tuple[int, int], int]:
    """The provider's ratings by window range; ``InvalidRatings`` unless the answer is one JSON
    object (one Markdown code fence tolerated) rating known ids with integers 0-100. A window it
    did not rate counts 0."""
    text = answer.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.DOTALL)
    try:
        data = json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        raise InvalidRatings(f"the answer is not JSON ({exc.msg})") from None
    ratings = data.get("ratings") if isinstance(data, dict) else None
    if not isinstance(ratings, list):
        raise InvalidRatings("the answer has no list of ratings")
    by_id = {w["id"]: (w["start_ms"], w["end_ms"]) for w in windows}
    out: dict[tuple[int, int], int] = {}
    for entry in ratings:
        if not isinstance(entry, dict) or entry.get("id") not in by_id:
            raise InvalidRatings(f"a rating names no candidate: {str(entry)[:80]}")
        value = entry.get("relevance")
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100:
            raise InvalidRatings(f"the relevance of {entry['id']} is not an integer from 0 to 100")
        out[by_id[entry["id"]]] = value
    return out
