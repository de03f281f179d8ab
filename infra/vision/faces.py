"""The faces of a clip's range: frames sampled with ffmpeg, faces found in each with MediaPipe.

``face_samples`` reads the range of the accepted file the way every run of ``infra.media`` does
(``ffmpeg_argv``: ``file:`` only, the container whitelist, the probe's demuxer forced, a read
limit of the range), keeps ``SAMPLE_FPS`` frames per second scaled to ``SAMPLE_LONG_SIDE`` pixels
on their long side (``domain.clip_framing``), and streams them as raw RGB from ffmpeg's output,
one frame at a time (a 300 s range is 1,500 samples: kept whole they would take hundreds of
megabytes). Each frame goes through MediaPipe's face detection (the full-range model,
``model_selection=1``: the short-range one finds no face of a wide shot), on three square tiles
of a landscape or portrait frame (``tiles``), whose model ships inside its wheel: nothing is
downloaded. About 10 ms per sample on one core: 50 ms per second of clip.

A private reader (``_frames``) streams ffmpeg's output here: the frame sampler of the speaker
work is a separate module, and this one needs only a raw RGB pipe. The run is checked like every
other (``checked_argv``), in a process group of its own that dies with the worker, and is killed
when ``timeout`` passes or the caller stops reading.

What is decided over the faces (who to follow, the smoothing, the fallback) is
``domain.clip_framing``.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

from domain.clip_framing import MAX_FACES, MAX_SAMPLES, MIN_SCORE, SAMPLE_FPS, SAMPLE_LONG_SIDE, Face, Sample
from infra.media.ffmpeg import MediaError, checked_argv, ffmpeg_argv, last_lines, without_paths


def sample_size(src_w: int, src_h: int, long_side: int = SAMPLE_LONG_SIDE) -> tuple[int, int]:
    """A sample's size: the source scaled to ``long_side`` on its long side (never up), even."""
    scale = min(1.0, long_side / max(src_w, src_h))
    return max(2, round(src_w * scale / 2) * 2), max(2, round(src_h * scale / 2) * 2)


def sample_argv(source: str | Path, demuxer: str, start_ms: int, end_ms: int, size: tuple[int, int],
                fps: int = SAMPLE_FPS) -> list[str]:
    """``fps`` frames per second of the range, scaled to ``size``, as raw RGB on the standard output."""
    w, h = size
    return ffmpeg_argv(source, demuxer, end_ms - start_ms,
                       ["-map", "0:v:0", "-an", "-sn", "-dn", "-vf", f"fps={fps},scale={w}:{h}:flags=bilinear",
                        "-frames:v", str(MAX_SAMPLES), "-f", "rawvideo", "-pix_fmt", "rgb24", "-"],
                       extra_input=("-ss", f"{start_ms / 1000:.3f}"))


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _frames(args: list[str], frame_bytes: int, deadline: float) -> Iterator[bytes]:
    """The raw frames ffmpeg writes, one at a time; ``MediaError`` on its failure or past ``deadline``."""
    checked_argv(args)
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=_die_with_parent)
    try:
        while True:
            if time.monotonic() > deadline:
                raise MediaError("finding the faces: ffmpeg took longer than its time")
            chunk = proc.stdout.read(frame_bytes)  # type: ignore[union-attr]
            if len(chunk) < frame_bytes:
                break
            yield chunk
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        if proc.returncode != 0:
            text = without_paths(proc.stderr.read() if proc.stderr else b"", args)
            raise MediaError(f"finding the faces: ffmpeg exited {proc.returncode}: {last_lines(text)}")
    except subprocess.TimeoutExpired:
        raise MediaError("finding the faces: ffmpeg took longer than its time") from None
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def tiles(w: int, h: int) -> list[tuple[int, int, int]]:
    """Square tiles (x, y, side) that cover a ``w`` x ``h`` picture: three along a long side when
    it is ``TILE_ASPECT`` times the short one or more (left, middle, right: a face is whole in one
    of them), else the whole picture. The detector sees its input at 192 pixels: a talk filmed
    wide has faces of 70 pixels in 1280, 11 pixels once the whole frame is shrunk to that, too
    few to be found reliably; in a tile of the frame's height they are twice as large."""
    if w >= TILE_ASPECT * h:
        return [(x, 0, h) for x in (0, (w - h) // 2, w - h)]
    if h >= TILE_ASPECT * w:
        return [(0, y, w) for y in (0, (h - w) // 2, h - w)]
    return []


TILE_ASPECT = 1.3


class FaceDetector:
    """MediaPipe's face detection, full-range model, over the picture's tiles (one detector per
    thread: it is not shared)."""

    def __init__(self) -> None:
        import mediapipe as mp  # loaded by the worker that renders face-following clips only

        self._detector = mp.solutions.face_detection.FaceDetection(model_selection=1,
                                                                   min_detection_confidence=MIN_SCORE)

    def _detect(self, rgb, x0: int, y0: int, w: int, h: int, full_w: int, full_h: int) -> list[Face]:
        found = self._detector.process(rgb).detections or []
        faces = []
        for d in found:
            box = d.location_data.relative_bounding_box
            faces.append(Face(x=(x0 + (box.xmin + box.width / 2) * w) / full_w,
                              y=(y0 + (box.ymin + box.height / 2) * h) / full_h,
                              w=box.width * w / full_w, h=box.height * h / full_h,
                              score=float(d.score[0]) if d.score else 0.0))
        return faces

    def faces(self, rgb) -> tuple[Face, ...]:
        """The faces of an RGB picture (a numpy array, height x width x 3): centres and sizes as
        fractions of the picture, the largest ``MAX_FACES``. A face found in two overlapping tiles
        is kept once (the more confident finding)."""
        import numpy as np

        h, w = rgb.shape[:2]
        found: list[Face] = []
        for x0, y0, side in tiles(w, h) or [(0, 0, 0)]:
            if side:
                tile = np.ascontiguousarray(rgb[y0:y0 + side, x0:x0 + side])
                found += self._detect(tile, x0, y0, side, side, w, h)
            else:
                found += self._detect(rgb, 0, 0, w, h, w, h)
        kept: list[Face] = []
        for face in sorted(found, key=lambda f: -f.score):
            if all(abs(face.x - k.x) * w > max(face.w, k.w) * w / 2 or abs(face.y - k.y) * h > max(face.h, k.h) * h / 2
                   for k in kept):
                kept.append(face)
        return tuple(sorted(kept, key=lambda f: -f.w)[:MAX_FACES])

    def close(self) -> None:
        self._detector.close()


def face_samples(source: str | Path, demuxer: str, start_ms: int, end_ms: int, src_w: int, src_h: int, *,
                 timeout: float, fps: int = SAMPLE_FPS) -> list[Sample]:
    """The faces in ``fps`` frames per second of the range ``[start_ms, end_ms)`` (times from its
    start); ``MediaError`` when ffmpeg fails or the whole takes longer than ``timeout`` seconds."""
    import numpy as np

    size = sample_size(src_w, src_h)
    w, h = size
    deadline = time.monotonic() + timeout
    detector = FaceDetector()
    samples = []
    try:
        for k, raw in enumerate(_frames(sample_argv(source, demuxer, start_ms, end_ms, size, fps), w * h * 3,
                                        deadline)):
            picture = np.frombuffer(raw, dtype=np.uint8).reshape(h, w, 3)
            samples.append(Sample(round(k / fps, 3), detector.faces(picture)))
    finally:
        detector.close()
    return samples
