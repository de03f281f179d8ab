"""Chapters and narrative structure.

Chapters follow the video-site rules: the first starts at 0:00, there are at least three, each
lasts at least ten seconds, starts strictly ascend. ``validate_chapters`` states every broken rule.

Boundaries are chosen at sentence starts where the vocabulary changes most: for each sentence, the
cosine distance between the content words of a window before and a window after it, plus cues that a
new part starts (a discourse marker such as "passons à" / "let's move on", a question, a pause, a
scene change, the end of a silence). The longest chapter is split at its best-scored candidate until
the count is reached, each cut at least ``min_gap`` away from the others and from both ends. The
count follows the boundaries that stand out from the rest of the talk, between a chapter per
``SLOWEST_MS`` and one per ``FASTEST_MS`` (3 to ``MAX_CHAPTERS``); a monologue takes one per
``SLOWEST_MS`` (``is_monologue``). Times are floored to whole seconds, as in a video description;
the minimum gap is kept above 10 s so that flooring never breaks a rule.

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
from domain.analysis.language import language as language_of
from domain.analysis.model import MediaFacts, Sentence
from domain.analysis.phrases import PhraseReader, heading, impersonal, publishable
from domain.analysis.text import fold, labels, norm_token, strip_leading_fillers, words
from domain.languages import DEFAULT_LANGUAGE

MIN_CHAPTER_MS = 10_000
SAFE_GAP_MS = 11_000
# People who chapter a talk or a podcast by hand give a chapter two to five minutes; the count
# follows the boundaries' strength between a chapter per ``SLOWEST_MS`` and one per ``FASTEST_MS``
# (a 25-minute lecture: 5 to 12).
SLOWEST_MS = 300_000
FASTEST_MS = 120_000
MAX_CHAPTERS = 20
SHORT_CHAPTER_MS = 12_000  # the shortest mean chapter a short video's announced parts may ask for
LONGEST_CHAPTER_MS = 420_000  # seven minutes: longer than nine in ten of the chapters people write
# Words compared on each side of a candidate boundary: a minute and a half of speech, or less in
# a short video (a fifth of the typical chapter count's share).
WINDOW_MS = (20_000, 60_000)
# No two boundaries closer than this (a chapter shorter than 40 s is rarely one a person writes).
MIN_GAP_MS = 40_000
BOUNDARY_FEATURES = ("depth", "phrase", "turn", "question", "pause", "speaker", "scene", "silence", "sponsor")
# A boundary's strength: its lexical depth (depths run 0-2) plus what each cue adds. One voice (a
# lecture, a narration): a long pause marks a new part, and a question is mostly one the speaker
# asks inside a part ("Why would light slow down like this?", a puzzle for the viewer), so it
# weighs a little against a boundary, beside the cue phrase a question may open with.
BOUNDARY_WEIGHTS = {"depth": 1.0, "phrase": 0.5, "turn": 0.4, "question": -0.1, "pause": 0.15, "speaker": 0.03,
                    "scene": 0.2, "silence": 0.1, "sponsor": 0.3}
# A conversation: the pauses are those of people taking turns, no sign of a new subject, and a
# host's question opens one as often as not (docs/benchmarks.md: each chosen on the other
# transcripts of its kind, one held out in turn).
CONVERSATION_WEIGHTS = {**BOUNDARY_WEIGHTS, "question": 0.0, "pause": 0.0}
KIND_WEIGHTS = {"monologue": BOUNDARY_WEIGHTS, "dialogue": CONVERSATION_WEIGHTS}  # by ``talk_kind``
TURN_OPENING_SENTENCES = 3
PAUSE_FLOOR_MS = 500  # a pause is measured against the long pauses of the talk, never less than this
WEIGHT_SCALE = 10  # word weights are integers (tenths), so the sliding windows' sums stay exact

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
    low = max(3, round(duration_ms / SLOWEST_MS))
    high = max(low, min(MAX_CHAPTERS, round(duration_ms / FASTEST_MS)))
    return low, high


def build_chapters(sentences: Sequence[Sentence], duration_ms: int, facts: MediaFacts | None = None,
                   language: str | None = DEFAULT_LANGUAGE, reader: PhraseReader | None = None) -> list[Chapter]:
    if duration_ms < 3 * SAFE_GAP_MS or not sentences:
        return []
    reader = reader or PhraseReader(language)
    scores = boundary_scores(sentences, facts, boundary_window_ms(duration_ms), reader=reader)
    return chapters_from_scores(sentences, duration_ms, scores, reader)


def boundary_window_ms(duration_ms: int) -> int:
    """The words compared on each side of a point: ``WINDOW_MS``, a twelfth of a short video."""
    return max(WINDOW_MS[0], min(WINDOW_MS[1], duration_ms // 12))


def chapters_from_scores(sentences: Sequence[Sentence], duration_ms: int, scores: Sequence[float],
                         reader: PhraseReader) -> list[Chapter]:
    """The chapters the boundary strengths ``scores`` give (one per sentence), titled."""
    if duration_ms < 3 * SAFE_GAP_MS or not sentences:
        return []
    low, high = chapter_count_bounds(duration_ms)
    min_gap = max(SAFE_GAP_MS, min(MIN_GAP_MS, duration_ms // (3 * high)))
    # A short video's length allows three chapters; the parts its speaker announces may ask for more
    # ("Next, let's talk about...", "How do you choose...?"), one per ``SHORT_CHAPTER_MS`` at most.
    announced = 0
    if high <= 3:
        announced = 1 + sum(1 for s in sentences[1:] if reader.kit.opens_with_cue(s.text))
        high = max(high, min(announced, duration_ms // SHORT_CHAPTER_MS, MAX_CHAPTERS))

    def fits(t: int, chosen: list[int]) -> bool:
        return t >= min_gap and duration_ms - t >= min_gap and all(abs(t - c) >= min_gap for c in chosen)

    # Strongest first, each at least ``min_gap`` from the others and from both ends.
    ranked = sorted(((scores[i], -i) for i in range(1, len(sentences))), reverse=True)
    picked: list[tuple[float, int]] = []
    chosen_times: list[int] = []
    for score, negative in ranked:
        t = sentences[-negative].start_ms // 1000 * 1000
        if fits(t, chosen_times):
            picked.append((score, t))
            chosen_times.append(t)
        if len(picked) >= high - 1:
            break
    count = low if is_monologue(sentences) else _count_from_strength([p[0] for p in picked], scores, low, high)
    count = max(count, min(announced, high, len(picked) + 1))
    chosen_times = sorted(t for _, t in picked[:count - 1])
    # A chapter longer than ``LONGEST_CHAPTER_MS`` is split at its strongest boundary: the strongest
    # cues of a talk may all lie in one half of it.
    starts_ms = [s.start_ms // 1000 * 1000 for s in sentences]
    while len(chosen_times) < MAX_CHAPTERS - 1:
        bounds = [0, *chosen_times, duration_ms]
        a, b = max(zip(bounds, bounds[1:], strict=False), key=lambda span: span[1] - span[0])
        if b - a <= LONGEST_CHAPTER_MS:
            break
        inside = [(scores[i], -i) for i in range(1, len(sentences))
                  if a + min_gap <= starts_ms[i] <= b - min_gap and fits(starts_ms[i], chosen_times)]
        if not inside:
            break
        chosen_times = sorted([*chosen_times, starts_ms[-max(inside)[1]]])
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
    chapters: list[Chapter] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else duration_ms
        inside = [s.index for s in sentences if start <= s.start_ms // 1000 * 1000 < end]
        first = inside[0] if inside else 0
        last = inside[-1] if inside else first
        chapters.append(Chapter(start, end, "", first, last))
    title_chapters(chapters, sentences, reader)
    return chapters


def is_monologue(sentences: Sequence[Sentence]) -> bool:
    """One voice: the captions name no speaker, or one (a lecture, a narration).

    A monologue's chapter count comes from its length alone (one chapter per ``SLOWEST_MS``, at
    least three, then the split of any chapter over ``LONGEST_CHAPTER_MS``); the strength of its
    boundaries decides only where they fall. A lecturer's transitions stand out from the rest of
    the talk less than a host's announcements do, and counting the boundaries that stand out
    (``_count_from_strength``) gave lectures more chapters than people write: on the development
    set, the count from the length raised the lectures' boundary F1 at +-30 s from 0.531 to 0.550,
    held out item by item (docs/benchmarks.md). A conversation keeps the count its boundaries
    give: there, the length alone lowered it."""
    return len({s.speaker for s in sentences if s.speaker}) <= 1


def talk_kind(sentences: Sequence[Sentence]) -> str:
    """"monologue" (``is_monologue``) or "dialogue": the kinds whose boundaries weigh apart."""
    return "monologue" if is_monologue(sentences) else "dialogue"


def _count_from_strength(picked: Sequence[float], scores: Sequence[float], low: int, high: int) -> int:
    """How many chapters the boundaries support: those standing out from the rest of the talk
    (above the mean score plus ``COUNT_THRESHOLD_SD`` standard deviations), within the duration's
    bounds."""
    values = scores[1:]
    if not values:
        return low
    mean = sum(values) / len(values)
    deviation = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    strong = sum(1 for v in picked if v >= mean + COUNT_THRESHOLD_SD * deviation)
    return max(low, min(high, strong + 1, len(picked) + 1))


COUNT_THRESHOLD_SD = 2.0


def title_chapters(chapters: list[Chapter], sentences: Sequence[Sentence], reader: PhraseReader) -> None:
    """Each chapter's title (see ``chapter_title``), unique across the chapters."""
    tables = [reader.table(sentences[c.first_sentence:c.last_sentence + 1]) if sentences else None
              for c in chapters]
    spread: Counter = Counter()  # in how many chapters each phrase is said
    for table in tables:
        if table is not None:
            spread.update(table.counts.keys())
    used: set[str] = set()  # titles given, folded without spaces, and their words' stems
    for number, (chapter, table) in enumerate(zip(chapters, tables, strict=True)):
        opening = set(reader.table(sentences[chapter.first_sentence:min(
            chapter.last_sentence + 1, chapter.first_sentence + SUBJECT_OPENING_SENTENCES)]).counts) if table else set()
        subject = video_subject_title(sentences[:chapter.last_sentence + 1], reader.kit.code) if number == 0 else None
        if subject is not None and reader.is_fragment(subject):
            subject = None
        chapter.title = subject or chapter_title(chapter, sentences, table, spread, len(chapters), reader, used,
                                                 opening)
        used.add(_title_key(chapter.title, reader))
        used.add(fold(chapter.title).replace(" ", ""))


VIDEO_SUBJECT_SENTENCES = 2  # where a video names its own subject ("Welcome to this video about ...")


def video_subject_title(sentences: Sequence[Sentence], code: str | None) -> str | None:
    """The subject the video names for itself in its first sentences, as a heading, when it makes a
    title ("Welcome to this video about heat pumps" -> "Heat pumps"; ``Language.video_subject``):
    the article's title, and its introduction's."""
    kit = language_of(code)
    for sentence in sentences[:VIDEO_SUBJECT_SENTENCES]:
        subject = kit.video_subject(sentence.text)
        if subject is not None and publishable(heading(subject), code):
            return heading(subject)
    return None


def _title_key(title: str, reader: PhraseReader) -> str:
    """What makes two titles the same: "Post css" and "PostCSS", "Isolée" and "Isolation"."""
    return " ".join(sorted(reader.stem(norm_token(w)) for w in words(title))).replace(" ", "") or fold(title)


def chapter_title(chapter: Chapter, sentences: Sequence[Sentence], table, spread: Counter, chapters: int,
                  reader: PhraseReader, used: set[str], opening: set | frozenset = frozenset()) -> str:
    """The question the chapter opens with, when it names the chapter's subject; else the subject
    its opening announces by name ("Next, let's talk about battery storage"); else the chapter's
    key phrase by tf-idf against the other chapters (frequent here, rare elsewhere, so a word
    common to the whole talk is no title), a phrase weighing twice a word, a phrase made only of
    words frequent in the language ``FREQUENT_WORD_TITLE_WEIGHT`` ("Couple of people"), a phrase
    said in the chapter's opening sentences (``opening``: the subject a speaker announces when a
    part starts) ``OPENING_TITLE_WEIGHT``; its head in the plural when the chapter says the plural
    (``PhraseReader.plural_head``); of two phrases that weigh the same, the one of rarer words in
    the language; always a publishable heading, unique."""
    if table is None:
        return _fallback_title(chapter, sentences, reader, used)
    question = _opening_question(chapter, sentences, table, reader)
    if question and _title_key(question, reader) not in used:
        return question
    announced = _announced_subject(chapter, sentences, table, reader)
    if announced and _title_key(announced, reader) not in used and fold(announced).replace(" ", "") not in used:
        return announced
    ranked = []
    for key, count in table.counts.items():
        tokens = table.tokens[key]
        if not reader.describes(tokens):
            continue
        score = count * math.log(1 + chapters / spread[key]) * PHRASE_TITLE_WEIGHT[len(key)]
        if reader.is_vague(tokens, table.surfaces[key]):
            score *= FREQUENT_WORD_TITLE_WEIGHT
        if key in opening:
            score *= OPENING_TITLE_WEIGHT
        # ties (a short chapter says each phrase once) go to the phrase of the rarer words
        ranked.append((-score, -sum(reader.kit.rarity(t) for t in tokens), key))
    ranked.sort()
    for _, _, key in ranked[:40]:
        title = heading(reader.plural_head(reader.label(table.surfaces[key]), table.surfaces[key]))
        if _title_key(title, reader) not in used and fold(title).replace(" ", "") not in used and (
                reader.publishable(title)) and not reader.is_fragment(title):
            return title
    return _fallback_title(chapter, sentences, reader, used)


PHRASE_TITLE_WEIGHT = {1: 1.0, 2: 2.0, 3: 2.0}
FREQUENT_WORD_TITLE_WEIGHT = 0.6
# The opening of a chapter: its first four sentences (about 10 s of a dialogue, 40 s of a lecture),
# where a speaker names what comes ("let's turn to continuous distributions"); a phrase said there
# weighs half as much again (chosen on the podcasts of the development set, checked on the lectures:
# docs/benchmarks.md).
SUBJECT_OPENING_SENTENCES = 4
OPENING_TITLE_WEIGHT = 1.5
OPENING_SENTENCES = 5


def _opening_question(chapter: Chapter, sentences: Sequence[Sentence], table, reader: PhraseReader) -> str | None:
    """A question among the chapter's first sentences that is a publishable title and names a
    subject: one of the chapter's recurring words, or a word rare in the language said there once
    ("What happens inside a multilayer perceptron?", "What is an abstract group?"); a question put
    to a generic "you" as its heading ("How to choose the right installation")."""
    recurring = {t for key, count in table.counts.items() if count >= 2 for t in table.tokens[key]}
    for sentence in sentences[chapter.first_sentence:min(chapter.last_sentence + 1,
                                                          chapter.first_sentence + OPENING_SENTENCES)]:
        if not sentence.is_question or TAG_QUESTION_RE.search(sentence.text):
            continue
        question = heading(strip_leading_fillers(sentence.text, reader.kit.code))
        if not reader.publishable(question):
            question = impersonal(question, reader.kit.code) or question
        names_subject = any(t in recurring or not reader.kit.is_frequent(t) for t in sentence.tokens)
        if len(words(question)) >= 3 and reader.publishable(question) and names_subject:
            return question
    return None


ANNOUNCING_SENTENCES = 2  # the boundary falls on the announcement, or one sentence off (either way)


def _announced_subject(chapter: Chapter, sentences: Sequence[Sentence], table, reader: PhraseReader) -> str | None:
    """The subject the chapter's first sentences (or the sentence just before it, when the boundary
    could not fall on the announcement: a chapter of a short video is at least 10 s) announce by
    name ("Next, let's talk about battery storage" -> "Battery storage"; ``Language.announced``),
    when it is a publishable heading and the chapter says one of its content words again (not a
    figure of speech: "let's dive into the meat of the lesson")."""
    recurring = {key[0] for key, count in table.counts.items() if len(key) == 1 and count >= 2}
    first = chapter.first_sentence
    own = sentences[first:min(chapter.last_sentence + 1, first + ANNOUNCING_SENTENCES)]
    for sentence in [*own, *sentences[max(0, first - 1):first]]:
        subject = reader.kit.announced(sentence.text)
        if not subject:
            continue
        title = heading(subject)
        if reader.publishable(title) and any(reader.stem(norm_token(w)) in recurring for w in words(title)):
            return title
    return None


TAG_QUESTION_RE = re.compile(
    r"n['’]est-ce pas|\bright\s*\?|\bisn['’]t it|\bdon['’]t you think|\bnicht wahr|\boder\s*\?|\bverdad\s*\?|"
    r"\bno\s*\?|\bvero\s*\?|\bnão é|\bnè\s*\?|\btoch\s*\?|\bhein\s*\?|\bokay\s*\?|\bd['’]accord\s*\?", re.IGNORECASE)


def _fallback_title(chapter: Chapter, sentences: Sequence[Sentence], reader: PhraseReader, used: set[str]) -> str:
    """A chapter with no phrase of its own: the label of its part of the talk and its time."""
    label = labels(reader.kit.code)
    title = f"{label['development'].capitalize()} {format_timestamp(chapter.start_ms)}"
    if chapter.start_ms == 0:
        title = label["introduction"]
    return title


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
