"""The premium writer's pure half: the three calls (material and JSON Schema), every answer checked
part by part, a part that fails a check replaced whole by the offline text with its reason, and
what the platforms and the exports then print."""

from __future__ import annotations

import dataclasses
import json

import pytest

from domain.analysis import analyse, write_article
from domain.analysis.premium import PARTS, PremiumWriter, Reply, offline_summary
from domain.analysis.premium_checks import MOVE_WINDOW_MS, Grounds, Refused, check_grounded, figures_in
from domain.analysis.premium_prompts import SCHEMA_MAX_LENGTH
from domain.export_source import ExportSource, description
from domain.platforms import PLATFORMS, description_kind, measure
from domain.revival_completion import complete_descriptions
from tests import fake_llm
from tests.media_factory import lecture_cues


@pytest.fixture(scope="module")
def graph():
    return analyse(lecture_cues(), language="en")


def material(call) -> dict:
    return json.loads(call.messages[-1]["content"])


def valid_run(graph, **changes) -> PremiumWriter:
    """A writing whose answers are the fake's valid ones, but for ``changes`` (call kind -> the
    answer as a dict -> the text sent, or a text and its finish_reason)."""
    writer = PremiumWriter(graph, "auto", "en")
    for kind, make, take in (("outline", writer.outline_call, writer.take_outline),
                             ("article", writer.article_call, writer.take_article),
                             ("descriptions", writer.descriptions_call, writer.take_descriptions)):
        answer = fake_llm.premium_for(material(make()))
        changed = changes[kind](answer) if kind in changes else json.dumps(answer)
        text, finish = changed if isinstance(changed, tuple) else (changed, "stop")
        take(Reply(text, finish))
    return writer


def offline_parts(writer: PremiumWriter) -> dict:
    return {part: o["reason"] for part, o in writer.record().items() if o["by"] == "offline"}


# ---- the calls


def test_the_outline_offers_each_chapter_the_sentence_starts_near_its_boundary(graph) -> None:
    call = PremiumWriter(graph, "auto", "en").outline_call()
    chapters = call.schema["properties"]["chapters"]

    assert call.operation == "analysis.enrich" and call.schema_name == "video_outline"
    assert len(chapters["prefixItems"]) == len(graph.chapters) == chapters["minItems"] == chapters["maxItems"]
    sentence_starts = {s.start_ms // 1000 * 1000 for s in graph.sentences}
    for chapter, item in zip(graph.chapters, chapters["prefixItems"], strict=True):
        starts = item["properties"]["startMs"]["enum"]
        assert starts[0] == chapter.start_ms  # the analysis' own start first
        assert all(abs(s - chapter.start_ms) <= MOVE_WINDOW_MS and s in sentence_starts for s in starts[1:])
    assert chapters["prefixItems"][0]["properties"]["startMs"]["enum"] == [0]
    sent = material(call)
    assert [c["workingTitle"] for c in sent["chapters"]] == [c.title for c in graph.chapters]
    assert "Write in English" in call.messages[0]["content"]


def test_the_article_call_names_the_claims_a_fact_may_rest_on(graph) -> None:
    writer = PremiumWriter(graph, "auto", "en")
    writer.take_outline(None)
    call = writer.article_call()
    fact = call.schema["properties"]["key_facts"]["items"]["properties"]["claim_id"]

    assert set(fact["enum"]) == {c["id"] for c in material(call)["claims"]} <= {c.id for c in graph.claims}
    assert len(call.schema["properties"]["sections"]["prefixItems"]) == max(1, len(graph.chapters))
    assert call.operation == "article.write" and call.max_tokens > 0


def _lengths(schema) -> list[int]:
    if isinstance(schema, dict):
        return [*([schema["maxLength"]] if "maxLength" in schema else []), *_lengths(list(schema.values()))]
    if isinstance(schema, list):
        return [n for item in schema for n in _lengths(item)]
    return []


def test_no_schema_states_a_length_a_grammar_cannot_spell_out(graph) -> None:
    writer = PremiumWriter(graph, "auto", "en")
    lengths = [n for call in (writer.outline_call(), writer.article_call(), writer.descriptions_call())
               for n in _lengths(call.schema)]

    assert lengths and max(lengths) <= SCHEMA_MAX_LENGTH  # a llama.cpp grammar of 1,500-character strings is refused
    assert 100 in lengths  # the title's bound is stated


# ---- every part written and checked


def test_valid_answers_write_every_part(graph) -> None:
    writer = valid_run(graph)

    assert writer.record() == {part: {"by": "model"} for part in PARTS}
    article = writer.article()
    content = writer.content(article)
    assert article.title == content["title"] == fake_llm.TITLE
    assert content["summary"] == fake_llm.SUMMARY and content["introduction"] == fake_llm.INTRO
    assert content["descriptions"] == {"short": fake_llm.SHORT, "long": fake_llm.LONG}
    assert content["engine"] == "provider" and content["written"] == writer.record()
    assert [c.title for c in writer.graph.chapters] == [f"Provider chapter {k}" for k in
                                                         range(1, len(graph.chapters) + 1)]
    assert [(s.start_ms, s.end_ms) for s in article.sections] == [(c.start_ms, c.end_ms) for c in graph.chapters]
    claims = {c.id: c for c in graph.claims}
    assert article.key_facts and all(f["startMs"] == claims[f["claimId"]].start_ms for f in article.key_facts)
    assert [f["source"] for f in article.faq] == ["provider"] * len(article.faq)


@pytest.mark.parametrize(("kind", "answer", "parts", "reason"), [
    ("outline", "Here is the outline: ...", ("title", "summary", "chapter_titles", "chapter_starts"),
     "the answer is not JSON"),
    ("article", ('{"introduction": "PROVIDER-INTRO', "length"), ("article", "faq"),
     "the answer was cut at its length limit"),
    ("descriptions", "[]", ("descriptions",), "the answer is JSON but not an object (list)"),
])
def test_an_answer_that_cannot_be_read_costs_exactly_the_parts_of_its_call(graph, kind, answer, parts,
                                                                           reason: str) -> None:
    writer = valid_run(graph, **{kind: lambda _: answer})

    offline = offline_parts(writer)
    assert set(offline) == set(parts)
    assert all(reason in why for why in offline.values())


def test_a_refused_part_is_the_offline_text_whole(graph) -> None:
    offline = write_article(graph, "auto", "en")
    writer = valid_run(graph, outline=lambda _: "nope", article=lambda _: "nope", descriptions=lambda _: "nope")

    article = writer.article()
    content = writer.content(article)
    assert article.to_dict() == offline.to_dict()
    assert content["summary"] == offline_summary(offline) and content["summary"] in content["introduction"]
    assert "descriptions" not in content
    assert writer.graph.chapters == graph.chapters
    assert all(o["by"] == "offline" and o["reason"] for o in content["written"].values())


def _set(answer: dict, **members) -> str:
    return json.dumps({**answer, **members})


@pytest.mark.parametrize(("kind", "change", "part", "reason"), [
    ("outline", lambda a: _set(a, title="How 1234 homes save energy"), "title",
     "the title states figures the video does not say: 1234"),
    ("outline", lambda a: _set(a, title="x" * 101), "title", "the title is 101 characters long, over 100"),
    ("outline", lambda a: _set(a, title="Clean energy\nat home"), "title", "the title is not one line"),
    ("outline", lambda a: _set(a, summary='The speaker says "solar is free forever" and explains why panels pay.'),
     "summary", "the summary quotes words the video does not say"),
    ("outline", lambda a: _set(a, summary="Le conférencier explique comment les panneaux solaires, les batteries et "
                                          "les pompes à chaleur fonctionnent dans une maison, et pourquoi il faut "
                                          "les installer ensemble pour que la maison consomme moins."),
     "summary", "the summary is in another language (fr) than the video (en)"),
    ("outline", lambda a: _set(a, chapters=[{**c, "title": "Solar power"} for c in a["chapters"]]),
     "chapter_titles", "the chapter titles: “Solar power” appears twice"),
    ("outline", lambda a: _set(a, chapters=a["chapters"][:-1]), ("chapter_titles", "chapter_starts"),
     "the answer has 5 chapters; the video has 6"),
    ("article", lambda a: _set(a, key_facts=[{**a["key_facts"][0], "text": "Prices fell by 75 percent."}]),
     "article", "key fact 1 states figures its claim does not: 75"),
    ("article", lambda a: _set(a, key_facts=[{"claim_id": "clm_invented", "text": "Solar is free."}]),
     "article", "key fact 1 names a claim the video does not have"),
    ("article", lambda a: _set(a, sections=a["sections"][:-1]), "article", "section(s); the video has"),
    ("article", lambda a: _set(a, faq=[{"question": "Solar panels", "answer": "They make electricity."}]),
     "faq", "FAQ question 1 is not a question"),
    ("descriptions", lambda a: _set(a, short="s" * 200 + " 😀" * 20), "descriptions", "the short description"),
    ("descriptions", lambda a: _set(a, long="Too short."), "descriptions",
     "the long description is 10 characters, under 80"),
])
def test_a_part_that_fails_a_check_falls_back_alone_with_its_reason(graph, kind, change, part, reason) -> None:
    writer = valid_run(graph, **{kind: change})

    offline = offline_parts(writer)
    parts = part if isinstance(part, tuple) else (part,)
    assert tuple(offline) == parts, offline
    assert all(reason in offline[p] for p in parts)


def test_a_figure_said_in_words_grounds_the_same_figure_in_digits(graph) -> None:
    grounds = Grounds.of("en", [s.text for s in graph.sentences], {c.id: c.text for c in graph.claims})

    check_grounded("the summary", ["Battery prices fell by 90 percent; panels last 25 years, since 2010."], grounds)
    with pytest.raises(Refused, match="figures the video does not say: 95"):
        check_grounded("the summary", ["Battery prices fell by 95 percent."], grounds)
    assert figures_in("It costs 12,000 euros, or 12 000, or 3.5 each", "en") >= {"12000", "3.5"}


# ---- chapters moved within their window


def _moved(graph, k: int, to: int):
    def change(answer: dict) -> str:
        chapters = [dict(c) for c in answer["chapters"]]
        chapters[k]["startMs"] = to
        return _set(answer, chapters=chapters)

    return change


def test_a_chapter_start_moves_to_a_sentence_near_it(graph) -> None:
    k = 1
    option = json.loads(PremiumWriter(graph, "auto", "en").outline_call().messages[-1]["content"])[
        "chapters"][k]["startOptions"][-1]["startMs"]
    writer = valid_run(graph, outline=_moved(graph, k, option))

    assert offline_parts(writer) == {}
    chapters = writer.graph.chapters
    assert chapters[k].start_ms == option != graph.chapters[k].start_ms
    assert chapters[k - 1].end_ms == option and chapters[k].end_ms == graph.chapters[k].end_ms
    assert writer.graph.sentences[chapters[k].first_sentence].start_ms // 1000 * 1000 == option
    assert writer.offline_graph.chapters == graph.chapters  # the analysis' own stays the fallback
    section = writer.article().sections[k]
    assert (section.start_ms, section.end_ms) == (chapters[k].start_ms, chapters[k].end_ms)


@pytest.mark.parametrize(("k", "to", "reason"), [
    (1, "far", "moved"),
    (1, "off-sentence", "which is no sentence's start near its boundary"),
    (0, 4000, "chapter 1 starts at 4000 ms, which is no sentence's start"),
])
def test_a_chapter_start_out_of_its_window_keeps_the_analysis_starts(graph, k, to, reason: str) -> None:
    start = graph.chapters[k].start_ms
    target = {"far": start + MOVE_WINDOW_MS + 1000, "off-sentence": start + 1}.get(to, to)
    writer = valid_run(graph, outline=_moved(graph, k, target))

    assert set(offline_parts(writer)) == {"chapter_starts"} and reason in offline_parts(writer)["chapter_starts"]
    assert [c.start_ms for c in writer.graph.chapters] == [c.start_ms for c in graph.chapters]
    assert [c.title for c in writer.graph.chapters][0] == "Provider chapter 1"  # the titles stand on their own


def test_a_video_without_chapters_keeps_one_section_and_says_why(graph) -> None:
    short = analyse(lecture_cues()[:3], language="en")
    writer = valid_run(short)

    assert short.chapters == [] and len(writer.article().sections) == 1
    assert offline_parts(writer) == {"chapter_titles": "the video has no chapters",
                                     "chapter_starts": "the video has no chapters"}


# ---- what the platforms and the exports print


def test_the_platforms_take_the_models_descriptions_by_their_length(graph) -> None:
    writer = valid_run(graph)
    content = writer.content(writer.article())

    completion = complete_descriptions("", writer.graph.to_dict(), content, "en", list(PLATFORMS))

    for draft in completion.drafts:
        platform = PLATFORMS[draft["platform_id"]]
        expected = fake_llm.SHORT if description_kind(platform) == "short" else fake_llm.LONG
        assert draft["sections"]["description"] == expected, draft["platform_id"]
        assert measure(draft["completed_description"], platform.unit) <= platform.max_length
    assert {description_kind(p) for p in PLATFORMS.values()} == {"short", "long"}
    fallen = valid_run(graph, descriptions=lambda _: "nope")
    offline = complete_descriptions("", fallen.graph.to_dict(), fallen.content(fallen.article()), "en",
                                    ["videosite_long"])
    assert offline.drafts[0]["sections"]["description"] == fallen.article().to_dict()["introduction"]


def test_the_exports_describe_the_article_by_its_summary(graph) -> None:
    writer = valid_run(graph)
    content = writer.content(writer.article())
    source = ExportSource(article_id=1, title=content["title"], original_title=content["title"], language="en",
                          writing_style=content["writing_style"], content=content, keywords=[], created_at=None,
                          updated_at=None, url="")

    assert description(source) == fake_llm.SUMMARY
    assert description(dataclasses.replace(source, content={**content, "summary": ""})).startswith(
        fake_llm.INTRO[:40])
