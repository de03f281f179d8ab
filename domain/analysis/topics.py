"""Topics: ranked keywords and key phrases.

Candidates are runs of meaningful words inside a sentence: single words, and phrases of two or three
words whose inner word may be a connector (``énergie de fusion``, ``rule of law``). A phrase counts
when it recurs. Score = occurrences x spread, where spread is the share of ten equal time slices the
candidate appears in (a word repeated in one minute is less a topic than one present throughout);
phrases weigh more per occurrence, and the words of a chosen phrase lose what the phrase took.
Plurals in -s/-x fold into the singular when both occur.
"""

from __future__ import annotations

import heapq
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from domain.analysis.model import Sentence
from domain.analysis.text import ELISION_RE, NUMBER_RE, STOP_ALL, WORD_RE, fold, norm_token

PHRASE_CONNECTORS = frozenset("de du des d of for à".split())
SLICES = 10


@dataclass(slots=True)
class Topic:
    name: str
    key: str
    relevance: float
    mentions: int
    first_ms: int
    words: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"name": self.name, "relevance": self.relevance, "mentions": self.mentions, "firstMs": self.first_ms}


# A verb with its subject pronoun after it (est-il, produira-t-il, peut-on): grammar, not a topic.
INVERSION_RE = re.compile(r"-(?:t-)?(?:il|elle|ils|elles|on|je|tu|nous|vous|ce)$")


def _is_content(token: str) -> bool:
    return (len(token) >= 3 and token not in STOP_ALL and not NUMBER_RE.search(token)
            and not INVERSION_RE.search(token))


def candidates(text: str) -> Iterable[tuple[tuple[str, ...], str]]:
    """(normalised word tuple, surface form) for every single word and phrase candidate of a sentence."""
    raw = WORD_RE.findall(text)
    toks = [norm_token(w) for w in raw]
    content = [_is_content(t) for t in toks]
    n = len(toks)
    for i in range(n):
        if not content[i]:
            continue
        head = ELISION_RE.sub("", raw[i]) or raw[i]
        yield (toks[i],), head
        for length in (2, 3):
            j = i + length
            if j > n or not content[j - 1]:
                continue
            if length == 3 and not content[i + 1] and toks[i + 1] not in PHRASE_CONNECTORS:
                continue
            if length == 2 and not content[i + 1]:
                continue
            yield tuple(toks[i:j]), " ".join([head, *raw[i + 1:j]])


def _singular(counts: Counter) -> dict[str, str]:
    mapping = {}
    for token in counts:
        for suffix in ("s", "x"):
            if token.endswith(suffix) and token[:-1] in counts:
                mapping[token] = token[:-1]
    return mapping


def extract_topics(sentences: Sequence[Sentence], duration_ms: int, limit: int = 15) -> list[Topic]:
    if not sentences:
        return []
    span = max(duration_ms, sentences[-1].end_ms, 1)
    unigram_counts: Counter = Counter()
    for sentence in sentences:
        unigram_counts.update(t for t in sentence.tokens)
    fold_map = _singular(unigram_counts)

    counts: Counter = Counter()
    slices: dict[tuple[str, ...], set[int]] = defaultdict(set)
    surfaces: dict[tuple[str, ...], Counter] = defaultdict(Counter)
    first: dict[tuple[str, ...], int] = {}
    for sentence in sentences:
        bucket = min(SLICES - 1, sentence.start_ms * SLICES // span)
        seen: set[tuple[str, ...]] = set()
        for key, surface in candidates(sentence.text):
            if fold_map:
                key = tuple(map(fold_map.get, key, key))
            if key in seen:
                continue
            seen.add(key)
            counts[key] += 1
            slices[key].add(bucket)
            surfaces[key][surface] += 1
            first.setdefault(key, sentence.start_ms)

    # a word mostly used inside one recurring phrase is represented by that phrase
    absorbed: set[tuple[str, ...]] = set()
    for key, count in counts.items():
        if len(key) > 1 and count >= 2:
            for word in key:
                if (word,) in counts and count * 5 >= counts[(word,)] * 3:
                    absorbed.add((word,))
    recurring = sum(1 for key, count in counts.items() if len(key) == 1 and count >= 2)
    scores: dict[tuple[str, ...], float] = {}
    for key, count in counts.items():
        if key in absorbed or (count < 2 and (len(key) > 1 or recurring >= limit)):
            continue
        spread = len(slices[key]) / SLICES
        weight = 1.0 if len(key) == 1 else 1.6 + 0.3 * (len(key) - 2)
        scores[key] = count * weight * (0.5 + spread)

    chosen: list[tuple[str, ...]] = []
    pool = dict(scores)
    heap = [(-score, key) for key, score in pool.items()]
    heapq.heapify(heap)
    while heap and len(chosen) < limit:
        negative, key = heapq.heappop(heap)
        if -negative != pool[key]:
            heapq.heappush(heap, (-pool[key], key))  # lowered since it was queued
            continue
        if scores[key] <= 0 or any(_overlaps(key, c) for c in chosen):
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
                    pool[(word,)] -= counts[key] * (0.5 + len(slices[key]) / SLICES)
                    scores[(word,)] = pool[(word,)]
    chosen.sort(key=lambda k: (-scores[k], k))
    if not chosen:
        return []
    top = max(scores[k] for k in chosen) or 1.0
    topics = []
    for key in chosen:
        surface = _display(surfaces[key])
        topics.append(Topic(surface, fold(" ".join(key)), round(max(0.05, scores[key] / top), 3), counts[key],
                            first[key], key))
    topics.sort(key=lambda t: (-t.relevance, t.first_ms, t.key))
    return topics


def _overlaps(key: tuple[str, ...], other: tuple[str, ...]) -> bool:
    """A phrase and a word it contains, or two phrases sharing words, name the same topic."""
    a, b = set(key) - PHRASE_CONNECTORS, set(other) - PHRASE_CONNECTORS
    if len(key) == 1 or len(other) == 1:
        return False
    return bool(a & b) and (a <= b or b <= a)


def _display(surfaces: Counter) -> str:
    """The most frequent surface form, word by word: a word keeps its capitals when it always has
    them (a name: Cadarache) or is a short acronym always in capitals (ITER); the others are
    lowercase. So "construit à Cadarache" and "organisation ITER" keep their names."""
    form, _ = max(surfaces.items(), key=lambda item: (item[1], item[0]))
    columns = list(zip(*(s.split(" ") for s in surfaces), strict=True))  # a key's forms: as many words
    shown = []
    for word, column in zip(form.split(" "), columns, strict=True):
        if all(w[:1].isupper() for w in column) and not all(w.isupper() for w in column):
            shown.append(word)
        elif all(w.isupper() for w in column) and len(word) <= 6:
            shown.append(word)
        else:
            shown.append(word.lower())
    return " ".join(shown)


def topics_in(sentences: Sequence[Sentence], limit: int = 3, exclude: Iterable[str] = ()) -> list[str]:
    """Key phrases of a stretch of the transcript (chapter and moment titles): local, recurring first."""
    excluded = set(exclude)
    counts: Counter = Counter()
    surfaces: dict[tuple[str, ...], Counter] = defaultdict(Counter)
    for sentence in sentences:
        for key, surface in candidates(sentence.text):
            counts[key] += 1
            surfaces[key][surface] += 1
    scored = []
    for key, count in counts.items():
        weight = 1.0 if len(key) == 1 else 1.7
        scored.append((count * weight + (0.01 * len(key)), key))
    scored.sort(key=lambda item: (-item[0], item[1]))
    out: list[str] = []
    used: list[tuple[str, ...]] = []
    for _, key in scored:
        label = _display(surfaces[key])
        if fold(label) in excluded or any(set(key) & set(u) for u in used):
            continue
        out.append(label)
        used.append(key)
        if len(out) >= limit:
            break
    return out
