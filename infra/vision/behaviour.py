"""What the person in a frame does, as plain observations (``domain.analysis.behavioral``).

Per sampled frame (``infra.vision.frames``):

1. **Faces**: MediaPipe's face detector (full-range model, ``model_selection=1``: faces far from
   the camera too) counts the faces; the **largest** one is the person analysed (a talk's speaker
   fills more of the frame than a passer-by; with several of equal size, the first found).
2. **Face mesh** (478 points, irises included) on a square crop around that face, scaled to
   ``MESH_SIDE`` pixels: the mesh's own detector misses faces smaller than a fifth of the frame,
   the crop makes every detected face large enough. From it: the mouth's opening, width and the
   lift of its corners, the irises' place within the eyes, the head's yaw.
3. **Pose** (``model_complexity=1``, the medium model; 0 and 2 are not in the wheel and would be
   downloaded, which must never happen: ``POSE_COMPLEXITY`` is checked) on the whole frame: the
   nose, shoulders and wrists. A pose whose nose is not inside the chosen face's box (widened by
   one box) belongs to someone else and is dropped.
4. **Hands** (when there is a face or a body): each hand is given to the nearer of the body's
   wrists; a hand further than ``HAND_REACH`` shoulder widths from both is someone else's and is
   dropped. Without a body, a hand's side is MediaPipe's handedness label swapped: the model
   assumes a mirrored (selfie) picture, and a video is taken to be unmirrored.

Left and right are the **person's own**, as seen by a camera facing them (the pose model names a
shoulder by what it looks like from the front). A mirrored video (a selfie preview recorded as
shown) swaps them; nothing in a picture tells the two apart, so it is not corrected.

Every mode runs on single images (``static_image_mode=True``): no state between frames, so a
window retried alone gives the same observations. The models load once per process
(``Seer.shared``), from files inside the ``mediapipe`` wheel: nothing is downloaded. MediaPipe's
graphs are not thread-safe: one lock serialises the frames of a process.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from domain.analysis.behavioral import MAX_FACES, BodySeen, FaceSeen, HandSeen, Observation, frame_rows
from infra.vision.frames import Frame, sample_frames
from infra.vision.models import VisionUnavailable, load_cv2, mediapipe

POSE_COMPLEXITY = 1  # the only pose model inside the wheel (0 and 2 are downloaded on first use)
MESH_SIDE = 256  # the face crop's side given to the face mesh, in pixels
CROP_SCALE = 2.0  # the crop's side over the detected face box's longest side
MIN_DETECTION = 0.5  # detection confidence of the face detector, the face mesh, the pose and the hands
MIN_VISIBILITY = 0.5  # a pose landmark counts as seen from this visibility
HAND_REACH = 1.5  # a hand further than this (in shoulder widths) from both wrists is not the person's


@dataclass(frozen=True, slots=True)
class _Box:
    x: float  # pixels
    y: float
    w: float
    h: float

    def area(self) -> float:
        return max(0.0, self.w) * max(0.0, self.h)


class Seer:
    """The four MediaPipe solutions of one process (see the module's text)."""

    _shared: Seer | None = None
    _shared_lock = threading.Lock()

    def __init__(self) -> None:
        if POSE_COMPLEXITY != 1:
            raise VisionUnavailable("only the pose model of complexity 1 ships inside the wheel")
        mp = mediapipe()  # its system libraries installed if absent, its model files checked
        self.cv2 = load_cv2()
        solutions = mp.solutions
        self.detector = solutions.face_detection.FaceDetection(model_selection=1,
                                                               min_detection_confidence=MIN_DETECTION)
        self.mesh = solutions.face_mesh.FaceMesh(static_image_mode=True, max_num_faces=1, refine_landmarks=True,
                                                 min_detection_confidence=MIN_DETECTION)
        self.pose = solutions.pose.Pose(static_image_mode=True, model_complexity=POSE_COMPLEXITY,
                                        min_detection_confidence=MIN_DETECTION)
        self.hands = solutions.hands.Hands(static_image_mode=True, max_num_hands=2, model_complexity=1,
                                           min_detection_confidence=MIN_DETECTION)
        self.lock = threading.Lock()

    @classmethod
    def shared(cls) -> Seer:
        """The process's one ``Seer``, loaded on first use."""
        with cls._shared_lock:
            if cls._shared is None:
                cls._shared = cls()
            return cls._shared

    def observe(self, frame: Frame) -> Observation:
        with self.lock:
            return self._observe(frame)

    def observe_all(self, frames: Iterable[Frame]) -> list[Observation]:
        return [self.observe(frame) for frame in frames]

    def _observe(self, frame: Frame) -> Observation:
        image = np.ascontiguousarray(frame.image)
        height, width = image.shape[:2]
        boxes = self._faces(image)
        face_box = max(boxes, key=lambda b: b.area()) if boxes else None
        face = self._face(image, face_box) if face_box is not None else None
        body = self._body(image, face_box)
        hands: tuple[HandSeen, ...] = ()
        if face_box is not None or body is not None:
            hands = self._hands(image, body)
        box = None
        if face_box is not None:
            box = (face_box.x / width, face_box.y / height, face_box.w / width, face_box.h / height)
        return Observation(frame.time_ms, width, height, faces=min(MAX_FACES, len(boxes)),
                           face=_with_box(face, box) if face is not None else None, body=body, hands=hands)

    def _faces(self, image: np.ndarray) -> list[_Box]:
        """Every face, found on the whole frame and on square tiles of it (the detector sees a
        192-pixel square: a face of a tenth of a wide frame's height is too small for it whole)."""
        boxes: list[_Box] = []
        for x0, y0, tile in _tiles(image):
            th, tw = tile.shape[:2]
            for detection in self.detector.process(np.ascontiguousarray(tile)).detections or []:
                b = detection.location_data.relative_bounding_box
                bx0, by0 = max(0.0, b.xmin * tw), max(0.0, b.ymin * th)
                bx1, by1 = min(float(tw), (b.xmin + b.width) * tw), min(float(th), (b.ymin + b.height) * th)
                if bx1 > bx0 and by1 > by0:
                    found = _Box(x0 + bx0, y0 + by0, bx1 - bx0, by1 - by0)
                    if all(_overlap(found, other) < 0.3 for other in boxes):
                        boxes.append(found)
        return boxes

    def _face(self, image: np.ndarray, box: _Box) -> FaceSeen | None:
        """The face mesh on a square crop around ``box``; its points back in the frame's pixels."""
        height, width = image.shape[:2]
        side = max(box.w, box.h) * CROP_SCALE
        cx, cy = box.x + box.w / 2, box.y + box.h / 2
        x0, y0 = int(round(cx - side / 2)), int(round(cy - side / 2))
        size = max(2, int(round(side)))
        crop = np.zeros((size, size, 3), dtype=np.uint8)
        sx0, sy0, sx1, sy1 = max(0, x0), max(0, y0), min(width, x0 + size), min(height, y0 + size)
        if sx1 <= sx0 or sy1 <= sy0:
            return None
        crop[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = image[sy0:sy1, sx0:sx1]
        crop = self.cv2.resize(crop, (MESH_SIDE, MESH_SIDE), interpolation=self.cv2.INTER_LINEAR)
        result = self.mesh.process(crop).multi_face_landmarks
        if not result:
            return None
        points = np.array([(x0 + p.x * size, y0 + p.y * size) for p in result[0].landmark])
        return face_geometry(points)

    def _body(self, image: np.ndarray, face_box: _Box | None) -> BodySeen | None:
        height, width = image.shape[:2]
        found = self.pose.process(image).pose_landmarks
        if found is None:
            return None
        marks = found.landmark
        nose, left, right = marks[0], marks[11], marks[12]
        if min(left.visibility, right.visibility) < MIN_VISIBILITY:
            return None
        if face_box is not None:  # the body of the analysed face, not of someone else
            nx, ny = nose.x * width, nose.y * height
            if not (face_box.x - face_box.w <= nx <= face_box.x + 2 * face_box.w
                    and face_box.y - face_box.h <= ny <= face_box.y + 2 * face_box.h):
                return None
        shoulder = math.hypot(left.x - right.x, (left.y - right.y) * height / width)
        if shoulder <= 0:
            return None

        def wrist(mark):
            seen = mark.visibility >= MIN_VISIBILITY and 0 <= mark.x <= 1 and 0 <= mark.y <= 1
            return (float(mark.x), float(mark.y)) if seen else None

        return BodySeen(nose=(float(nose.x), float(nose.y)), left_shoulder=(float(left.x), float(left.y)),
                        right_shoulder=(float(right.x), float(right.y)),
                        shoulder_depth=float(max(-5.0, min(5.0, (left.z - right.z) / shoulder))),
                        left_wrist=wrist(marks[15]), right_wrist=wrist(marks[16]))

    def _hands(self, image: np.ndarray, body: BodySeen | None) -> tuple[HandSeen, ...]:
        height, width = image.shape[:2]
        result = self.hands.process(image)
        marks = result.multi_hand_landmarks or []
        labels = result.multi_handedness or []
        out: list[HandSeen] = []
        for hand, handedness in zip(marks, labels, strict=False):
            xs = [p.x for p in hand.landmark]
            ys = [p.y for p in hand.landmark]
            x, y = float(np.mean(xs)), float(np.mean(ys))
            wrist = (hand.landmark[0].x, hand.landmark[0].y)
            side = hand_side(wrist, handedness.classification[0].label, body, height / width)
            if side is not None and all(h.side != side for h in out):
                out.append(HandSeen(side, x, y))
        return tuple(out)


def _tiles(image: np.ndarray):
    """The whole frame, then squares of its shorter side across its longer one (overlapping)."""
    height, width = image.shape[:2]
    yield 0, 0, image
    short, long = min(width, height), max(width, height)
    if long < 1.2 * short or short < 32:
        return
    count = math.ceil(long / short) + 1
    for k in range(count):
        offset = round(k * (long - short) / (count - 1))
        yield (offset, 0, image[:, offset:offset + short]) if width > height else \
            (0, offset, image[offset:offset + short])


def _overlap(a: _Box, b: _Box) -> float:
    """Intersection over the smaller box: the same face found twice is one face."""
    w = min(a.x + a.w, b.x + b.w) - max(a.x, b.x)
    h = min(a.y + a.h, b.y + b.h) - max(a.y, b.y)
    return (w * h) / max(1e-9, min(a.area(), b.area())) if w > 0 and h > 0 else 0.0


def hand_side(wrist: tuple[float, float], label: str, body: BodySeen | None, aspect: float) -> str | None:
    """The person's own side of a hand: the nearer of the body's wrists (None: too far from both,
    someone else's hand); without a body, MediaPipe's label swapped (it assumes a mirrored picture)."""
    if body is None:
        return "right" if label == "Left" else "left"
    shoulder = math.hypot(body.left_shoulder[0] - body.right_shoulder[0],
                          (body.left_shoulder[1] - body.right_shoulder[1]) * aspect)
    anchors = {"left": body.left_wrist or body.left_shoulder, "right": body.right_wrist or body.right_shoulder}
    distances = {side: math.hypot(wrist[0] - p[0], (wrist[1] - p[1]) * aspect) for side, p in anchors.items()}
    side = min(distances, key=distances.get)
    return side if distances[side] <= HAND_REACH * max(shoulder, 1e-6) else None


def _with_box(face: FaceSeen, box: tuple[float, float, float, float] | None) -> FaceSeen:
    if box is None:
        return face
    return FaceSeen(box=tuple(round(max(0.0, min(1.0, v)), 4) for v in box), mouth_open=face.mouth_open,
                    mouth_width=face.mouth_width, corner_lift=face.corner_lift, iris_x=face.iris_x,
                    iris_y=face.iris_y, yaw=face.yaw)


# Face mesh points (MediaPipe's canonical face model): image-left cheek 234, image-right cheek 454,
# nose tip 1, mouth corners 61 and 291, inner lips 13 (upper) and 14 (lower); the image-left eye's
# corners 33 (outer) and 133 (inner), its lids 159 and 145, its iris 468; the other eye's corners
# 362 (inner) and 263 (outer), its lids 386 and 374, its iris 473.


def face_geometry(points: np.ndarray) -> FaceSeen | None:
    """The mouth, irises and yaw from 478 mesh points in pixels, the head's roll taken out (the
    points are turned so that the line between the eyes' outer corners is level)."""
    angle = math.atan2(points[263][1] - points[33][1], points[263][0] - points[33][0])
    cos, sin = math.cos(-angle), math.sin(-angle)
    p = points @ np.array([[cos, sin], [-sin, cos]])

    def dist(a: int, b: int) -> float:
        return float(np.hypot(*(p[a] - p[b])))

    face_w, mouth_w = dist(234, 454), dist(61, 291)
    if face_w <= 0 or mouth_w <= 0:
        return None

    def ratio(value: float, low: float, high: float) -> float:
        return (value - low) / (high - low) if high != low else 0.5

    r1 = ratio(p[468][0], p[33][0], p[133][0])
    r2 = ratio(p[473][0], p[362][0], p[263][0])
    v1 = ratio(p[468][1], p[159][1], p[145][1])
    v2 = ratio(p[473][1], p[386][1], p[374][1])
    lips_y = (p[13][1] + p[14][1]) / 2
    corners_y = (p[61][1] + p[291][1]) / 2

    def bounded(value: float) -> float:
        return round(max(-1.0, min(1.0, float(value))), 4) if value == value else 0.0

    return FaceSeen(box=(0.0, 0.0, 0.0, 0.0), mouth_open=round(min(2.0, dist(13, 14) / mouth_w), 4),
                    mouth_width=round(min(2.0, mouth_w / face_w), 4),
                    corner_lift=bounded((lips_y - corners_y) / mouth_w),
                    iris_x=bounded((r1 + r2) - 1.0), iris_y=bounded((v1 + v2) - 1.0),
                    yaw=bounded((p[1][0] - (p[234][0] + p[454][0]) / 2) / (face_w / 2)))


def see_window(path, demuxer: str, start_ms: int, end_ms: int, *, fps: float, max_side: int, max_frames: int,
               timeout: float) -> list[dict]:
    """One window of the video as the rows of ``domain.analysis.behavioral.frame_rows``: frames
    sampled (``sample_frames``, the whole pass bounded by ``timeout`` seconds), each observed."""
    seer = Seer.shared()
    frames = sample_frames(path, demuxer, start_ms, end_ms, fps=fps, max_side=max_side, max_frames=max_frames,
                           timeout=timeout)
    return frame_rows(seer.observe_all(frames))
