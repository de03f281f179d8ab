"""The faces of a clip's range: frames sampled with ffmpeg, faces found in each with MediaPipe.

``face_samples`` reads the range through ``infra.vision.frames.sample_frames`` (the project's one
safe way to read an upload: ``file:`` only, the container whitelist, the probe's demuxer forced,
a read limit of the range, a watchdog on the whole pass), keeping ``SAMPLE_FPS`` frames per second
at most ``SAMPLE_LONG_SIDE`` pixels on their long side (``domain.clip_framing``), one frame in
memory at a time (a 300 s range is 1,500 samples). Each frame goes through MediaPipe's face
detection (the full-range model, ``model_selection=1``: the short-range one finds no face of a
wide shot), on three square tiles of a landscape or portrait frame (``tiles``); between two full
scans (every ``FULL_SCAN_EVERY`` samples, and whenever a face is lost), only the tiles around the
faces last seen are looked at. Its model ships inside its wheel: nothing is downloaded. About
30 ms per second of 720p clip for one person, decoding included.

What is decided over the faces (who to follow, the smoothing, the fallback) is
``domain.clip_framing``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from domain.clip_framing import MAX_FACES, MAX_SAMPLES, MIN_SCORE, SAMPLE_FPS, SAMPLE_LONG_SIDE, Face, Sample
from infra.vision.frames import sample_frames
from infra.vision.models import mediapipe


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


def tiles_near(w: int, h: int, faces: tuple[Face, ...]) -> list[tuple[int, int, int]] | None:
    """Square tiles of the same size as ``tiles``' centred on each of ``faces`` (clamped inside
    the picture), or None when that is no fewer tiles than ``tiles`` (nothing to save)."""
    every = tiles(w, h)
    if not every or not faces or len(faces) >= len(every):
        return None
    side = every[0][2]
    return [(min(max(0, round(f.x * w - side / 2)), w - side), 0, side) if w > h else
            (0, min(max(0, round(f.y * h - side / 2)), h - side), side) for f in faces]


TILE_ASPECT = 1.3
FULL_SCAN_EVERY = 5  # samples: between two full scans, only the tiles around the faces last seen


class FaceDetector:
    """MediaPipe's face detection, full-range model, over the picture's tiles (one detector per
    thread: it is not shared)."""

    def __init__(self) -> None:
        mp = mediapipe()  # loaded by a worker that renders face-following clips only; VisionUnavailable

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

    def faces(self, rgb, near: tuple[Face, ...] = ()) -> tuple[Face, ...]:
        """The faces of an RGB picture (a numpy array, height x width x 3): centres and sizes as
        fractions of the picture, the largest ``MAX_FACES``; with ``near``, only in the tiles
        around those faces (``tiles_near``). A face found in two overlapping tiles is kept once
        (the more confident finding)."""
        import numpy as np

        h, w = rgb.shape[:2]
        found: list[Face] = []
        for x0, y0, side in tiles_near(w, h, near) or tiles(w, h) or [(0, 0, 0)]:
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


@dataclass(frozen=True, slots=True)
class FaceTrack:
    """The faces of a range's samples, and the size the frames came in (as decoded: a video its
    container says to rotate comes rotated; None when no frame came)."""

    samples: list[Sample]
    frame_size: tuple[int, int] | None


def face_samples(source: str | Path, demuxer: str, start_ms: int, end_ms: int, *, timeout: float,
                 fps: int = SAMPLE_FPS) -> FaceTrack:
    """The faces in ``fps`` frames per second of the range ``[start_ms, end_ms)`` (times from its
    start); ``MediaError`` when ffmpeg fails or the whole takes longer than ``timeout`` seconds."""
    detector = FaceDetector()
    samples: list[Sample] = []
    size = None
    last: tuple[Face, ...] = ()
    try:
        for k, frame in enumerate(sample_frames(source, demuxer, start_ms, end_ms, fps=fps,
                                                max_side=SAMPLE_LONG_SIDE, max_frames=MAX_SAMPLES, timeout=timeout)):
            size = (frame.width, frame.height)
            faces = detector.faces(frame.image, () if k % FULL_SCAN_EVERY == 0 else last)
            if len(faces) < len(last):  # one was lost near where it was: look everywhere
                faces = detector.faces(frame.image)
            last = faces
            samples.append(Sample(round((frame.time_ms - start_ms) / 1000, 3), faces))
    finally:
        detector.close()
    return FaceTrack(samples, size)
