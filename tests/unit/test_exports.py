"""domain.exports: each of the six formats parsed by a real parser, hostile text included.

HTML and the Open Graph fragment by html5lib (the HTML5 parsing algorithm, strict: a parse error
fails), Markdown by markdown-it-py in its CommonMark preset, JSON-LD expanded by PyLD with a local
document loader (nothing is fetched: the loader refuses any URL but schema.org's context, which it
answers from the copy below) and checked against what each schema.org type needs for rich results.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime

import html5lib
import pytest
from markdown_it import MarkdownIt
from pyld import jsonld

from domain.export_source import ExportSource, iso_duration, timestamp
from domain.exports import EXPORT_FORMATS, FORMATS, md_escape, render, script_safe_json
from tests.support.exports import HOSTILE, HTML, THUMB_URL, VIDEO_URL, S, _nodes, _value, offline_loader


def test_the_html_date_is_a_valid_datetime_attribute(source) -> None:
    """A stored instant has microseconds; HTML's datetime attribute allows at most three digits of
    a fraction of a second (the Nu HTML Checker refuses six)."""
    stamped = dataclasses.replace(source, created_at=datetime(2026, 11, 27, 18, 12, 37, 539967, tzinfo=UTC))
    [attribute] = re.findall(r'<time datetime="([^"]+)">', render("html", stamped).decode())
    assert attribute == "2026-11-27T18:12:37Z"


def _parse_html(text: str):
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=True).parse(text)


def _text(element) -> str:
    return "".join(element.itertext())


def test_html_is_a_valid_html5_document_and_hostile_text_stays_text(source) -> None:
    body = render("html", source).decode()
    doc = _parse_html(body)  # strict: any parse error raises
    assert body.startswith("<!DOCTYPE html>") and doc.get("lang") == "en"
    scripts = doc.findall(f".//{HTML}script")
    assert len(scripts) == 1 and scripts[0].get("type") == "application/ld+json"
    assert json.loads(scripts[0].text)["@graph"][0]["@type"] == "Article"
    assert doc.findall(f".//{HTML}img") == [] and "onerror" not in {a for e in doc.iter() for a in e.attrib}
    [article] = doc.findall(f".//{HTML}article")
    assert "</script><script>alert(1)</script>" in _text(article) and "\x07" not in body and "\u2028" not in body
    assert article.find(f"{HTML}header/{HTML}h1").text == 'Fusion & ITER: "what" <now>'
    headings = [_text(h) for h in article.iter(f"{HTML}h2")]
    assert headings[:3] == ["Introduction", "Chapters", "Key facts"] and "Frequently asked questions" in headings
    chapter_links = [a.get("href") for a in article.find(f"{HTML}nav").iter(f"{HTML}a")]
    assert chapter_links and all(h.startswith(VIDEO_URL + "#t=") for h in chapter_links)
    starts = [s["startMs"] // 1000 for s in source.content["sections"]]
    assert chapter_links == [f"{VIDEO_URL}#t={s}" for s in starts]
    quotes = article.findall(f".//{HTML}blockquote")
    assert quotes and any(_text(q.find(f".//{HTML}cite")) == "Mallory <b>" for q in quotes)
    metas = {m.get("property") or m.get("name"): m.get("content") for m in doc.iter(f"{HTML}meta")}
    assert metas["og:type"] == "video.other" and metas["og:title"] == source.title
    assert doc.find(f".//{HTML}link[@rel='canonical']").get("href") == source.url


def test_script_safe_json_cannot_close_its_element() -> None:
    text = script_safe_json({"a": "</script><!-- & \u2028 \u2029 >"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028 \u2029 >"}


def _markdown_tree(text: str):
    rendered = MarkdownIt("commonmark").render(text)
    return html5lib.parse(f"<!DOCTYPE html><html><body>{rendered}</body></html>")


def test_markdown_is_commonmark_and_hostile_text_renders_as_itself(source) -> None:
    text = render("markdown", source).decode()
    tree = _markdown_tree(text)
    assert tree.findall(f".//{HTML}img") == [] and tree.findall(f".//{HTML}script") == []
    assert all(a.get("href", "").startswith(VIDEO_URL) for a in tree.iter(f"{HTML}a"))
    assert [_text(h) for h in tree.iter(f"{HTML}h1")] == ['Fusion & ITER: "what" <now>']
    h2 = [_text(h) for h in tree.iter(f"{HTML}h2")]
    assert h2 == ["Introduction", "Chapters", "Key facts", *[s["heading"] for s in source.content["sections"]],
                  "Frequently asked questions", *(["Conclusion"] if source.content["conclusion"] else [])]
    hostile = " ".join(HOSTILE.replace("\x07", "").split())
    assert any(_text(p) == hostile for p in tree.iter(f"{HTML}p"))
    assert [_text(h) for h in tree.iter(f"{HTML}h3")][-1] == "What is <script>?"
    assert tree.findall(f".//{HTML}strong") == [] and tree.findall(f".//{HTML}code") == []


@pytest.mark.parametrize("text", ["1. not a list", "- not an item", "+ neither", "# not a heading", "=====",
                                  "> no quote", "    four spaces", "a\\b `c` *d* _e_ [f](g) <h> &i; ![j](k) ~l~ |m|",
                                  "trailing ##", "<div>block</div>", "Jean-Pierre a 2 + 2 = 4 idées"])
def test_md_escape_keeps_any_text_a_plain_paragraph(text: str) -> None:
    tree = _markdown_tree(md_escape(text))
    [paragraph] = tree.findall(f".//{HTML}p")
    assert _text(paragraph) == " ".join(text.split())
    assert len(list(tree.find(f"{HTML}body"))) == 1


def test_text_has_no_markup_and_the_chapters_with_their_times(source) -> None:
    text = render("txt", source).decode()
    lines = text.splitlines()
    assert lines[0] == 'Fusion & ITER: "what" <now>' and "Chapters" in lines
    assert not any(line.startswith(("#", "<p", "- ", "* ", "[")) for line in lines)
    assert f"{timestamp(source.content['sections'][0]['startMs'])} {source.content['sections'][0]['heading']}" in lines
    assert "\x07" not in text and "Mallory <b>: " + " ".join(HOSTILE.replace("\x07", "").split()) in lines


def test_json_is_the_structured_article_without_an_envelope(source) -> None:
    data = json.loads(render("json", source))
    assert "data" not in data and data["id"] == 42 and data["title"] == source.title
    assert len(data["sections"]) == len(source.content["sections"]) == len(data["chapters"])
    assert all(c["url"] == f"{VIDEO_URL}#t={c['startMs'] // 1000}" for c in data["chapters"])
    assert data["key_facts"] and all(f["timestamp"] and f["claimId"] for f in data["key_facts"])
    assert data["faq"][-1]["question"] == "What is <script>?"
    assert data["sources"][0] == {"type": "video", "name": source.video.name, "url": VIDEO_URL,
                                  "uploadDate": "2026-03-01T09:30:00+00:00"}
    assert any(s["type"] == "cited" and "ITER Organization" in s["name"] for s in data["sources"])
    assert data["video"]["duration"] == "PT1H2M3S" and data["video"]["thumbnail_url"] == THUMB_URL


def test_schema_expands_offline_to_the_types_rich_results_need(source) -> None:
    raw = render("schema", source)
    document = json.loads(raw)
    assert b"<" not in raw and document["@context"] == "https://schema.org"
    expanded = jsonld.expand(document, {"documentLoader": offline_loader})

    [article] = _nodes(expanded, "Article")
    for prop in ("headline", "image", "datePublished", "dateModified", "description", "inLanguage"):
        assert _value(article, prop) is not None, prop
    assert len(_value(article, "headline")) <= 110
    [video] = _nodes(expanded, "VideoObject")
    for prop in ("name", "thumbnailUrl", "uploadDate", "description", "duration", "contentUrl"):  # Google's list
        assert _value(video, prop) is not None, prop
    assert _value(video, "duration") == "PT1H2M3S" and _value(video, "uploadDate") == "2026-03-01T09:30:00+00:00"
    assert _value(video, "thumbnailUrl") == THUMB_URL and _value(video, "contentUrl") == VIDEO_URL
    clips = _nodes(video, "Clip")
    assert len(clips) == len(source.content["sections"])
    for clip, section in zip(clips, source.content["sections"], strict=True):
        assert _value(clip, "startOffset") == section["startMs"] // 1000
        assert _value(clip, "endOffset") > _value(clip, "startOffset")
        assert _value(clip, "url") == f"{VIDEO_URL}#t={section['startMs'] // 1000}" and _value(clip, "name")
    [seek] = _nodes(video, "SeekToAction")
    assert _value(seek, "target") == VIDEO_URL + "#t={seek_to_second_number}"
    assert _value(seek, "startOffset-input") == "required name=seek_to_second_number"
    [faq] = _nodes(expanded, "FAQPage")
    questions = _nodes(faq, "Question")
    assert len(questions) == len(source.content["faq"])
    assert questions[-1][S + "name"][0]["@value"] == "What is <script>?"
    assert all(_nodes(q, "Answer") and _value(_nodes(q, "Answer")[0], "text") for q in questions)


def test_opengraph_is_a_fragment_of_meta_elements(source) -> None:
    fragment = render("opengraph", source).decode()
    parsed = html5lib.HTMLParser(strict=True).parseFragment(fragment)
    elements = [e for e in parsed if isinstance(e.tag, str)]
    assert elements and all(e.tag == f"{HTML}meta" for e in elements)
    tags = {e.get("property") or e.get("name"): e.get("content") for e in elements}
    assert tags["og:type"] == "video.other" and tags["og:title"] == source.title
    assert tags["og:image"] == THUMB_URL and tags["og:url"] == source.url and tags["og:locale"] == "en_US"
    assert tags["og:video"] == VIDEO_URL and tags["og:video:type"] == "video/mp4"
    assert (tags["og:video:width"], tags["og:video:height"]) == ("1280", "720")
    assert tags["og:video:secure_url"] == VIDEO_URL and tags["video:duration"] == "3723"
    assert tags["twitter:card"] == "summary_large_image" and tags["twitter:image"] == THUMB_URL
    assert tags["twitter:title"] == source.title and tags["og:description"] == tags["twitter:description"]
    assert len(tags["og:description"]) <= 160 and tags["og:description"].startswith("</script><script>")


def test_without_a_video_url_the_exports_stay_whole(source) -> None:
    plain = ExportSource(**{**source.__dict__, "video": None})
    tags = html5lib.HTMLParser(strict=True).parseFragment(render("opengraph", plain).decode())
    types = {e.get("property"): e.get("content") for e in tags if isinstance(e.tag, str)}
    assert types["og:type"] == "article" and "og:video" not in types
    assert [n["@type"] for n in json.loads(render("schema", plain))["@graph"]] == ["Article", "FAQPage"]
    _parse_html(render("html", plain).decode())


def test_every_format_has_its_content_type_and_renders_deterministically(source) -> None:
    assert all(EXPORT_FORMATS[name].content_type for name in FORMATS)
    for name in FORMATS:
        assert render(name, source) == render(name, source)
    with pytest.raises(ValueError):
        render("pdf", source)


@pytest.mark.parametrize(("ms", "expected"), [(0, "PT0S"), (45_400, "PT45S"), (60_000, "PT1M"),
                                              (3_723_400, "PT1H2M3S"), (7_200_000, "PT2H")])
def test_iso_durations(ms: int, expected: str) -> None:
    assert iso_duration(ms) == expected
