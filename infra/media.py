"""ffprobe and ffmpeg: media metadata, embedded subtitles, scene changes, silences, loudness, and
speech-like / music-like audio segments.

Every call is a subprocess with an argument list (never a shell) and a timeout; any failure is a
``MediaError`` whose message names the tool and ends with ffmpeg's own last lines. All functions
block: the worker calls them through ``JobContext.run_blocking``.

Speech or music without a model: the audio is cut into 50 ms frames (RMS level and zero-crossing
rate from ``astats``) and judged per second with the two classic cues of Scheirer & Slaney and
Saunders: the share of low-energy frames (speech pauses between syllables, music rarely does) and
the variation of the zero-crossing rate (speech alternates voiced and unvoiced sounds). Seconds
quieter than the silence threshold are silence. Runs shorter than ``MIN_AUDIO_SEGMENT_MS`` merge
into their neighbours. It tells a voice from a steady tone or a dense mix; it is not a classifier
of genres and says so with a confidence.

Only the uploaded bytes are ever read. ffmpeg opens whatever its demuxers name: an HLS or concat
playlist, an image sequence or a subtitle format would make it read other local files (another
workspace's media, the host's) and return their text as this upload's transcript. So every run
goes through :func:`ffprobe_argv` / :func:`ffmpeg_argv`, the only builders of an argument list,
and ``_run`` refuses one that did not: the input is opened with ``-protocol_whitelist file`` and
``-format_whitelist`` of the real audio/video containers in ``CONTAINERS``, addressed as
``file:<absolute path>``; the probe names the demuxer it accepted, and every later run forces it
with ``-f`` (a file swapped for a playlist afterwards is read as that container, and fails).
Every decoding run carries a read limit (``-t``): never more media than was priced is processed.
Clip and render work goes through the same builders.

Clips (the end of this module) are cut and rendered by ``run_killable``, an asyncio run of the
same checked argument lists: its own process group, a timeout scaled to the clip's duration
(``clip_timeout``), a kill of the whole group on timeout or when the job's task is cancelled, and
at most ``slots`` ffmpeg processes of a worker at once. Their outputs are written to staging files
and probed (``check_clip``) before anything is stored: a file of the wrong duration or without
its video stream is a failed clip, never a rendered one.

Messages reach clients (a 415/400 refusal, a failed job's error): ffmpeg derives paths from its
input (a playlist's missing segment is named by its absolute path), so ``scrub`` removes every
path-like word from its text, not only the input argument, and the ``[demuxer @ 0x...]`` prefixes
with their memory addresses.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import json
import math
import os
import re
import signal
import statistics
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from domain.analysis.model import AudioSegment, Loudness, MediaFacts, SceneChange, TimeRange
from domain.clips import Caption, Font, Template, drawable, title_lines
from infra.tools import CAPTION_FONT

PROBE_TIMEOUT_S = 30.0
# The stream-copy pass that measures how long the accepted bytes really play (demuxing only).
MEASURE_TIMEOUT_S = 120.0
# Frame rates above this are not a real video's (ffprobe reports timebases such as 90000/1): unknown.
MAX_FRAME_RATE = 1000.0
SCENE_THRESHOLD = 0.3
SCENE_SCALE_WIDTH = 320
SILENCE_DB = -35.0
SILENCE_MIN_S = 0.5
FRAME_SAMPLES = 800  # 50 ms at 16 kHz
FRAME_MS = 50
MIN_AUDIO_SEGMENT_MS = 2000
BITMAP_SUBTITLES = frozenset({"dvd_subtitle", "hdmv_pgs_subtitle", "dvb_subtitle", "xsub", "dvb_teletext"})


# The demuxers a media file may be read with (ffmpeg's short names) and the extension its stored
# copy gets: containers of real audio and video, none of which opens another file (the mov
# demuxer's external data references are off by default and stay off). Never hls, concat, image2
# and other image sequences, subtitle or playlist formats, tee, lavfi, data or raw text readers.
CONTAINERS: dict[str, str] = {
    "mov": ".mp4",  # mov, mp4, m4a, 3gp, 3g2, mj2
    "matroska": ".mkv",  # matroska, webm
    "avi": ".avi",
    "flv": ".flv",
    "mpegts": ".ts",
    "mpeg": ".mpg",
    "asf": ".asf",  # wmv, wma
    "mp3": ".mp3",
    "wav": ".wav",
    "ogg": ".ogg",
    "flac": ".flac",
    "aac": ".aac",
    "aiff": ".aiff",
}
FORMAT_WHITELIST = ",".join(CONTAINERS)
PROTOCOL_WHITELIST = "file"


class MediaError(Exception):
    """A media file could not be read or analysed; the message is fit for a job's error_message."""


class UnsupportedContainer(MediaError):
    """The file is not in one of the accepted containers (a playlist, an image, subtitles, ...)."""

    def __init__(self, message: str, format_name: str | None = None) -> None:
        super().__init__(message)
        self.format_name = format_name


class DamagedMedia(MediaError):
    """The container's packets end early or are corrupt (a truncated or zero-filled file)."""


@dataclass(frozen=True, slots=True)
class StreamInfo:
    index: int
    kind: str  # video, audio, subtitle, data, attachment
    codec: str
    language: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True)
class SubtitleTrack:
    index: int  # absolute stream index
    position: int  # index among the subtitle streams (ffmpeg's 0:s:N)
    codec: str
    language: str | None
    title: str | None
    text_based: bool


@dataclass(frozen=True, slots=True)
class MediaInfo:
    duration_ms: int
    format_name: str
    size_bytes: int | None
    bit_rate: int | None
    streams: tuple[StreamInfo, ...]
    width: int | None
    height: int | None
    frame_rate: float | None
    video_codec: str | None
    audio_codec: str | None
    subtitle_tracks: tuple[SubtitleTrack, ...] = ()
    demuxer: str = ""  # the accepted demuxer (a key of CONTAINERS): forced on every later run

    @property
    def has_audio(self) -> bool:
        return any(s.kind == "audio" for s in self.streams)

    @property
    def has_video(self) -> bool:
        return any(s.kind == "video" for s in self.streams)

    def to_dict(self) -> dict:
        return {"duration_ms": self.duration_ms, "format": self.format_name, "demuxer": self.demuxer,
                "size_bytes": self.size_bytes,
                "bit_rate": self.bit_rate, "width": self.width, "height": self.height, "frame_rate": self.frame_rate,
                "video_codec": self.video_codec, "audio_codec": self.audio_codec, "has_audio": self.has_audio,
                "has_video": self.has_video,
                "subtitle_tracks": [{"position": t.position, "codec": t.codec, "language": t.language,
                                     "title": t.title, "text_based": t.text_based} for t in self.subtitle_tracks]}


@dataclass(frozen=True, slots=True)
class AudioAnalysis:
    silences: tuple[TimeRange, ...]
    loudness: Loudness | None
    segments: tuple[AudioSegment, ...]
    frames: int = 0


@dataclass(slots=True)
class _Frames:
    times: list[int] = field(default_factory=list)
    rms_db: list[float] = field(default_factory=list)
    zcr: list[float] = field(default_factory=list)


def _tail(text: str, lines: int = 4) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)  # no slash: a client may take any slash for a path


# ---- the only way to build an ffprobe / ffmpeg argument list


def _input_url(path: str | Path) -> str:
    """``file:`` and an absolute path: a name with a colon is never taken for another protocol."""
    return "file:" + str(Path(path).absolute())


def _input_options(demuxer: str | None) -> list[str]:
    if demuxer is not None and demuxer not in CONTAINERS:
        raise UnsupportedContainer(f"{demuxer} is not an accepted container", demuxer)
    return ["-protocol_whitelist", PROTOCOL_WHITELIST, "-format_whitelist", FORMAT_WHITELIST,
            *(["-f", demuxer] if demuxer else [])]


def ffprobe_argv(path: str | Path, demuxer: str | None, *options: str) -> list[str]:
    """ffprobe on one file: the whitelists, ``-f demuxer`` when it is known (None: the probe that
    identifies it, among the whitelisted demuxers only), then ``options``."""
    return ["ffprobe", "-v", "error", *_input_options(demuxer), *options, _input_url(path)]


def ffmpeg_argv(path: str | Path, demuxer: str, limit_ms: int, outputs: list[str], *,
                loglevel: str = "error", extra_input: tuple[str, ...] = ()) -> list[str]:
    """ffmpeg reading one accepted file: the whitelists, ``-f demuxer`` (required) and the read
    limit ``-t`` (required: no run processes more media than was priced), ``extra_input`` (more
    input options, such as a clip's seek ``-ss``), then ``outputs``."""
    if not demuxer:
        raise MediaError("an ffmpeg run needs the demuxer its probe accepted")
    if limit_ms is None or limit_ms <= 0:
        raise MediaError("an ffmpeg run needs a positive read limit")
    return ["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-loglevel", loglevel, *_input_options(demuxer),
            "-t", f"{limit_ms / 1000:.3f}", *extra_input, "-i", _input_url(path), *outputs]


def checked_argv(args: list[str]) -> list[str]:
    """The argument list if it reads its input the one safe way; MediaError otherwise.

    Every ffprobe/ffmpeg run of the project passes here (``_run``), so a call built by hand,
    without the whitelists, a forced demuxer (ffmpeg) or a read limit (ffmpeg), fails loudly."""
    tool = args[0] if args else ""
    if tool not in ("ffprobe", "ffmpeg"):
        raise MediaError(f"not a media tool: {tool!r}")

    def value(option: str) -> str | None:
        return args[args.index(option) + 1] if option in args[:-1] else None

    inputs = [k for k, arg in enumerate(args) if arg == "-i"]
    if tool == "ffmpeg" and len(inputs) != 1:
        raise MediaError("an ffmpeg run reads exactly one input")
    before_input = args[:inputs[0]] if inputs else args[:-1]
    source = args[inputs[0] + 1] if inputs else args[-1]
    ok = (value("-protocol_whitelist") == PROTOCOL_WHITELIST and value("-format_whitelist") == FORMAT_WHITELIST
          and "-protocol_whitelist" in before_input and "-format_whitelist" in before_input
          and source.startswith("file:/"))
    if tool == "ffmpeg":
        ok = ok and value("-f") in CONTAINERS and "-t" in before_input and "-f" in before_input
    elif "-f" in before_input:
        ok = ok and value("-f") in CONTAINERS
    if not ok:
        raise MediaError(f"{tool} refused: its input must be read through the container whitelist")
    return args


def _run(args: list[str], timeout: float, what: str) -> subprocess.CompletedProcess:
    checked_argv(args)
    try:
        done = subprocess.run(args, capture_output=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError as exc:
        raise MediaError(f"{what}: {args[0]} is not installed") from exc
    except subprocess.TimeoutExpired as exc:
        raise MediaError(f"{what}: {args[0]} took longer than {timeout:.0f} s") from exc
    if done.returncode != 0:
        text = _without_paths(done.stderr, args)
        if "Format not on whitelist" in text:
            found = _REFUSED_FORMAT_RE.search(done.stderr.decode("utf-8", "replace"))
            name = found.group(1) if found else None
            raise UnsupportedContainer(f"{what}: the file is {'a ' + name + ' file' if name else 'in a format'}, "
                                       f"not one of the accepted audio and video containers", name)
        raise MediaError(f"{what}: {args[0]} exited {done.returncode}: {_tail(text)}")
    return done


_REFUSED_FORMAT_RE = re.compile(r"\[([a-z0-9_]+)(?:,[a-z0-9_,]+)? @ 0x[0-9a-f]+\] Format not on whitelist")
# "[hls @ 0x55d0c3a4b280] ": the memory address tells a client nothing and is dropped.
_CONTEXT_RE = re.compile(r"\[([^\]@\s]+) @ 0x[0-9a-fA-F]+\]")
# A word with a slash or backslash: a path, a URL, a file: name... A plain ratio (25/1, N/A) stays.
_PATHLIKE_RE = re.compile(r"[^\s'\"`()\[\]<>,;]*[/\\][^\s'\"`()\[\]<>,;]*")
_HARMLESS_RE = re.compile(r"\d+(?:\.\d+)?/\d+(?:\.\d+)?|N/A|[A-Za-z]/[A-Za-z]")


def scrub(text: str) -> str:
    """ffmpeg's words without any path: each path-like word becomes ``<path>``."""
    text = _CONTEXT_RE.sub(r"[\1]", text)
    return _PATHLIKE_RE.sub(lambda m: m.group(0) if _HARMLESS_RE.fullmatch(m.group(0)) else "<path>", text)


def _without_paths(stderr: bytes, args: list[str]) -> str:
    """ffmpeg names its input by path; a refusal reaches clients (400/415, a job's error), where
    the server's directories have no business: the input becomes ``<input>``, and any other path
    ffmpeg derived from it (a playlist's segments, say) ``<path>``."""
    text = stderr.decode("utf-8", "replace")
    for arg in args[1:]:
        if arg.startswith("/") or arg.startswith("file:"):
            text = text.replace(arg, "<input>")
    return scrub(text)


def _ratio(value: str | None) -> float | None:
    if not value or value in ("0/0", "0"):
        return None
    num, _, den = value.partition("/")
    try:
        result = float(num) / float(den or 1)
    except (ValueError, ZeroDivisionError):
        return None
    return round(result, 3) if 0 < result <= MAX_FRAME_RATE else None


def _int(value: object) -> int | None:
    try:
        return int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None


def accepted_demuxer(format_name: str) -> str | None:
    """The key of CONTAINERS that ffprobe's ``format_name`` (``mov,mp4,m4a,...``) names, if any."""
    return next((name for name in format_name.split(",") if name in CONTAINERS), None)


def probe(path: str | Path, timeout: float = PROBE_TIMEOUT_S, *, demuxer: str | None = None) -> MediaInfo:
    """Duration (the container's), streams, resolution, frame rate, subtitle tracks and the demuxer.

    ``demuxer`` None: ffprobe identifies the container among the accepted ones only (anything else
    is ``UnsupportedContainer``); given, it is forced. MediaError when not media."""
    if not Path(path).is_file():
        raise MediaError("reading media metadata: the file does not exist")
    done = _run(ffprobe_argv(path, demuxer, "-print_format", "json", "-show_format", "-show_streams"),
                timeout, "reading media metadata")
    try:
        data = json.loads(done.stdout or b"{}")
    except json.JSONDecodeError as exc:
        raise MediaError("reading media metadata: ffprobe printed no JSON") from exc
    fmt = data.get("format") or {}
    accepted = accepted_demuxer(str(fmt.get("format_name", "")))
    if accepted is None or (demuxer is not None and accepted != demuxer):
        raise UnsupportedContainer("reading media metadata: not one of the accepted audio and video containers")
    raw_streams = data.get("streams") or []
    streams = []
    subtitles = []
    video = next((s for s in raw_streams if s.get("codec_type") == "video"
                  and not (s.get("disposition") or {}).get("attached_pic")), None)
    audio = next((s for s in raw_streams if s.get("codec_type") == "audio"), None)
    for s in raw_streams:
        tags = s.get("tags") or {}
        info = StreamInfo(int(s.get("index", len(streams))), s.get("codec_type", "data"), s.get("codec_name", ""),
                          tags.get("language"), tags.get("title"))
        streams.append(info)
        if info.kind == "subtitle":
            subtitles.append(SubtitleTrack(info.index, len(subtitles), info.codec, info.language, info.title,
                                           info.codec not in BITMAP_SUBTITLES))
    if not video and not audio:
        raise MediaError("reading media metadata: no audio or video stream (not a media file)")
    duration = fmt.get("duration")
    if duration is None:
        durations = [float(s["duration"]) for s in raw_streams if s.get("duration")]
        duration = max(durations) if durations else 0.0
    try:
        seconds = float(duration)
    except (TypeError, ValueError):
        seconds = 0.0
    if not math.isfinite(seconds) or seconds <= 0:
        raise MediaError("reading media metadata: the media has no duration")
    duration_ms = int(round(min(seconds, 1e12) * 1000))
    if duration_ms <= 0:
        raise MediaError("reading media metadata: the media has no duration")
    return MediaInfo(
        duration_ms=duration_ms, format_name=fmt.get("format_name", ""), size_bytes=_int(fmt.get("size")),
        bit_rate=_int(fmt.get("bit_rate")), streams=tuple(streams),
        width=_int(video.get("width")) if video else None, height=_int(video.get("height")) if video else None,
        frame_rate=_ratio(video.get("avg_frame_rate") or video.get("r_frame_rate")) if video else None,
        video_codec=video.get("codec_name") if video else None, audio_codec=audio.get("codec_name") if audio else None,
        subtitle_tracks=tuple(subtitles), demuxer=accepted)


OUT_TIME_RE = re.compile(rb"^out_time_us=(\d+)\s*$", re.MULTILINE)


def measure_duration(path: str | Path, demuxer: str, limit_ms: int, timeout: float = MEASURE_TIMEOUT_S) -> int:
    """How long the file's audio and video really play, milliseconds: every packet is read (a
    stream copy to the null muxer, no decoding) and the last timestamp reached is the answer, as
    a container header can state anything. Reads at most ``limit_ms`` (plus a second, to see that
    the file goes beyond it). A demuxer or parser error (packets cut short, zeros where packets
    should be) is ``DamagedMedia``: such a file is refused, not half analysed."""
    done = _run(ffmpeg_argv(path, demuxer, limit_ms + 1000,
                            ["-map", "0:v?", "-map", "0:a?", "-c", "copy", "-f", "null", "-progress", "pipe:1", "-"]),
                timeout, "measuring the media")
    errors_text = _without_paths(done.stderr, done.args)
    if errors_text.strip():
        raise DamagedMedia(f"measuring the media: the file is damaged or truncated: {_tail(errors_text, 2)}")
    ends = OUT_TIME_RE.findall(done.stdout)
    return int(ends[-1]) // 1000 if ends else 0


def _limit_of(path: str | Path, demuxer: str | None, limit_ms: int | None,
              info: MediaInfo | None = None) -> tuple[str, int, MediaInfo | None]:
    """The demuxer and read limit of a run: given, or from a (whitelisted) probe of the file."""
    if demuxer and limit_ms:
        return demuxer, limit_ms, info
    info = info or probe(path, demuxer=demuxer)
    return info.demuxer, limit_ms or info.duration_ms, info


def extract_subtitles(path: str | Path, position: int = 0, timeout: float = 60.0,
                      info: MediaInfo | None = None, *, limit_ms: int | None = None) -> str:
    """The embedded subtitle track ``position`` (among subtitle streams) as WebVTT text, read up to
    ``limit_ms`` of media (default: the container's duration)."""
    info = info or probe(path)
    tracks = info.subtitle_tracks
    if position >= len(tracks):
        raise MediaError(f"extracting subtitles: the media has {len(tracks)} subtitle track(s), no track {position}")
    if not tracks[position].text_based:
        raise MediaError(f"extracting subtitles: track {position} is a bitmap format ({tracks[position].codec}), "
                         "which needs OCR")
    # A WebVTT track is copied as it is: decoding it would drop its <v Name> voice spans.
    codec = ["-c:s", "copy"] if tracks[position].codec == "webvtt" else []
    done = _run(ffmpeg_argv(path, info.demuxer, limit_ms or info.duration_ms,
                            ["-map", f"0:s:{position}", *codec, "-f", "webvtt", "-"]),
                timeout, "extracting subtitles")
    return done.stdout.decode("utf-8", "replace")


def pick_subtitle_track(info: MediaInfo, language: str | None) -> int | None:
    """The text track in the wanted language, else the first text track."""
    text_tracks = [t for t in info.subtitle_tracks if t.text_based]
    if not text_tracks:
        return None
    wanted = (language or "").lower()[:2]
    for track in text_tracks:
        if wanted and (track.language or "").lower()[:2] == wanted:
            return track.position
    return text_tracks[0].position


SCENE_LINE_RE = re.compile(r"pts_time:([\d.]+)")
SCORE_LINE_RE = re.compile(r"lavfi\.scene_score=([\d.]+)")


def detect_scenes(path: str | Path, *, threshold: float = SCENE_THRESHOLD, timeout: float = 600.0,
                  scale_width: int = SCENE_SCALE_WIDTH, demuxer: str | None = None,
                  limit_ms: int | None = None) -> list[SceneChange]:
    """Hard cuts: frames whose scene score passes ``threshold``, in the first ``limit_ms``.

    Frames are scaled to ``scale_width`` before scoring: the score is a mean absolute difference,
    which a thumbnail measures as well as the full frame, at a fraction of the cost.
    """
    demuxer, limit_ms, _ = _limit_of(path, demuxer, limit_ms)
    graph = (f"scale={scale_width}:-2:flags=fast_bilinear,select='gt(scene\\,{threshold})',"
             f"metadata=mode=print:file=-")
    done = _run(ffmpeg_argv(path, demuxer, limit_ms,
                            ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf", graph, "-f", "null", "-"]),
                timeout, "detecting scene changes")
    changes: list[SceneChange] = []
    time_ms: int | None = None
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        match = SCENE_LINE_RE.search(line)
        if match:
            time_ms = int(round(float(match.group(1)) * 1000))
            continue
        match = SCORE_LINE_RE.search(line)
        if match and time_ms is not None:
            changes.append(SceneChange(time_ms, round(float(match.group(1)), 4)))
            time_ms = None
    return changes


SILENCE_START_RE = re.compile(r"silence_start:\s*(-?[\d.]+)")
SILENCE_END_RE = re.compile(r"silence_end:\s*([\d.]+)")
LOUDNESS_RE = {
    "integrated": re.compile(r"I:\s+(-?[\d.]+|-inf)\s+LUFS"),
    "range": re.compile(r"LRA:\s+(-?[\d.]+)\s+LU\b"),
    "peak": re.compile(r"Peak:\s+(-?[\d.]+|-inf)\s+dBFS"),
}
FRAME_TIME_RE = re.compile(r"pts_time:([\d.]+)")
RMS_RE = re.compile(r"lavfi\.astats\.(?:1|Overall)\.RMS_level=(-?[\w.]+)")
ZCR_RE = re.compile(r"lavfi\.astats\.(?:1|Overall)\.Zero_crossings_rate=([\d.]+)")


def _float(value: str) -> float | None:
    try:
        result = float(value)
    except ValueError:
        return None
    return None if math.isinf(result) or math.isnan(result) else result


def analyse_audio(path: str | Path, duration_ms: int, *, silence_db: float = SILENCE_DB,
                  silence_min_s: float = SILENCE_MIN_S, timeout: float = 600.0,
                  demuxer: str | None = None) -> AudioAnalysis:
    """Silences, EBU R128 loudness and speech/music-like segments in one decoding pass of the first
    ``duration_ms`` (the read limit)."""
    demuxer, duration_ms, _ = _limit_of(path, demuxer, duration_ms)
    graph = (
        "[0:a:0]asplit=2[full][low];"
        "[full]ebur128=peak=true:framelog=verbose[loud];"
        f"[low]aresample=16000,aformat=channel_layouts=mono,silencedetect=noise={silence_db}dB:d={silence_min_s},"
        f"asetnsamples=n={FRAME_SAMPLES}:p=0,astats=metadata=1:reset=1:measure_overall=none:"
        "measure_perchannel=RMS_level+Zero_crossings_rate,ametadata=mode=print:file=-[frames]")
    done = _run(ffmpeg_argv(path, demuxer, duration_ms,
                            ["-filter_complex", graph, "-map", "[loud]", "-f", "null", "-", "-map", "[frames]",
                             "-f", "null", "-"], loglevel="info"),
                timeout, "analysing audio")
    stderr = done.stderr.decode("utf-8", "replace")
    silences: list[TimeRange] = []
    open_start: int | None = None
    for line in stderr.splitlines():
        match = SILENCE_START_RE.search(line)
        if match:
            open_start = max(0, int(round(float(match.group(1)) * 1000)))
            continue
        match = SILENCE_END_RE.search(line)
        if match and open_start is not None:
            silences.append(TimeRange(open_start, int(round(float(match.group(1)) * 1000))))
            open_start = None
    if open_start is not None and duration_ms > open_start:
        silences.append(TimeRange(open_start, duration_ms))

    summary = stderr[stderr.rfind("Summary:"):] if "Summary:" in stderr else ""
    values = {}
    for key, pattern in LOUDNESS_RE.items():
        match = pattern.search(summary)
        values[key] = _float(match.group(1)) if match else None
    loudness = Loudness(values["integrated"], values["range"], values["peak"]) if summary else None

    frames = _Frames()
    current_time: int | None = None
    for line in done.stdout.decode("utf-8", "replace").splitlines():
        match = FRAME_TIME_RE.search(line)
        if match:
            current_time = int(round(float(match.group(1)) * 1000))
            continue
        match = RMS_RE.search(line)
        if match and current_time is not None:
            level = _float(match.group(1))
            frames.times.append(current_time)
            frames.rms_db.append(level if level is not None else -120.0)
            continue
        match = ZCR_RE.search(line)
        if match and len(frames.zcr) < len(frames.times):
            frames.zcr.append(float(match.group(1)))
    while len(frames.zcr) < len(frames.times):
        frames.zcr.append(0.0)
    segments = classify_frames(frames.times, frames.rms_db, frames.zcr, duration_ms, silence_db)
    return AudioAnalysis(tuple(silences), loudness, tuple(segments), len(frames.times))


def classify_frames(times: list[int], rms_db: list[float], zcr: list[float], duration_ms: int,
                    silence_db: float = SILENCE_DB) -> list[AudioSegment]:
    """Per-second speech / music / silence judgement from 50 ms frames, merged into segments."""
    if not times:
        return []
    seconds: dict[int, list[int]] = {}
    for k, t in enumerate(times):
        seconds.setdefault(t // 1000, []).append(k)
    labels: list[tuple[int, str, float]] = []
    for second in sorted(seconds):
        idx = seconds[second]
        levels = [rms_db[k] for k in idx]
        linear = [10 ** (level / 20) for level in levels]
        mean_linear = sum(linear) / len(linear)
        mean_db = 20 * math.log10(mean_linear) if mean_linear > 0 else -120.0
        if mean_db < silence_db:
            labels.append((second, "silence", 1.0))
            continue
        low_energy = sum(1 for v in linear if v < 0.5 * mean_linear) / len(linear)
        rates = [zcr[k] for k in idx]
        mean_rate = statistics.mean(rates)
        rate_cv = statistics.pstdev(rates) / mean_rate if mean_rate > 0 else 0.0
        speechness = 0.6 * min(1.0, low_energy / 0.3) + 0.4 * min(1.0, rate_cv / 0.5)
        kind = "speech" if speechness >= 0.5 else "music"
        labels.append((second, kind, round(min(1.0, abs(speechness - 0.5) * 2), 3)))
    # smooth isolated seconds: a second unlike both neighbours takes their label
    for k in range(1, len(labels) - 1):
        before, here, after = labels[k - 1][1], labels[k][1], labels[k + 1][1]
        if before == after != here:
            labels[k] = (labels[k][0], before, labels[k][2])
    runs: list[list] = []
    for second, kind, confidence in labels:
        start, end = second * 1000, min(duration_ms, (second + 1) * 1000)
        if runs and runs[-1][2] == kind and runs[-1][1] >= start:
            runs[-1][1] = end
            runs[-1][3].append(confidence)
        else:
            runs.append([start, end, kind, [confidence]])
    merged: list[list] = []
    for run in runs:
        if merged and run[1] - run[0] < MIN_AUDIO_SEGMENT_MS and run[2] != "silence":
            merged[-1][1] = run[1]
            continue
        if merged and merged[-1][2] == run[2]:
            merged[-1][1] = run[1]
            merged[-1][3].extend(run[3])
        else:
            merged.append(run)
    return [AudioSegment(start, end, kind, round(statistics.mean(conf), 3))
            for start, end, kind, conf in merged if end > start]


def media_facts(path: str | Path, info: MediaInfo | None = None, *, scene_threshold: float = SCENE_THRESHOLD,
                silence_db: float = SILENCE_DB, silence_min_s: float = SILENCE_MIN_S,
                timeout: float = 1800.0, demuxer: str | None = None, limit_ms: int | None = None) -> MediaFacts:
    """Scene and audio analysis for the content graph, of the first ``limit_ms`` of the media (the
    duration that was priced; default: the container's).

    The two passes run one after the other: the H.264 decoder of the scene pass already uses every
    core, and running the audio pass beside it measured slower (32 s against 20 s for 10 minutes
    of 720p on 2 cores).
    """
    info = info or probe(path, demuxer=demuxer)
    limit_ms = limit_ms or info.duration_ms
    scene_changes = detect_scenes(path, threshold=scene_threshold, timeout=timeout, demuxer=info.demuxer,
                                  limit_ms=limit_ms) if info.has_video else []
    sound = analyse_audio(path, limit_ms, silence_db=silence_db, silence_min_s=silence_min_s,
                          timeout=timeout, demuxer=info.demuxer) if info.has_audio else None
    return MediaFacts(
        duration_ms=limit_ms, scene_changes=tuple(scene_changes),
        silences=sound.silences if sound else (), audio_segments=sound.segments if sound else (),
        loudness=sound.loudness if sound else None, has_audio=info.has_audio, has_video=info.has_video)


# ---- clips: cut a range, render it with a template, make its thumbnail, check the output

# A cut's or render's duration may differ from its range by this much: an audio frame at each end
# (MP3's container duration counts the encoder's delay and padding: under 47 ms at 48 kHz), or one
# frame of the picture when a frame lasts longer (a 10 fps video's clip ends on a 100 ms frame).
CLIP_TOLERANCE_MS = 50


def clip_tolerance_ms(frame_ms: int | None) -> int:
    """How far a written clip's duration may be from its range, for a source whose frames last
    ``frame_ms`` (None: no picture)."""
    return max(CLIP_TOLERANCE_MS, frame_ms or 0)
FONTS_DIR = "/usr/share/fonts/truetype/dejavu"  # fonts-dejavu-core (infra.tools.ensure_caption_font)
FONT_NAME = "DejaVu Sans"  # bold: CAPTION_FONT
# The burned text's styles: pixels kept clear at each side, and the width of the box around a
# title (the cover's in a thumbnail), which is drawn beyond the letters.
TEXT_MARGIN_X = 40
TITLE_BOX, COVER_BOX = 8, 10
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


def clip_timeout(duration_ms: int, base_s: float, per_second: float) -> float:
    """The longest a clip's ffmpeg run may take: ``base_s`` (start-up, seeking) plus ``per_second``
    seconds per second of clip (a 30 s template render takes about 10 s on two cores)."""
    return base_s + per_second * duration_ms / 1000


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}"


def cut_argv(source: str | Path, demuxer: str, start_ms: int, end_ms: int, fmt: str, out: str | Path,
             *, has_video: bool = True, has_audio: bool = True) -> list[str]:
    """The range ``[start_ms, end_ms)`` re-encoded to ``fmt``, frame-accurately: the input is
    seeked to the start (ffmpeg decodes from the keyframe before and drops what precedes it) and
    read for the range only; the output stops at the range's length."""
    length = end_ms - start_ms
    maps = [*(["-map", "0:v:0"] if has_video and fmt != "mp3" else []), *(["-map", "0:a:0"] if has_audio else [])]
    video = ["-vf", EVEN_SIZE] if has_video and fmt != "mp3" else []
    return ffmpeg_argv(source, demuxer, length, [*maps, *video, *ENCODERS[fmt], "-t", _seconds(length), "-y", str(out)],
                       extra_input=("-ss", _seconds(start_ms)))


def reframe_filter(t: Template) -> str:
    """The source's first video stream reframed to the template's size: ``crop`` covers the frame
    and keeps its centre; ``blur_fill`` fits the whole picture over a blurred copy of itself that
    covers the frame (blurred at an eighth of the size: as soft, at a fiftieth of the cost)."""
    w, h = t.width, t.height
    if t.reframe == "crop":
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


def render_graph(t: Template, ass_path: str | Path) -> str:
    """The whole video graph of a template render: reframing, then the burned captions and title."""
    return f"{reframe_filter(t)},{subtitles_filter(ass_path)}[v]"


def render_argv(source: str | Path, demuxer: str, start_ms: int, end_ms: int, t: Template, ass_path: str | Path,
                out: str | Path, *, has_audio: bool = True) -> list[str]:
    """The range rendered with the template: reframed, captions and title burned, H.264 + AAC MP4."""
    length = end_ms - start_ms
    return ffmpeg_argv(source, demuxer, length,
                       ["-filter_complex", render_graph(t, ass_path), "-map", "[v]",
                        *(["-map", "0:a:0"] if has_audio else []), *ENCODERS["mp4"], "-t", _seconds(length),
                        "-y", str(out)],
                       extra_input=("-ss", _seconds(start_ms)))


def thumbnail_argv(source: str | Path, demuxer: str, at_ms: int, t: Template, ass_path: str | Path,
                   out: str | Path) -> list[str]:
    """One frame at ``at_ms``, reframed like the clip, with the thumbnail title burned: a JPEG."""
    return ffmpeg_argv(source, demuxer, 1000,
                       ["-filter_complex", render_graph(t, ass_path), "-map", "[v]", "-frames:v", "1",
                        "-c:v", "mjpeg", "-q:v", "3", "-f", "image2", "-update", "1", "-y", str(out)],
                       extra_input=("-ss", _seconds(at_ms)))


@functools.cache
def caption_font() -> Font:
    """The characters of the caption font (``infra.tools.CAPTION_FONT``, DejaVu Sans Bold) and their
    advance widths, as fractions of the size libass draws it at: libass sizes a font by its full
    height (Windows ascent plus descent, as VSFilter does), not by its em, so an advance is
    ``advance / (winAscent + winDescent)`` of the size (measured: ten W at 56 px are 527 px wide)."""
    from fontTools.ttLib import TTFont  # the worker's only reader of font files

    with TTFont(CAPTION_FONT, lazy=True) as font:
        os2 = font["OS/2"]
        height = os2.usWinAscent + os2.usWinDescent
        metrics = font["hmtx"].metrics
        return Font({chr(cp): metrics[glyph][0] / height for cp, glyph in font.getBestCmap().items()})


def title_box(t: Template, *, cover: bool = False) -> tuple[int, int]:
    """(font size, width in pixels) a title of ``t`` has, in the clip or on its cover (thumbnail)."""
    size, box = (t.thumbnail_font_size, COVER_BOX) if cover else (t.title_font_size, TITLE_BOX)
    return size, t.width - 2 * (TEXT_MARGIN_X + box)


def title_layout(t: Template, text: str, *, cover: bool = False) -> tuple[str, ...]:
    """A client's title as the lines burned into a clip of ``t`` (``domain.clips.title_lines``),
    measured with the caption font's own advance widths, so that it stays inside the frame."""
    size, width = title_box(t, cover=cover)
    return title_lines(text, caption_font(), size, width)


_ASS_AFTER_BACKSLASH = frozenset("Nnh")  # \N, \n and \h are line breaks and a hard space to libass


def _ass_text(text: str) -> str:
    """Text as an ASS event shows it and nothing more: control and bidi characters and characters
    the font lacks dropped (``domain.clips.drawable``), braces escaped (libass draws ``\\{`` and
    ``\\}`` as braces: no override block), and a backslash before N, n or h followed by a word
    joiner (U+2060, zero-width and in the font), so that it is drawn as a backslash, not a break."""
    text = drawable(text, caption_font())
    out = []
    for k, ch in enumerate(text):
        if ch in "{}":
            out.append("\\" + ch)
        elif ch == "\\" and text[k + 1:k + 2] in _ASS_AFTER_BACKSLASH:
            out.append("\\\u2060")
        else:
            out.append(ch)
    return "".join(out)


def _ass_time(ms: int) -> str:
    cs = max(0, ms) // 10
    return f"{cs // 360000}:{cs // 6000 % 60:02d}:{cs // 100 % 60:02d}.{cs % 100:02d}"


# One colour per speaker in a clip (white, light yellow, light cyan), as ASS writes them (&HBBGGRR).
_SPEAKER_COLOURS = ("&H00FFFFFF", "&H0080FFFF", "&H00FFFF80")


def ass_script(t: Template, captions: Sequence[Caption], title: Sequence[str] = (), *, title_ms: int = 0,
               centre: Sequence[str] = ()) -> str:
    """The ASS script burned into a render (``captions`` at the bottom, ``title`` at the top for
    ``title_ms``) or a thumbnail (``centre``: its title in the middle), sized in the output's pixels.
    Lines are the domain's (``domain.clips``): wrapping is off (``WrapStyle: 2``), so libass never
    breaks a word the layout kept whole."""
    speakers: dict[str | None, str] = {}
    for c in captions:
        speakers.setdefault(c.speaker, _SPEAKER_COLOURS[len(speakers) % len(_SPEAKER_COLOURS)])
    fields = ("Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, "
              "Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, "
              "Alignment, MarginL, MarginR, MarginV, Encoding")

    def style(name: str, size: int, colour: str, border: int, outline: int, align: int, margin_v: int) -> str:
        return (f"Style: {name},{FONT_NAME},{size},{colour},&H00FFFFFF,&H00000000,&H99000000,-1,0,0,0,100,100,0,0,"
                f"{border},{outline},1,{align},{TEXT_MARGIN_X},{TEXT_MARGIN_X},{margin_v},1")

    lines = ["[Script Info]", "ScriptType: v4.00+", f"PlayResX: {t.width}", f"PlayResY: {t.height}",
             "WrapStyle: 2", "ScaledBorderAndShadow: yes", "", "[V4+ Styles]", fields,
             style("Caption", t.caption_font_size, "&H00FFFFFF", 1, 4, 2, t.caption_margin),
             style("Title", t.title_font_size, "&H0000D6FF", 3, TITLE_BOX, 8, t.title_font_size * 2),
             style("Thumb", t.thumbnail_font_size, "&H00FFFFFF", 3, COVER_BOX, 5, 0),
             "", "[Events]", "Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text"]
    if title and title_ms > 0:
        lines.append(f"Dialogue: 1,{_ass_time(0)},{_ass_time(title_ms)},Title,,0,0,0,,"
                     + r"\N".join(_ass_text(x) for x in title))
    if centre:
        lines.append(f"Dialogue: 1,{_ass_time(0)},{_ass_time(3_600_000)},Thumb,,0,0,0,,"
                     + r"\N".join(_ass_text(x) for x in centre))
    for c in captions:
        colour = speakers[c.speaker]
        tint = "" if colour == _SPEAKER_COLOURS[0] else "{\\c" + colour.replace("&H00", "&H") + "&}"
        lines.append(f"Dialogue: 0,{_ass_time(c.start_ms)},{_ass_time(c.end_ms)},Caption,,0,0,0,,"
                     + tint + r"\N".join(_ass_text(x) for x in c.lines))
    return "\n".join(lines) + "\n"


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


async def run_killable(args: list[str], timeout: float, what: str,
                       slots: asyncio.Semaphore | None = None) -> None:
    """Run a checked ffmpeg argument list without blocking the loop: at most ``slots`` at once,
    in a process group of its own, killed with all its children when ``timeout`` passes or the
    calling task is cancelled (a cancelled job, a lost lease, a worker shutting down), and by the
    kernel when the worker itself dies. Failures are ``MediaError`` with ffmpeg's last lines and no
    path."""
    checked_argv(args)
    async with slots if slots is not None else contextlib.nullcontext():
        try:
            proc = await asyncio.create_subprocess_exec(*args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                                        stderr=subprocess.PIPE, start_new_session=True,
                                                        preexec_fn=_die_with_parent)
        except FileNotFoundError as exc:
            raise MediaError(f"{what}: {args[0]} is not installed") from exc
        try:
            _, stderr = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            await _kill_group(proc)
            raise MediaError(f"{what}: {args[0]} took longer than {timeout:g} s") from None
        except BaseException:
            await asyncio.shield(_kill_group(proc))
            raise
    if proc.returncode != 0:
        raise MediaError(f"{what}: {args[0]} exited {proc.returncode}: {_tail(_without_paths(stderr or b'', args))}")


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before ffmpeg starts (Linux): SIGKILL when the worker dies, even by kill -9,
    so that no render outlives the job that asked for it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    await proc.wait()
THUMBNAIL_WIDTH = 640
THUMBNAIL_TIMEOUT_S = 30.0
# Where a video's thumbnail is taken: a tenth into it (past a black first frame or a title card),
# and never later than a minute; the read window after that point is two seconds.
THUMBNAIL_AT_FRACTION = 0.1
THUMBNAIL_AT_MAX_MS = 60_000
THUMBNAIL_WINDOW_MS = 2_000
# An audio-only media's picture is its waveform over its first two minutes (a longer read would
# make the upload wait for a picture).
WAVEFORM_MAX_MS = 120_000


def thumbnail(path: str | Path, demuxer: str, duration_ms: int, *, has_video: bool,
              width: int = THUMBNAIL_WIDTH, timeout: float = THUMBNAIL_TIMEOUT_S) -> bytes:
    """A JPEG picture of the media, ``width`` pixels wide at most (never upscaled): a frame of the
    video, or for audio only the waveform of its start. Reads at most a two-second window (a frame) or two minutes (a
    waveform) of the accepted container; MediaError when ffmpeg makes no picture."""
    encode = ["-frames:v", "1", "-c:v", "mjpeg", "-q:v", "5", "-f", "image2pipe", "-"]
    if has_video:
        at_ms = min(int(duration_ms * THUMBNAIL_AT_FRACTION), THUMBNAIL_AT_MAX_MS)
        args = ffmpeg_argv(path, demuxer, THUMBNAIL_WINDOW_MS,
                           ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf", f"scale='min({width},iw)':-2", *encode],
                           extra_input=("-ss", f"{at_ms / 1000:.3f}"))
    else:
        height = width * 9 // 16
        args = ffmpeg_argv(path, demuxer, min(duration_ms, WAVEFORM_MAX_MS) or WAVEFORM_MAX_MS,
                           ["-filter_complex", f"[0:a:0]showwavespic=s={width}x{height}:colors=0x3a6ea5[w]",
                            "-map", "[w]", *encode])
    done = _run(args, timeout, "making a thumbnail")
    if not done.stdout.startswith(b"\xff\xd8"):
        raise MediaError("making a thumbnail: ffmpeg made no picture")
    return done.stdout
def jpeg_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from a JPEG's frame header, found in its first bytes; None if not there."""
    if head[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 9 <= len(head):
        if head[at] != 0xFF:
            return None
        marker, length = head[at + 1], int.from_bytes(head[at + 2:at + 4], "big")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            return int.from_bytes(head[at + 7:at + 9], "big"), int.from_bytes(head[at + 5:at + 7], "big")
        at += 2 + length
    return None
