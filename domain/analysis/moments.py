"""Clip moments: self-contained stretches worth cutting as a short clip.

A candidate starts at a sentence start and ends at a sentence end (never mid-sentence), lasts
``MIN_MS`` to ``MAX_MS`` and stays inside the video. Its GEO score (0-100) rewards what an answer
engine can quote: claims per sentence and their confidence (45), a question answered inside the
clip (15), named entities (10), the main topics (15), a length near ``IDEAL_MS`` (10), and an
opening that stands alone (5; a start such as "and", "but", "ça", "this" depends on what came
before). The best candidates that do not overlap are kept, one per ``MINUTES_PER_MOMENT`` of
video, between 3 and 20.

A candidate holds at most ``MAX_SENTENCES`` sentences. A minute of speech holds about ten (a
quick dialogue of short replies, thirty or so), so the bound never cuts a real clip; it keeps the
number of candidates linear in the number of sentences when captions crowd many sentences into
a short time, where every pair of sentences would otherwise be a candidate (quadratic).
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.analysis.claims import Claim
from domain.analysis.entities import SentenceEntities
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.phrases import PhraseReader, heading
from domain.analysis.text import fold, strip_leading_fillers, words
from domain.analysis.topics import Topic, topics_in
from domain.languages import DEFAULT_LANGUAGE

MIN_MS = 15_000
MAX_MS = 60_000
IDEAL_MS = 35_000
MINUTES_PER_MOMENT = 2
MAX_SENTENCES = 60

@dataclass(slots=True)
class ClipMoment:
    id: str
    title: str
    start_ms: int
    end_ms: int
    geo_score: float
    first_sentence: int
    last_sentence: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "startMs": self.start_ms, "endMs": self.end_ms,
                "geoScore": self.geo_score}


def find_moments(sentences: Sequence[Sentence], claims: Sequence[Claim], facts: Sequence[SentenceEntities],
                 topics: Sequence[Topic], duration_ms: int, limit: int | None = None,
                 language: str | None = DEFAULT_LANGUAGE, reader: PhraseReader | None = None) -> list[ClipMoment]:
    n = len(sentences)
    if not n:
        return []
    claim_conf = [0.0] * n
    for claim in claims:
        claim_conf[claim.sentence] = claim.confidence
    top_words = {w for t in topics[:8] for w in t.words}
    kit = language_of(language)
    # prefix sums make every window's totals O(1)
    pre_claims, pre_conf, pre_ents, pre_topic = [0], [0.0], [0], [0]
    for i, s in enumerate(sentences):
        pre_claims.append(pre_claims[-1] + (1 if claim_conf[i] else 0))
        pre_conf.append(pre_conf[-1] + claim_conf[i])
        pre_ents.append(pre_ents[-1] + len(facts[i].names) + facts[i].dates + facts[i].numbers)
        pre_topic.append(pre_topic[-1] + (1 if top_words.intersection(s.tokens) else 0))

    # (-score, i, j): a heap gives the candidates best first, as a full sort would, but only as
    # many as the selection below looks at.
    scored: list[tuple[float, int, int]] = []
    for i in range(n):
        start = sentences[i].start_ms
        if start < 0 or start >= duration_ms:
            continue
        question_at = i if sentences[i].is_question else -1
        opening = 0 if kit.opens_dependent(strip_leading_fillers(sentences[i].text, language)) else 5
        for j in range(i, min(n, i + MAX_SENTENCES)):
            end = min(sentences[j].end_ms, duration_ms)
            length = end - start
            if length > MAX_MS:
                break
            if sentences[j].is_question and question_at < 0:
                question_at = j
            if length < MIN_MS or sentences[j].is_question:
                continue
            count = j - i + 1
            claim_count = pre_claims[j + 1] - pre_claims[i]
            if not claim_count:
                continue
            mean_conf = (pre_conf[j + 1] - pre_conf[i]) / claim_count
            density = claim_count / count
            answered = question_at >= 0 and pre_claims[j + 1] - pre_claims[question_at] > 0
            score = (45 * min(1.0, density * 1.3) * mean_conf
                     + (15 if answered else 0)
                     + 10 * min(1.0, (pre_ents[j + 1] - pre_ents[i]) / 4)
                     + 15 * (pre_topic[j + 1] - pre_topic[i]) / count
                     + 10 * max(0.0, 1 - abs(length - IDEAL_MS) / IDEAL_MS)
                     + opening)
            scored.append((-round(score, 1), i, j))
    wanted = limit or max(3, min(20, duration_ms // (MINUTES_PER_MOMENT * 60_000)))
    reader = reader or PhraseReader(language)
    background = reader.table(sentences).counts
    heapq.heapify(scored)
    taken: list[tuple[int, int]] = []
    moments: list[ClipMoment] = []
    while scored and len(moments) < wanted:
        negative, i, j = heapq.heappop(scored)
        score = -negative
        if any(not (j < a or i > b) for a, b in taken):
            continue
        taken.append((i, j))
        start, end = sentences[i].start_ms, min(sentences[j].end_ms, duration_ms)
        title = _title(sentences[i:j + 1], reader, background)
        mid = "mom_" + hashlib.sha1(f"{start}|{end}".encode()).hexdigest()[:12]
        moments.append(ClipMoment(mid, title, start, end, score, i, j))
    moments.sort(key=lambda m: m.start_ms)
    return moments


def _title(window: Sequence[Sentence], reader: PhraseReader, background: Counter[tuple[str, ...]]) -> str:
    """The window's question when it names its subject, else its key phrase (see ``topics_in``),
    else the label of its first words that make a title."""
    for s in window:
        if s.is_question and len(words(s.text)) >= 4:
            question = strip_leading_fillers(s.text, reader.kit.code)
            if reader.publishable(question):
                return question
    phrases = topics_in(window, limit=1, reader=reader, background=background)
    if phrases:
        return heading(phrases[0])
    first = strip_leading_fillers(window[0].text, reader.kit.code)
    for size in range(min(6, len(words(first))), 0, -1):
        for start in range(0, len(words(first)) - size + 1):
            candidate = " ".join(words(first)[start:start + size])
            if reader.publishable(candidate):
                return heading(candidate)
    return heading(fold(first)[:60]) or "Clip"
