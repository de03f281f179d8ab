"""The media inspection port's adapter (``services.application.ports.MediaInspector``): ffprobe and
ffmpeg on an uploaded file, their refusals told as the domain's media errors."""

from __future__ import annotations

import logging
from pathlib import Path

from domain.base import DomainError
from domain.videos import UnreadableMedia, UnsupportedMedia
from infra.media.ffmpeg import CONTAINERS, MediaError, UnsupportedContainer
from infra.media.posters import thumbnail
from infra.media.probe import MediaInfo, measure_duration, probe

log = logging.getLogger("vaeo.videos")


def media_refusal(exc: Exception) -> DomainError:
    """What ffprobe's refusal means to a client: not media at all, or not in an accepted container
    (415), or media it cannot read (400). The text is ``infra.media``'s, which holds no path."""
    text = str(exc)
    if isinstance(exc, UnsupportedContainer):
        found = {"format": exc.format_name} if exc.format_name else {}
        return UnsupportedMedia("the file is not in one of the accepted audio and video containers (MP4, MOV, "
                                "Matroska, WebM, AVI, FLV, MPEG-TS, MPEG-PS, ASF, MP3, WAV, Ogg, FLAC, AAC, AIFF)",
                                reason=text[-300:], **found)
    if "Invalid data found" in text or "not a media file" in text or "no audio or video stream" in text:
        return UnsupportedMedia("the file is not an audio or video file ffprobe can read", reason=text[-300:])
    return UnreadableMedia(f"the media file could not be read: {text[-300:]}", reason=text[-300:])


class FfmpegInspector:
    """Probe (whitelisted containers only), measure (every packet read, bounded) and picture a media
    file with ffprobe and ffmpeg (``infra.media``)."""

    def probe(self, path: Path) -> MediaInfo:
        try:
            return probe(path)
        except MediaError as exc:
            raise media_refusal(exc) from None

    def measure(self, path: Path, demuxer: str, limit_ms: int) -> int:
        try:
            return measure_duration(path, demuxer, limit_ms)
        except MediaError as exc:
            raise media_refusal(exc) from None

    def extension(self, demuxer: str) -> str:
        return CONTAINERS[demuxer]

    def poster(self, path: Path, demuxer: str, duration_ms: int, *, has_video: bool,
               mix: int | None) -> bytes | None:
        try:
            return thumbnail(path, demuxer, duration_ms, has_video=has_video, mix=mix)
        except MediaError as exc:
            log.info("no thumbnail for %s: %s", path.name, exc)
            return None
