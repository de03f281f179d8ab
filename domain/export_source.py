"""What an article's exports render (``domain.exports``): the source (``ExportSource``: the stored
article, its display title, the video it came from and the URLs the caller chose), the pieces every
format shares (a clean text, a timestamp, an ISO duration, a time link) and ``Prepared``, the
source's text cleaned once with the parts every format shows (sections, chapters, key facts, FAQ,
the description, the sources).

Everything that came from a transcript or a client is hostile text: ``clean`` drops control and
bidi-override characters and collapses whitespace before any format sees it; each format then
escapes for itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

from domain.analysis.scoring import cited_sources
from domain.languages import table

DESCRIPTION_CHARS = 160  # what search and social previews show of a description

LABELS = table("labels")  # the article's own labels (domain.languages): one table for both
ATTRIBUTED_STYLES = ("conversational", "interview")  # the styles whose paragraphs show their speaker

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


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
    embed_url: str | None = None  # a player page showing the video (JSON-LD embedUrl)


@dataclass(frozen=True)
class ExportSource:
    """One article as the exports render it. ``title`` is the display title (the custom name when
    the article has one); ``url`` is where the article lives (its canonical address)."""

    article_id: int
    title: str
    original_title: str
    language: str
    writing_style: str
    content: dict[str, Any]
    keywords: list[str]
    created_at: datetime
    updated_at: datetime
    url: str
    scores: dict[str, Any] = field(default_factory=dict)
    origin: str = "analysis"
    source_article_id: int | None = None
    video: VideoInfo | None = None


# ------------------------------------------------------------------------------ shared pieces


def html_instant(moment: datetime) -> str:
    """An instant as HTML's ``datetime`` attribute takes it: UTC, whole seconds (the attribute allows
    at most three digits of a fraction, and a stored instant has six)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def at_time(url: str, seconds: str) -> str:
    """``url`` at a time: its own fragment, if any, replaced by the Media Fragments ``#t=`` (a URL
    holds at most one ``#``)."""
    return f"{url.split('#', 1)[0]}#t={seconds}"


def clean(text: Any) -> str:
    """Hostile text made inert for every format: no control or bidi-override character, one space
    between words."""
    return " ".join(_CONTROL_RE.sub("", str(text or "")).split())


def labels(language: str) -> dict[str, str]:
    code = (language or "").lower().split("-")[0].split("_")[0]
    found: dict[str, str] = LABELS.get(code, LABELS["en"])
    return found


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


def _named(speaker: Any) -> str | None:
    name = clean(speaker)
    return name if name and name.lower() not in ("unknown", "inconnu") else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Prepared:
    """One source's text cleaned once, and the parts every format shares (sections, chapters, key
    facts, FAQ, the description, the sources), each computed the first time a format asks."""

    def __init__(self, src: ExportSource) -> None:
        self.src = src
        self.labels = labels(src.language)
        content = src.content
        self.title = clean(src.title)
        self.original_title = clean(src.original_title)
        self.introduction = clean(content.get("introduction"))
        self.conclusion = clean(content.get("conclusion"))
        self.keywords = [k for k in (clean(k) for k in src.keywords) if k]
        video = src.video
        # where the video is watched: its file, else its player
        self.video_url = (video.content_url or video.embed_url or None) if video is not None else None

    def seek_url(self, ms: int | None) -> str | None:
        """The video at a time (Media Fragments ``#t=<seconds>``), or None without a video URL."""
        if self.video_url is None or ms is None:
            return None
        return at_time(self.video_url, str(max(0, int(ms) // 1000)))

    @cached_property
    def sections(self) -> list[dict[str, Any]]:
        """Each section: heading, time range, timestamp, link, and (text, speaker shown, role) of
        its paragraphs (the speaker only in the styles that show it)."""
        shows_speakers = self.src.writing_style in ATTRIBUTED_STYLES
        out = []
        for section in self.src.content.get("sections") or []:
            start, end = _int(section.get("startMs")), _int(section.get("endMs"))
            paragraphs = []
            for paragraph in section.get("paragraphs") or []:
                text = clean(paragraph.get("text") or " ".join(paragraph.get("sentences") or []))
                if text:
                    speaker = _named(paragraph.get("speaker")) if shows_speakers else None
                    paragraphs.append((text, speaker, paragraph.get("role") or "text"))
            out.append({"heading": clean(section.get("heading")), "startMs": start, "endMs": end,
                        "timestamp": timestamp(start) if start is not None else None, "url": self.seek_url(start),
                        "paragraphs": paragraphs})
        return out

    @cached_property
    def chapters(self) -> list[dict[str, Any]]:
        """The article's sections as the video's chapters: title, time range, timestamp, link."""
        return [{"title": s["heading"], "startMs": s["startMs"], "endMs": s["endMs"], "timestamp": s["timestamp"],
                 "url": s["url"]} for s in self.sections if s["startMs"] is not None]

    @cached_property
    def faq(self) -> list[dict[str, Any]]:
        out = []
        for entry in self.src.content.get("faq") or []:
            question, answer = clean(entry.get("question")), clean(entry.get("answer"))
            if question and answer:
                out.append({"question": question, "answer": answer, "startMs": _int(entry.get("startMs"))})
        return out

    @cached_property
    def key_facts(self) -> list[dict[str, Any]]:
        out = []
        for fact in self.src.content.get("key_facts") or []:
            text = clean(fact.get("text"))
            if text:
                start = _int(fact.get("startMs"))
                out.append({"text": text, "startMs": start, "timestamp": timestamp(start) if start is not None
                            else None, "claimId": fact.get("claimId"), "url": self.seek_url(start)})
        return out

    @cached_property
    def description(self) -> str:
        """The summary a premium analysis wrote, else the introduction (else the first paragraph), cut at
        a word before ``DESCRIPTION_CHARS``."""
        text = (clean(self.src.content.get("summary")) or self.introduction
                or next((p[0] for s in self.sections for p in s["paragraphs"]), "") or self.title)
        if len(text) <= DESCRIPTION_CHARS:
            return text
        return text[:DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"

    @cached_property
    def sources(self) -> list[dict[str, Any]]:
        """The video the article was written from, then the sources its text names."""
        out: list[dict[str, Any]] = []
        video = self.src.video
        if video is not None:
            out.append({"type": "video", "name": clean(video.name), "url": self.video_url,
                        "uploadDate": video.uploaded_at.isoformat()})
        texts = [self.introduction, *(p[0] for s in self.sections for p in s["paragraphs"]),
                 *(f["answer"] for f in self.faq), self.conclusion]
        out += [{"type": "cited", "name": clean(s["source"]), "text": clean(s["text"])}
                for s in cited_sources(t for t in texts if t)]
        return out


def prepared(src: ExportSource | Prepared) -> Prepared:
    """``src`` prepared (once: a prepared source is itself)."""
    return src if isinstance(src, Prepared) else Prepared(src)


def description(src: ExportSource | Prepared) -> str:
    return prepared(src).description


def chapters(src: ExportSource | Prepared) -> list[dict[str, Any]]:
    return prepared(src).chapters


def sources(src: ExportSource | Prepared) -> list[dict[str, Any]]:
    return prepared(src).sources
