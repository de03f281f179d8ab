"""Where the chapters of a talk fall.

Boundaries are chosen at sentence starts where the vocabulary changes most: for each sentence, the
cosine distance between the content words of a window before and a window after it, plus cues that a
new part starts (a discourse marker such as "passons à" / "let's move on", a question, a pause, a
scene change, the end of a silence), weighed per kind of talk (``KIND_WEIGHTS``). The strongest are
taken first, each at least ``min_gap`` from the others and from both ends; how many follows the
talk's length and the boundaries that stand out (``CountRule``), then any chapter longer than the
rule's ``longest_ms`` is split at its strongest boundary. Times are floored to whole seconds, as in a
video description; the minimum gap is kept above 10 s so that flooring never breaks a rule.

The video-site rules are in ``chapters``, the titles in ``titles``.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from domain.analysis.chapters import Chapter
from domain.analysis.model import MediaFacts, Sentence
from domain.analysis.phrases import PhraseReader
from domain.analysis.titles import title_chapters
from domain.languages import DEFAULT_LANGUAGE

SAFE_GAP_MS = 11_000
# No video gets more than a chapter per ``FASTEST_MS`` (``chapter_count_bounds``).
FASTEST_MS = 120_000
MAX_CHAPTERS = 20
SHORT_CHAPTER_MS = 12_000  # the shortest mean chapter a short video's announced parts may ask for
# Words compared on each side of a candidate boundary: a minute and a half of speech, or less in
# a short video (a fifth of the typical chapter count's share).
WINDOW_MS = (20_000, 60_000)
# No two boundaries closer than this (a chapter shorter than 40 s is rarely one a person writes).
MIN_GAP_MS = 40_000
BOUNDARY_FEATURES = ("depth", "phrase", "turn", "question", "pause", "speaker", "scene", "silence", "sponsor")
# A boundary's strength: its lexical depth (depths run 0-2) plus what each cue adds. One voice (a
# lecture, a narration): a long pause marks a new part, and a question is mostly one the speaker
# asks inside a part ("Why would light slow down like this?", a puzzle for the viewer), so it
# weighs a little against a boundary, beside the cue phrase a question may open with. The weights
# were searched on the development set's 40 transcripts, five folds held out in turn
# (``python -m tests.benchmarks fit-boundaries --folds``; docs/benchmarks.md): these are the ones the
# search chose on all 40 (the scene change and the silence, which captions cannot show, stay as set;
# re-run since sentences are no longer cut mid-phrase, its greedy path ends on others that score lower
# by its own measure, so these stay).
BOUNDARY_WEIGHTS = {"depth": 1.0, "phrase": 0.4, "turn": 0.6, "question": -0.1, "pause": 0.3, "speaker": 0.03,
                    "scene": 0.2, "silence": 0.1, "sponsor": 0.1}
# A conversation: the pauses are those of people taking turns, no sign of a new subject, and a
# host's question opens one as often as not (the same search kept both at 0).
CONVERSATION_WEIGHTS = {**BOUNDARY_WEIGHTS, "question": 0.0, "pause": 0.0}
KIND_WEIGHTS = {"monologue": BOUNDARY_WEIGHTS, "dialogue": CONVERSATION_WEIGHTS}  # by ``talk_kind``
TURN_OPENING_SENTENCES = 3
PAUSE_FLOOR_MS = 500  # a pause is measured against the long pauses of the talk, never less than this
WEIGHT_SCALE = 10  # word weights are integers (tenths), so the sliding windows' sums stay exact


class _Windows:
    """Weighted word counts of the sentences before and after a point, with their dot product and
    squared norms kept up to date word by word, so the cosine at each point costs the words that
    moved rather than the windows' whole vocabulary (integer weights: the same cosine exactly)."""

    def __init__(self) -> None:
        self.sides: dict[str, dict[str, int]] = {"before": {}, "after": {}}
        self.squares = {"before": 0, "after": 0}
        self.dot = 0

    def add(self, side: str, bag: dict[str, int]) -> None:
        counts = self.sides[side]
        other = self.sides["after" if side == "before" else "before"]
        for token, weight in bag.items():
            count = counts.get(token, 0)
            counts[token] = count + weight
            self.squares[side] += 2 * count * weight + weight * weight
            self.dot += weight * other.get(token, 0)

    def remove(self, side: str, bag: dict[str, int]) -> None:
        """Words that leave a window are dropped from its counts (kept at zero, every step would
        cost the vocabulary of the whole transcript)."""
        counts = self.sides[side]
        other = self.sides["after" if side == "before" else "before"]
        for token, weight in bag.items():
            count = counts[token]
            if count > weight:
                counts[token] = count - weight
            else:
                del counts[token]
            self.squares[side] -= 2 * count * weight - weight * weight
            self.dot -= weight * other.get(token, 0)

    def cosine(self) -> float:
        if not self.sides["before"] or not self.sides["after"]:
            return 0.0
        norm = math.sqrt(self.squares["before"]) * math.sqrt(self.squares["after"])
        return self.dot / norm if norm else 0.0


def _near(sorted_times: Sequence[int], t: int, within: int) -> bool:
    k = bisect.bisect_left(sorted_times, t - within)
    return k < len(sorted_times) and sorted_times[k] <= t + within


def word_bags(sentences: Sequence[Sentence], reader: PhraseReader) -> list[dict[str, int]]:
    """Each sentence's content words as stems weighted by their rarity in the language (tenths)."""
    weights: dict[str, int] = {}
    bags = []
    for sentence in sentences:
        bag: dict[str, int] = {}
        for token in sentence.tokens:
            stem = reader.stem(token)
            weight = weights.get(token)
            if weight is None:
                weight = weights[token] = max(1, round(reader.kit.rarity(token) * WEIGHT_SCALE))
            bag[stem] = bag.get(stem, 0) + weight
        bags.append(bag)
    return bags


def cohesion(sentences: Sequence[Sentence], bags: Sequence[dict[str, int]], window_ms: int) -> list[float]:
    """For each sentence start, the cosine between the weighted words said in the ``window_ms``
    before it and in the ``window_ms`` from it (index 0: 1.0). The windows slide: each sentence
    enters and leaves each of them once, so the pass is linear in the number of sentences."""
    n = len(sentences)
    values = [1.0] * n
    windows = _Windows()
    before_from = 0  # first sentence in the before-window
    after_to = 0  # first sentence past the after-window
    for i in range(1, n):
        t = sentences[i].start_ms
        windows.remove("after", bags[i - 1]) if i > 1 else None
        windows.add("before", bags[i - 1])
        if i == 1:
            after_to = 1
        while after_to < n and sentences[after_to].start_ms < t + window_ms:
            windows.add("after", bags[after_to])
            after_to += 1
        if after_to <= i:  # the after-window always holds the sentence that opens it
            windows.add("after", bags[i])
            after_to = i + 1
        while before_from < i and sentences[before_from].start_ms < t - window_ms:
            windows.remove("before", bags[before_from])
            before_from += 1
        values[i] = windows.cosine()
    return values


def depth_scores(times: Sequence[int], values: Sequence[float], window_ms: int) -> list[float]:
    """How deep each point's cohesion lies below the highest cohesion within ``window_ms`` on each
    side (TextTiling's depth): a valley between two cohesive stretches is a change of subject,
    a low point in a stretch that is low everywhere is not. Sliding maxima keep it linear."""
    n = len(values)
    left = _sliding_max(times, values, window_ms, forward=True)
    right = _sliding_max(times, values, window_ms, forward=False)
    return [0.0] + [max(0.0, left[i] - values[i]) + max(0.0, right[i] - values[i]) for i in range(1, n)]


def _sliding_max(times: Sequence[int], values: Sequence[float], window_ms: int, forward: bool) -> list[float]:
    n = len(values)
    order = range(1, n) if forward else range(n - 1, 0, -1)
    out = [0.0] * n
    queue: list[int] = []  # indices of decreasing values (a monotonic deque, as a list with a head)
    head = 0
    for i in order:
        while len(queue) > head and values[queue[-1]] <= values[i]:
            queue.pop()
        queue.append(i)
        while abs(times[queue[head]] - times[i]) > window_ms:
            head += 1
        out[i] = values[queue[head]]
    return out


def _smooth(values: Sequence[float]) -> list[float]:
    """Each value averaged with its two neighbours: one odd sentence does not make a valley."""
    n = len(values)
    if n < 3:
        return list(values)
    out = list(values)
    for i in range(1, n - 1):
        out[i] = (values[i - 1] + 2 * values[i] + values[i + 1]) / 4
    return out


def lexical_depth(sentences: Sequence[Sentence], bags: Sequence[dict[str, int]], window_ms: int) -> list[float]:
    """The depth of the lexical valley at each sentence start: the ``cohesion`` of ``window_ms`` on
    each side, smoothed over neighbours, then its ``depth_scores``. Within ``window_ms`` of either
    end, where one side holds fewer words than the window (a cosine of fewer words is lower by
    chance), the depth is scaled by the share of the window said on that side."""
    times = [s.start_ms for s in sentences]
    depth = depth_scores(times, _smooth(cohesion(sentences, bags, window_ms)), window_ms)
    end = sentences[-1].end_ms
    return [d * min(1.0, (t - times[0]) / window_ms, (end - t) / window_ms) for d, t in zip(depth, times, strict=True)]


def boundary_features(sentences: Sequence[Sentence], facts: MediaFacts | None, window_ms: int,
                      language: str | None = DEFAULT_LANGUAGE,
                      reader: PhraseReader | None = None) -> dict[str, list[float]]:
    """What may mark a new chapter at each sentence start, one column per ``BOUNDARY_FEATURES``
    name (index 0 is never a boundary: all zero there):

    - ``depth``: the depth of the lexical valley there (``lexical_depth``, ``window_ms`` on each side);
    - ``phrase``: a cue phrase opens the sentence ("next we have", "let's talk about", "passons à");
    - ``turn``: a cue phrase in the first sentences of a speaker's turn, given to the turn's start
      (a host who says "yeah, super cool. So let's look to the future..." opens the part with the turn);
    - ``question``: the sentence is a question;
    - ``pause``: the pause before it relative to the transcript's long pauses (its 95th percentile
      gap), at most 2x;
    - ``speaker``: a change of speaker; ``scene``, ``silence``: a scene change or the end of a silence
      within 1.5 s; ``sponsor``: the start or the end of a sponsor read.
    """
    reader = reader or PhraseReader(language)
    kit = reader.kit
    n = len(sentences)
    columns = {name: [0.0] * n for name in BOUNDARY_FEATURES}
    if n < 2:
        return columns
    depth = lexical_depth(sentences, word_bags(sentences, reader), window_ms)
    scene_times = sorted(c.time_ms for c in facts.scene_changes) if facts else []
    silence_ends = sorted(r.end_ms for r in facts.silences) if facts else []
    cue = [kit.opens_with_cue(s.text) for s in sentences]
    sponsor = [bool(kit.sponsor_re.search(s.text)) for s in sentences]
    gaps = [0] + [max(0, sentences[i].start_ms - sentences[i - 1].end_ms) for i in range(1, n)]
    long_pause = max(PAUSE_FLOOR_MS, sorted(gaps)[min(n - 1, n * 95 // 100)])
    for i in range(1, n):
        sentence, previous = sentences[i], sentences[i - 1]
        columns["depth"][i] = depth[i]
        columns["phrase"][i] = float(cue[i])
        columns["question"][i] = float(sentence.is_question)
        columns["pause"][i] = min(2.0, gaps[i] / long_pause)
        columns["scene"][i] = float(_near(scene_times, sentence.start_ms, 1500))
        columns["silence"][i] = float(_near(silence_ends, sentence.start_ms, 1500))
        columns["sponsor"][i] = float(sponsor[i] != sponsor[i - 1])
        if sentence.speaker != previous.speaker:
            columns["speaker"][i] = 1.0
            opening = sentences[i + 1:min(n, i + TURN_OPENING_SENTENCES)]
            if sentence.speaker is not None and any(cue[i + 1:min(n, i + TURN_OPENING_SENTENCES)]) and (
                    all(s.speaker == sentence.speaker for s in opening)):
                columns["turn"][i] = 1.0
    return columns


def boundary_scores(sentences: Sequence[Sentence], facts: MediaFacts | None, window_ms: int,
                    language: str | None = DEFAULT_LANGUAGE, reader: PhraseReader | None = None,
                    weights: dict[str, float] | None = None) -> list[float]:
    """Strength of a new chapter at each sentence start (index 0 is never a boundary): the
    weighted sum of its ``boundary_features``, with ``weights`` when given, else those of the
    kind of talk (``BOUNDARY_WEIGHTS`` for one voice, ``CONVERSATION_WEIGHTS`` for several)."""
    if weights is None:
        weights = KIND_WEIGHTS[talk_kind(sentences)]
    columns = boundary_features(sentences, facts, window_ms, language, reader)
    scores = [0.0] * len(sentences)
    for name, weight in weights.items():
        if weight:
            column = columns[name]
            for i in range(1, len(sentences)):
                scores[i] += weight * column[i]
    return scores


def chapter_count_bounds(duration_ms: int) -> tuple[int, int]:
    """The fewest and the most chapters a video of ``duration_ms`` may get: three (none under
    ``3 * SAFE_GAP_MS``), and one per ``FASTEST_MS`` at most (``MAX_CHAPTERS``)."""
    high = max(3, min(MAX_CHAPTERS, round(duration_ms / FASTEST_MS)))
    return 3, high


@dataclass(frozen=True, slots=True)
class CountRule:
    """How many chapters a talk gets, from its length and from its content.

    ``at_15_min * (minutes / 15) ** exponent`` chapters are expected from the length alone (people
    give a long talk fewer chapters per minute than a short one); the content's own count is one more
    than the boundaries standing out from the rest of the talk (strength above the mean plus
    ``threshold_sd`` standard deviations: a host who announces fourteen subjects); the count is the
    geometric mean of the two, the content's weighing ``monologue_share`` in a talk of one voice and
    ``dialogue_share`` in a conversation, within ``chapter_count_bounds``. Then any chapter longer than
    ``longest_ms`` is split at its strongest boundary.

    Every value was searched on the development set's 40 transcripts, five folds held out in turn
    (docs/benchmarks.md); these are the values the search chose on all 40 (and still the best it has
    found since, see ``BOUNDARY_WEIGHTS``): a talk of one voice takes
    its count from its length alone (6 chapters at 15 minutes, 7 at 30, 10 at 60), a conversation from
    its boundaries alone (the length bounds it: at least 3, at most one per 2 minutes)."""

    at_15_min: float = 5.5
    exponent: float = 0.4
    monologue_share: float = 0.0
    dialogue_share: float = 1.0
    threshold_sd: float = 2.0
    longest_ms: int = 420_000

    def count(self, duration_ms: int, strong: int, kind: str) -> int:
        expected = max(1.0, self.at_15_min * (duration_ms / 900_000) ** self.exponent)
        share = self.monologue_share if kind == "monologue" else self.dialogue_share
        low, high = chapter_count_bounds(duration_ms)
        count: int = round(expected ** (1 - share) * max(1, strong) ** share)
        return max(low, min(high, count))


COUNT_RULE = CountRule()


def build_chapters(sentences: Sequence[Sentence], duration_ms: int, facts: MediaFacts | None = None,
                   language: str | None = DEFAULT_LANGUAGE, reader: PhraseReader | None = None) -> list[Chapter]:
    """The chapters of a talk, placed (``place_chapters``) and titled (``titles.title_chapters``)."""
    if duration_ms < 3 * SAFE_GAP_MS or not sentences:
        return []
    reader = reader or PhraseReader(language)
    scores = boundary_scores(sentences, facts, boundary_window_ms(duration_ms), reader=reader)
    return chapters_from_scores(sentences, duration_ms, scores, reader)


def boundary_window_ms(duration_ms: int) -> int:
    """The words compared on each side of a point: ``WINDOW_MS``, a twelfth of a short video."""
    return max(WINDOW_MS[0], min(WINDOW_MS[1], duration_ms // 12))


def chapters_from_scores(sentences: Sequence[Sentence], duration_ms: int, scores: Sequence[float],
                         reader: PhraseReader, rule: CountRule = COUNT_RULE) -> list[Chapter]:
    """The chapters the boundary strengths ``scores`` give (one per sentence), titled."""
    chapters = place_chapters(sentences, duration_ms, scores, reader, rule)
    title_chapters(chapters, sentences, reader)
    return chapters


def place_chapters(sentences: Sequence[Sentence], duration_ms: int, scores: Sequence[float],
                   reader: PhraseReader, rule: CountRule = COUNT_RULE) -> list[Chapter]:
    """Where the chapters fall, untitled: the strongest boundaries first, at least ``min_gap`` from
    the others and from both ends, as many as ``rule`` counts, then the split of any chapter longer
    than ``rule.longest_ms``."""
    if duration_ms < 3 * SAFE_GAP_MS or not sentences:
        return []
    low, high = chapter_count_bounds(duration_ms)
    min_gap = max(SAFE_GAP_MS, min(MIN_GAP_MS, duration_ms // (3 * high)))
    # A short video's length allows three chapters; the parts its speaker announces may ask for more
    # ("Next, let's talk about...", "How do you choose...?"), one per ``SHORT_CHAPTER_MS`` at most.
    announced = 0
    short = high <= 3
    if short:
        announced = 1 + sum(1 for i in range(1, len(sentences)) if reader.kit.opens_with_cue(sentences[i].text)
                            and _announcing(sentences, i, reader) == i)  # "Finally, how...? First, ...": one part
        high = max(high, min(announced, duration_ms // SHORT_CHAPTER_MS, MAX_CHAPTERS))

    def fits(t: int, chosen: list[int]) -> bool:
        return t >= min_gap and duration_ms - t >= min_gap and all(abs(t - c) >= min_gap for c in chosen)

    ranked = sorted(((scores[i], -i) for i in range(1, len(sentences))), reverse=True)
    picked: list[tuple[float, int]] = []
    chosen_times: list[int] = []
    for score, negative in ranked:
        t = sentences[_announcing(sentences, -negative, reader) if short else -negative].start_ms // 1000 * 1000
        if fits(t, chosen_times):
            picked.append((score, t))
            chosen_times.append(t)
        if len(picked) >= high - 1:
            break
    strong = _standing_out([p[0] for p in picked], scores, rule.threshold_sd) + 1
    count = min(rule.count(duration_ms, strong, talk_kind(sentences)), len(picked) + 1)
    count = max(count, min(announced, high, len(picked) + 1))
    chosen_times = _split_longest(sorted(t for _, t in picked[:count - 1]), sentences, duration_ms, scores,
                                  rule.longest_ms, min_gap, fits)
    if len(chosen_times) < 2:
        # too few sentences to cut on: evenly spaced cuts, at a sentence start when one is near
        starts = [s.start_ms // 1000 * 1000 for s in sentences]
        for k in range(1, 3):
            ideal = duration_ms * k // 3 // 1000 * 1000
            near = min(starts, key=lambda t: abs(t - ideal))
            t = near if fits(near, chosen_times) and abs(near - ideal) < min_gap else ideal
            if fits(t, chosen_times):
                chosen_times.append(t)
        chosen_times = sorted(chosen_times[:2])
    starts = [0, *chosen_times]
    floored = [s.start_ms // 1000 * 1000 for s in sentences]
    chapters: list[Chapter] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else duration_ms
        a, b = bisect.bisect_left(floored, start), bisect.bisect_left(floored, end)
        first = sentences[a].index if a < b else 0
        last = sentences[b - 1].index if a < b else first
        chapters.append(Chapter(start, end, "", first, last))
    return chapters


def _announcing(sentences: Sequence[Sentence], i: int, reader: PhraseReader) -> int:
    """Where the part that a boundary at sentence ``i`` opens begins: one sentence earlier when both open
    with a cue and the one before asks the part's question or announces its subject ("Finally, how do
    you choose the right battery? First, measure..."): the second opens the first step of the answer.
    Read in a short video, whose parts are its announcements; in the development set's long talks the
    same move left the figures in fold as they were and lowered them out of fold (F1 +-30 s 0.501 ->
    0.489: the weights chosen on four folds moved), so their boundaries stay where their scores put them."""
    if i > 1 and reader.kit.opens_with_cue(sentences[i].text):
        before = sentences[i - 1]
        if reader.kit.opens_with_cue(before.text) and (before.is_question or reader.kit.announced(before.text)):
            return i - 1
    return i


def _split_longest(chosen: list[int], sentences: Sequence[Sentence], duration_ms: int, scores: Sequence[float],
                   longest_ms: int, min_gap: int, fits: Callable[[int, list[int]], bool]) -> list[int]:
    """A chapter longer than ``longest_ms`` is split at its strongest boundary: the strongest cues of
    a talk may all lie in one half of it."""
    starts_ms = [s.start_ms // 1000 * 1000 for s in sentences]
    while len(chosen) < MAX_CHAPTERS - 1:
        bounds = [0, *chosen, duration_ms]
        a, b = max(zip(bounds, bounds[1:], strict=False), key=lambda span: span[1] - span[0])
        if b - a <= longest_ms:
            break
        first, last = bisect.bisect_left(starts_ms, a + min_gap), bisect.bisect_right(starts_ms, b - min_gap)
        inside = [(scores[i], -i) for i in range(max(1, first), last) if fits(starts_ms[i], chosen)]
        if not inside:
            break
        chosen = sorted([*chosen, starts_ms[-max(inside)[1]]])
    return chosen


def is_monologue(sentences: Sequence[Sentence]) -> bool:
    """One voice: the captions name no speaker, or one (a lecture, a narration). Its boundaries weigh
    a pause and a question apart from a conversation's (``KIND_WEIGHTS``), and its count takes the
    content's share of a monologue (``CountRule``)."""
    return len({s.speaker for s in sentences if s.speaker}) <= 1


def talk_kind(sentences: Sequence[Sentence]) -> str:
    """"monologue" (``is_monologue``) or "dialogue": the kinds whose boundaries weigh apart."""
    return "monologue" if is_monologue(sentences) else "dialogue"


def _standing_out(picked: Sequence[float], scores: Sequence[float], threshold_sd: float) -> int:
    """How many of the ``picked`` boundaries stand out from the rest of the talk: strength above the
    mean plus ``threshold_sd`` standard deviations."""
    values = scores[1:]
    if not values:
        return 0
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    return sum(1 for v in picked if v >= mean + threshold_sd * deviation)
