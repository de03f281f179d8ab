"""Frames of a stored video as pictures: ffmpeg samples them, numpy receives them.

One window of the video at a time (``start_ms`` to ``end_ms``): ffmpeg seeks to the window's start,
reads at most the window's length (the ``-t`` read limit of every run, ``infra.media.ffmpeg``),
keeps ``fps`` frames per second (``SAMPLE_FPS`` by default: a 240 fps video gives as many frames
as a 25 fps one), scales each down so that its longest side is at most ``max_side`` pixels (never
up: a 2-pixel video stays 2 pixels), and writes them to its standard output as binary PPM images
(``P6``, RGB, 8 bits): each frame names its own width and height, so a rotated or anamorphic video
needs no guess about the size ffmpeg chose. Frames are read from the pipe one at a time and given
as ``Frame`` (an ``H x W x 3`` uint8 RGB array and its time in the video): memory stays one frame.

Bounds: at most ``max_frames`` frames per call (``-frames:v``, and counted here), and a watchdog
that kills ffmpeg when the whole pass, the consumer's work on the frames included, passes
``timeout`` seconds (``MediaError``). The input is read the project's one safe way
(``ffmpeg_argv``: the container whitelist, the ``file`` protocol only, the demuxer its probe
accepted).

A frame's time is the window's start plus its index over ``fps``: the ``fps`` filter emits frame
``k`` for the instant ``k / fps`` after the seek point (the source frame nearest to it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from infra.media.ffmpeg import MediaError, ffmpeg_argv, piped, video_bound

SAMPLE_FPS = 3.0  # frames kept per second of video
MAX_SIDE = 960  # longest side of a sampled frame, in pixels (a small person keeps enough detail)
MAX_FRAMES = 600  # per call: 200 s of video at 3 fps


@dataclass(frozen=True, slots=True)
class Frame:
    time_ms: int  # from the start of the video
    image: np.ndarray  # H x W x 3, uint8, RGB

    @property
    def width(self) -> int:
        return int(self.image.shape[1])

    @property
    def height(self) -> int:
        return int(self.image.shape[0])


def frames_argv(path: str | Path, demuxer: str, start_ms: int, end_ms: int, *, fps: float = SAMPLE_FPS,
                max_side: int = MAX_SIDE, max_frames: int = MAX_FRAMES) -> list[str]:
    """The ffmpeg run that writes the window's sampled frames as PPM images to its standard output."""
    if end_ms <= start_ms:
        raise MediaError("sampling frames: the window is empty")
    if fps <= 0 or max_side < 1 or max_frames < 1:
        raise MediaError("sampling frames: the rate, size and count must be positive")
    scale = (f"scale=w='min({max_side},iw)':h='min({max_side},ih)':force_original_aspect_ratio=decrease"
             f":flags=area")
    outputs = ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf", f"{video_bound(end_ms - start_ms)},fps={fps:g},{scale}",
               "-fps_mode", "passthrough",
               "-frames:v", str(max_frames), "-pix_fmt", "rgb24", "-c:v", "ppm", "-f", "image2pipe", "pipe:1"]
    return ffmpeg_argv(path, demuxer, end_ms - start_ms, outputs, extra_input=("-ss", f"{start_ms / 1000:.3f}"))


def _token(stream, limit: int = 16) -> bytes:
    """One whitespace-separated token of a PPM header (no comments: ffmpeg writes none)."""
    out = b""
    while True:
        char = stream.read(1)
        if not char:
            return out
        if char.isspace():
            if out:
                return out
            continue
        out += char
        if len(out) > limit:
            raise MediaError("sampling frames: ffmpeg wrote something that is not a PPM frame")


def _read_frame(stream, max_side: int) -> np.ndarray | None:
    magic = _token(stream)
    if not magic:
        return None
    try:
        width, height, depth = int(_token(stream)), int(_token(stream)), int(_token(stream))
    except ValueError:
        raise MediaError("sampling frames: ffmpeg wrote something that is not a PPM frame") from None
    if magic != b"P6" or depth != 255 or not (1 <= width <= max_side and 1 <= height <= max_side):
        raise MediaError("sampling frames: ffmpeg wrote something that is not a PPM frame of the expected size")
    size = width * height * 3
    data = stream.read(size)
    if len(data) < size:
        return None  # ffmpeg stopped mid-frame (killed by the watchdog): the caller reports why
    return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)


def sample_frames(path: str | Path, demuxer: str, start_ms: int, end_ms: int, *, fps: float = SAMPLE_FPS,
                  max_side: int = MAX_SIDE, max_frames: int = MAX_FRAMES,
                  timeout: float | None = None) -> Iterator[Frame]:
    """The frames of ``[start_ms, end_ms)`` sampled at ``fps``, each at most ``max_side`` pixels on
    its longest side, at most ``max_frames`` of them, the pass bounded by ``timeout`` seconds (see
    the module's text). A video with no video stream, or one ffmpeg cannot decode: ``MediaError``."""
    args = frames_argv(path, demuxer, start_ms, end_ms, fps=fps, max_side=max_side, max_frames=max_frames)
    with piped(args, timeout) as run:
        for index in range(max_frames):
            image = _read_frame(run.proc.stdout, max_side)
            if run.expired.is_set():
                raise MediaError(f"sampling frames took longer than {timeout:g} s")
            time_ms = start_ms + int(round(index * 1000 / fps))
            if image is None:
                break
            if time_ms >= end_ms:
                return  # the window is full: the rest is not needed (leaving the block kills ffmpeg)
            yield Frame(time_ms, image)
        run.proc.wait()
        if run.expired.is_set():
            raise MediaError(f"sampling frames took longer than {timeout:g} s")
        if run.proc.returncode != 0:
            raise MediaError(f"sampling frames: ffmpeg exited {run.proc.returncode}: {run.messages().strip()[-300:]}")


def window_frame_count(start_ms: int, end_ms: int, fps: float = SAMPLE_FPS, max_frames: int = MAX_FRAMES) -> int:
    """How many frames ``sample_frames`` gives at most for the window (the price's and the plan's bound)."""
    if end_ms <= start_ms:
        return 0
    return min(max_frames, int(-(-(end_ms - start_ms) * fps // 1000)))
