"""A media's poster: one JPEG picture of it (a frame of the video, or an audio file's waveform),
made on the write side (when a video is uploaded; for a video uploaded before posters were made
then, by its analysis job), and the size read from a JPEG's header. Readers (the exports) only
read a poster that exists: a GET runs no ffmpeg."""

from __future__ import annotations

import logging
from pathlib import Path
from uuid import UUID

from infra.media.ffmpeg import MediaError, audio_bound, ffmpeg_argv, run, scrub, video_bound
from infra.media.probe import probe
from infra.storage import Storage

log = logging.getLogger("vaeo.media.posters")

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
              width: int = THUMBNAIL_WIDTH, timeout: float = THUMBNAIL_TIMEOUT_S, mix: int | None = None) -> bytes:
    """A JPEG picture of the media, ``width`` pixels wide at most (never upscaled): a frame of the
    video, or for audio only the waveform of its start (``mix``: the channels without a layout
    to mix down first, ``MediaInfo.unnamed_channels``). Reads at most a two-second window (a frame)
    or two minutes (a waveform) of the accepted container; MediaError when ffmpeg makes no picture."""
    encode = ["-frames:v", "1", "-c:v", "mjpeg", "-q:v", "5", "-f", "image2pipe", "-"]
    if has_video:
        at_ms = min(int(duration_ms * THUMBNAIL_AT_FRACTION), THUMBNAIL_AT_MAX_MS)
        args = ffmpeg_argv(path, demuxer, THUMBNAIL_WINDOW_MS,
                           ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf",
                            f"{video_bound(THUMBNAIL_WINDOW_MS)},scale='min({width},iw)':-2", *encode],
                           extra_input=("-ss", f"{at_ms / 1000:.3f}"))
    else:
        height = width * 9 // 16
        limit_ms = min(duration_ms, WAVEFORM_MAX_MS) or WAVEFORM_MAX_MS
        args = ffmpeg_argv(path, demuxer, limit_ms,
                           ["-filter_complex", f"[0:a:0]{audio_bound(limit_ms, mix=mix)},"
                                               f"showwavespic=s={width}x{height}:colors=0x3a6ea5[w]",
                            "-map", "[w]", *encode])
    done = run(args, timeout, "making a thumbnail")
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


def poster_key(workspace_id: UUID, video_id: int, thumbnail_key: str | None) -> str:
    """Where a video's poster is stored: the thumbnail its upload stored, else (a video uploaded
    before thumbnails were made at upload, or one ffmpeg made no picture of then) the key its
    analysis makes it under."""
    return thumbnail_key or f"thumbnails/{workspace_id}/{video_id}/poster.jpg"


def ensure_poster(storage: Storage, key: str, source_key: str, demuxer: str, duration_ms: int, *,
                  has_video: bool) -> bool:
    """Make and store the poster under ``key`` unless it is there; False when ffmpeg makes no
    picture of the media (the exports then stand without a poster)."""
    if storage.exists(key):
        return True
    try:
        source = storage.path(source_key)
        mix = None if has_video else probe(source, demuxer=demuxer).unnamed_channels
        picture = thumbnail(source, demuxer, duration_ms, has_video=has_video, mix=mix)
    except MediaError as exc:
        log.warning("no poster for %s: %s", key, scrub(str(exc)))
        return False
    storage.write_bytes(key, picture)
    return True
