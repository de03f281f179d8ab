"""Framing a clip around the person in it: from the faces seen in sampled frames of the clip's
range to the path of the crop window over the source, smoothed so that the frame never jitters.

Pure code. ``infra.vision.faces`` samples the range (``SAMPLE_FPS`` frames per second) and detects
the faces of each sample; ``plan_framing`` decides here what the render does, and
``infra.media.clips`` drives ffmpeg's crop along the path it returns.

**The decision** (``plan_framing``), over the samples of one clip:

- a face counts when it is at least ``SECOND_FACE_RATIO`` of the sample's largest face wide (a
  face in the background, a poster on the wall, is not a subject), and at most ``MAX_FACES`` per
  sample are kept (the largest);
- fewer than ``MIN_FACES_SEEN_PCT`` % of the samples with a face: **centre fallback**, the
  template's plain centre crop (``framing.mode`` ``centre_fallback``, with its reason);
- two faces in at least ``TWO_FACES_PCT`` % of the samples that one crop window cannot hold side
  by side: **both are shown** (``two_faces``), each in a panel of its own (one above the other
  for a vertical format, side by side for a square one), the left person first. vaeo does not
  guess who speaks: the picture shows the conversation. Two faces that fit in one window are
  framed together (the window follows the middle of the pair);
- otherwise the window **follows one face** (``follow_face``): the largest face of the first
  sample that has one, then in each sample the face nearest to where the subject was; when
  every face of a sample is further than ``REACQUIRE_JUMP`` of the frame's width from it, a lone
  face is the subject having moved (a cut, a jump), and among several the largest is taken only
  once the subject has been unseen for ``HOLD_S``.

**The filter** (``smooth``), per axis, over the subject's positions at the sample times:

1. a **gap** (samples without the subject) holds the last position for ``HOLD_S`` seconds, then
   the target goes back to the frame's centre (reached at the same limited speed);
2. a centred **median** over ``MEDIAN_SAMPLES`` samples (1.8 s: the track is known whole before
   the render, so the filter looks ahead as much as back and adds no delay) drops a detector's
   outliers and jitter;
3. a **dead zone**: the target moves only when the subject is more than ``DEAD_ZONE`` of the
   crop window's width away from it (a speaker swaying or a detector's jitter moves nothing);
4. **exponential smoothing** towards the target with time constant ``TAU_S``, and a **maximum
   pan speed** of ``MAX_SPEED`` crop windows per second;
5. the window is **clamped** inside the source frame.

A step move of the subject (from the left third to the right third of a 16:9 frame) is followed
within ``FOLLOW_DELAY_S``: the window is within 5 % of its width of the new place by then. Frame
to frame, the window never moves more than ``MAX_SPEED`` x its width per second.

The path (``CropPath``) is a list of keyframes (seconds from the clip's start, x, y in source
pixels) at the sample times, thinned to the points where the motion changes (a point within
``KEY_TOLERANCE_PX`` of the line through its neighbours is dropped) and capped at
``MAX_KEYFRAMES``: ffmpeg interpolates linearly between them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

SAMPLE_FPS = 5  # frames looked at per second of clip
SAMPLE_LONG_SIDE = 512  # pixels of a sample's long side (a face of 20 px is still found at that size)
MAX_SAMPLES = 1_500  # 300 s at 5 fps: the longest render
MAX_FACES = 4  # faces kept per sample (the largest)
MIN_SCORE = 0.5  # the detector's confidence below which a box is not a face
SECOND_FACE_RATIO = 0.6  # a face narrower than this share of the sample's largest is background
MIN_FACES_SEEN_PCT = 20  # below: the centre crop
TWO_FACES_PCT = 50  # two faces in at least this share of the samples: both are shown
REACQUIRE_JUMP = 0.25  # of the frame's width: a face further than this from the subject is someone else
MEDIAN_SAMPLES = 9  # the centred median over 1.8 s of samples that steadies the detector's positions
HOLD_S = 1.0  # a subject unseen for this long is held in place; after it, the window drifts to the centre
DEAD_ZONE = 0.08  # of the crop window's size: movements smaller than this are ignored
TAU_S = 0.3  # the smoothing's time constant
MAX_SPEED = 1.5  # crop windows per second: the fastest pan
FOLLOW_DELAY_S = 1.8  # a step move is followed within this (to 5 % of the window's width)
KEY_TOLERANCE_PX = 2  # keyframes closer than this to the line through their neighbours are dropped
MAX_KEYFRAMES = 2 * 300 + 1  # at most 2 per second of the longest render
PANEL_FACE_WIDTHS = 3.0  # a two-face panel is this many face widths wide (head and shoulders)
MIN_SOURCE_SIDE = 32  # pixels: a smaller picture has no face worth following

MODES = ("follow_face", "two_faces", "centre_fallback")


@dataclass(frozen=True, slots=True)
class Face:
    """One face in a sample: its box's centre and size as fractions of the frame, and the
    detector's confidence."""

    x: float
    y: float
    w: float
    h: float
    score: float = 1.0


@dataclass(frozen=True, slots=True)
class Sample:
    """The faces seen at ``t`` seconds from the clip's start."""

    t: float
    faces: tuple[Face, ...] = ()


@dataclass(frozen=True, slots=True)
class CropPath:
    """A crop window of ``width`` x ``height`` source pixels moving along ``keys`` (seconds from
    the clip's start, x, y of its top left corner), linearly between keys, still after the last."""

    width: int
    height: int
    keys: tuple[tuple[float, int, int], ...]

    def at(self, t: float) -> tuple[int, int]:
        """Where the window is at ``t``."""
        keys = self.keys
        if t <= keys[0][0]:
            return keys[0][1], keys[0][2]
        for (t0, x0, y0), (t1, x1, y1) in zip(keys, keys[1:], strict=False):
            if t <= t1:
                f = (t - t0) / (t1 - t0) if t1 > t0 else 1.0
                return round(x0 + (x1 - x0) * f), round(y0 + (y1 - y0) * f)
        return keys[-1][1], keys[-1][2]

    def still(self, t: float) -> CropPath:
        """The window where it is at ``t``, not moving (a thumbnail's frame)."""
        x, y = self.at(t)
        return CropPath(self.width, self.height, ((0.0, x, y),))


@dataclass(frozen=True, slots=True)
class Framing:
    """What a face-following render does: ``paths`` (one window, or two panels) or, for
    ``centre_fallback``, none (the template's centre crop); ``stack`` lays two panels out."""

    mode: str
    faces_seen_pct: int
    samples: int
    paths: tuple[CropPath, ...] = ()
    stack: str = "vertical"  # two panels: "vertical" (one above the other) or "horizontal"
    reason: str | None = None
    faces: int = field(default=0)

    def still(self, t: float) -> Framing:
        return Framing(self.mode, self.faces_seen_pct, self.samples, tuple(p.still(t) for p in self.paths),
                       self.stack, self.reason, self.faces)

    def summary(self) -> dict[str, Any]:
        """The clip's ``framing`` as the tracking object and ``clip.generated`` show it (bounded)."""
        return {"mode": self.mode, "faces_seen_pct": self.faces_seen_pct, "samples": self.samples,
                "faces": self.faces, "keyframes": sum(len(p.keys) for p in self.paths),
                "reason": self.reason}


def fallback(reason: str, samples: int = 0, faces_seen_pct: int = 0) -> Framing:
    return Framing("centre_fallback", faces_seen_pct, samples, reason=reason[:200])


# ------------------------------------------------------------------------------------ geometry


def crop_window(src_w: int, src_h: int, out_w: int, out_h: int) -> tuple[int, int]:
    """The largest window of the output's aspect ratio inside the source, in even pixels."""
    w: float
    h: float
    if src_w * out_h >= src_h * out_w:  # the source is wider: full height
        h = src_h
        w = src_h * out_w / out_h
    else:
        w = src_w
        h = src_w * out_h / out_w
    return max(2, int(w) // 2 * 2), max(2, int(h) // 2 * 2)


def panel_window(src_w: int, src_h: int, panel_w: int, panel_h: int, face_w_px: float) -> tuple[int, int]:
    """A two-face panel's window: ``PANEL_FACE_WIDTHS`` face widths wide, of the panel's aspect,
    inside the source."""
    max_w, max_h = crop_window(src_w, src_h, panel_w, panel_h)
    w = min(max_w, max(16.0, face_w_px * PANEL_FACE_WIDTHS))
    h = w * panel_h / panel_w
    if h > max_h:
        h, w = max_h, max_h * panel_w / panel_h
    return max(2, int(w) // 2 * 2), max(2, int(h) // 2 * 2)


def oriented(stored: tuple[int, int], sampled: tuple[int, int] | None) -> tuple[int, int]:
    """The source's size as ffmpeg hands its frames to a filter: the stored (probed) size, turned
    a quarter when the sampled frames came the other way round (a phone's video whose container
    asks for a rotation is decoded rotated)."""
    (w, h), frame = stored, sampled
    if frame is not None and w != h and frame[0] != frame[1] and (w > h) != (frame[0] > frame[1]):
        return h, w
    return w, h


# ------------------------------------------------------------------------------------ subjects


def _kept(faces: Sequence[Face]) -> list[Face]:
    """The sample's faces that count: confident, not much smaller than its largest, the largest few."""
    faces = sorted((f for f in faces if f.score >= MIN_SCORE and f.w > 0 and f.h > 0), key=lambda f: -f.w)
    if not faces:
        return []
    return [f for f in faces if f.w >= SECOND_FACE_RATIO * faces[0].w][:MAX_FACES]


def follow_one(samples: Sequence[Sample]) -> list[Face | None]:
    """The subject in each sample (None: not seen): the largest face first, then the face nearest
    to the subject, or a lone face however far, or the largest after ``HOLD_S`` unseen."""
    out: list[Face | None] = []
    last: Face | None = None
    last_t = -math.inf
    for s in samples:
        faces = _kept(s.faces)
        chosen = None
        if faces:
            if last is None:
                chosen = faces[0]
            else:
                held = last
                near = min(faces, key=lambda f: math.hypot(f.x - held.x, f.y - held.y))
                if math.hypot(near.x - held.x, near.y - held.y) <= REACQUIRE_JUMP or len(faces) == 1:
                    chosen = near
                elif s.t - last_t > HOLD_S:
                    chosen = faces[0]
        if chosen is not None:
            last, last_t = chosen, s.t
        out.append(chosen)
    return out


def pairs(samples: Sequence[Sample]) -> list[tuple[Face, Face] | None]:
    """The two largest faces of each sample that has two that count, left one first."""
    out: list[tuple[Face, Face] | None] = []
    for s in samples:
        faces = _kept(s.faces)[:2]
        out.append(tuple(sorted(faces, key=lambda f: f.x)) if len(faces) == 2 else None)  # type: ignore[arg-type]
    return out


# ------------------------------------------------------------------------------------ the filter


def smooth(times: Sequence[float], positions: Sequence[float | None], *, size: float, centre: float) -> list[float]:
    """The window's centre along one axis at each sample time (see the module's filter): ``size``
    is the crop window's size on that axis (the dead zone and the speed are shares of it), and
    ``centre`` where the window goes after a gap longer than ``HOLD_S``."""
    filled: list[float] = []
    last: float | None = next((p for p in positions if p is not None), None)
    last_seen = times[0] if times else 0.0
    for t, p in zip(times, positions, strict=True):
        if p is not None:
            last, last_seen = p, t
        filled.append(p if p is not None else (last if last is not None and t - last_seen <= HOLD_S else centre))
    half = MEDIAN_SAMPLES // 2
    steady = [sorted(filled[max(0, k - half):k + half + 1])[len(filled[max(0, k - half):k + half + 1]) // 2]
              for k in range(len(filled))]
    out: list[float] = []
    camera = target = steady[0] if steady else centre
    prev_t = times[0] if times else 0.0
    for t, p in zip(times, steady, strict=True):
        if abs(p - target) > DEAD_ZONE * size:
            target = p
        dt = max(0.0, t - prev_t)
        prev_t = t
        step = (target - camera) * (1 - math.exp(-dt / TAU_S))
        limit = MAX_SPEED * size * dt
        camera += max(-limit, min(limit, step))
        out.append(camera)
    return out


def _thin(keys: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    """Keys where the motion changes: a key on the line through its kept neighbours goes."""
    if len(keys) <= 2:
        return keys
    kept = [keys[0]]
    for k in range(1, len(keys) - 1):
        t0, x0, y0 = kept[-1]
        t1, x1, y1 = keys[k + 1]
        t, x, y = keys[k]
        f = (t - t0) / (t1 - t0) if t1 > t0 else 0.0
        if abs(x0 + (x1 - x0) * f - x) > KEY_TOLERANCE_PX or abs(y0 + (y1 - y0) * f - y) > KEY_TOLERANCE_PX:
            kept.append(keys[k])
    kept.append(keys[-1])
    if len(kept) > MAX_KEYFRAMES:  # an evenly spread subset, the ends kept
        step = (len(kept) - 1) / (MAX_KEYFRAMES - 1)
        kept = [kept[round(k * step)] for k in range(MAX_KEYFRAMES)]
    return kept


def path(times: Sequence[float], centres: Sequence[tuple[float, float] | None], win: tuple[int, int],
         src: tuple[int, int]) -> CropPath:
    """The window of size ``win`` following ``centres`` (source pixels, None: not seen), smoothed
    and clamped inside the source ``src``."""
    (w, h), (src_w, src_h) = win, src
    xs = smooth(times, [c[0] if c else None for c in centres], size=w, centre=src_w / 2)
    ys = smooth(times, [c[1] if c else None for c in centres], size=h, centre=src_h / 2)
    # The filter's answer to sample k is where the window is one sample period later: a subject
    # that moves at a sample's time is never followed before it moved.
    lag = times[1] - times[0] if len(times) > 1 else 0.0
    keys = []
    for k, (t, cx, cy) in enumerate(zip(times, xs, ys, strict=True)):
        x = min(max(0, round(cx - w / 2)), src_w - w)
        y = min(max(0, round(cy - h / 2)), src_h - h)
        keys.append((round(t + lag, 3) if k else 0.0, x, y))
    return CropPath(w, h, tuple(_thin(keys) or [(0.0, (src_w - w) // 2, (src_h - h) // 2)]))


# ------------------------------------------------------------------------------------ the plan


def plan_framing(samples: Sequence[Sample], src_w: int, src_h: int, out_w: int, out_h: int) -> Framing:
    """What a face-following render of ``samples`` does (see the module's decision)."""
    samples = list(samples)[:MAX_SAMPLES]
    if not samples:
        return fallback("no frame of the clip could be looked at")
    seen = sum(1 for s in samples if _kept(s.faces))
    seen_pct = round(100 * seen / len(samples))
    if seen_pct < MIN_FACES_SEEN_PCT:
        return fallback(f"a face was seen in {seen_pct} % of the sampled frames (at least {MIN_FACES_SEEN_PCT} % "
                        "are needed)", len(samples), seen_pct)
    times = [s.t for s in samples]
    win = crop_window(src_w, src_h, out_w, out_h)
    two = pairs(samples)
    two_pct = round(100 * sum(1 for p in two if p) / len(samples))
    if two_pct >= TWO_FACES_PCT:
        spans = sorted(((b.x + b.w / 2) - (a.x - a.w / 2)) * src_w for a, b in (p for p in two if p))
        if spans[len(spans) // 2] > win[0]:
            return _two_panels(samples, two, times, src_w, src_h, out_w, out_h, seen_pct)
        centres = [((p[0].x + p[1].x) / 2 * src_w, (p[0].y + p[1].y) / 2 * src_h) if p else None for p in two]
        return Framing("follow_face", seen_pct, len(samples), (path(times, centres, win, (src_w, src_h)),), faces=2)
    subject = follow_one(samples)
    centres = [(f.x * src_w, f.y * src_h) if f else None for f in subject]
    return Framing("follow_face", seen_pct, len(samples), (path(times, centres, win, (src_w, src_h)),), faces=1)


def _two_panels(samples: Sequence[Sample], two: list[Any], times: list[float], src_w: int, src_h: int, out_w: int,
                out_h: int, seen_pct: int) -> Framing:
    """Both faces, each followed in a panel of its own: one above the other in a vertical format,
    side by side otherwise."""
    vertical = out_h > out_w
    panel_w, panel_h = (out_w, out_h // 2) if vertical else (out_w // 2, out_h)
    paths = []
    for side in (0, 1):
        widths = sorted(p[side].w * src_w for p in two if p)
        win = panel_window(src_w, src_h, panel_w, panel_h, widths[len(widths) // 2])
        centres = [(p[side].x * src_w, p[side].y * src_h) if p else None for p in two]
        paths.append(path(times, centres, win, (src_w, src_h)))
    return Framing("two_faces", seen_pct, len(samples), tuple(paths), "vertical" if vertical else "horizontal",
                   faces=2)
