"""The pure parts of the article operations: the Article aggregate's new events, the prices, the
translation's prompt and answer checks, the graph rebuilt for a regeneration, the read models'
statements."""

from __future__ import annotations

import copy
import dataclasses
import json
from datetime import UTC, datetime
from uuid import uuid4

import pytest

from domain.analysis import AudioSegment, Loudness, MediaFacts, SceneChange, TimeRange, analyse, write_article
from domain.articles import Article, ArticleExport, article_stream_for_job
from domain.base import DomainError
from domain.pricing import compute_billing_enabled, regeneration_price, translation_price
from domain.regeneration import differences, facts_from_graph
from domain.translation import (
    MAX_SOURCE_CHARS,
    InvalidTranslation,
    material_words,
    translated_content,
    translation_material,
    translation_messages,
    translation_schema,
)
from infra.codec import EventRegistry, StoredEvent
from projections import analysis_graphs, article_exports, article_translations, articles
from tests.fake_llm import translation_for
from tests.support.caption_lines import EN_LINES, _timed

NOW = datetime(2026, 5, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def graph():
    return analyse(_timed(EN_LINES), language="en")


@pytest.fixture(scope="module")
def content(graph) -> dict:
    return json.loads(json.dumps(write_article(graph, "conversational", "en").to_dict()))


def _article(content: dict, **kw) -> Article:
    values = dict(article_id=7, workspace_id=uuid4(), environment="production", job_id=uuid4(), video_id=3,
                  media_id=None, title=content["title"], language="en", writing_style="conversational",
                  aeo_score=50, geo_score=60, composite_score=57.0, keywords_primary=content["keywords_primary"],
                  has_transcript=True, content=content, markdown="# t\n")
    return Article(**{**values, **kw})


def _stored(events, registry: EventRegistry) -> list[StoredEvent]:
    return [StoredEvent(position=i + 1, stream_id=e.stream_id, stream_type=e.stream_type, version=e.version,
                        workspace_id=e.workspace_id, type=e.type, schema=e.schema, data=e.data, meta={},
                        recorded_at=NOW) for i, e in enumerate(events)]


# ------------------------------------------------------------------------------------ aggregate


def test_rename_and_attach_record_only_changes(content) -> None:
    article = _article(content)
    article.collect_events()
    assert article.rename("  Fusion explained  ") and article.custom_name == "Fusion explained"
    assert not article.rename("Fusion explained") and not article.rename(" Fusion explained")
    assert article.attach_media(12) and not article.attach_media(12)
    assert article.rename(None) and article.custom_name is None
    assert [type(e).__name__ for e in article.collect_events()] == ["Renamed", "MediaAttached", "Renamed"]
    for bad in ("", "   ", "x" * 501, "tab\there"):
        with pytest.raises(DomainError):
            article.rename(bad)
    for bad in (0, -1, 2 ** 31, True, "3"):
        with pytest.raises(DomainError):
            article.attach_media(bad)
    assert article.collect_events() == []


def test_a_translation_is_an_article_of_its_own_linked_to_its_source(content) -> None:
    registry = EventRegistry()
    source = _article(content)
    source.rename("Custom")
    job = uuid4()
    translated = Article.translation(source=source, article_id=8, job_id=job, language="de", title="Fusion",
                                     content=content, markdown="# Fusion\n", aeo_score=1, geo_score=2,
                                     composite_score=1.7, keywords_primary=["Kernfusion"])
    assert translated.id == article_stream_for_job(job)
    [event] = registry.to_new_events(translated.collect_events(), workspace_id=source.workspace_id)
    assert event.type == "ArticleTranslated"
    assert (event.data["source_article_id"], event.data["source_language"], event.data["language"]) == (7, "en", "de")
    replayed = registry.reconstruct(_stored([event], registry))
    assert (replayed.origin, replayed.source_language, replayed.custom_name) == ("translation", "en", None)
    assert replayed.graph_job_id == source.graph_job_id == source.job_id
    with pytest.raises(DomainError):
        Article.translation(source=source, article_id=9, job_id=uuid4(), language="en", title="t", content={},
                            markdown="", aeo_score=0, geo_score=0, composite_score=0.0, keywords_primary=[])


def test_article_generated_schema_1_is_read_as_an_analysis_scored_by_the_first_rubric(content) -> None:
    registry = EventRegistry()
    [event] = registry.to_new_events(_article(content).collect_events(), workspace_id=uuid4())
    assert event.schema == 2 and event.data["origin"] == "analysis" and event.data["rubric_version"] == 2
    old = {k: v for k, v in event.data.items() if k not in ("origin", "source_article_id", "graph_job_id",
                                                            "rubric_version")}
    [stored] = _stored([event], registry)
    replayed = registry.reconstruct([dataclasses.replace(stored, schema=1, data=old)])
    assert (replayed.origin, replayed.rubric_version, str(replayed.graph_job_id)) == ("analysis", 1, old["job_id"])


def test_an_export_names_one_of_the_six_formats() -> None:
    ready = ArticleExport.record(article_id=1, workspace_id=uuid4(), environment="sandbox", export_format="schema",
                                 content_type="application/ld+json", etag='"a"', size=10, path="/v1/x")
    assert ready.format == "schema"
    with pytest.raises(DomainError):
        ArticleExport.record(article_id=1, workspace_id=uuid4(), environment="sandbox", export_format="pdf",
                             content_type="x", etag='"a"', size=1, path="/v1/x")


# --------------------------------------------------------------------------------------- prices


@pytest.mark.parametrize(("words", "credits"), [(0, 1), (1, 1), (1000, 1), (1001, 2), (5500, 6)])
def test_translation_price_per_started_thousand_words(words: int, credits: int) -> None:
    assert translation_price(words) == credits


@pytest.mark.parametrize(("ms", "engine", "credits"), [(30_000, "offline", 1), (600_000, "offline", 1),
                                                       (600_001, "offline", 2), (3_600_000, "offline", 6),
                                                       (3_600_000, "provider", 12)])
def test_regeneration_price_per_started_ten_minutes(ms: int, engine: str, credits: int) -> None:
    assert regeneration_price(ms, engine) == credits


def test_compute_billing_is_off_for_sandbox_keys_and_plans_that_include_it() -> None:
    assert compute_billing_enabled("free", "production") and compute_billing_enabled("pro", "production")
    assert not compute_billing_enabled("pro", "sandbox") and not compute_billing_enabled("enterprise", "production")


# ---------------------------------------------------------------------------------- translation


def test_the_prompt_carries_the_article_and_the_answer_keeps_what_is_not_text(content) -> None:
    messages = translation_messages(content, content["keywords_primary"], "en", "de")
    assert "from English into German" in messages[0]["content"]
    material = json.loads(messages[1]["content"])
    assert material == translation_material(content, content["keywords_primary"])
    assert material_words(material) > 50
    answer = json.dumps(translation_for(material, "DE: "))
    fenced = "```json\n" + answer + "\n```"  # one code fence is tolerated
    translated, keywords = translated_content(fenced, content, content["keywords_primary"], "de")
    assert translated["title"] == "DE: " + content["title"] and translated["language"] == "de"
    assert keywords == ["DE: " + k for k in content["keywords_primary"]]
    for got, want in zip(translated["sections"], content["sections"], strict=True):
        assert (got["startMs"], got["endMs"]) == (want["startMs"], want["endMs"])
        assert [(p["speaker"], p["role"]) for p in got["paragraphs"]] == [(p["speaker"], p["role"])
                                                                         for p in want["paragraphs"]]
        assert all(p["text"].startswith("DE: ") and p["sentences"] for p in got["paragraphs"])
    assert [(f["claimId"], f["startMs"]) for f in translated["key_facts"]] == [(f["claimId"], f["startMs"])
                                                                             for f in content["key_facts"]]
    assert translated["engine"] == "provider" and translated["word_count"] > 0


def test_the_schema_of_a_translation_is_the_articles_shape(content) -> None:
    material = translation_material(content, content["keywords_primary"])
    schema = translation_schema(content, content["keywords_primary"])

    sections = schema["properties"]["sections"]["prefixItems"]
    assert [len(s["properties"]["paragraphs"]["prefixItems"]) for s in sections] == [
        len(s["paragraphs"]) for s in material["sections"]]
    for member in ("key_facts", "keywords", "faq"):
        assert schema["properties"][member]["minItems"] == schema["properties"][member]["maxItems"] == len(
            material[member])
    assert schema["additionalProperties"] is False and set(schema["required"]) == set(material)


def test_a_translation_leaves_out_what_only_the_premium_source_wrote(content) -> None:
    premium = {**content, "summary": "A summary.", "descriptions": {"short": "s", "long": "l"},
               "written": {"title": {"by": "model"}}}
    answer = json.dumps(translation_for(translation_material(premium, premium["keywords_primary"]), "DE: "))

    translated, _ = translated_content(answer, premium, premium["keywords_primary"], "de")

    assert not {"summary", "descriptions", "written"} & set(translated)


def _broken(content: dict, change) -> str:
    answer = translation_for(translation_material(content, content["keywords_primary"]), "X: ")
    change(answer)
    return json.dumps(answer)


@pytest.mark.parametrize(("change", "reason"), [
    (lambda a: a["sections"].pop(), "sections"),
    (lambda a: a["sections"][0]["paragraphs"].pop(), "paragraphs in section 1"),
    (lambda a: a["key_facts"].pop(), "key facts"),
    (lambda a: a["faq"].append({"question": "q", "answer": "a"}), "FAQ entries"),
    (lambda a: a["keywords"].pop(), "keywords"),
    (lambda a: a.update(comment="here you go"), "Extra inputs"),
    (lambda a: a.update(title="  "), "title"),
    (lambda a: a.pop("conclusion"), "conclusion"),
])
def test_an_answer_that_departs_from_the_article_is_refused(content, change, reason: str) -> None:
    with pytest.raises(InvalidTranslation, match=reason.split()[0]):
        translated_content(_broken(content, change), content, content["keywords_primary"], "de")


def test_an_answer_that_is_not_a_json_object_is_refused(content) -> None:
    for text in ("Voici la traduction", "[1, 2]", ""):
        with pytest.raises(InvalidTranslation):
            translated_content(text, content, content["keywords_primary"], "fr")


def test_an_article_too_long_for_one_request_is_refused(content) -> None:
    huge = copy.deepcopy(content)
    huge["introduction"] = "word " * (MAX_SOURCE_CHARS // 5 + 1)
    with pytest.raises(InvalidTranslation, match="at most"):
        translation_messages(huge, [], "en", "fr")


# --------------------------------------------------------------------------------- regeneration


def test_the_graph_rebuilt_from_the_transcript_and_its_recorded_media_facts_is_the_stored_one() -> None:
    facts = MediaFacts(duration_ms=80_000, scene_changes=(SceneChange(4000, 0.8), SceneChange(30_000, 0.5)),
                       silences=(TimeRange(3000, 5000),),
                       audio_segments=(AudioSegment(0, 3000, "music", 0.9), AudioSegment(5000, 80_000, "speech", 0.7)),
                       loudness=Loudness(-18.2, 6.1, -1.5), has_audio=True, has_video=True)
    segments = _timed(EN_LINES)
    for given in (facts, None):
        stored = json.loads(json.dumps(analyse(segments, given, language="en").to_dict()))
        rebuilt = json.loads(json.dumps(analyse(segments, facts_from_graph(stored), language="en").to_dict()))
        assert rebuilt == stored and differences(rebuilt, stored) == []
    moved = copy.deepcopy(stored)
    moved["chapters"][0]["endMs"] += 1000
    moved["claims"].pop()
    assert differences(rebuilt, moved) == ["claims", "chapters"]


# ---------------------------------------------------------------------------------- read models


def _event(type_: str, data: dict, version: int = 1, stream=None) -> StoredEvent:
    return StoredEvent(position=10, stream_id=stream or uuid4(), stream_type="X", version=version,
                       workspace_id=uuid4(), type=type_, schema=1, data=data, meta={}, recorded_at=NOW)


def test_renames_and_attachments_are_guarded_by_the_stream_version() -> None:
    stream = uuid4()
    [(sql, args)] = articles.projection.apply(_event("ArticleRenamed", {"custom_name": "n", "environment": "p"},
                                                     version=4, stream=stream))
    assert "version < $4" in sql and args == (stream, "n", NOW, 4)
    [(sql, args)] = articles.projection.apply(_event("ArticleMediaAttached", {"media_id": 9, "environment": "p"},
                                                     version=5, stream=stream))
    assert "version < $4" in sql and args == (stream, 9, NOW, 5)


def test_only_translation_jobs_become_translation_rows_and_graphs_are_kept_per_analysis() -> None:
    queued = {"environment": "production", "job_type": "translate_article", "webhook_url": None, "max_attempts": 3,
              "params": {"article_id": 4, "target_language": "de"}}
    [(sql, args)] = article_translations.projection.apply(_event("JobQueued", queued))
    assert "ON CONFLICT (job_id) DO NOTHING" in sql and args[3:5] == (4, "de")
    assert article_translations.projection.apply(_event("JobQueued", {**queued, "job_type": "analyze_video"})) == []
    job = str(uuid4())
    [(sql, args)] = analysis_graphs.projection.apply(_event("VideoGraphRecorded", {"job_id": job, "graph": {}}))
    assert "DO NOTHING" in sql and args[0] == job
    [(sql, args)] = article_exports.projection.apply(_event("ExportReady", {
        "article_id": 4, "format": "html", "etag": '"e"', "environment": "production"}))
    assert "ON CONFLICT (article_id, format) DO NOTHING" in sql and args[:2] == (4, "html")


def test_the_export_cache_keeps_the_most_recent_bodies_within_its_bound() -> None:
    from services.api.article_exports import ExportCache

    cache = ExportCache(max_bytes=10)
    cache.put(("a",), b"1234", '"a"')
    cache.put(("b",), b"5678", '"b"')
    assert cache.get(("a",)) == (b"1234", '"a"', "")  # a is now the most recent
    cache.put(("c",), b"9012", '"c"')  # 12 bytes: b, the least recent, goes
    assert cache.get(("b",)) is None and cache.get(("a",)) and cache.get(("c",))
    cache.put(("d",), b"x" * 11, '"d"')  # larger than the whole cache: not kept
    assert cache.get(("d",)) is None and cache.get(("c",))


def test_download_names_and_if_none_match() -> None:
    from services.api.article_exports import _file_name, _matches

    assert _file_name("Fusion : l'énergie des étoiles ?", 42, "markdown") == (
        "fusion-l-energie-des-etoiles-42.md", "fusion-l-énergie-des-étoiles-42.md")
    assert _file_name('"; rm -rf / <x>', 7, "schema") == ("rm-rf-x-7.jsonld", "rm-rf-x-7.jsonld")
    assert _file_name("???", 1, "txt") == ("article-1.txt", "article-1.txt")
    assert _matches('"abc"', '"abc"') and _matches('W/"abc", "x"', '"abc"') and _matches("*", '"abc"')
    assert not _matches('"abd"', '"abc"') and not _matches(None, '"abc"') and not _matches("", '"abc"')
