"""Search intents: the queries a viewer would type that this video answers.

Two sources. Questions asked in the video (at least four words, not tag questions like "n'est-ce
pas ?"): relevance 0.55, plus up to 0.3 for the share of its words that are top topics, plus 0.15
when a claim follows within ``ANSWER_WINDOW_MS`` (the question is answered). Then one templated
query per top topic (what / how / why / who, chosen from the evidence about the topic: a
definition, a process, a cause, a person): relevance 0.8 x the topic's relevance.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass

from domain.analysis.claims import CAUSAL_RE, DEFINITION_RE, Claim
from domain.analysis.entities import Entity
from domain.analysis.model import Sentence
from domain.analysis.text import fold, labels, lang_key, strip_leading_fillers, words
from domain.analysis.topics import Topic

ANSWER_WINDOW_MS = 60_000
TAG_QUESTION_RE = re.compile(
    r"^(?:n['’]est-ce pas|vous voyez|tu vois|d['’]accord|non|hein|right|isn['’]t it|you know|okay|ok|see)\s*\?*$",
    re.IGNORECASE)
PROCESS_RE = re.compile(r"\bcomment\b|\bétapes?\b|\bprocessus\b|\bméthode\b|\bhow\b|\bsteps?\b|\bprocess\b|"
                        r"\bfonctionne\b|\bworks?\b", re.IGNORECASE)


@dataclass(slots=True)
class SearchIntent:
    query: str
    relevance: float
    source: str  # "question" (asked in the video) or "topic"
    start_ms: int | None
    answered: bool

    def to_dict(self) -> dict:
        return {"query": self.query, "relevance": self.relevance, "source": self.source, "startMs": self.start_ms,
                "answered": self.answered}


def extract_intents(sentences: Sequence[Sentence], claims: Sequence[Claim], topics: Sequence[Topic],
                    entities: Sequence[Entity], language: str | None, limit: int = 20) -> list[SearchIntent]:
    top_words = {w for t in topics[:10] for w in t.words}
    claim_starts = [c.start_ms for c in claims]
    intents: dict[str, SearchIntent] = {}

    for sentence in sentences:
        if not sentence.is_question:
            continue
        text = strip_leading_fillers(sentence.text)
        if len(words(text)) < 4 or TAG_QUESTION_RE.match(text.strip()):
            continue
        tokens = set(sentence.tokens)
        overlap = len(tokens & top_words) / max(1, len(tokens))
        k = bisect.bisect_right(claim_starts, sentence.start_ms)
        answered = k < len(claim_starts) and claim_starts[k] - sentence.end_ms <= ANSWER_WINDOW_MS
        relevance = round(min(1.0, 0.55 + 0.3 * overlap + (0.15 if answered else 0.0)), 3)
        key = fold(text)
        if key not in intents or intents[key].relevance < relevance:
            intents[key] = SearchIntent(text, relevance, "question", sentence.start_ms, answered)

    label = labels(language)
    folded_claims = [(c, fold(c.text)) for c in claims]
    folded_sentences = [(s, fold(s.text)) for s in sentences]
    speaker_names = {fold(e.name) for e in entities if e.type == "person"}
    for topic in topics[:4]:
        if topic.relevance < 0.3 or (topic.key in speaker_names and len(topic.words) == 1):
            continue
        evidence = [c for c, text in folded_claims if topic.key in text]
        if topic.key in speaker_names:
            template = label["who"]
        elif any(DEFINITION_RE.search(c.text) for c in evidence):
            template = label["what"]
        elif any(CAUSAL_RE.search(c.text) for c in evidence):
            template = label["why"]
        elif any(PROCESS_RE.search(s.text) for s, text in folded_sentences if topic.key in text):
            template = label["how"]
        else:
            template = label["what"]
        query = template.format(t=_with_article(topic, folded_sentences, language))
        key = fold(query)
        if key not in intents:
            intents[key] = SearchIntent(query, round(0.8 * topic.relevance, 3), "topic", topic.first_ms,
                                        bool(evidence))
    ranked = sorted(intents.values(), key=lambda i: (-i.relevance, i.start_ms or 0, i.query))
    return ranked[:limit]


ARTICLE_RE = {"fr": r"\b(le|la|les|l|des|du)\s{}\b", "en": r"\b(the)\s{}\b"}
DEFINITE = {"des": "les", "du": "le"}  # "des panneaux" said, "les panneaux" asked about


def _with_article(topic: Topic, folded_sentences: list, language: str | None) -> str:
    """The topic with the definite article the speakers use before it ("la rénovation"; "les panneaux"
    when they say "des panneaux"), when they use one."""
    key = lang_key(language)
    if key not in ARTICLE_RE or topic.name[:1].isupper():
        return topic.name
    pattern = re.compile(ARTICLE_RE[key].format(re.escape(topic.key)))
    seen: dict[str, int] = {}
    for _, text in folded_sentences:
        for match in pattern.finditer(text):
            seen[match.group(1)] = seen.get(match.group(1), 0) + 1
    if not seen:
        return topic.name
    definite: dict[str, int] = {}
    for said, count in seen.items():
        definite[DEFINITE.get(said, said)] = definite.get(DEFINITE.get(said, said), 0) + count
    article = max(definite, key=lambda a: (definite[a], a))
    if key == "en":
        return topic.name
    return f"l'{topic.name}" if article == "l" else f"{article} {topic.name}"
