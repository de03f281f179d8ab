"""The scoring rubric: an AEO score and a GEO score (0-100 each), every criterion reported.

GEO asks "can a generative engine cite this?": facts, their confidence, named entities, attributable
statements, structure (chapters), quotable moments, focus, speakers. AEO asks "does it answer
common queries directly?": intents, answered questions, definitions, concise answers, structure,
key facts. Each criterion has a weight (its points sum to 100 per score) and a value 0-1 with the
measurement that produced it; points = weight x value. Composite = 0.7 GEO + 0.3 AEO (spec §1).
A GEO score of 70+ counts as well structured for citation; an AEO score of 75+ as answering common
queries directly. When an article is scored, its structure (sections, FAQ, key facts) replaces
the video's chapter criterion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from domain.analysis.claims import Claim
from domain.analysis.entities import Entity
from domain.analysis.intents import SearchIntent
from domain.analysis.model import Sentence
from domain.analysis.moments import ClipMoment
from domain.analysis.speakers import Diarisation
from domain.analysis.structure import Chapter, validate_chapters
from domain.analysis.text import words
from domain.analysis.topics import Topic

GEO_WEIGHT = 0.7
AEO_WEIGHT = 0.3
GEO_GOOD = 70
AEO_GOOD = 75


@dataclass(slots=True)
class Criterion:
    name: str
    weight: int
    value: float
    detail: str

    @property
    def points(self) -> float:
        return round(self.weight * self.value, 1)

    def to_dict(self) -> dict:
        return {"name": self.name, "weight": self.weight, "value": round(self.value, 3), "points": self.points,
                "detail": self.detail}


@dataclass(slots=True)
class Scores:
    aeo_score: int
    geo_score: int
    composite_score: float
    aeo_criteria: list[Criterion]
    geo_criteria: list[Criterion]
    geo_summary: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"aeo_score": self.aeo_score, "geo_score": self.geo_score, "composite_score": self.composite_score,
                "geo_summary": self.geo_summary,
                "rubric": {"composite": "0.7 * geo_score + 0.3 * aeo_score",
                           "geo_well_structured_at": GEO_GOOD, "aeo_answers_queries_at": AEO_GOOD,
                           "geo": [c.to_dict() for c in self.geo_criteria],
                           "aeo": [c.to_dict() for c in self.aeo_criteria]}}


def _ratio(value: float, target: float) -> float:
    return max(0.0, min(1.0, value / target)) if target > 0 else 0.0


def composite(geo: float, aeo: float) -> float:
    return round(GEO_WEIGHT * geo + AEO_WEIGHT * aeo, 1)


def geo_summary(claims: Sequence[Claim], entities: Sequence[Entity], topics: Sequence[Topic],
                intents: Sequence[SearchIntent]) -> dict:
    named = [e for e in entities if e.type not in ("date", "number")]
    facts = sorted(sorted(claims, key=lambda c: (-c.confidence, c.start_ms))[:5], key=lambda c: c.start_ms)
    return {"main_entities": [e.name for e in named[:5]],
            "main_topics": [t.name for t in topics[:5]],
            "user_intents_answered": [i.query for i in intents if i.answered][:5],
            "key_facts": [c.text for c in facts]}


def score(*, sentences: Sequence[Sentence], claims: Sequence[Claim], entities: Sequence[Entity],
          topics: Sequence[Topic], intents: Sequence[SearchIntent], moments: Sequence[ClipMoment],
          chapters: Sequence[Chapter], diarisation: Diarisation, duration_ms: int,
          article: dict | None = None) -> Scores:
    minutes = max(duration_ms / 60_000, 0.5)
    named = [e for e in entities if e.type not in ("date", "number", "other")]
    attributable = [c for c in claims if {"entity", "date"} & set(c.kinds)]
    mean_conf = sum(c.confidence for c in claims) / len(claims) if claims else 0.0
    chapter_problems = validate_chapters(chapters, duration_ms)
    strong_moments = [m for m in moments if m.geo_score >= 60]
    top_mentions = sum(t.mentions for t in topics[:3])
    all_mentions = sum(t.mentions for t in topics[:10]) or 1
    named_speakers = [s for s in diarisation.speakers if s.name != "unknown"]

    if article is not None:
        sections = len(article.get("sections", []))
        structure = Criterion("article_structure", 15, _ratio(sections, 3) * 0.7
                              + (0.3 if article.get("key_facts") else 0.0),
                              f"{sections} sections, {len(article.get('key_facts', []))} key facts")
    else:
        structure = Criterion("chapters", 15, 1.0 if not chapter_problems else 0.3 if chapters else 0.0,
                              "valid chapters" if not chapter_problems else "; ".join(chapter_problems))
    geo = [
        Criterion("factual_density", 20, _ratio(len(claims) / minutes, 2.0),
                  f"{len(claims)} claims, {len(claims) / minutes:.2f} per minute (target 2)"),
        Criterion("claim_confidence", 10, mean_conf, f"mean claim confidence {mean_conf:.2f}"),
        Criterion("entity_coverage", 15, _ratio(len(named), 8), f"{len(named)} named entities (target 8)"),
        structure,
        Criterion("attribution", 10, _ratio(len(attributable), max(1, len(claims)) * 0.5),
                  f"{len(attributable)} of {len(claims)} claims name an entity or a date (target half)"),
        Criterion("quotable_moments", 10, _ratio(len(strong_moments), 3),
                  f"{len(strong_moments)} clip moments scoring 60+ (target 3)"),
        Criterion("topic_focus", 10, _ratio(top_mentions / all_mentions, 0.5),
                  f"top 3 topics hold {100 * top_mentions / all_mentions:.0f}% of topic mentions (target 50%)"),
        Criterion("speaker_attribution", 10, 1.0 if named_speakers else 0.3,
                  f"{len(named_speakers)} named speakers" if named_speakers else "speakers not named"),
    ]

    questions = [i for i in intents if i.source == "question"]
    answered = [i for i in questions if i.answered]
    definitions = [c for c in claims if "definition" in c.kinds]
    concise = [c for c in claims if 8 <= len(words(c.text)) <= 40]
    key_facts = claims if article is None else article.get("key_facts", [])
    if article is not None:
        faq = len(article.get("faq", []))
        shape = Criterion("faq", 10, _ratio(faq, 3), f"{faq} FAQ entries (target 3)")
    else:
        shape = Criterion("structure", 10, 1.0 if not chapter_problems else 0.4,
                          "chapters valid" if not chapter_problems else "chapters break the rules")
    aeo = [
        Criterion("intents_covered", 25, _ratio(len(intents), 5), f"{len(intents)} search intents (target 5)"),
        Criterion("answers_present", 25, (len(answered) / len(questions)) if questions else
                  (0.6 if claims else 0.0),
                  f"{len(answered)} of {len(questions)} questions answered within a minute" if questions
                  else "no question asked in the video; topic answers only"),
        Criterion("definitions", 15, _ratio(len(definitions), 2), f"{len(definitions)} definitions (target 2)"),
        Criterion("concise_answers", 15, (len(concise) / len(claims)) if claims else 0.0,
                  f"{len(concise)} of {len(claims)} claims in 8-40 words"),
        shape,
        Criterion("key_facts", 10, _ratio(len(key_facts), 3), f"{len(key_facts)} key facts (target 3)"),
    ]
    geo_score = round(sum(c.weight * c.value for c in geo))
    aeo_score = round(sum(c.weight * c.value for c in aeo))
    return Scores(aeo_score, geo_score, composite(geo_score, aeo_score), aeo, geo,
                  geo_summary(claims, entities, topics, intents))
