"""The provider article engine's pure half: the prompt built from the Content Graph (bounded, from
the graph only) and the provider's answer held to the article structure, or refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from domain.analysis import Segment, analyse, write_article
from domain.analysis.provider_article import (
    EXCERPT_CHARS,
    MAX_CLAIMS,
    InvalidProviderArticle,
    article_from_answer,
    article_material,
    article_messages,
    parse_answer,
)
from domain.analysis.scoring import score
from infra.captions import read_captions
from tests.fake_llm import answer_for

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"


@pytest.fixture(scope="module")
def graph():
    return analyse(read_captions(FIXTURE), language="fr")


@pytest.fixture(scope="module")
def short_graph():
    """Twenty seconds: too short for chapters, so the article has one section."""
    return analyse([Segment(0, 6000, "ITER est construit à Cadarache depuis 2010.", "Bob"),
                    Segment(6000, 12000, "Le projet réunit trente-cinq pays et coûte vingt milliards.", "Bob"),
                    Segment(12000, 20000, "Le premier plasma est prévu en 2035.", "Bob")], language="fr")


def valid(graph, style: str = "journalistic") -> dict:
    return answer_for(article_material(graph, style, "fr"))


# ---- the prompt


def test_the_material_is_the_graph_bounded(graph) -> None:
    material = article_material(graph, "auto", "fr")

    assert material["writingStyle"] != "auto"  # resolved as the offline engine would
    assert [(c["title"], c["startMs"], c["endMs"]) for c in material["chapters"]] == [
        (c.title, c.start_ms, c.end_ms) for c in graph.chapters]
    assert len(graph.claims) > MAX_CLAIMS >= len(material["claims"])  # the fixture has more claims than sent
    by_id = {c.id: c for c in graph.claims}
    assert all(by_id[c["id"]].text == c["text"] for c in material["claims"])
    starts = [c["startMs"] for c in material["claims"]]
    assert starts == sorted(starts)
    weakest_sent = min(c["confidence"] for c in material["claims"])
    assert sum(c.confidence > weakest_sent + 0.01 for c in graph.claims) <= MAX_CLAIMS  # the strongest were kept
    assert sum(len(c["excerpt"]) for c in material["chapters"]) <= EXCERPT_CHARS
    transcript = {s.text for s in graph.sentences}
    for chapter in material["chapters"]:
        lines = chapter["excerpt"].splitlines()
        assert lines, chapter["title"]
        assert all(line.split(": ", 1)[-1] in transcript for line in lines)


def test_the_messages_state_the_rules_then_carry_the_material_as_json(graph) -> None:
    system, user = article_messages(graph, "tutorial", "en")

    assert system["role"] == "system" and user["role"] == "user"
    assert "Write in the language en" in system["content"]
    assert "practical steps" in system["content"]  # the tutorial guidance
    assert f"exactly {len(graph.chapters)} section(s)" in system["content"]
    assert '"claim_id"' in system["content"] and "do not invent" in system["content"]
    assert json.loads(user["content"]) == article_material(graph, "tutorial", "en")


def test_a_video_without_chapters_asks_for_one_section(short_graph) -> None:
    system, user = article_messages(short_graph, "journalistic", "fr")

    assert short_graph.chapters == []
    assert "exactly 1 section(s)" in system["content"]
    [chapter] = json.loads(user["content"])["chapters"]
    assert (chapter["startMs"], chapter["endMs"]) == (0, short_graph.duration_ms)


# ---- the answer


def test_a_valid_answer_becomes_the_same_article_form_as_the_offline_engine(graph) -> None:
    answer = valid(graph)

    article = article_from_answer(json.dumps(answer), graph, "journalistic", "fr")

    assert article.title == answer["title"] and article.introduction == [answer["introduction"]]
    assert [(s.start_ms, s.end_ms) for s in article.sections] == [(c.start_ms, c.end_ms) for c in graph.chapters]
    assert [s.heading for s in article.sections] == [s["heading"] for s in answer["sections"]]
    assert article.sections[0].to_dict()["paragraphs"][1]["text"] == "A second paragraph."
    claims = {c.id: c for c in graph.claims}
    assert [(f["claimId"], f["startMs"]) for f in article.key_facts] == [
        (f["claim_id"], claims[f["claim_id"]].start_ms) for f in answer["key_facts"]]
    assert [f["question"] for f in article.faq] == [q["question"] for q in answer["faq"]]
    offline = write_article(graph, "journalistic", "fr").to_dict()
    assert set(article.to_dict()) == set(offline)
    markdown = article.to_markdown()
    assert markdown.startswith(f"# {answer['title']}\n") and answer["introduction"] in markdown
    assert "PROVIDER-CONCLUSION." in markdown
    scores = score(sentences=graph.sentences, claims=graph.claims, entities=graph.entities, topics=graph.topics,
                   intents=graph.intents, moments=graph.moments, chapters=graph.chapters,
                   diarisation=graph.diarisation, duration_ms=graph.duration_ms, article=article.to_dict())
    assert 0 <= scores.aeo_score <= 100 and 0 <= scores.geo_score <= 100


def test_one_code_fence_around_the_json_is_tolerated(short_graph) -> None:
    text = "```json\n" + json.dumps(valid(short_graph)) + "\n```"

    assert article_from_answer(text, short_graph, "journalistic", "fr").title == "Fusion, told by the provider"


def _without(answer: dict, key: str) -> dict:
    return {k: v for k, v in answer.items() if k != key}


@pytest.mark.parametrize(("change", "message"), [
    (lambda a: "Voici l'article : " + json.dumps(a), "the answer is not JSON (Expecting value at character 0)"),
    (lambda a: json.dumps(a)[:-40], "the answer is not JSON"),
    (lambda a: json.dumps([a]), "the answer is JSON but not an object (list)"),
    (lambda a: json.dumps(_without(a, "conclusion")), "conclusion: Field required"),
    (lambda a: json.dumps({**a, "author": "GPT"}), "author: Extra inputs are not permitted"),
    (lambda a: json.dumps({**a, "title": "   "}), "title: String should have at least 1 character"),
    (lambda a: json.dumps({**a, "title": "t" * 201}), "title: String should have at most 200 characters"),
    (lambda a: json.dumps({**a, "sections": [{"heading": "h", "paragraphs": []}] * len(a["sections"])}),
     "sections.0.paragraphs: List should have at least 1 item"),
    (lambda a: json.dumps({**a, "key_facts": [{"claim_id": 3, "text": "x"}]}),
     "key_facts.0.claim_id: Input should be a valid string"),
    (lambda a: json.dumps({**a, "faq": [{"question": "q", "answer": "a"}] * 11}),
     "faq: List should have at most 10 items"),
])
def test_an_answer_off_the_structure_is_refused_with_the_reason(graph, change, message: str) -> None:
    with pytest.raises(InvalidProviderArticle) as refused:
        article_from_answer(change(valid(graph)), graph, "journalistic", "fr")

    assert message in str(refused.value)


def test_one_section_per_chapter_is_required(graph) -> None:
    answer = valid(graph)
    answer["sections"] = answer["sections"][:-1]

    with pytest.raises(InvalidProviderArticle, match=rf"has {len(graph.chapters) - 1} section\(s\); the video has "
                                                     rf"{len(graph.chapters)} chapter\(s\)"):
        article_from_answer(json.dumps(answer), graph, "journalistic", "fr")


def test_a_key_fact_must_name_a_claim_of_the_video(graph) -> None:
    answer = valid(graph)
    answer["key_facts"].append({"claim_id": "clm_invented", "text": "ITER runs on cold fusion."})

    with pytest.raises(InvalidProviderArticle, match="key facts name claims the video does not have: clm_invented"):
        article_from_answer(json.dumps(answer), graph, "journalistic", "fr")


def test_many_problems_are_summed_up(graph) -> None:
    with pytest.raises(InvalidProviderArticle) as refused:
        parse_answer(json.dumps({"title": "", "a": 1, "b": 2, "c": 3}))

    assert str(refused.value).endswith("more)")
    assert str(refused.value).count(":") >= 4
