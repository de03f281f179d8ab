"""ffprobe and the passes that read a media's container: metadata, the real playing time, the
embedded subtitle tracks. Every run goes through ``infra.media.ffmpeg``."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from infra.media.ffmpeg import (
    CONTAINERS,
    DamagedMedia,
    MediaError,
    UnsupportedContainer,
    ffmpeg_argv,
    ffprobe_argv,
    last_lines,
    run,
    without_paths,
)

PROBE_TIMEOUT_S = 30.0
# The stream-copy pass that measures how long the accepted bytes really play (demuxing only).
MEASURE_TIMEOUT_S = 120.0
# Frame rates above this are not a real video's (ffprobe reports timebases such as 90000/1): unknown.
MAX_FRAME_RATE = 1000.0
# ffmpeg's decoders carry at most this many channels (the pcm and FLAC ones stop far below).
MAX_CHANNELS = 1024
BITMAP_SUBTITLES = frozenset({"dvd_subtitle", "hdmv_pgs_subtitle", "dvb_subtitle", "xsub", "dvb_teletext"})


@dataclass(frozen=True, slots=True)
class StreamInfo:
    index: int
    kind: str  # video, audio, subtitle, data, attachment
    codec: str
    language: str | None = None
    title: str | None = None
    channels: int | None = None  # audio: how many
    layout_named: bool = True  # audio: whether the stream names its channel layout (5.1, stereo, ...)


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

    @property
    def unnamed_channels(self) -> int | None:
        """The first audio stream's channel count when ffmpeg cannot mix it down by itself (more
        than two channels and no layout: it knows no layout of 64 channels), for ``audio_bound``'s
        ``mix``; None otherwise."""
        audio = next((s for s in self.streams if s.kind == "audio"), None)
        if audio is None or audio.layout_named or not audio.channels or audio.channels <= 2:
            return None
        return min(audio.channels, MAX_CHANNELS)

    def to_dict(self) -> dict:
        return {"duration_ms": self.duration_ms, "format": self.format_name, "demuxer": self.demuxer,
                "size_bytes": self.size_bytes,
                "bit_rate": self.bit_rate, "width": self.width, "height": self.height, "frame_rate": self.frame_rate,
                "video_codec": self.video_codec, "audio_codec": self.audio_codec, "has_audio": self.has_audio,
                "has_video": self.has_video,
                "subtitle_tracks": [{"position": t.position, "codec": t.codec, "language": t.language,
                                     "title": t.title, "text_based": t.text_based} for t in self.subtitle_tracks]}

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
    done = run(ffprobe_argv(path, demuxer, "-print_format", "json", "-show_format", "-show_streams"),
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
                          tags.get("language"), tags.get("title"), _int(s.get("channels")),
                          str(s.get("channel_layout") or "unknown") != "unknown")
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
    done = run(ffmpeg_argv(path, demuxer, limit_ms + 1000,
                            ["-map", "0:v?", "-map", "0:a?", "-c", "copy", "-f", "null", "-progress", "pipe:1", "-"]),
                timeout, "measuring the media")
    errors_text = without_paths(done.stderr, done.args)
    if errors_text.strip():
        raise DamagedMedia(f"measuring the media: the file is damaged or truncated: {last_lines(errors_text, 2)}")
    ends = OUT_TIME_RE.findall(done.stdout)
    return int(ends[-1]) // 1000 if ends else 0


def limit_of(path: str | Path, demuxer: str | None, limit_ms: int | None,
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
    done = run(ffmpeg_argv(path, info.demuxer, limit_ms or info.duration_ms,
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
