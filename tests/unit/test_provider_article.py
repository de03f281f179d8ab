"""The material a provider writes the article from (bounded, from the graph only), and the reading
of a provider's answer as one JSON object."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.analysis import Segment, analyse
from domain.analysis.provider_article import EXCERPT_CHARS, MAX_CLAIMS, article_material, json_object
from infra.captions import read_captions

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


def test_a_video_without_chapters_is_one_chapter_of_material(short_graph) -> None:
    [chapter] = article_material(short_graph, "journalistic", "fr")["chapters"]

    assert short_graph.chapters == []
    assert (chapter["startMs"], chapter["endMs"]) == (0, short_graph.duration_ms)


# ---- reading an answer


class Invalid(ValueError):
    pass


def test_one_code_fence_around_the_json_is_tolerated() -> None:
    assert json_object('```json\n{"a": 1}\n```', Invalid) == {"a": 1}


@pytest.mark.parametrize(("text", "message"), [
    ("Voici l'article : {}", "the answer is not JSON (Expecting value at character 0)"),
    ('{"a": ', "the answer is not JSON"),
    ("[1]", "the answer is JSON but not an object (list)"),
])
def test_an_answer_that_is_no_json_object_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(Invalid) as refused:
        json_object(text, Invalid)

    assert message in str(refused.value)
