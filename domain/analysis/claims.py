"""Factual claims: sentences that state something checkable.

A sentence earns evidence for each factual signal (a number, a date, a named entity, a definition,
a cause, a comparison) and loses some for hedging or opinion. Confidence = 0.3 + evidence, capped
at 0.97; a sentence becomes a claim at ``MIN_CONFIDENCE``. Questions, greetings and sentences under
five words are never claims. ``startMs`` is where the sentence starts, which lies inside the caption
it starts in. The id hashes that time and the folded text: stable across runs and re-analyses.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from domain.analysis.entities import SentenceEntities
from domain.analysis.model import Sentence
from domain.analysis.text import fold, strip_leading_fillers, words

MIN_CONFIDENCE = 0.5
MAX_CONFIDENCE = 0.97

DEFINITION_RE = re.compile(
    r"\b(?:est|sont|était|étaient)\s+(?:un|une|des|le|la|les|l['’])\b|\bc['’]est\s+(?:un|une|le|la|l['’]|ce qu)|"
    r"\bsignifie\b|\bdésigne\b|\bconsiste\b|\bse définit\b|\bon appelle\b|\bcorrespond à\b|"
    r"\b(?:is|are|was|were)\s+(?:a|an|the)\b|\bmeans\b|\brefers to\b|\bis defined as\b|\bconsists of\b|"
    r"\bis called\b|\bstands for\b",
    re.IGNORECASE)
CAUSAL_RE = re.compile(
    r"\bparce qu|\bcar\b|\bdonc\b|\bentraîne|\bprovoque|\bcause\b|\bà cause d|\bgrâce à|\bpermet(?:tent)? d|"
    r"\ben raison d|\bc['’]est pourquoi|\bconduit à|\baboutit|\bexplique\b|"
    r"\bbecause\b|\btherefore\b|\bleads? to\b|\bcauses?\b|\bresults? in\b|\bdue to\b|\bthanks to\b|"
    r"\benables?\b|\ballows?\b|\bso that\b|\bwhich is why\b|\bas a result\b",
    re.IGNORECASE)
COMPARISON_RE = re.compile(
    r"\bplus de\b|\bmoins de\b|\bplus que\b|\bmoins que\b|\ble plus\b|\bla plus\b|\bles plus\b|\bpremier\b|"
    r"\bpremière\b|\bdeux fois\b|\bmore than\b|\bless than\b|\bfewer than\b|\bthe (?:most|largest|biggest|"
    r"first|highest|lowest|smallest)\b|\btimes (?:more|less|faster|bigger)\b|\bfois plus\b|\bfois moins\b|"
    r"\bdouble\b|\btriple\b|\bmillions?\b|\bmilliards?\b|\bbillions?\b",
    re.IGNORECASE)
HEDGE_RE = re.compile(
    r"\bje pense\b|\bje crois\b|\bpeut-être\b|\bà mon avis\b|\bil me semble\b|\bje trouve\b|\bj['’]ai l['’]"
    r"impression\b|\bsans doute\b|\bprobablement\b|\bI think\b|\bI believe\b|\bmaybe\b|\bperhaps\b|"
    r"\bprobably\b|\bI guess\b|\bin my opinion\b|\bI feel\b|\bkind of\b|\bsort of\b",
    re.IGNORECASE)
SOCIAL_RE = re.compile(
    r"\bbonjour\b|\bbienvenue\b|\bmerci\b|\babonnez\b|\bà bientôt\b|\bau revoir\b|\bhello\b|\bwelcome\b|"
    r"\bthank you\b|\bthanks\b|\bsubscribe\b|\bsee you\b|\bgoodbye\b|\blike and\b",
    re.IGNORECASE)


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


def evaluate(sentence: Sentence, facts: SentenceEntities) -> tuple[float, list[str]]:
    """Confidence that the sentence is a factual claim (0 when it cannot be one) and its kinds."""
    text = sentence.text
    count = len(words(text))
    if sentence.is_question or count < 5 or SOCIAL_RE.search(text):
        return 0.0, []
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
    if DEFINITION_RE.search(text):
        evidence += 0.2
        kinds.append("definition")
    if CAUSAL_RE.search(text):
        evidence += 0.15
        kinds.append("causal")
    if COMPARISON_RE.search(text):
        evidence += 0.1
        kinds.append("comparison")
    if not kinds:
        return 0.0, []
    if HEDGE_RE.search(text):
        evidence -= 0.2
    if count > 60:
        evidence -= 0.1
    elif 8 <= count <= 40:
        evidence += 0.05
    confidence = round(min(MAX_CONFIDENCE, max(0.0, 0.3 + evidence)), 2)
    return confidence, kinds


def extract_claims(sentences: Sequence[Sentence], facts: Sequence[SentenceEntities],
                   language: str | None = None) -> list[Claim]:
    claims: list[Claim] = []
    for sentence, sentence_facts in zip(sentences, facts, strict=True):
        confidence, kinds = evaluate(sentence, sentence_facts)
        if confidence < MIN_CONFIDENCE:
            continue
        text = strip_leading_fillers(sentence.text, language)
        claims.append(Claim(claim_id(sentence.start_ms, text), text, confidence, sentence.start_ms,
                            sentence.end_ms, sentence.speaker, sentence.index, kinds))
    return claims
