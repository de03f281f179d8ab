"""The scoring rubric: each criterion moves the score the way it claims, with its evidence.

A filler transcript scores low; the same article gains when a sourced, dated statistic or an
attributed quotation is added and loses when a keyword is stuffed; the rubric computed from the
analysis' objects at writing time equals the one recomputed from the stored article and graph.
"""

from __future__ import annotations

import copy
import json

import pytest

from domain.analysis import analyse, write_article
from domain.analysis.scoring import AEO_GOOD, GEO_GOOD, RUBRIC_VERSION, score, score_article
from tests.support.caption_lines import EN_LINES, _timed

FILLER = [("Sam", line) for line in [
    "So yeah, um, I was thinking about, you know, the thing we kind of talked about last time or the time before.",
    "Well I mean it's kind of, uh, you know, sort of hard to say really, I guess.",
    "Yeah.", "Right, right.",
    "And so, um, anyway, I think maybe we should, like, you know, keep going with it and see what happens.",
    "I don't know, it's kind of a feeling, you know, like sometimes things just are the way they are.",
    "Okay so, um, yeah.", "Anyway I guess that's, uh, pretty much it for now, more or less, sort of."] * 5]


@pytest.fixture(scope="module")
def graph():
    return analyse(_timed(EN_LINES), language="en")


@pytest.fixture(scope="module")
def stored_graph(graph) -> dict:
    return json.loads(json.dumps(graph.to_dict()))  # as VideoGraphRecorded stores it


@pytest.fixture(scope="module")
def article(graph) -> dict:
    return json.loads(json.dumps(write_article(graph, "journalistic", "en").to_dict()))


def _criterion(scores, name):
    return next(c for c in scores.geo_criteria + scores.geo_penalties + scores.aeo_criteria if c.name == name)


def _with_paragraph(article: dict, text: str, speaker: str | None = None) -> dict:
    changed = copy.deepcopy(article)
    changed["sections"][-1]["paragraphs"].append({"text": text, "sentences": [text], "speaker": speaker,
                                                  "role": "text"})
    return changed


def test_every_criterion_reports_weight_value_and_evidence(article, stored_graph) -> None:
    scores = score_article(article, stored_graph)
    assert sum(c.weight for c in scores.geo_criteria) == 100 and sum(c.weight for c in scores.aeo_criteria) == 100
    assert [p.name for p in scores.geo_penalties] == ["keyword_stuffing"]
    for c in scores.geo_criteria + scores.aeo_criteria + scores.geo_penalties:
        assert 0 <= c.value <= 1 and c.detail and isinstance(c.evidence, list), c.name
    points = sum(c.weight * c.value for c in scores.geo_criteria) - sum(p.weight * p.value
                                                                       for p in scores.geo_penalties)
    assert scores.geo_score == max(0, round(points))
    assert scores.composite_score == round(0.7 * scores.geo_score + 0.3 * scores.aeo_score, 1)
    rubric = scores.to_dict()["rubric"]
    assert rubric["version"] == RUBRIC_VERSION and rubric["geo_well_structured_at"] == GEO_GOOD == 70
    assert rubric["aeo_answers_queries_at"] == AEO_GOOD == 75
    statistics = _criterion(scores, "statistics").evidence
    assert any("45 percent" in e["figure"] for e in statistics)
    assert any(e["source"].startswith("the ITER Organization") for e in _criterion(scores, "cited_sources").evidence)


def test_a_rambling_transcript_without_figures_sources_or_answers_scores_low() -> None:
    filler = analyse(_timed(FILLER), language="en")
    assert filler.scores.geo_score < 40 and filler.scores.aeo_score < 40, filler.scores.to_dict()
    article = write_article(filler, "journalistic", "en").to_dict()
    scores = score_article(article, filler.to_dict())
    assert scores.geo_score < 40, scores.to_dict()
    assert _criterion(scores, "statistics").value == 0 and _criterion(scores, "cited_sources").value == 0
    assert _criterion(scores, "fluency").value < 0.8  # "um", "you know", "kind of" are counted
    assert scores.verdicts == {"geo_well_structured_for_citation": False, "aeo_answers_common_queries_directly": False}


def test_a_sourced_dated_statistic_raises_geo(article, stored_graph) -> None:
    before = score_article(article, stored_graph)
    added = _with_paragraph(article, "According to the IAEA, fusion research funding rose by 12 percent in 2023.")
    after = score_article(added, stored_graph)
    assert after.geo_score > before.geo_score
    assert _criterion(after, "statistics").value > _criterion(before, "statistics").value
    assert _criterion(after, "cited_sources").value > _criterion(before, "cited_sources").value
    assert any(e["date"] == "2023" for e in _criterion(after, "statistics").evidence)


def test_a_quotation_with_its_speaker_raises_geo(article, stored_graph) -> None:
    before = score_article(article, stored_graph)
    quoted = _with_paragraph(article, '"Fusion is the energy source of the stars," explains physicist Marie Dupont.')
    after = score_article(quoted, stored_graph)
    assert after.geo_score > before.geo_score
    [quote] = [q for q in _criterion(after, "quotations").evidence if q["quote"].startswith("Fusion is")]
    assert "Marie Dupont" in quote["speaker"]


def test_conversational_paragraphs_count_as_attributed_quotations(graph, stored_graph) -> None:
    conversational = json.loads(json.dumps(write_article(graph, "conversational", "en").to_dict()))
    journalistic = json.loads(json.dumps(write_article(graph, "journalistic", "en").to_dict()))
    shown = _criterion(score_article(conversational, stored_graph), "quotations")
    assert shown.value > 0 and {q["speaker"] for q in shown.evidence} <= {"Alice", "Bob"}
    assert _criterion(score_article(journalistic, stored_graph), "quotations").value == 0


def test_stuffing_a_keyword_lowers_geo(article, stored_graph) -> None:
    before = score_article(article, stored_graph)
    stuffed = copy.deepcopy(article)
    for k in range(4):
        stuffed = _with_paragraph(stuffed, f"Fusion fusion power, fusion energy fusion, best fusion {k} fusion.")
    after = score_article(stuffed, stored_graph)
    penalty = _criterion(after, "keyword_stuffing")
    assert penalty.value > 0 and penalty.evidence[0]["keyword"] == "fusion"
    assert after.geo_score < before.geo_score


def test_question_headings_answered_directly_raise_aeo_and_an_empty_faq_lowers_it(article, stored_graph) -> None:
    before = score_article(article, stored_graph)
    no_faq = {**copy.deepcopy(article), "faq": []}
    assert score_article(no_faq, stored_graph).aeo_score < before.aeo_score
    asked = copy.deepcopy(no_faq)
    plain = next(i for i, s in enumerate(asked["sections"]) if not s["heading"].endswith("?"))
    asked["sections"][plain]["heading"] = "What is a tokamak?"
    asked["sections"][plain]["paragraphs"].insert(0, {
        "text": "A tokamak is a doughnut-shaped machine that confines the plasma with magnetic fields.",
        "speaker": None, "role": "text"})
    after = _criterion(score_article(asked, stored_graph), "question_headings")
    assert after.value > _criterion(score_article(no_faq, stored_graph), "question_headings").value
    [tokamak] = [e for e in after.evidence if e["question"] == "What is a tokamak?"]
    assert tokamak["direct"] is True and tokamak["where"] == "section"


def test_scores_at_writing_time_equal_the_scores_recomputed_from_what_is_stored(graph, stored_graph) -> None:
    for style in ("journalistic", "conversational", "tutorial"):
        content = {**write_article(graph, style, "en").to_dict(), "engine": "offline"}
        at_writing = score(sentences=graph.sentences, claims=graph.claims, entities=graph.entities,
                           topics=graph.topics, intents=graph.intents, moments=graph.moments, chapters=graph.chapters,
                           diarisation=graph.diarisation, duration_ms=graph.duration_ms, article=content)
        recomputed = score_article(json.loads(json.dumps(content)), stored_graph)
        assert at_writing.to_dict() == recomputed.to_dict(), style


def test_the_transcript_score_is_the_graphs_geo_readiness(graph) -> None:
    assert graph.to_dict()["summary"]["geoReadinessScore"] == graph.scores.geo_score
    summary = graph.scores.geo_summary
    assert set(summary) == {"main_entities", "main_topics", "user_intents_answered", "key_facts"}
    assert "ITER" in summary["main_entities"] and summary["key_facts"]
