"""The JSON-LD export through a JSON-LD processor (PyLD), for an article in each of the seven
languages and a hostile one, with its video behind public links, behind a player page a person
published, and without a video: it expands and compacts offline (the processor's document loader
answers ``https://schema.org`` from the local copy of its context in tests/unit/test_exports.py and
refuses any other URL, so nothing is downloaded), loses no property on the way, turns into RDF,
and carries what search engines require of each type: ``Article``; ``VideoObject`` (name,
description, thumbnailUrl, uploadDate, duration, contentUrl or embedUrl); each chapter's ``Clip``
(name, startOffset, endOffset, url) and the ``SeekToAction``; ``FAQPage`` (questions with their
accepted answers)."""

from __future__ import annotations

import json
import re

import pytest
from pyld import jsonld

from domain.exports import render
from tests.export_samples import HOSTILE, INSTANT, LANGUAGES, samples
from tests.support.exports import S, _nodes, _value, offline_loader

OPTIONS = {"documentLoader": offline_loader}
ISO_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


@pytest.fixture(scope="module")
def documents() -> dict:
    return {label: (source, json.loads(render("schema", source))) for label, source in samples().items()}


def _all(node: dict, prop: str) -> list:
    return [v.get("@value", v.get("@id")) for v in node.get(S + prop) or []]


def _keys(value) -> set[str]:
    """Every property name in a JSON-LD tree (its keywords left out)."""
    if isinstance(value, list):
        return set().union(*(_keys(v) for v in value)) if value else set()
    if isinstance(value, dict):
        return {k for k in value if not k.startswith("@")}.union(*(_keys(v) for v in value.values()))
    return set()


def test_the_schema_expands_compacts_and_turns_into_rdf_losing_nothing(documents) -> None:
    assert {label.split("-")[0] for label in documents} == {*LANGUAGES, "hostile"}
    for label, (_, document) in documents.items():
        expanded = jsonld.expand(document, OPTIONS)
        assert {k.removeprefix(S) for k in _keys(expanded)} == _keys(document), label  # no term dropped
        compacted = jsonld.compact(expanded, {"@context": "https://schema.org"}, OPTIONS)
        assert jsonld.expand(compacted, OPTIONS) == expanded, label
        quads = jsonld.to_rdf(document, {**OPTIONS, "format": "application/n-quads"})
        assert f"<{S}VideoObject>" in quads or label.endswith("novideo"), label


def test_each_type_carries_what_search_engines_require(documents) -> None:
    for label, (source, document) in documents.items():
        expanded = jsonld.expand(document, OPTIONS)
        [article] = _nodes(expanded, "Article")
        for prop in ("headline", "name", "description", "datePublished", "dateModified", "inLanguage",
                     "mainEntityOfPage", "url"):
            assert _value(article, prop) not in (None, ""), (label, prop)
        assert len(_value(article, "headline")) <= 110 and _value(article, "inLanguage") == source.language
        assert ISO_INSTANT.fullmatch(_value(article, "datePublished")), label
        assert _value(article, "url") == source.url
        videos = _nodes(expanded, "VideoObject")
        if source.video is None:
            assert videos == [], label
        else:
            [video] = videos
            _check_video(label, source, video)
            assert _value(article, "image") == source.video.thumbnail_url
        faq = _nodes(expanded, "FAQPage")
        assert len(faq) == 1, label
        questions = _nodes(faq[0], "Question")
        assert questions and len(questions) == len(source.content["faq"]), label
        for question in questions:
            [answer] = _nodes(question, "Answer")
            assert _value(question, "name") and _value(answer, "text"), label


def _check_video(label: str, source, video: dict) -> None:
    info = source.video
    for prop in ("name", "description", "thumbnailUrl", "uploadDate", "duration"):
        assert _value(video, prop) not in (None, ""), (label, prop)
    assert _value(video, "uploadDate") == INSTANT.isoformat() and ISO_INSTANT.fullmatch(_value(video, "uploadDate"))
    assert re.fullmatch(r"PT(\d+H)?(\d+M)?(\d+S)?", _value(video, "duration")), label
    assert _all(video, "contentUrl") == ([info.content_url] if info.content_url else [])
    assert _all(video, "embedUrl") == ([info.embed_url] if info.embed_url else [])
    assert _all(video, "contentUrl") or _all(video, "embedUrl"), label
    watched = (info.content_url or info.embed_url).split("#")[0]
    clips = _nodes(video, "Clip")
    chapters = [s for s in source.content["sections"] if s.get("startMs") is not None]
    assert len(clips) == len(chapters) > 0, label
    for clip, chapter in zip(clips, chapters, strict=True):
        start, end = _value(clip, "startOffset"), _value(clip, "endOffset")
        assert _value(clip, "name") and start == chapter["startMs"] // 1000 and end > start, (label, clip)
        assert _value(clip, "url") == f"{watched}#t={start}", label
    [seek] = _nodes(video, "SeekToAction")
    assert _value(seek, "target") == watched + "#t={seek_to_second_number}"
    assert _value(seek, "startOffset-input") == "required name=seek_to_second_number"


def test_hostile_text_stays_text_in_the_schema(documents) -> None:
    source, document = documents["hostile-public"]
    raw = render("schema", source)
    assert b"<" not in raw and b">" not in raw and b"&" not in raw and b"\xe2\x80\xa8" not in raw
    [faq] = _nodes(jsonld.expand(document, OPTIONS), "FAQPage")
    assert any(HOSTILE.replace("\u2028", "").replace("\x07", "").split()[0] in _value(q, "name")
               for q in _nodes(faq, "Question"))
