"""Factual claims: sentences that state something checkable.

A sentence earns evidence for each factual signal (a number, a date, a named entity, a definition,
a cause, a comparison) and loses some for hedging or opinion. The words that show a definition, a
cause, a comparison, a hedge or a greeting are the language's own (``domain.languages``: each of the
seven says them; a language outside the seven is read with English's). Confidence = 0.3 + evidence, capped
at 0.97; a sentence becomes a claim at ``MIN_CONFIDENCE``. Questions, greetings and sentences under
five words are never claims. ``startMs`` is where the sentence starts, which lies inside the caption
it starts in. The id hashes that time and the folded text: stable across runs and re-analyses.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.entities import SentenceEntities
from domain.analysis.language import Language
from domain.analysis.language import language as language_of
from domain.analysis.model import Sentence
from domain.analysis.text import fold, strip_leading_fillers, words

MIN_CONFIDENCE = 0.5
MAX_CONFIDENCE = 0.97

@dataclass(slots=True)
class Claim:
    id: str
    text: str
    confidence: float
    start_ms: int
    end_ms: int
    speaker: str | None
    sentence: int
    kinds: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "confidence": self.confidence, "startMs": self.start_ms,
                "endMs": self.end_ms, "speaker": self.speaker, "kinds": list(self.kinds)}


def claim_id(start_ms: int, text: str) -> str:
    return "clm_" + hashlib.sha1(f"{start_ms}|{fold(text)}".encode()).hexdigest()[:12]


def evaluate(sentence: Sentence, facts: SentenceEntities, kit: Language) -> tuple[float, list[str]]:
    """Confidence that the sentence is a factual claim (0 when it cannot be one) and its kinds, read with
    the words of ``kit``'s language."""
    text = sentence.text
    count = len(words(text))
    if sentence.is_question or count < 5 or kit.social_re.search(text) or kit.reports_question(text):
        return 0.0, []  # a question, asked or read out ("Adam says what makes..."), states no fact
    evidence = 0.0
    kinds: list[str] = []
    if facts.numbers:
        evidence += 0.25 + 0.05 * min(facts.numbers - 1, 2)
        kinds.append("statistic")
    if facts.dates:
        evidence += 0.2
        kinds.append("date")
    if facts.names:
        evidence += 0.12 + 0.06 * min(len(set(facts.names)) - 1, 2)
        kinds.append("entity")
    if kit.definition_re.search(text):
        evidence += 0.2
        kinds.append("definition")
    if kit.cause_re.search(text):
        evidence += 0.15
        kinds.append("causal")
    if kit.comparison_re.search(text):
        evidence += 0.1
        kinds.append("comparison")
    if not kinds:
        return 0.0, []
    if kit.hedge_re.search(text):
        evidence -= 0.2
    if count > 60:
        evidence -= 0.1
    elif 8 <= count <= 40:
        evidence += 0.05
    confidence = round(min(MAX_CONFIDENCE, max(0.0, 0.3 + evidence)), 2)
    return confidence, kinds


def extract_claims(sentences: Sequence[Sentence], facts: Sequence[SentenceEntities],
                   language: str | None = None) -> list[Claim]:
    kit = language_of(language)
    claims: list[Claim] = []
    for sentence, sentence_facts in zip(sentences, facts, strict=True):
        confidence, kinds = evaluate(sentence, sentence_facts, kit)
        if confidence < MIN_CONFIDENCE:
            continue
        text = strip_leading_fillers(sentence.text, language)
        claims.append(Claim(claim_id(sentence.start_ms, text), text, confidence, sentence.start_ms,
                            sentence.end_ms, sentence.speaker, sentence.index, kinds))
    return claims
