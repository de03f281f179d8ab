"""Clips: the templates a clip is made with, the rules a requested clip must follow, the layout of
its burned captions and title, and the two aggregates of the clip flow (``ClipDetection``,
``ClipRender``).

Job types: ``video_clip`` (``POST /videos/{id}/clips``: one range of a video cut as it is, in mp4,
webm or mp3), ``clip_detection`` (clip opportunities in an article's video, ``domain.clip_detection``)
and ``clip_render`` (clips made with a template, each an item of the job: ``JobContext.run_items``).

A template is a domain value (``Template``): the output size and aspect ratio, how the source is
reframed to it (``crop``: scaled to cover the frame and cropped around the centre; ``blur_fill``:
the whole source scaled to fit, over a blurred, enlarged copy of itself filling the rest;
``follow_face``: cropped around the person seen in it, ``domain.clip_framing``), the
caption and title sizes that stay readable at that size, and the target duration detection aims
at. ``infra.media`` turns a template into an ffmpeg filter graph; nothing here knows ffmpeg.

Captions are laid out here (``caption_pages``): each caption cue's words get times interpolated
by character position inside the cue (as ``domain.analysis.sentences`` does), only the words
spoken inside the clip's range are kept, and they are broken into pages of at most
``caption_lines`` lines of at most ``caption_chars`` characters, breaking between words (a word
longer than a line is split with a hyphen). A page never mixes two cues, so a speaker's words are
shown in that speaker's time only.
"""

from __future__ import annotations

import base64
import math
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

import regex
from eventsourcing.domain import Aggregate, event

from domain.base import DomainError, InvalidTransition, aggregate, deterministic_id, schema_change
from domain.clip_framing import MAX_KEYFRAMES, MAX_SAMPLES
from domain.clip_framing import MODES as FRAMING_MODES
from domain.export_source import clean

VIDEO_CLIP_JOB = "video_clip"
DETECTION_JOB = "clip_detection"
RENDER_JOB = "clip_render"
CLIP_JOB_TYPES = (VIDEO_CLIP_JOB, DETECTION_JOB, RENDER_JOB)

CLIP_FORMATS = ("mp4", "webm", "mp3")
RENDER_FORMAT = "mp4"  # a template render is H.264 + AAC in MP4, what every social platform takes

# Bounds of the production flow (the interface's limits).
MAX_CLIPS = 50
MIN_TARGET_S, MAX_TARGET_S = 5, 180
MAX_CLIP_ID, MAX_TITLE, MAX_RATIONALE, MAX_PROMPT = 100, 180, 500, 500
# A rendered clip lasts at most this long: a template render is a short-form clip (the longest
# target is 180 s, plus its margin), and a bound keeps one request's work bounded in time.
MAX_RENDER_CLIP_MS = 300_000
# The shortest clip cut or rendered: a range under a tenth of a second holds barely two frames.
MIN_CLIP_MS = 100
# The frame tolerance of a render request's ``duration_ms`` when the video's frame rate is unknown (25 fps).
DEFAULT_FRAME_MS = 40


class ClipRefused(DomainError):
    """A clip request the video cannot satisfy (a range past its end, mp3 of a silent video...)."""


# ------------------------------------------------------------------------------------ templates


@dataclass(frozen=True, slots=True)
class Template:
    """How a clip is made: size and reframing, caption and title layout, the target duration."""

    id: int
    name: str
    width: int
    height: int
    target_duration_seconds: int
    reframe: str  # "crop", "blur_fill" or "follow_face" (REFRAMES)
    caption_font_size: int
    caption_chars: int  # characters per caption line, at that size on that width
    caption_lines: int
    caption_margin: int  # pixels between the captions and the bottom edge
    title_font_size: int  # a title's lines are measured with the font (domain.clip_overlay.title_layout)
    title_seconds: float  # the title shows on the first seconds of the clip
    thumbnail_font_size: int
    is_default: bool = False

    @property
    def format(self) -> str:
        """The aspect ratio, ``9:16``."""
        divisor = math.gcd(self.width, self.height)
        return f"{self.width // divisor}:{self.height // divisor}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "format": self.format,
                "target_duration_seconds": self.target_duration_seconds, "is_system": True,
                "is_default": self.is_default, "is_customized": False, "thumbnail_available": True,
                "width": self.width, "height": self.height, "reframe": self.reframe,
                "captions": True, "title_seconds": self.title_seconds}


# Sizes: 720 pixels on the short side keeps a 30 s render near real time on two cores; the fonts
# are sized for a phone held at arm's length (a caption line of about 22 characters on 720 px).
SYSTEM_TEMPLATES: tuple[Template, ...] = (
    Template(1, "Vertical 9:16 (shorts, reels, stories)", 720, 1280, 30, "crop", 50, 22, 2, 220, 56, 3.0, 72,
             is_default=True),
    Template(2, "Vertical 9:16, whole picture over a blurred fill", 720, 1280, 45, "blur_fill", 50, 22, 2, 220, 56,
             3.0, 72),
    Template(3, "Square 1:1 (feeds)", 720, 720, 30, "blur_fill", 40, 28, 2, 60, 46, 3.0, 60),
    Template(4, "Landscape 16:9 (video sites, embeds)", 1280, 720, 60, "blur_fill", 44, 40, 2, 50, 52, 3.0, 64),
    Template(5, "Vertical 9:16 following the speaker", 720, 1280, 30, "follow_face", 50, 22, 2, 220, 56, 3.0, 72),
    Template(6, "Square 1:1 following the speaker", 720, 720, 30, "follow_face", 40, 28, 2, 60, 46, 3.0, 60),
)
REFRAMES = ("crop", "blur_fill", "follow_face")
FRAMING_FIELDS = frozenset({"mode", "faces_seen_pct", "samples", "faces", "keyframes", "reason"})
TEMPLATES: dict[int, Template] = {t.id: t for t in SYSTEM_TEMPLATES}


def template(template_id: int) -> Template | None:
    return TEMPLATES.get(template_id)


def default_template() -> Template:
    return next(t for t in SYSTEM_TEMPLATES if t.is_default)


def preview_svg(t: Template) -> str:
    """A template's preview: its frame, where the title and the captions go, and its name."""
    w, h = t.width, t.height
    picture = (f'<rect x="0" y="0" width="{w}" height="{h}" fill="#1d3557"/>'
               if t.reframe in ("crop", "follow_face") else
               f'<rect x="0" y="0" width="{w}" height="{h}" fill="#457b9d"/>'
               f'<rect x="0" y="{h // 2 - w * 9 // 32}" width="{w}" height="{w * 9 // 16}" fill="#1d3557"/>'
               if w < h else
               f'<rect x="0" y="0" width="{w}" height="{h}" fill="#457b9d"/>'
               f'<rect x="{(w - h * 16 // 9) // 2 if h * 16 // 9 < w else 0}" y="0" width="{min(w, h * 16 // 9)}" '
               f'height="{h}" fill="#1d3557"/>')
    title_y = t.title_font_size * 2
    caption_y = h - t.caption_margin - t.caption_font_size
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w // 4}" height="{h // 4}">'
            f'{picture}'
            f'<rect x="{w // 8}" y="{title_y - t.title_font_size}" width="{w * 3 // 4}" '
            f'height="{t.title_font_size + 16}" fill="#000"/>'
            f'<text x="{w // 2}" y="{title_y}" fill="#ffd60a" font-family="DejaVu Sans, sans-serif" '
            f'font-weight="bold" font-size="{t.title_font_size}" text-anchor="middle">Title</text>'
            f'<text x="{w // 2}" y="{caption_y}" fill="#fff" stroke="#000" stroke-width="3" '
            f'font-family="DejaVu Sans, sans-serif" font-weight="bold" font-size="{t.caption_font_size}" '
            f'text-anchor="middle">Captions {t.format}</text></svg>')


def preview_data_url(t: Template) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(preview_svg(t).encode()).decode()


# ------------------------------------------------------------------------------------ request rules


def frame_ms(frame_rate: float | None) -> int:
    """One frame of the video, milliseconds (25 fps when the rate is unknown)."""
    return max(1, round(1000 / frame_rate)) if frame_rate else DEFAULT_FRAME_MS


def check_range(start_ms: int, end_ms: int, video_duration_ms: int, *, field: str = "end_ms",
                max_ms: int | None = None) -> None:
    """A range of the video: ``end_ms`` after ``start_ms``, at least ``MIN_CLIP_MS`` long, not past
    the video's end (and at most ``max_ms`` long when given)."""
    if end_ms <= start_ms:
        raise ClipRefused("end_ms must be greater than start_ms", field=field, rule="greater_than")
    if end_ms - start_ms < MIN_CLIP_MS:
        raise ClipRefused(f"a clip lasts at least {MIN_CLIP_MS} ms", field=field, rule="too_short")
    if end_ms > video_duration_ms:
        raise ClipRefused(f"end_ms is after the end of the video ({video_duration_ms} ms)", field=field,
                          rule="less_than_equal", video_duration_ms=video_duration_ms)
    if max_ms is not None and end_ms - start_ms > max_ms:
        raise ClipRefused(f"a clip lasts at most {max_ms // 1000} s here (a sandbox key's clips are shorter)"
                          if max_ms < MAX_RENDER_CLIP_MS else f"a rendered clip lasts at most {max_ms // 1000} s",
                          field=field, rule="too_long", max_ms=max_ms)


def check_format(fmt: str, *, has_audio: bool, has_video: bool) -> None:
    """mp3 needs an audio stream; mp4 and webm a picture (H.264 or VP9 of something)."""
    if fmt not in CLIP_FORMATS:
        raise ClipRefused(f"format must be one of {', '.join(CLIP_FORMATS)}", field="format")
    if fmt == "mp3" and not has_audio:
        raise ClipRefused("the video has no audio stream: an mp3 clip needs one (ask for mp4 or webm)",
                          field="format", rule="no_audio")
    if fmt != "mp3" and not has_video:
        raise ClipRefused(f"the media has no video stream: a {fmt} clip needs one (ask for mp3)", field="format",
                          rule="no_video")


def check_render_clips(clips: Sequence[dict[str, Any]], video_duration_ms: int, video_frame_ms: int, *,
                       max_ms: int = MAX_RENDER_CLIP_MS) -> None:
    """The clips of a render request: unique ids, ranges inside the video, each at most ``max_ms``
    long (``MAX_RENDER_CLIP_MS``, less for a sandbox key), and ``duration_ms`` equal to
    ``end_ms - start_ms`` within one frame."""
    seen: set[str] = set()
    for k, clip in enumerate(clips):
        where = f"clips.{k}"
        if clip["id"] in seen:
            raise ClipRefused(f"clip id {clip['id']!r} is given twice", field=f"{where}.id", rule="unique_items")
        seen.add(clip["id"])
        check_range(clip["start_ms"], clip["end_ms"], video_duration_ms, field=f"{where}.end_ms", max_ms=max_ms)
        if abs(clip["duration_ms"] - (clip["end_ms"] - clip["start_ms"])) > video_frame_ms:
            raise ClipRefused(f"duration_ms must equal end_ms - start_ms within one frame ({video_frame_ms} ms)",
                              field=f"{where}.duration_ms", rule="duration_mismatch")


def clip_slug(clip_id: str) -> str:
    """A clip id as a file name part: a client's id is any text, a storage key is not."""
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", clip_id).strip("-")[:40] or "clip"
    return f"{safe}-{deterministic_id('clip', clip_id).hex[:8]}"


# ------------------------------------------------------------------------------------ captions


@dataclass(frozen=True, slots=True)
class Caption:
    """One caption page, times relative to the clip's start."""

    start_ms: int
    end_ms: int
    lines: tuple[str, ...]
    speaker: str | None = None


def fit_words(words: Sequence[str], fits: Callable[[str], bool]) -> list[str]:
    """Lines that each ``fits``, broken between words; a word that does not fit a line alone is
    split between characters (never inside a grapheme cluster) with a hyphen at the end of each
    piece but the last, each piece as long as fits (one cluster at the least)."""
    lines: list[str] = []
    current = ""
    for word in words:
        while not fits(word):
            if current:
                lines.append(current)
                current = ""
            clusters = regex.findall(r"\X", word)
            if len(clusters) < 2:
                break
            cut = 1
            while cut + 1 < len(clusters) and fits("".join(clusters[:cut + 1]) + "-"):
                cut += 1
            lines.append("".join(clusters[:cut]) + "-")
            word = "".join(clusters[cut:])
        if not word:
            continue
        if current and not fits(f"{current} {word}"):
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def wrap_words(words: Sequence[str], max_chars: int) -> list[str]:
    """Lines of at most ``max_chars`` characters, broken between words; a longer word is split
    with a hyphen at the end of each piece but the last."""
    return fit_words(words, lambda line: len(line) <= max_chars)


@dataclass(frozen=True)
class Font:
    """What the layout knows of the font burned text is drawn with: each character it has a glyph
    for, with its advance width as a fraction of the font size (``infra.media.clips.caption_font`` reads
    them from the font file)."""

    advances: Mapping[str, float]

    def has(self, ch: str) -> bool:
        return ch in self.advances

    def width(self, text: str, size: float) -> float:
        """The width of ``text`` drawn at ``size``: the sum of its advances (no kerning, which
        only ever narrows a pair of the caption font)."""
        return size * sum(self.advances.get(ch, 0.0) for ch in text)


def drawable(text: str, font: Font) -> str:
    """Text as it can be burned with ``font``: control and bidi characters dropped and spaces
    collapsed (the exports' rule, ``domain.export_source.clean``: an override would show "RTL" as "LTR"),
    then each character the font has no glyph for replaced by its compatibility form (NFKC: a
    full-width letter by the letter) when the font has all of it, and dropped otherwise, so that
    nothing is drawn as a missing-glyph box."""
    kept = []
    for ch in clean(text):
        if font.has(ch):
            kept.append(ch)
            continue
        plain = unicodedata.normalize("NFKC", ch)
        if plain != ch and all(font.has(c) for c in plain):
            kept.append(plain)
    return " ".join("".join(kept).split())


def title_lines(text: str, font: Font, size: float, width: float, max_lines: int = 3) -> tuple[str, ...]:
    """A title as lines no wider than ``width`` pixels at ``size`` (``drawable`` first; a word wider
    than a line split with hyphens); what does not fit in ``max_lines`` ends in an ellipsis."""
    def fits(line: str) -> bool:
        return font.width(line, size) <= width

    lines = fit_words(drawable(text, font).split(), fits)
    if len(lines) > max_lines:
        lines = lines[:max_lines]
        clusters = regex.findall(r"\X", lines[-1])
        while clusters and not fits("".join(clusters).rstrip(" -") + "…"):
            clusters.pop()
        lines[-1] = "".join(clusters).rstrip(" -") + "…"
    return tuple(lines)


def _timed_words(start_ms: int, end_ms: int, text: str) -> list[tuple[int, int, str]]:
    """The cue's words with times interpolated by character position inside the cue."""
    words = text.split()
    if not words:
        return []
    total = sum(len(w) + 1 for w in words)
    span = max(0, end_ms - start_ms)
    out, offset = [], 0
    for w in words:
        begin = start_ms + span * offset // total
        offset += len(w) + 1
        out.append((begin, start_ms + span * offset // total, w))
    return out


def caption_pages(segments: Sequence[Any], start_ms: int, end_ms: int, t: Template) -> list[Caption]:
    """The burned captions of the clip ``[start_ms, end_ms)``: the words spoken inside it (a word
    counts when its middle is inside), by cue, in pages of ``t.caption_lines`` lines of
    ``t.caption_chars`` characters; each page shows from its first word to its last (or the next
    page), relative to the clip's start. ``segments`` have ``start_ms``, ``end_ms``, ``text``, ``speaker``."""
    pages: list[Caption] = []
    per_page_chars = t.caption_chars * t.caption_lines
    for seg in sorted(segments, key=lambda s: (s.start_ms, s.end_ms)):
        if seg.end_ms <= start_ms or seg.start_ms >= end_ms:
            continue
        words = [(a, b, w) for a, b, w in _timed_words(seg.start_ms, seg.end_ms, seg.text)
                 if start_ms <= (a + b) // 2 < end_ms]
        group: list[tuple[int, int, str]] = []
        for word in [*words, None]:
            if word is not None:
                trial = [w for _, _, w in group] + [word[2]]
                if not group or len(wrap_words(trial, t.caption_chars)) <= t.caption_lines and \
                        len(" ".join(trial)) <= per_page_chars:
                    group.append(word)
                    continue
            if group:
                lines = wrap_words([w for _, _, w in group], t.caption_chars)[:t.caption_lines]
                pages.append(Caption(max(0, group[0][0] - start_ms), min(end_ms, group[-1][1]) - start_ms,
                                     tuple(lines), seg.speaker))
            group = [word] if word is not None else []
    # A page shows until the next one starts, never over it.
    for k in range(len(pages) - 1):
        if pages[k].end_ms > pages[k + 1].start_ms:
            pages[k] = Caption(pages[k].start_ms, pages[k + 1].start_ms, pages[k].lines, pages[k].speaker)
    return [p for p in pages if p.end_ms > p.start_ms]


# ------------------------------------------------------------------------------------ aggregates


schema_change("ClipRendered", 1, """Adds `framing`: how a face-following render framed the clip (its mode, the share
    of sampled frames with a face, the faces followed, ...), null for every other clip. No schema 1 clip followed a
    face.""", added={"framing": None})


def check_framing(framing: dict[str, Any] | None) -> dict[str, Any] | None:
    """A rendered clip's framing summary (``domain.clip_framing.Framing.summary``), bounded: a
    known mode, a percentage, counts within the sampler's bounds, a short reason."""
    if framing is None:
        return None
    values: list[Any] = [framing.get(k) for k in ("mode", "faces_seen_pct", "samples", "faces", "keyframes")]
    mode, pct, samples, faces, keyframes = values
    reason = framing.get("reason")
    if (mode not in FRAMING_MODES or set(framing) != FRAMING_FIELDS
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in (pct, samples, faces, keyframes))
            or not (0 <= pct <= 100 and 0 <= samples <= MAX_SAMPLES and 0 <= faces <= 2
                    and 0 <= keyframes <= 2 * MAX_KEYFRAMES)
            or not (reason is None or (isinstance(reason, str) and len(reason) <= 200))):
        raise DomainError("a clip's framing is out of its bounds", field="framing")
    return dict(framing)


def detection_stream_id(job_id: UUID) -> UUID:
    return deterministic_id("clip-detection", job_id)


def render_stream_id(job_id: UUID) -> UUID:
    return deterministic_id("clip-render", job_id)


@aggregate("ClipDetection")
class ClipDetection(Aggregate):
    """The detection of clip opportunities in an article's video, one per ``clip_detection`` job."""

    class Queued(Aggregate.Created):
        """A detection was asked for (with its job's ``JobQueued``): the article, its video, the template and
        every option of the request, so the tracking object shows what was asked.

        Read by `clip_jobs` (the tracking object's article, template, target and options)."""

        published_as = "ClipDetectionQueued"
        job_id: UUID
        workspace_id: UUID
        environment: str
        article_id: int
        video_id: int
        template_id: int
        target_duration_seconds: int
        options: dict[str, Any]

    class Detected(Aggregate.Event):
        """The clips detected (at most the number asked for, non-overlapping, each with its rationale), and
        why there are fewer when the video could not give more; appended with the job's completion.

        Read by `clip_jobs` (the tracking object's clips and shortfall_reason)."""

        published_as = "ClipsDetected"
        job_id: UUID
        environment: str
        clips: list[Any]
        shortfall_reason: str | None
        signals: list[Any]

    @staticmethod
    def create_id(job_id: UUID) -> UUID:
        return detection_stream_id(job_id)

    @event(Queued)
    def __init__(self, job_id: UUID, workspace_id: UUID, environment: str, article_id: int, video_id: int,
                 template_id: int, target_duration_seconds: int, options: dict[str, Any]):
        self.job_id = job_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.article_id = article_id
        self.video_id = video_id
        self.template_id = template_id
        self.target_duration_seconds = target_duration_seconds
        self.options = options
        self.clips: list[Any] | None = None

    def record(self, clips: list[dict[str, Any]], shortfall_reason: str | None, signals: list[str]) -> None:
        if self.clips is not None:
            raise InvalidTransition("this detection is recorded already", job_id=str(self.job_id))
        if len(clips) > MAX_CLIPS:
            raise DomainError(f"a detection proposes at most {MAX_CLIPS} clips", field="clips")
        self._detected(job_id=self.job_id, environment=self.environment, clips=clips,
                       shortfall_reason=shortfall_reason, signals=signals)

    @event(Detected)
    def _detected(self, job_id: UUID, environment: str, clips: list[Any], shortfall_reason: str | None,
                  signals: list[Any]) -> None:
        self.clips = clips


@aggregate("ClipRender")
class ClipRender(Aggregate):
    """The clips one job makes: a template render (``clip_render``) or a simple cut (``video_clip``)."""

    class Queued(Aggregate.Created):
        """Clips were asked for (with the job's ``JobQueued``): the video, the template (none for a simple cut),
        the output format and each requested clip, as the tracking object lists them.

        Read by `clip_jobs` (the requested clips, the template, the format)."""

        published_as = "ClipRenderQueued"
        job_id: UUID
        workspace_id: UUID
        environment: str
        video_id: int
        article_id: int | None
        template_id: int | None
        target_duration_seconds: int | None
        format: str
        clips: list[Any]

    class Rendered(Aggregate.Event):
        """One clip is made, checked (probed: its duration and streams) and stored, with its thumbnail for a
        template render: the ``clip.generated`` webhook. Appended with its job's item (render) or its
        completion (simple cut); a clip is rendered at most once per job.

        Read by `clip_jobs` (rendered_clips: the files whose URLs are signed when read) and the dispatcher (the
        `clip.generated` webhook)."""

        published_as = "ClipRendered"
        schema_version = 2  # 2: framing (None before, and for every clip but a face-following render's)
        job_id: UUID
        environment: str
        clip_id: str
        attempt: int
        format: str
        file_key: str
        thumbnail_key: str | None
        duration_ms: int
        size_bytes: int
        width: int | None
        height: int | None
        framing: dict[str, Any] | None

    class RenderFailed(Aggregate.Event):
        """One clip could not be made in this attempt, with the reason; the job's next attempt makes it again
        (with its job's ``JobItemFailed``).

        Read by `clip_jobs` (failed_clips, until the clip is rendered)."""

        published_as = "ClipRenderFailed"
        job_id: UUID
        environment: str
        clip_id: str
        attempt: int
        error_message: str

    @staticmethod
    def create_id(job_id: UUID) -> UUID:
        return render_stream_id(job_id)

    @event(Queued)
    def __init__(self, job_id: UUID, workspace_id: UUID, environment: str, video_id: int, article_id: int | None,
                 template_id: int | None, target_duration_seconds: int | None, format: str, clips: list[Any]):
        self.job_id = job_id
        self.workspace_id = workspace_id
        self.environment = environment
        self.video_id = video_id
        self.article_id = article_id
        self.template_id = template_id
        self.target_duration_seconds = target_duration_seconds
        self.format = format
        self.clips = clips
        self.rendered: dict[str, dict[str, Any]] = {}

    @classmethod
    def queue(cls, *, job_id: UUID, workspace_id: UUID, environment: str, video_id: int, clips: list[dict[str, Any]],
              fmt: str = RENDER_FORMAT, article_id: int | None = None, template_id: int | None = None,
              target_duration_seconds: int | None = None) -> ClipRender:
        if not 1 <= len(clips) <= MAX_CLIPS:
            raise DomainError(f"a render makes 1 to {MAX_CLIPS} clips", field="clips")
        if fmt not in CLIP_FORMATS:
            raise DomainError(f"format must be one of {', '.join(CLIP_FORMATS)}", field="format")
        return cls(job_id=job_id, workspace_id=workspace_id, environment=environment, video_id=video_id,
                   article_id=article_id, template_id=template_id, target_duration_seconds=target_duration_seconds,
                   format=fmt, clips=list(clips))

    def clip(self, clip_id: str) -> dict[str, Any]:
        found: dict[str, Any] | None = next((c for c in self.clips if c["id"] == clip_id), None)
        if found is None:
            raise DomainError(f"clip {clip_id!r} is not one of this job's", field="clip_id")
        return found

    def record_rendered(self, clip_id: str, *, attempt: int, file_key: str, thumbnail_key: str | None,
                        duration_ms: int, size_bytes: int, width: int | None, height: int | None,
                        framing: dict[str, Any] | None = None) -> None:
        self.clip(clip_id)
        if clip_id in self.rendered:
            raise InvalidTransition(f"clip {clip_id!r} is rendered already", clip_id=clip_id)
        self._rendered(job_id=self.job_id, environment=self.environment, clip_id=clip_id, attempt=attempt,
                       format=self.format, file_key=file_key, thumbnail_key=thumbnail_key, duration_ms=duration_ms,
                       size_bytes=size_bytes, width=width, height=height, framing=check_framing(framing))

    @event(Rendered)
    def _rendered(self, job_id: UUID, environment: str, clip_id: str, attempt: int, format: str, file_key: str,
                  thumbnail_key: str | None, duration_ms: int, size_bytes: int, width: int | None,
                  height: int | None, framing: dict[str, Any] | None) -> None:
        self.rendered[clip_id] = {"file_key": file_key, "thumbnail_key": thumbnail_key, "duration_ms": duration_ms,
                                  "size_bytes": size_bytes}

    def record_failed(self, clip_id: str, *, attempt: int, error_message: str) -> None:
        self.clip(clip_id)
        if clip_id in self.rendered:
            raise InvalidTransition(f"clip {clip_id!r} is rendered already", clip_id=clip_id)
        self._render_failed(job_id=self.job_id, environment=self.environment, clip_id=clip_id, attempt=attempt,
                            error_message=error_message[:500])

    @event(RenderFailed)
    def _render_failed(self, job_id: UUID, environment: str, clip_id: str, attempt: int, error_message: str) -> None:
        pass
