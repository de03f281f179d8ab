"""The six exports of an article, as pure functions: what a user pastes or publishes as it is.

``html`` (a complete HTML5 document), ``markdown`` (CommonMark), ``txt`` (plain text), ``json`` (the
structured article), ``schema`` (JSON-LD: ``Article``, ``VideoObject`` with its key moments and a
``SeekToAction``, ``FAQPage``) and ``opengraph`` (``og:*`` and ``twitter:*`` meta elements). Each
renders an ``ExportSource``: the stored article, the display title, the video it came from and the
URLs the caller chose (the canonical address of the article, the video's file or player and its
thumbnail: addresses a person published them at, or the service's public links, which do not
expire). Renderers take no clock and no I/O: the same source always gives the same bytes,
which is what the export's ETag is a digest of.

Everything that came from a transcript or a client is hostile text. Control characters are dropped
and whitespace collapsed before any format sees it; then each format escapes for itself: HTML
escapes ``& < > " '`` in text and attributes; the JSON-LD inside ``<script>`` has ``<``, ``>``, ``&``
and the line separators U+2028/U+2029 as ``\\u`` escapes, so that no text can close the script
element or open a comment; Markdown backslash-escapes every character CommonMark gives a meaning
in a line (``\\ ` * _ { } [ ] < > # ! | ~ &``) and those that mean something at its start (``+ - =``
and ``1.``), so a sentence stays a sentence.

The source and the pieces the formats share are ``domain.export_source``'s. Chapters are the
article's sections, each with the time range of the chapter it was written from:
their links are the video's URL with a Media Fragments time (``#t=<seconds>``), which browsers and
players seek to.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from domain.export_source import (
    ExportSource,
    Prepared,
    at_time,
    clean,
    html_instant,
    iso_duration,
    prepared,
    timestamp,
)
from domain.languages import table

HEADLINE_CHARS = 110  # the longest headline Google's Article rich results take
LOCALES = table("locale")
# What CommonMark gives a meaning anywhere in a line, and what it does only at the start of one
# (a list item, a thematic break or setext underline, an ordered list item).
_MARKDOWN_INLINE = re.compile(r"([\\`*_{}\[\]<>#!|~&])")
_MARKDOWN_LINE_START = "+-="
_MARKDOWN_LIST_START = re.compile(r"^(\d+)([.)])")


# ------------------------------------------------------------------------------------- json


def to_json(src: ExportSource | Prepared) -> dict[str, Any]:
    """The structured article: sections, key facts with timestamps, chapters, FAQ, sources."""
    p = prepared(src)
    article, video = p.src, p.src.video
    return {
        "id": article.article_id, "title": p.title, "original_title": p.original_title,
        "language": article.language, "writing_style": article.writing_style, "origin": article.origin,
        "source_article_id": article.source_article_id, "url": article.url, "description": p.description,
        "created_at": article.created_at.isoformat(), "updated_at": article.updated_at.isoformat(),
        "keywords": p.keywords, "introduction": p.introduction,
        "sections": [{**{k: v for k, v in s.items() if k != "paragraphs"},
                      "paragraphs": [{"text": text, "speaker": speaker, "role": role}
                                     for text, speaker, role in s["paragraphs"]]} for s in p.sections],
        "key_facts": p.key_facts,
        "chapters": p.chapters,
        "faq": p.faq,
        "conclusion": p.conclusion,
        "sources": p.sources,
        "scores": article.scores,
        "word_count": article.content.get("word_count"),
        "video": None if video is None else {
            "id": video.video_id, "name": clean(video.name), "description": clean(video.description) or None,
            "duration_seconds": round(video.duration_ms / 1000, 3), "duration": iso_duration(video.duration_ms),
            "upload_date": video.uploaded_at.isoformat(), "content_url": video.content_url,
            "content_type": video.content_type, "width": video.width, "height": video.height,
            "thumbnail_url": video.thumbnail_url, "embed_url": video.embed_url},
    }


# ----------------------------------------------------------------------------------- schema


def _clips(p: Prepared, duration_ms: int) -> list[dict[str, Any]]:
    """The chapters as ``Clip`` key moments, each with the name, offsets and URL search engines
    require: a chapter without an end ends where the next one starts, the last at the video's end."""
    chapters = p.chapters
    out = []
    for index, c in enumerate(chapters):
        start = c["startMs"] // 1000
        end_ms = c["endMs"] if c["endMs"] is not None else (
            chapters[index + 1]["startMs"] if index + 1 < len(chapters) else duration_ms)
        out.append({"@type": "Clip", "name": c["title"] or c["timestamp"], "startOffset": start,
                    "endOffset": max(start + 1, -(-end_ms // 1000)), "url": c["url"]})
    return out


def to_schema(src: ExportSource | Prepared) -> dict[str, Any]:
    """JSON-LD: the ``Article``, the ``VideoObject`` it came from with what video rich results need
    (name, thumbnailUrl, uploadDate, description, duration, contentUrl or embedUrl), its chapters as ``Clip``
    key moments and a ``SeekToAction``, and an ``FAQPage`` of the answered questions."""
    p = prepared(src)
    article_src, video = p.src, p.src.video
    url = article_src.url
    graph: list[dict[str, Any]] = []
    article: dict[str, Any] = {
        "@type": "Article", "@id": f"{url}#article", "url": url, "mainEntityOfPage": url,
        "headline": p.title if len(p.title) <= HEADLINE_CHARS else p.title[:HEADLINE_CHARS - 1].rstrip() + "…",
        "name": p.title, "description": p.description, "inLanguage": article_src.language,
        "datePublished": article_src.created_at.isoformat(), "dateModified": article_src.updated_at.isoformat(),
        "articleSection": [c["title"] for c in p.chapters if c["title"]],
    }
    if p.keywords:
        article["keywords"] = ", ".join(p.keywords)
    if isinstance(article_src.content.get("word_count"), int):
        article["wordCount"] = article_src.content["word_count"]
    cited = [s["name"] for s in p.sources if s["type"] == "cited"]
    if cited:
        article["citation"] = cited
    graph.append(article)
    if video is not None:
        video_id = f"{url}#video"
        obj: dict[str, Any] = {
            "@type": "VideoObject", "@id": video_id, "name": clean(video.name) or p.title,
            "description": clean(video.description) or p.description, "uploadDate": video.uploaded_at.isoformat(),
            "duration": iso_duration(video.duration_ms), "inLanguage": article_src.language,
        }
        if video.thumbnail_url:
            obj["thumbnailUrl"] = [video.thumbnail_url]
            article["image"] = video.thumbnail_url
        if video.embed_url:
            obj["embedUrl"] = video.embed_url
        if p.video_url:
            if video.content_url:
                obj["contentUrl"] = video.content_url
            clips = _clips(p, video.duration_ms)
            if clips:
                obj["hasPart"] = clips
            obj["potentialAction"] = {"@type": "SeekToAction",
                                      "target": at_time(p.video_url, "{seek_to_second_number}"),
                                      "startOffset-input": "required name=seek_to_second_number"}
        article["video"] = {"@id": video_id}
        graph.append(obj)
    if p.faq:
        graph.append({"@type": "FAQPage", "@id": f"{url}#faq", "inLanguage": article_src.language,
                      "mainEntity": [{"@type": "Question", "name": f["question"],
                                      "acceptedAnswer": {"@type": "Answer", "text": f["answer"]}} for f in p.faq]})
    return {"@context": "https://schema.org", "@graph": graph}


def _json_text(value: Any) -> str:
    """Compact JSON, UTF-8 as is (the standard library's C encoder)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def script_safe_json(value: Any) -> str:
    """JSON that may sit inside ``<script>``: ``<``, ``>``, ``&`` and U+2028/U+2029 escaped, so no
    string can end the element (``</script>``) or open a comment (``<!--``)."""
    return (_json_text(value).replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# -------------------------------------------------------------------------------- opengraph


def _e(text: str) -> str:
    """Cleaned text escaped for HTML text and attribute values."""
    return html.escape(text, quote=True)


def _meta(attribute: str, name: str, value: Any) -> str:
    return f'<meta {attribute}="{name}" content="{_e(clean(value))}">'


def opengraph_tags(src: ExportSource | Prepared) -> list[str]:
    """``og:*`` (type ``video.other`` when the video can be linked, else ``article``) and
    ``twitter:*`` meta elements."""
    p = prepared(src)
    article, video = p.src, p.src.video
    playable = p.video_url is not None
    tags = [_meta("property", "og:type", "video.other" if playable else "article"),
            _meta("property", "og:title", p.title), _meta("property", "og:description", p.description),
            _meta("property", "og:url", article.url)]
    code = (article.language or "").lower().split("-")[0]
    if code in LOCALES:
        tags.append(_meta("property", "og:locale", LOCALES[code]))
    has_image = video is not None and bool(video.thumbnail_url)
    if has_image:
        assert video is not None  # an image only from the video
        tags.append(_meta("property", "og:image", video.thumbnail_url))
        if video.thumbnail_width and video.thumbnail_height:
            tags += [_meta("property", "og:image:width", video.thumbnail_width),
                     _meta("property", "og:image:height", video.thumbnail_height)]
        tags.append(_meta("property", "og:image:alt", p.title))
    if playable:
        assert video is not None and p.video_url is not None  # a video URL only from the video
        tags.append(_meta("property", "og:video", p.video_url))
        if p.video_url.startswith("https://"):
            tags.append(_meta("property", "og:video:secure_url", p.video_url))
        tags.append(_meta("property", "og:video:type", video.content_type if video.content_url else "text/html"))
        if video.width and video.height:
            tags += [_meta("property", "og:video:width", video.width),
                     _meta("property", "og:video:height", video.height)]
        tags.append(_meta("property", "video:duration", max(0, round(video.duration_ms / 1000))))
    else:
        tags += [_meta("property", "article:published_time", article.created_at.isoformat()),
                 _meta("property", "article:modified_time", article.updated_at.isoformat())]
    tags += [_meta("name", "twitter:card", "summary_large_image" if has_image else "summary"),
             _meta("name", "twitter:title", p.title), _meta("name", "twitter:description", p.description)]
    if has_image:
        assert video is not None
        tags += [_meta("name", "twitter:image", video.thumbnail_url), _meta("name", "twitter:image:alt", p.title)]
    return tags


def to_opengraph(src: ExportSource | Prepared) -> str:
    """The meta elements as an HTML fragment, one per line, for a page's ``<head>``."""
    return "\n".join(opengraph_tags(src)) + "\n"


# ------------------------------------------------------------------------------------- html


def _time_link(p: Prepared, ms: int | None) -> str:
    url = p.seek_url(ms)
    if url is None or ms is None:
        return ""
    stamp = timestamp(ms)
    return f' <a class="timestamp" href="{_e(url)}" title="{_e(p.labels["watch"])} {stamp}">{stamp}</a>'


def to_html(src: ExportSource | Prepared) -> str:
    """A complete HTML5 document: ``<head>`` with the description, the canonical link, the Open
    Graph tags and the JSON-LD; an ``<article>`` with the chapters as timestamped links, the
    sections (attributed paragraphs as quotations), the key facts, the FAQ and the conclusion."""
    p = prepared(src)
    label, article, video = p.labels, p.src, p.src.video
    head = ['<meta charset="utf-8">', '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(p.title)}</title>", f'<meta name="description" content="{_e(p.description)}">',
            f'<link rel="canonical" href="{_e(clean(article.url))}">', *opengraph_tags(p),
            f'<script type="application/ld+json">{script_safe_json(to_schema(p))}</script>']
    created = article.created_at
    body = ["<article>", f"<header><h1>{_e(p.title)}</h1>",
            f'<p><time datetime="{html_instant(created)}">{created.date().isoformat()}</time></p>', "</header>"]
    if p.introduction:
        body.append(f'<section><h2>{_e(label["introduction"])}</h2><p>{_e(p.introduction)}</p></section>')
    if p.chapters and p.video_url:
        items = "".join(f'<li><a href="{_e(c["url"])}">{c["timestamp"]}</a> {_e(c["title"])}</li>'
                        for c in p.chapters)
        body.append(f'<nav aria-label="{_e(label["chapters"])}"><h2>{_e(label["chapters"])}</h2><ol>{items}</ol></nav>')
    if p.key_facts:
        items = "".join(f"<li>{_e(f['text'])}{_time_link(p, f['startMs'])}</li>" for f in p.key_facts)
        body.append(f'<section><h2>{_e(label["key_facts"])}</h2><ul>{items}</ul></section>')
    for number, section in enumerate(p.sections, start=1):
        parts = [f'<section id="chapter-{number}"><h2>{_e(section["heading"])}</h2>']
        if section["startMs"] is not None and p.video_url:
            parts.append(f"<p>{_time_link(p, section['startMs']).strip()}</p>")
        for text, speaker, role in section["paragraphs"]:
            if speaker:
                parts.append(f'<blockquote class="{_e(role)}"><p>{_e(text)}</p><footer>— <cite>{_e(speaker)}</cite>'
                             "</footer></blockquote>")
            else:
                parts.append(f"<p>{_e(text)}</p>")
        parts.append("</section>")
        body.append("".join(parts))
    if p.faq:
        items = "".join(f"<h3>{_e(f['question'])}</h3><p>{_e(f['answer'])}</p>" for f in p.faq)
        body.append(f'<section><h2>{_e(label["faq"])}</h2>{items}</section>')
    if p.conclusion:
        body.append(f'<section><h2>{_e(label["conclusion"])}</h2><p>{_e(p.conclusion)}</p></section>')
    if video is not None:
        name = _e(clean(video.name))
        shown = f'<a href="{_e(p.video_url)}">{name}</a>' if p.video_url else name
        body.append(f"<footer><p>{_e(label['source'])}: {shown}</p></footer>")
    body.append("</article>")
    return ("<!DOCTYPE html>\n" + f'<html lang="{_e(clean(article.language))}">\n<head>\n' + "\n".join(head)
            + "\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


# --------------------------------------------------------------------------------- markdown


def _md(text: str) -> str:
    """Cleaned text escaped so that CommonMark reads it as the text itself."""
    escaped = _MARKDOWN_INLINE.sub(r"\\\1", text)
    if escaped[:1] in _MARKDOWN_LINE_START and escaped:
        return "\\" + escaped
    return _MARKDOWN_LIST_START.sub(r"\1\\\2", escaped) if escaped[:1].isdigit() else escaped


def md_escape(text: Any) -> str:
    """Any text as inline Markdown that CommonMark reads as the text itself."""
    return _md(clean(text))


def _md_link(text: str, url: str | None) -> str:
    """A link of cleaned text to a URL the service made (its few special characters percent-escaped)."""
    if not url:
        return _md(text)
    safe = url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")
    return f"[{_md(text)}](<{safe}>)"


def to_markdown(src: ExportSource | Prepared) -> str:
    p = prepared(src)
    label = p.labels
    out = [f"# {_md(p.title)}", ""]
    if p.introduction:
        out += [f"## {_md(label['introduction'])}", "", _md(p.introduction), ""]
    if p.chapters:
        out += [f"## {_md(label['chapters'])}", ""]
        out += [f"- {_md_link(c['timestamp'], c['url'])} {_md(c['title'])}" for c in p.chapters] + [""]
    if p.key_facts:
        out += [f"## {_md(label['key_facts'])}", ""]
        out += [f"- {_md(f['text'])}" + (f" ({_md_link(f['timestamp'], f['url'])})" if f["timestamp"] else "")
                for f in p.key_facts] + [""]
    for section in p.sections:
        out += [f"## {_md(section['heading'])}", ""]
        for text, speaker, _ in section["paragraphs"]:
            out += [f"> {_md(text)}\n>\n> — *{_md(speaker)}*" if speaker else _md(text), ""]
    if p.faq:
        out += [f"## {_md(label['faq'])}", ""]
        for f in p.faq:
            out += [f"### {_md(f['question'])}", "", _md(f["answer"]), ""]
    if p.conclusion:
        out += [f"## {_md(label['conclusion'])}", "", _md(p.conclusion), ""]
    if p.src.video is not None:
        out += [f"{_md(label['source'])}: {_md_link(clean(p.src.video.name), p.video_url)}", ""]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------------- text


def to_text(src: ExportSource | Prepared) -> str:
    """Plain text without markup: headings as lines of their own, timestamps as ``(1:23)``."""
    p = prepared(src)
    label = p.labels
    out = [p.title, ""]
    if p.introduction:
        out += [label["introduction"], p.introduction, ""]
    if p.chapters:
        out += [label["chapters"]] + [f"{c['timestamp']} {c['title']}" for c in p.chapters] + [""]
    if p.key_facts:
        out += [label["key_facts"]] + [f["text"] + (f" ({f['timestamp']})" if f["timestamp"] else "")
                                       for f in p.key_facts] + [""]
    for section in p.sections:
        out.append(section["heading"])
        out += [f"{speaker}: {text}" if speaker else text for text, speaker, _ in section["paragraphs"]]
        out.append("")
    if p.faq:
        out.append(label["faq"])
        for f in p.faq:
            out += [f"{label['question']}: {f['question']}", f"{label['answer']}: {f['answer']}", ""]
    if p.conclusion:
        out += [label["conclusion"], p.conclusion, ""]
    if p.src.video is not None:
        out += [f"{label['source']}: {clean(p.src.video.name)}" + (f" {p.video_url}" if p.video_url else ""), ""]
    return "\n".join(out).rstrip() + "\n"


# ----------------------------------------------------------------------------------- render


@dataclass(frozen=True)
class ExportFormat:
    """Everything about one export format, declared once: the API's path parameter and its
    validation, the response's content type and a download's extension, the assistant's words for
    it, the generated document's description. A format declared here is served, validated,
    recorded (``ExportReady``) and nameable to the assistant without another list to edit.

    ``render`` takes the prepared source and gives the bytes (UTF-8; the JSON formats are the
    documents themselves, compact, with no envelope). ``assistant_words`` are phrases as the
    planner sees a message (lower case, accents folded); ``assistant_rank`` orders the formats when
    the planner looks for them: a clause naming several takes the lowest rank, and a name that holds
    another ("json ld" holds "json") must rank before it. ``shows_poster``: the export shows the
    video's thumbnail (its URL and size), so the poster must exist before it renders.
    ``sandboxed``: a browser would run it as a page, so it is served with ``Content-Security-Policy:
    sandbox`` (no script of a stored page runs with the API's origin)."""

    name: str
    render: Callable[[Prepared], bytes]
    content_type: str
    extension: str
    described_as: str  # what the generated API document says the body is
    assistant_words: tuple[str, ...]
    assistant_rank: int
    shows_poster: bool = False
    sandboxed: bool = False
    assistant_default: bool = False


EXPORT_FORMATS: dict[str, ExportFormat] = {f.name: f for f in (
    ExportFormat("html", lambda p: to_html(p).encode(), "text/html; charset=utf-8", "html",
                 "a complete HTML5 document", ("html", "web page", "page web"), 3,
                 shows_poster=True, sandboxed=True),
    ExportFormat("markdown", lambda p: to_markdown(p).encode(), "text/markdown; charset=utf-8", "md",
                 "CommonMark", ("markdown", "md"), 2,
                 # what a person reading a conversation can read as it is
                 assistant_default=True),
    ExportFormat("json", lambda p: _json_text(to_json(p)).encode(), "application/json", "json",
                 "the structured article (json)", ("json",), 5, shows_poster=True),
    ExportFormat("schema", lambda p: script_safe_json(to_schema(p)).encode(), "application/ld+json", "jsonld",
                 "JSON-LD (schema)", ("json-ld", "jsonld", "json ld", "schema", "schema.org", "donnees structurees",
                                      "structured data"), 0, shows_poster=True),
    ExportFormat("opengraph", lambda p: to_opengraph(p).encode(), "text/html; charset=utf-8", "html",
                 "og:* and twitter:* meta elements", ("open graph", "opengraph", "og"), 1,
                 shows_poster=True, sandboxed=True),
    ExportFormat("txt", lambda p: to_text(p).encode(), "text/plain; charset=utf-8", "txt",
                 "plain text", ("txt", "plain text", "texte brut", "text", "texte"), 4),
)}
FORMATS = tuple(EXPORT_FORMATS)  # the names, in the order the API lists them
ASSISTANT_DEFAULT_FORMAT = next(f.name for f in EXPORT_FORMATS.values() if f.assistant_default)


def export_format(name: str) -> ExportFormat:
    """The format named ``name``; ValueError naming the formats there are."""
    try:
        return EXPORT_FORMATS[name]
    except KeyError:
        raise ValueError(f"export format must be one of {', '.join(FORMATS)}") from None


def render(name: str, src: ExportSource) -> bytes:
    """The export's bytes (UTF-8)."""
    return export_format(name).render(Prepared(src))
