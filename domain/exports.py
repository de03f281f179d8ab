"""The six exports of an article, as pure functions: what a user pastes or publishes as it is.

``html`` (a complete HTML5 document), ``markdown`` (CommonMark), ``txt`` (plain text), ``json`` (the
structured article), ``schema`` (JSON-LD: ``Article``, ``VideoObject`` with its key moments and a
``SeekToAction``, ``FAQPage``) and ``opengraph`` (``og:*`` and ``twitter:*`` meta elements). Each
renders an ``ExportSource``: the stored article, the display title, the video it came from and the
URLs the caller made (the canonical address of the article, a signed URL of the video and of its
thumbnail). Renderers take no clock and no I/O: the same source always gives the same bytes,
which is what the export's ETag is a digest of.

Everything that came from a transcript or a client is hostile text. Control characters are dropped
and whitespace collapsed before any format sees it; then each format escapes for itself: HTML
escapes ``& < > " '`` in text and attributes; the JSON-LD inside ``<script>`` has ``<``, ``>``, ``&``
and the line separators U+2028/U+2029 as ``\\u`` escapes, so that no text can close the script
element or open a comment; Markdown backslash-escapes every character CommonMark gives a meaning
in a line (``\\ ` * _ { } [ ] < > # ! | ~ &``) and those that mean something at its start (``+ - =``
and ``1.``), so a sentence stays a sentence.

Chapters are the article's sections, each with the time range of the chapter it was written from:
their links are the video's URL with a Media Fragments time (``#t=<seconds>``), which browsers and
players seek to.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from domain.analysis.scoring import cited_sources

FORMATS = ("html", "markdown", "json", "schema", "opengraph", "txt")
CONTENT_TYPES = {
    "html": "text/html; charset=utf-8",
    "markdown": "text/markdown; charset=utf-8",
    "txt": "text/plain; charset=utf-8",
    "json": "application/json",
    "schema": "application/ld+json",
    "opengraph": "text/html; charset=utf-8",
}
EXTENSIONS = {"html": "html", "markdown": "md", "txt": "txt", "json": "json", "schema": "jsonld",
              "opengraph": "html"}
DESCRIPTION_CHARS = 160  # what search and social previews show of a description
HEADLINE_CHARS = 110  # the longest headline Google's Article rich results take

LABELS = {
    "fr": {"introduction": "Introduction", "chapters": "Chapitres", "key_facts": "Points clés",
           "faq": "Questions fréquentes", "conclusion": "Conclusion", "source": "Source", "watch": "Voir à",
           "question": "Q", "answer": "R"},
    "en": {"introduction": "Introduction", "chapters": "Chapters", "key_facts": "Key facts",
           "faq": "Frequently asked questions", "conclusion": "Conclusion", "source": "Source", "watch": "Watch at",
           "question": "Q", "answer": "A"},
    "de": {"introduction": "Einleitung", "chapters": "Kapitel", "key_facts": "Kernaussagen",
           "faq": "Häufige Fragen", "conclusion": "Fazit", "source": "Quelle", "watch": "Ansehen ab",
           "question": "F", "answer": "A"},
    "es": {"introduction": "Introducción", "chapters": "Capítulos", "key_facts": "Datos clave",
           "faq": "Preguntas frecuentes", "conclusion": "Conclusión", "source": "Fuente", "watch": "Ver en",
           "question": "P", "answer": "R"},
    "it": {"introduction": "Introduzione", "chapters": "Capitoli", "key_facts": "Punti chiave",
           "faq": "Domande frequenti", "conclusion": "Conclusione", "source": "Fonte", "watch": "Guarda a",
           "question": "D", "answer": "R"},
    "pt": {"introduction": "Introdução", "chapters": "Capítulos", "key_facts": "Factos principais",
           "faq": "Perguntas frequentes", "conclusion": "Conclusão", "source": "Fonte", "watch": "Ver em",
           "question": "P", "answer": "R"},
    "nl": {"introduction": "Inleiding", "chapters": "Hoofdstukken", "key_facts": "Belangrijkste feiten",
           "faq": "Veelgestelde vragen", "conclusion": "Conclusie", "source": "Bron", "watch": "Bekijk vanaf",
           "question": "V", "answer": "A"},
}
LOCALES = {"fr": "fr_FR", "en": "en_US", "de": "de_DE", "es": "es_ES", "it": "it_IT", "pt": "pt_PT", "nl": "nl_NL"}
ATTRIBUTED_STYLES = ("conversational", "interview")  # the styles whose paragraphs show their speaker

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
# What CommonMark gives a meaning anywhere in a line, and what it does only at the start of one
# (a heading, a list item, a thematic break or setext underline, an ordered list item).
_MARKDOWN_INLINE = re.compile(r"([\\`*_{}\[\]<>#!|~&])")
_MARKDOWN_LINE_START = re.compile(r"^([+\-=])")
_MARKDOWN_LIST_START = re.compile(r"^(\d+)([.)])")


@dataclass(frozen=True)
class VideoInfo:
    """The video an article came from, as exports show it."""

    video_id: int
    name: str
    description: str | None
    duration_ms: int
    uploaded_at: datetime
    content_url: str | None
    content_type: str
    width: int | None = None
    height: int | None = None
    size_bytes: int | None = None
    thumbnail_url: str | None = None
    thumbnail_width: int | None = None
    thumbnail_height: int | None = None


@dataclass(frozen=True)
class ExportSource:
    """One article as the exports render it. ``title`` is the display title (the custom name when
    the article has one); ``url`` is where the article lives (its canonical address)."""

    article_id: int
    title: str
    original_title: str
    language: str
    writing_style: str
    content: dict
    keywords: list[str]
    created_at: datetime
    updated_at: datetime
    url: str
    scores: dict = field(default_factory=dict)
    origin: str = "analysis"
    source_article_id: int | None = None
    video: VideoInfo | None = None


# ------------------------------------------------------------------------------ shared pieces


def clean(text: Any) -> str:
    """Hostile text made inert for every format: no control or bidi-override character, one space
    between words."""
    return " ".join(_CONTROL_RE.sub("", str(text or "")).split())


def labels(language: str) -> dict[str, str]:
    code = (language or "").lower().split("-")[0].split("_")[0]
    return LABELS.get(code, LABELS["en"])


def timestamp(ms: int | None) -> str:
    """0:05, 4:05, 1:02:03: how video sites write a time."""
    seconds = max(0, int(ms or 0) // 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def iso_duration(ms: int) -> str:
    """ISO 8601 duration, whole seconds: PT1H2M3S, PT45S, PT0S."""
    seconds = max(0, round(ms / 1000))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    return out + (f"{secs}S" if secs or out == "PT" else "")


def seek_url(src: ExportSource, ms: int | None) -> str | None:
    """The video at a time (Media Fragments ``#t=<seconds>``), or None without a video URL."""
    if src.video is None or not src.video.content_url or ms is None:
        return None
    return f"{src.video.content_url}#t={max(0, int(ms) // 1000)}"


def description(src: ExportSource) -> str:
    """The introduction (else the first paragraph), cut at a word before ``DESCRIPTION_CHARS``."""
    content = src.content
    text = clean(content.get("introduction"))
    if not text:
        first = next((p.get("text") for s in content.get("sections") or [] for p in s.get("paragraphs") or []), "")
        text = clean(first) or clean(src.title)
    if len(text) <= DESCRIPTION_CHARS:
        return text
    cut = text[:DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:")
    return cut + "…"


def _named(speaker: Any) -> str | None:
    name = clean(speaker)
    return name if name and name.lower() not in ("unknown", "inconnu") else None


def paragraphs(src: ExportSource, section: dict) -> list[tuple[str, str | None, str]]:
    """(text, speaker shown or None, role) of each paragraph of a section."""
    out = []
    for paragraph in section.get("paragraphs") or []:
        text = clean(paragraph.get("text") or " ".join(paragraph.get("sentences") or []))
        if not text:
            continue
        speaker = _named(paragraph.get("speaker")) if src.writing_style in ATTRIBUTED_STYLES else None
        out.append((text, speaker, paragraph.get("role") or "text"))
    return out


def chapters(src: ExportSource) -> list[dict]:
    """The article's sections as the video's chapters: title, time range, timestamp, link."""
    out = []
    for section in src.content.get("sections") or []:
        start = section.get("startMs")
        if not isinstance(start, int):
            continue
        end = section.get("endMs") if isinstance(section.get("endMs"), int) else None
        out.append({"title": clean(section.get("heading")), "startMs": start, "endMs": end,
                    "timestamp": timestamp(start), "url": seek_url(src, start)})
    return out


def _faq(src: ExportSource) -> list[dict]:
    return [{"question": clean(f.get("question")), "answer": clean(f.get("answer")), "startMs": f.get("startMs")}
            for f in src.content.get("faq") or [] if clean(f.get("question")) and clean(f.get("answer"))]


def _key_facts(src: ExportSource) -> list[dict]:
    out = []
    for fact in src.content.get("key_facts") or []:
        text = clean(fact.get("text"))
        if text:
            start = fact.get("startMs") if isinstance(fact.get("startMs"), int) else None
            out.append({"text": text, "startMs": start, "timestamp": timestamp(start) if start is not None else None,
                        "claimId": fact.get("claimId"), "url": seek_url(src, start)})
    return out


def _all_text(src: ExportSource) -> list[str]:
    content = src.content
    texts = [clean(content.get("introduction"))]
    for section in content.get("sections") or []:
        texts += [text for text, _, _ in paragraphs(src, section)]
    texts += [f["answer"] for f in _faq(src)] + [clean(content.get("conclusion"))]
    return [t for t in texts if t]


def sources(src: ExportSource) -> list[dict]:
    """The video the article was written from, then the sources its text names."""
    out: list[dict] = []
    if src.video is not None:
        out.append({"type": "video", "name": clean(src.video.name), "url": src.video.content_url,
                    "uploadDate": src.video.uploaded_at.isoformat()})
    out += [{"type": "cited", "name": clean(s["source"]), "text": clean(s["text"])}
            for s in cited_sources(_all_text(src))]
    return out


# ------------------------------------------------------------------------------------- json


def to_json(src: ExportSource) -> dict:
    """The structured article: sections, key facts with timestamps, chapters, FAQ, sources."""
    content = src.content
    video = src.video
    return {
        "id": src.article_id, "title": clean(src.title), "original_title": clean(src.original_title),
        "language": src.language, "writing_style": src.writing_style, "origin": src.origin,
        "source_article_id": src.source_article_id, "url": src.url, "description": description(src),
        "created_at": src.created_at.isoformat(), "updated_at": src.updated_at.isoformat(),
        "keywords": [clean(k) for k in src.keywords if clean(k)],
        "introduction": clean(content.get("introduction")),
        "sections": [{"heading": clean(s.get("heading")), "startMs": s.get("startMs"), "endMs": s.get("endMs"),
                      "timestamp": timestamp(s.get("startMs")) if isinstance(s.get("startMs"), int) else None,
                      "url": seek_url(src, s.get("startMs")),
                      "paragraphs": [{"text": text, "speaker": speaker, "role": role}
                                     for text, speaker, role in paragraphs(src, s)]}
                     for s in content.get("sections") or []],
        "key_facts": _key_facts(src),
        "chapters": chapters(src),
        "faq": _faq(src),
        "conclusion": clean(content.get("conclusion")),
        "sources": sources(src),
        "scores": src.scores,
        "word_count": content.get("word_count"),
        "video": None if video is None else {
            "id": video.video_id, "name": clean(video.name), "description": clean(video.description) or None,
            "duration_seconds": round(video.duration_ms / 1000, 3), "duration": iso_duration(video.duration_ms),
            "upload_date": video.uploaded_at.isoformat(), "content_url": video.content_url,
            "content_type": video.content_type, "width": video.width, "height": video.height,
            "thumbnail_url": video.thumbnail_url},
    }


# ----------------------------------------------------------------------------------- schema


def to_schema(src: ExportSource) -> dict:
    """JSON-LD: the ``Article``, the ``VideoObject`` it came from with what video rich results need
    (name, thumbnailUrl, uploadDate, description, duration, contentUrl), its chapters as ``Clip``
    key moments and a ``SeekToAction``, and an ``FAQPage`` of the answered questions."""
    title = clean(src.title)
    graph: list[dict] = []
    article: dict[str, Any] = {
        "@type": "Article", "@id": f"{src.url}#article", "url": src.url, "mainEntityOfPage": src.url,
        "headline": title if len(title) <= HEADLINE_CHARS else title[:HEADLINE_CHARS - 1].rstrip() + "…",
        "name": title, "description": description(src), "inLanguage": src.language,
        "datePublished": src.created_at.isoformat(), "dateModified": src.updated_at.isoformat(),
        "articleSection": [c["title"] for c in chapters(src) if c["title"]],
    }
    keywords = [clean(k) for k in src.keywords if clean(k)]
    if keywords:
        article["keywords"] = ", ".join(keywords)
    if isinstance(src.content.get("word_count"), int):
        article["wordCount"] = src.content["word_count"]
    cited = [s for s in sources(src) if s["type"] == "cited"]
    if cited:
        article["citation"] = [s["name"] for s in cited]
    graph.append(article)
    video = src.video
    if video is not None:
        video_id = f"{src.url}#video"
        obj: dict[str, Any] = {
            "@type": "VideoObject", "@id": video_id, "name": clean(video.name) or title,
            "description": clean(video.description) or description(src), "uploadDate": video.uploaded_at.isoformat(),
            "duration": iso_duration(video.duration_ms), "inLanguage": src.language,
        }
        if video.thumbnail_url:
            obj["thumbnailUrl"] = [video.thumbnail_url]
            article["image"] = video.thumbnail_url
        if video.content_url:
            obj["contentUrl"] = video.content_url
            clips = [{"@type": "Clip", "name": c["title"] or c["timestamp"], "startOffset": c["startMs"] // 1000,
                      **({"endOffset": max(c["startMs"] // 1000 + 1, -(-c["endMs"] // 1000))}
                         if c["endMs"] is not None else {}),
                      "url": c["url"]} for c in chapters(src)]
            if clips:
                obj["hasPart"] = clips
            obj["potentialAction"] = {"@type": "SeekToAction",
                                      "target": f"{video.content_url}#t={{seek_to_second_number}}",
                                      "startOffset-input": "required name=seek_to_second_number"}
        article["video"] = {"@id": video_id}
        graph.append(obj)
    faq = _faq(src)
    if faq:
        graph.append({"@type": "FAQPage", "@id": f"{src.url}#faq", "inLanguage": src.language,
                      "mainEntity": [{"@type": "Question", "name": f["question"],
                                      "acceptedAnswer": {"@type": "Answer", "text": f["answer"]}} for f in faq]})
    return {"@context": "https://schema.org", "@graph": graph}


def script_safe_json(value: Any, indent: int | None = None) -> str:
    """JSON that may sit inside ``<script>``: ``<``, ``>``, ``&`` and U+2028/U+2029 escaped, so no
    string can end the element (``</script>``) or open a comment (``<!--``)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    return (text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# -------------------------------------------------------------------------------- opengraph


def _meta(attribute: str, name: str, value: Any) -> str:
    return f'<meta {attribute}="{name}" content="{html.escape(clean(value), quote=True)}">'


def opengraph_tags(src: ExportSource) -> list[str]:
    """``og:*`` (type ``video.other`` when the video can be linked, else ``article``) and
    ``twitter:*`` meta elements."""
    video = src.video
    playable = video is not None and bool(video.content_url)
    tags = [_meta("property", "og:type", "video.other" if playable else "article"),
            _meta("property", "og:title", src.title), _meta("property", "og:description", description(src)),
            _meta("property", "og:url", src.url)]
    code = (src.language or "").lower().split("-")[0]
    if code in LOCALES:
        tags.append(_meta("property", "og:locale", LOCALES[code]))
    if video is not None and video.thumbnail_url:
        tags.append(_meta("property", "og:image", video.thumbnail_url))
        if video.thumbnail_width and video.thumbnail_height:
            tags += [_meta("property", "og:image:width", video.thumbnail_width),
                     _meta("property", "og:image:height", video.thumbnail_height)]
        tags.append(_meta("property", "og:image:alt", src.title))
    if playable:
        tags.append(_meta("property", "og:video", video.content_url))
        if video.content_url.startswith("https://"):
            tags.append(_meta("property", "og:video:secure_url", video.content_url))
        tags.append(_meta("property", "og:video:type", video.content_type))
        if video.width and video.height:
            tags += [_meta("property", "og:video:width", video.width),
                     _meta("property", "og:video:height", video.height)]
        tags.append(_meta("property", "video:duration", max(0, round(video.duration_ms / 1000))))
    else:
        tags += [_meta("property", "article:published_time", src.created_at.isoformat()),
                 _meta("property", "article:modified_time", src.updated_at.isoformat())]
    has_image = video is not None and bool(video.thumbnail_url)
    tags += [_meta("name", "twitter:card", "summary_large_image" if has_image else "summary"),
             _meta("name", "twitter:title", src.title), _meta("name", "twitter:description", description(src))]
    if has_image:
        tags += [_meta("name", "twitter:image", video.thumbnail_url), _meta("name", "twitter:image:alt", src.title)]
    return tags


def to_opengraph(src: ExportSource) -> str:
    """The meta elements as an HTML fragment, one per line, for a page's ``<head>``."""
    return "\n".join(opengraph_tags(src)) + "\n"


# ------------------------------------------------------------------------------------- html


def _e(text: Any) -> str:
    return html.escape(clean(text), quote=True)


def _time_link(src: ExportSource, ms: int | None) -> str:
    url = seek_url(src, ms)
    if url is None or ms is None:
        return ""
    label = labels(src.language)["watch"]
    return f' <a class="timestamp" href="{_e(url)}" title="{_e(label)} {timestamp(ms)}">{timestamp(ms)}</a>'


def to_html(src: ExportSource) -> str:
    """A complete HTML5 document: ``<head>`` with the description, the canonical link, the Open
    Graph tags and the JSON-LD; an ``<article>`` with the chapters as timestamped links, the
    sections (attributed paragraphs as quotations), the key facts, the FAQ and the conclusion."""
    label = labels(src.language)
    content = src.content
    head = ['<meta charset="utf-8">', '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(src.title)}</title>", f'<meta name="description" content="{_e(description(src))}">',
            f'<link rel="canonical" href="{_e(src.url)}">', *opengraph_tags(src),
            f'<script type="application/ld+json">{script_safe_json(to_schema(src))}</script>']
    body = ["<article>", f"<header><h1>{_e(src.title)}</h1>",
            f'<p><time datetime="{_e(src.created_at.isoformat())}">{_e(src.created_at.date().isoformat())}</time></p>',
            "</header>"]
    if clean(content.get("introduction")):
        body.append(f'<section><h2>{_e(label["introduction"])}</h2><p>{_e(content.get("introduction"))}</p></section>')
    marks = chapters(src)
    if marks and src.video is not None and src.video.content_url:
        items = "".join(f'<li><a href="{_e(c["url"])}">{c["timestamp"]}</a> {_e(c["title"])}</li>' for c in marks)
        body.append(f'<nav aria-label="{_e(label["chapters"])}"><h2>{_e(label["chapters"])}</h2><ol>{items}</ol></nav>')
    facts = _key_facts(src)
    if facts:
        items = "".join(f"<li>{_e(f['text'])}{_time_link(src, f['startMs'])}</li>" for f in facts)
        body.append(f'<section><h2>{_e(label["key_facts"])}</h2><ul>{items}</ul></section>')
    for number, section in enumerate(content.get("sections") or [], start=1):
        parts = [f'<section id="chapter-{number}"><h2>{_e(section.get("heading"))}</h2>']
        if isinstance(section.get("startMs"), int):
            parts.append(f"<p>{_time_link(src, section['startMs']).strip()}</p>")
        for text, speaker, role in paragraphs(src, section):
            if speaker:
                parts.append(f'<blockquote class="{_e(role)}"><p>{_e(text)}</p><footer>— <cite>{_e(speaker)}</cite>'
                             "</footer></blockquote>")
            else:
                parts.append(f"<p>{_e(text)}</p>")
        parts.append("</section>")
        body.append("".join(parts))
    faq = _faq(src)
    if faq:
        items = "".join(f"<h3>{_e(f['question'])}</h3><p>{_e(f['answer'])}</p>" for f in faq)
        body.append(f'<section><h2>{_e(label["faq"])}</h2>{items}</section>')
    if clean(content.get("conclusion")):
        body.append(f'<section><h2>{_e(label["conclusion"])}</h2><p>{_e(content.get("conclusion"))}</p></section>')
    if src.video is not None:
        name = _e(src.video.name)
        video = f'<a href="{_e(src.video.content_url)}">{name}</a>' if src.video.content_url else name
        body.append(f"<footer><p>{_e(label['source'])}: {video}</p></footer>")
    body.append("</article>")
    return ("<!DOCTYPE html>\n" + f'<html lang="{_e(src.language)}">\n<head>\n' + "\n".join(head)
            + "\n</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n")


# --------------------------------------------------------------------------------- markdown


def md_escape(text: Any) -> str:
    """Inline text that CommonMark reads as the text itself."""
    escaped = _MARKDOWN_LINE_START.sub(r"\\\1", _MARKDOWN_INLINE.sub(r"\\\1", clean(text)))
    return _MARKDOWN_LIST_START.sub(r"\1\\\2", escaped)


def _md_link(text: str, url: str | None) -> str:
    if not url:
        return md_escape(text)
    safe = url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")
    return f"[{md_escape(text)}](<{safe}>)"


def to_markdown(src: ExportSource) -> str:
    label = labels(src.language)
    content = src.content
    out = [f"# {md_escape(src.title)}", ""]
    if clean(content.get("introduction")):
        out += [f"## {md_escape(label['introduction'])}", "", md_escape(content.get("introduction")), ""]
    marks = chapters(src)
    if marks:
        out += [f"## {md_escape(label['chapters'])}", ""]
        out += [f"- {_md_link(c['timestamp'], c['url'])} {md_escape(c['title'])}" for c in marks] + [""]
    facts = _key_facts(src)
    if facts:
        out += [f"## {md_escape(label['key_facts'])}", ""]
        out += [f"- {md_escape(f['text'])}" + (f" ({_md_link(f['timestamp'], f['url'])})" if f["timestamp"] else "")
                for f in facts] + [""]
    for section in content.get("sections") or []:
        out += [f"## {md_escape(section.get('heading'))}", ""]
        for text, speaker, _ in paragraphs(src, section):
            out += [f"> {md_escape(text)}\n>\n> — *{md_escape(speaker)}*" if speaker else md_escape(text), ""]
    faq = _faq(src)
    if faq:
        out += [f"## {md_escape(label['faq'])}", ""]
        for f in faq:
            out += [f"### {md_escape(f['question'])}", "", md_escape(f["answer"]), ""]
    if clean(content.get("conclusion")):
        out += [f"## {md_escape(label['conclusion'])}", "", md_escape(content.get("conclusion")), ""]
    if src.video is not None:
        out += [f"{md_escape(label['source'])}: {_md_link(src.video.name, src.video.content_url)}", ""]
    return "\n".join(out).rstrip() + "\n"


# ------------------------------------------------------------------------------------- text


def to_text(src: ExportSource) -> str:
    """Plain text without markup: headings as lines of their own, timestamps as ``(1:23)``."""
    label = labels(src.language)
    content = src.content
    out = [clean(src.title), ""]
    if clean(content.get("introduction")):
        out += [label["introduction"], clean(content.get("introduction")), ""]
    marks = chapters(src)
    if marks:
        out += [label["chapters"]] + [f"{c['timestamp']} {c['title']}" for c in marks] + [""]
    facts = _key_facts(src)
    if facts:
        out += [label["key_facts"]] + [f["text"] + (f" ({f['timestamp']})" if f["timestamp"] else "")
                                       for f in facts] + [""]
    for section in content.get("sections") or []:
        out.append(clean(section.get("heading")))
        for text, speaker, _ in paragraphs(src, section):
            out.append(f"{speaker}: {text}" if speaker else text)
        out.append("")
    faq = _faq(src)
    if faq:
        out.append(label["faq"])
        for f in faq:
            out += [f"{label['question']}: {f['question']}", f"{label['answer']}: {f['answer']}", ""]
    if clean(content.get("conclusion")):
        out += [label["conclusion"], clean(content.get("conclusion")), ""]
    if src.video is not None:
        out += [f"{label['source']}: {clean(src.video.name)}" + (f" {src.video.content_url}"
                                                                   if src.video.content_url else ""), ""]
    return "\n".join(out).rstrip() + "\n"


# ----------------------------------------------------------------------------------- render


def render(export_format: str, src: ExportSource) -> bytes:
    """The export's bytes (UTF-8). The JSON formats are the documents themselves, with no envelope."""
    if export_format == "html":
        return to_html(src).encode()
    if export_format == "markdown":
        return to_markdown(src).encode()
    if export_format == "txt":
        return to_text(src).encode()
    if export_format == "opengraph":
        return to_opengraph(src).encode()
    if export_format == "json":
        return json.dumps(to_json(src), ensure_ascii=False, indent=2).encode()
    if export_format == "schema":
        return script_safe_json(to_schema(src), indent=2).encode()
    raise ValueError(f"export format must be one of {', '.join(FORMATS)}")
