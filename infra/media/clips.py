"""Clips: a range cut, a range rendered with a template (reframed, captions and title burned), its
thumbnail, and the probe of what was written. The argument lists are built here on the checked
builders of ``infra.media.ffmpeg`` and run by its ``run_killable``, with a timeout scaled to the
clip's duration (``clip_timeout``). Outputs are written to staging files and probed
(``check_clip``) before anything is stored: a file of the wrong duration or without its video
stream is a failed clip, never a rendered one. What the template draws (the ASS script, the title
lines) is ``domain.clip_overlay``; the font's advance widths are read here (``caption_font``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from domain.clip_framing import CropPath, Framing
from domain.clips import Font, Template
from infra.media.ffmpeg import MediaError, audio_bound, ffmpeg_argv, video_bound
from infra.media.probe import probe
from infra.provision import CAPTION_FONT

# A cut's or render's duration may differ from its range by this much: an audio frame at each end
# (MP3's container duration counts the encoder's delay and padding: under 47 ms at 48 kHz), or one
# frame of the picture when a frame lasts longer (a 10 fps video's clip ends on a 100 ms frame).
CLIP_TOLERANCE_MS = 50


def clip_tolerance_ms(frame_ms: int | None) -> int:
    """How far a written clip's duration may be from its range, for a source whose frames last
    ``frame_ms`` (None: no picture)."""
    return max(CLIP_TOLERANCE_MS, frame_ms or 0)


FONTS_DIR = "/usr/share/fonts/truetype/dejavu"  # fonts-dejavu-core (infra.provision.NEEDS)
# The encoders of each output format: H.264 + AAC in MP4 (moov first, so a player starts before
# the end has arrived), VP9 + Opus in WebM (realtime deadline: libvpx's good quality is ten times
# slower for a clip), MP3 at 48 kHz (its container duration stays within the tolerance above).
_H264 = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "21", "-pix_fmt", "yuv420p"]
_AAC = ["-c:a", "aac", "-b:a", "128k"]
ENCODERS: dict[str, list[str]] = {
    "mp4": [*_H264, *_AAC, "-movflags", "+faststart", "-f", "mp4"],
    "webm": ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-row-mt", "1", "-crf", "32",
             "-b:v", "0", "-pix_fmt", "yuv420p", "-c:a", "libopus", "-b:a", "96k", "-f", "webm"],
    "mp3": ["-vn", "-c:a", "libmp3lame", "-ar", "48000", "-b:a", "128k", "-f", "mp3"],
}
OUTPUT_DEMUXER = {"mp4": "mov", "webm": "matroska", "mp3": "mp3"}  # to probe what was written
EVEN_SIZE = "scale=trunc(iw/2)*2:trunc(ih/2)*2"  # 4:2:0 encoders need even dimensions
# The highest frame rate a cut or a render is written at: a source above it (a 1000 fps recording)
# has frames dropped to it (``-fpsmax``), one below keeps its own. Ten seconds of clip are then at
# most 300 frames to encode, whatever the source: the price of a clip is its duration.
MAX_OUTPUT_FPS = 30
_FPS_CAP = ["-fpsmax", str(MAX_OUTPUT_FPS)]


def clip_timeout(duration_ms: int, base_s: float, per_second: float) -> float:
    """The longest a clip's ffmpeg run may take: ``base_s`` (start-up, seeking) plus ``per_second``
    seconds per second of clip (a 30 s template render takes about 10 s on two cores)."""
    return base_s + per_second * duration_ms / 1000


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def cut_argv(source: str | Path, demuxer: str, start_ms: int, end_ms: int, fmt: str, out: str | Path,
             *, has_video: bool = True, has_audio: bool = True, mix: int | None = None) -> list[str]:
    """The range ``[start_ms, end_ms)`` re-encoded to ``fmt``, frame-accurately: the input is
    seeked to the start (ffmpeg decodes from the keyframe before and drops what precedes it) and
    read for the range only (as many samples and frames as the range holds, ``audio_bound`` and
    ``video_bound``, whatever the timestamps say); the output stops at the range's length, at
    ``MAX_OUTPUT_FPS`` at most. ``mix``: channels without a layout, mixed down."""
    length = end_ms - start_ms
    picture = has_video and fmt != "mp3"
    maps = [*(["-map", "0:v:0"] if picture else []), *(["-map", "0:a:0"] if has_audio else [])]
    video = ["-vf", f"{video_bound(length)},{EVEN_SIZE}", *_FPS_CAP] if picture else []
    audio = ["-af", audio_bound(length, mix=mix)] if has_audio else []
    return ffmpeg_argv(source, demuxer, length,
                       [*maps, *video, *audio, *ENCODERS[fmt], "-t", _seconds(length), "-y", str(out)],
                       extra_input=("-ss", _seconds(start_ms)))


def _number(value: float) -> str:
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"


def path_expr(keys: tuple[tuple[float, int, int], ...], axis: int) -> str:
    """One coordinate of a crop path as an ffmpeg expression of the frame's time ``t``: the first
    key's value plus, for each segment that moves, its slope times the part of the segment already
    run (``clip(t-t0,0,t1-t0)``). A flat sum, one term per moving segment: still stretches cost
    nothing, and its length is bounded by the path's keyframes (``domain.clip_framing.MAX_KEYFRAMES``)."""
    terms = [str(keys[0][axis])]
    for a, b in zip(keys, keys[1:], strict=False):
        span = b[0] - a[0]
        if span <= 0 or b[axis] == a[axis]:
            continue
        slope = (b[axis] - a[axis]) / span
        terms.append(f"{'+' if slope > 0 else '-'}{_number(abs(slope))}*clip(t-{_number(a[0])},0,{_number(span)})")
    return "".join(terms)


def crop_path_filter(p: CropPath, out_w: int, out_h: int) -> str:
    """The window moving along ``p``, scaled to ``out_w`` x ``out_h`` (cropped first: the scale
    works on the window only, cheaper than the centre crop's scale of the whole picture)."""
    return (f"crop=w={p.width}:h={p.height}:x='{path_expr(p.keys, 1)}':y='{path_expr(p.keys, 2)}',"
            f"scale={out_w}:{out_h}")


def follow_filter(t: Template, framing: Framing) -> str:
    """A face-following reframing: one window moving with the face, or two panels (one above the
    other, or side by side) each following its own face."""
    w, h = t.width, t.height
    if len(framing.paths) == 1:
        return f"[0:v:0]{crop_path_filter(framing.paths[0], w, h)},setsar=1"
    vertical = framing.stack == "vertical"
    pw, ph = (w, h // 2) if vertical else (w // 2, h)
    first, second = framing.paths
    return (f"[0:v:0]split=2[fa][fb];[fa]{crop_path_filter(first, pw, ph)}[pa];"
            f"[fb]{crop_path_filter(second, pw, ph)}[pb];"
            f"[pa][pb]{'vstack' if vertical else 'hstack'}=inputs=2,setsar=1")


def reframe_filter(t: Template, framing: Framing | None = None) -> str:
    """The source's first video stream reframed to the template's size: ``crop`` covers the frame
    and keeps its centre; ``blur_fill`` fits the whole picture over a blurred copy of itself that
    covers the frame (blurred at an eighth of the size: as soft, at a fiftieth of the cost);
    ``follow_face`` crops along ``framing``'s paths, or around the centre like ``crop`` when it
    falls back (or has none)."""
    w, h = t.width, t.height
    if t.reframe == "follow_face" and framing is not None and framing.paths:
        return follow_filter(t, framing)
    if t.reframe in ("crop", "follow_face"):
        return f"[0:v:0]scale={w}:{h}:force_original_aspect_ratio=increase,crop={w}:{h},setsar=1"
    small_w, small_h = max(2, w // 8 // 2 * 2), max(2, h // 8 // 2 * 2)
    return (f"[0:v:0]split=2[bg0][fg0];"
            f"[bg0]scale={small_w}:{small_h}:force_original_aspect_ratio=increase,crop={small_w}:{small_h},"
            f"boxblur=6:2,scale={w}:{h}[bg];"
            f"[fg0]scale={w}:{h}:force_original_aspect_ratio=decrease[fg];"
            f"[bg][fg]overlay=(W-w)/2:(H-h)/2,setsar=1")


_FILTER_SAFE = re.compile(r"[A-Za-z0-9/._-]+")


def filter_path(path: str | Path) -> str:
    """A file name as a filter option value: escaped for the option, then for the graph (ffmpeg's
    two levels of quoting), so that a directory with ``:`` or ``,`` cannot change the graph."""
    text = str(Path(path).absolute())
    if _FILTER_SAFE.fullmatch(text):
        return text
    option = text.replace("\\", "\\\\").replace("'", "\\'").replace(":", "\\:")
    return "".join("\\" + ch if ch in "\\'[],;" else ch for ch in option)


def subtitles_filter(ass_path: str | Path) -> str:
    return f"ass=filename={filter_path(ass_path)}:fontsdir={filter_path(FONTS_DIR)}"


SOURCE = "[0:v:0]"  # how the reframing graphs name the source's picture


def render_graph(t: Template, ass_path: str | Path, framing: Framing | None = None, *, limit_ms: int) -> str:
    """The whole video graph of a template render: the source's frames bounded to ``limit_ms``
    (``video_bound``), reframing, then the burned captions and title."""
    reframed = reframe_filter(t, framing)
    bounded = f"{SOURCE}{video_bound(limit_ms)}[bounded];[bounded]{reframed.removeprefix(SOURCE)}"
    return f"{bounded},{subtitles_filter(ass_path)}[v]"


def render_argv(source: str | Path, demuxer: str, start_ms: int, end_ms: int, t: Template, ass_path: str | Path,
                out: str | Path, *, has_audio: bool = True, framing: Framing | None = None,
                mix: int | None = None) -> list[str]:
    """The range rendered with the template: reframed (along ``framing`` for a face-following
    template), captions and title burned, H.264 + AAC MP4 at ``MAX_OUTPUT_FPS`` at most; the
    source read for the range only (``cut_argv``)."""
    length = end_ms - start_ms
    audio = ["-map", "0:a:0", "-af", audio_bound(length, mix=mix)] if has_audio else []
    return ffmpeg_argv(source, demuxer, length,
                       ["-filter_complex", render_graph(t, ass_path, framing, limit_ms=length), "-map", "[v]",
                        *_FPS_CAP, *audio, *ENCODERS["mp4"], "-t", _seconds(length), "-y", str(out)],
                       extra_input=("-ss", _seconds(start_ms)))


def thumbnail_argv(source: str | Path, demuxer: str, at_ms: int, t: Template, ass_path: str | Path,
                   out: str | Path, *, framing: Framing | None = None) -> list[str]:
    """One frame at ``at_ms``, reframed like the clip (``framing`` held where it is at that
    frame), with the thumbnail title burned: a JPEG."""
    return ffmpeg_argv(source, demuxer, 1000,
                       ["-filter_complex", render_graph(t, ass_path, framing, limit_ms=1000), "-map", "[v]",
                        "-frames:v", "1",
                        "-c:v", "mjpeg", "-q:v", "3", "-f", "image2", "-update", "1", "-y", str(out)],
                       extra_input=("-ss", _seconds(at_ms)))


@functools.cache
def caption_font() -> Font:
    """The characters of the caption font (``infra.provision.CAPTION_FONT``, DejaVu Sans Bold) and their
    advance widths, as fractions of the size libass draws it at: libass sizes a font by its full
    height (Windows ascent plus descent, as VSFilter does), not by its em, so an advance is
    ``advance / (winAscent + winDescent)`` of the size (measured: ten W at 56 px are 527 px wide)."""
    from fontTools.ttLib import TTFont  # the worker's only reader of font files

    with TTFont(CAPTION_FONT, lazy=True) as font:
        os2 = font["OS/2"]
        height = os2.usWinAscent + os2.usWinDescent
        metrics = font["hmtx"].metrics
        return Font({chr(cp): metrics[glyph][0] / height for cp, glyph in font.getBestCmap().items()})


@dataclass(frozen=True, slots=True)
class ClipFile:
    """What the probe of a written clip found."""

    duration_ms: int
    size_bytes: int
    width: int | None
    height: int | None


def check_clip(path: str | Path, fmt: str, expected_ms: int, *, size: tuple[int, int] | None = None,
               tolerance_ms: int = CLIP_TOLERANCE_MS) -> ClipFile:
    """Probe a written clip as the container it must be: ``MediaError`` when it lasts more than
    ``tolerance_ms`` off ``expected_ms``, lacks its video stream (mp4, webm) or audio stream (mp3),
    or is not ``size`` (a template render)."""
    info = probe(path, demuxer=OUTPUT_DEMUXER[fmt])
    if fmt == "mp3" and not info.has_audio:
        raise MediaError("the clip has no audio stream")
    if fmt != "mp3" and info.video_codec is None:
        raise MediaError("the clip has no video stream")
    if abs(info.duration_ms - expected_ms) > tolerance_ms:
        raise MediaError(f"the clip lasts {info.duration_ms} ms instead of {expected_ms} ms")
    if size is not None and (info.width, info.height) != size:
        raise MediaError(f"the clip is {info.width}x{info.height} instead of {size[0]}x{size[1]}")
    return ClipFile(info.duration_ms, Path(path).stat().st_size, info.width, info.height)
