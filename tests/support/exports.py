"""Reading exports back: the XHTML and schema.org namespaces, an offline JSON-LD loader, nodes and
values of an expanded graph; an article to export, hostile text included."""

from __future__ import annotations

from datetime import UTC, datetime

from domain.analysis import analyse, write_article
from domain.export_source import ExportSource, VideoInfo
from tests.support.caption_lines import EN_LINES, _timed

HTML = "{http://www.w3.org/1999/xhtml}"


# What the JSON-LD processor gets for https://schema.org: a small local copy of schema.org's own
# context, the vocabulary and the properties whose values are IRIs as it declares them (the
# processor fetches nothing: ``offline_loader`` is its document loader and refuses any other URL).
SCHEMA_CONTEXT = {"@context": {
    "@vocab": "http://schema.org/", "schema": "http://schema.org/",
    **{name: {"@id": f"schema:{name}", "@type": "@id"}
       for name in ("url", "contentUrl", "embedUrl", "thumbnailUrl", "mainEntityOfPage", "image", "target")},
}}


S = "http://schema.org/"


def offline_loader(url: str, options: dict | None = None) -> dict:
    if url.rstrip("/") in ("https://schema.org", "http://schema.org"):
        return {"contextUrl": None, "documentUrl": url, "document": SCHEMA_CONTEXT}
    raise AssertionError(f"the JSON-LD processor tried to load {url}")


def _nodes(expanded: list, kind: str) -> list[dict]:
    found = []

    def walk(value):
        if isinstance(value, dict):
            if S + kind in value.get("@type", []):
                found.append(value)
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(expanded)
    return found


def _value(node: dict, prop: str):
    values = node.get(S + prop) or []
    return values[0].get("@value", values[0].get("@id")) if values else None


HOSTILE = ('</script><script>alert(1)</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) '
           '**bold** # not a heading `code` <!-- comment --> &amp; \u2028 \x07 "quoted" \'single\'')


VIDEO_URL = "https://api.example.com/v1/files/tok.sig"


THUMB_URL = "https://api.example.com/v1/files/thumb.sig"


def export_source() -> ExportSource:
    """An article to export: English lines analysed and written, hostile text in its introduction, a
    paragraph and a question; its video with a duration, a thumbnail and addresses."""
    graph = analyse(_timed(EN_LINES), language="en")
    content = write_article(graph, "conversational", "en").to_dict()
    content["introduction"] = HOSTILE + " " + content["introduction"]
    content["sections"][0]["paragraphs"].append({"text": HOSTILE, "sentences": [HOSTILE], "speaker": "Mallory <b>",
                                                 "role": "text"})
    content["faq"].append({"question": "What is <script>?", "answer": HOSTILE, "startMs": 1000, "source": "topic"})
    uploaded = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    video = VideoInfo(video_id=7, name='Fusion "talk" <live>', description=None, duration_ms=3_723_400,
                      uploaded_at=uploaded, content_url=VIDEO_URL, content_type="video/mp4", width=1280, height=720,
                      size_bytes=1_000_000, thumbnail_url=THUMB_URL, thumbnail_width=1280, thumbnail_height=720)
    return ExportSource(article_id=42, title='Fusion & ITER: "what" <now>', original_title=content["title"],
                        language="en", writing_style="conversational", content=content,
                        keywords=content["keywords_primary"], created_at=uploaded, updated_at=uploaded,
                        url="https://api.example.com/v1/articles/42/export/html",
                        scores={"aeo_score": 80, "geo_score": 70, "composite_score": 73.0}, video=video)
