"""Topics: ranked key phrases and entities of the whole transcript.

Candidates are the key phrases of ``domain.analysis.phrases`` (one to three content words, keyed by
their stems). A candidate counts once per sentence. Score = occurrences x weight x (0.5 + spread)
x rarity, where spread is the share of ten equal time slices the candidate appears in (a word
repeated in one minute is less a topic than one present throughout), a phrase weighs more per
occurrence than a word (1.6 for two words, 1.9 for three) and rarity is how uncommon its rarest
word is in the language (a term binds a talk more than a common word). A phrase needs two
occurrences; a word frequent in the language is never a topic alone unless it is a name ("time",
"companies", "allow" are not; "heat equation", "JavaScript" may be). A word mostly used inside one
recurring phrase is represented by the phrase, and the words of a chosen phrase lose what the phrase
took; a phrase said only where a chosen one that shares a word is said is a piece of one longer term
("phosphate cells" of "lithium iron phosphate cells").
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from domain.analysis.model import Sentence
from domain.analysis.phrases import PhraseReader, publishable
from domain.analysis.text import fold
from domain.languages import DEFAULT_LANGUAGE

SLICES = 10
PHRASE_WEIGHT = {1: 1.0, 2: 1.6, 3: 1.9}


@dataclass(slots=True)
class Topic:
    name: str
    key: str
    relevance: float
    mentions: int
    first_ms: int
    words: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "relevance": self.relevance, "mentions": self.mentions, "firstMs": self.first_ms}


def candidates(text: str, language: str | None = DEFAULT_LANGUAGE) -> Iterable[tuple[tuple[str, ...], str]]:
    """(normalised word tuple, surface form) of every key-phrase candidate of a sentence."""
    for _, surface, tokens in PhraseReader(language).candidates(text):
        yield tokens, surface


@dataclass(slots=True)
class _Tally:
    """What the transcript says of each candidate (keyed by its stems), counted once per sentence."""

    counts: Counter[tuple[str, ...]]
    slices: dict[tuple[str, ...], set[int]]  # the time slices it appears in
    surfaces: dict[tuple[str, ...], Counter[str]]
    main_tokens: dict[tuple[str, ...], tuple[str, ...]]  # its most frequent normalised words
    first: dict[tuple[str, ...], int]  # the start of its first sentence
    said_in: dict[tuple[str, ...], set[int]]  # the sentences that say it (their positions)

    def spread(self, key: tuple[str, ...]) -> float:
        return len(self.slices[key]) / SLICES


def _tally(sentences: Sequence[Sentence], reader: PhraseReader, span: int) -> _Tally:
    counts: Counter[tuple[str, ...]] = Counter()
    slices: dict[tuple[str, ...], set[int]] = defaultdict(set)
    surfaces: dict[tuple[str, ...], Counter[str]] = defaultdict(Counter)
    tokens_of: dict[tuple[str, ...], Counter[tuple[str, ...]]] = defaultdict(Counter)
    first: dict[tuple[str, ...], int] = {}
    said_in: dict[tuple[str, ...], set[int]] = defaultdict(set)
    for position, sentence in enumerate(sentences):
        bucket = min(SLICES - 1, sentence.start_ms * SLICES // span)
        seen: set[tuple[str, ...]] = set()
        for key, surface, tokens in reader.candidates(sentence.text):
            if key in seen:
                continue
            seen.add(key)
            counts[key] += 1
            slices[key].add(bucket)
            surfaces[key][surface] += 1
            tokens_of[key][tokens] += 1
            first.setdefault(key, sentence.start_ms)
            said_in[key].add(position)
    main_tokens = {key: forms.most_common(1)[0][0] for key, forms in tokens_of.items()}
    return _Tally(counts, slices, surfaces, main_tokens, first, said_in)


def _scores(tally: _Tally, reader: PhraseReader) -> dict[tuple[str, ...], float]:
    """The score of every candidate that may be a topic (see the module's text)."""
    counts = tally.counts
    # a word mostly used inside one recurring phrase is represented by that phrase
    absorbed: set[tuple[str, ...]] = set()
    for key, count in counts.items():
        if len(key) > 1 and count >= 2:
            for word in key:
                if (word,) in counts and count * 5 >= counts[(word,)] * 3:
                    absorbed.add((word,))
    scores: dict[tuple[str, ...], float] = {}
    for key, count in counts.items():
        if key in absorbed or count < 2:
            continue
        if not reader.usable(tally.main_tokens[key], tally.surfaces[key]):
            continue
        if not publishable(reader.label(tally.surfaces[key]), reader.kit.code):
            continue
        scores[key] = count * PHRASE_WEIGHT[len(key)] * (0.5 + tally.spread(key)) * reader.rarity(
            tally.main_tokens[key])
    return scores


def _choose(tally: _Tally, scores: dict[tuple[str, ...], float], reader: PhraseReader,
            limit: int) -> list[tuple[str, ...]]:
    """The best-scored candidates that name different topics; the words of a chosen phrase lose
    what the phrase took (``scores`` is lowered in place)."""
    counts = tally.counts
    chosen: list[tuple[str, ...]] = []
    pool = dict(scores)
    heap = [(-score, key) for key, score in pool.items()]
    heapq.heapify(heap)
    while heap and len(chosen) < limit:
        negative, key = heapq.heappop(heap)
        if -negative != pool[key]:
            heapq.heappush(heap, (-pool[key], key))  # lowered since it was queued
            continue
        if scores[key] <= 0 or any(_overlaps(key, c) or _piece_of(key, c, tally) for c in chosen):
            continue
        inside = [c for c in chosen if len(c) == 1 and c[0] in key]
        if inside:
            # a word already chosen: the phrase replaces it when it carries most of its uses
            if any(counts[key] * 3 < counts[c] for c in inside):
                continue
            chosen = [c for c in chosen if c not in inside]
        if len(key) == 1 and any(key[0] in c for c in chosen if len(c) > 1):
            continue
        chosen.append(key)
        if len(key) > 1:
            for word in set(key):
                if (word,) in pool:
                    pool[(word,)] -= counts[key] * (0.5 + tally.spread(key)) * reader.rarity(
                        tally.main_tokens[(word,)])
                    scores[(word,)] = pool[(word,)]
    return chosen


def extract_topics(sentences: Sequence[Sentence], duration_ms: int, limit: int = 15,
                   language: str | None = DEFAULT_LANGUAGE, reader: PhraseReader | None = None) -> list[Topic]:
    if not sentences:
        return []
    reader = reader or PhraseReader(language)
    tally = _tally(sentences, reader, max(duration_ms, sentences[-1].end_ms, 1))
    scores = _scores(tally, reader)
    chosen = _choose(tally, scores, reader, limit)
    chosen.sort(key=lambda k: (-scores[k], k))
    if not chosen:
        return []
    top = max(scores[k] for k in chosen) or 1.0
    topics = []
    for key in chosen:
        words = tally.main_tokens[key]
        topics.append(Topic(reader.label(tally.surfaces[key]), fold(" ".join(words)),
                            round(max(0.05, scores[key] / top), 3), tally.counts[key], tally.first[key], words))
    topics.sort(key=lambda t: (-t.relevance, t.first_ms, t.key))
    return topics


def _piece_of(key: tuple[str, ...], chosen: tuple[str, ...], tally: _Tally) -> bool:
    """A phrase that goes on from the last words of a chosen one, said only where the chosen one is: the
    two are pieces of one longer term ("phosphate cells", "iron phosphate cells" of "lithium iron phosphate
    cells", whose first three words were chosen). One that goes on to the left names a kind of it
    ("partial differential" of "differential equations") and stays."""
    goes_on = any(chosen[-k:] == key[:k] for k in range(1, min(len(key), len(chosen) + 1)))
    return len(key) > 1 and len(chosen) > 1 and goes_on and tally.said_in[key] <= tally.said_in[chosen]


def _overlaps(key: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """A phrase and a word it contains, or two phrases sharing words, name the same topic."""
    if len(key) == 1 or len(other) == 1:
        return False
    a, b = set(key), set(other)
    return bool(a & b) and (a <= b or b <= a)


def topics_in(sentences: Sequence[Sentence], limit: int = 3, exclude: Iterable[str] = (),
              language: str | None = DEFAULT_LANGUAGE, reader: PhraseReader | None = None,
              background: Counter[tuple[str, ...]] | None = None) -> list[str]:
    """Key phrases of a stretch of the transcript (clip moment titles): recurring, rare in the
    language and, given the ``background`` counts of the whole transcript, concentrated here.
    Each is a publishable title on its own."""
    reader = reader or PhraseReader(language)
    excluded = set(exclude)
    table = reader.table(sentences)
    scored = []
    for key, count in table.counts.items():
        surfaces = table.surfaces[key]
        tokens = table.tokens[key]
        if not reader.usable(tokens, surfaces):
            continue
        focus = count / background[key] if background and background.get(key) else 1.0
        scored.append((count * PHRASE_WEIGHT[len(key)] * reader.rarity(tokens) * (0.5 + focus), key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    out: list[str] = []
    used: list[tuple[str, ...]] = []
    for _, key in scored:
        label = reader.label(table.surfaces[key])
        if (fold(label) in excluded or any(set(key) & set(u) for u in used) or not reader.publishable(label)
                or reader.is_fragment(label)):
            continue
        out.append(label)
        used.append(key)
        if len(out) >= limit:
            break
    return out
