"""``analysis_mode=behavioral``: what the voice and the turns tell, and what the picture shows.

From the transcript timing and, when present, the audio facts: speaking rate per speaker and per
minute (and how much it varies), pauses (gaps between sentences, silences), turn-taking (turn
counts and lengths, overlaps, response latency between speakers, question-answer exchanges),
hesitation markers and exclamations.

From the frames the worker sampled (``SeenVideo``, ``vision`` in the profile): presence, gaze,
facial expression, posture, gestures, laterality, proxemics, and the rhythm of their changes,
each a timeline and a summary. Without a picture (an audio file) they are listed under
``unavailable`` with the reason, never guessed.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from domain.analysis.language import language as language_of
from domain.analysis.model import MediaFacts, Sentence
from domain.analysis.speakers import Diarisation
from domain.analysis.text import HESITATION_RES, words

PAUSE_MS = 1000
UNAVAILABLE = ("gestures", "posture", "facial_expressions", "gaze_direction", "laterality", "proxemics")


def behavioral_profile(sentences: Sequence[Sentence], diarisation: Diarisation, facts: MediaFacts | None,
                       duration_ms: int, seen: SeenVideo | None = None, language: str | None = None) -> dict[str, Any]:
    minutes = max(1, -(-duration_ms // 60_000))
    per_minute = [0] * minutes
    for s in sentences:
        per_minute[min(minutes - 1, s.start_ms // 60_000)] += len(words(s.text))
    active = [w for w in per_minute if w]
    rate_cv = round(statistics.pstdev(active) / statistics.mean(active), 3) if len(active) > 1 else 0.0

    gaps = [b.start_ms - a.end_ms for a, b in zip(sentences, sentences[1:], strict=False)]
    pauses = [g for g in gaps if g >= PAUSE_MS]
    turns = diarisation.turns
    changes = [(a, b) for a, b in zip(turns, turns[1:], strict=False) if a.speaker != b.speaker]
    latencies = [b.start_ms - a.end_ms for a, b in changes]
    overlaps = [x for x in latencies if x < 0]
    exchanges = sum(1 for a, b in zip(sentences, sentences[1:], strict=False)
                    if a.is_question and b.speaker != a.speaker and b.speaker is not None)
    text = " ".join(s.text for s in sentences)
    silences = facts.silences if facts else ()
    return {
        "mode": "behavioral",
        "source": "transcript timing and audio" + ("" if seen is None else "; frames of the video"),
        "speakingRate": {
            "overallWordsPerMinute": round(sum(per_minute) / max(duration_ms / 60_000, 1 / 60), 1),
            "perMinute": per_minute,
            "variation": rate_cv,
            "perSpeaker": {s.name: s.words_per_minute for s in diarisation.speakers},
        },
        "pauses": {
            "count": len(pauses),
            "totalMs": sum(pauses),
            "longestMs": max(pauses, default=0),
            "silenceCount": len(silences),
            "silenceMs": sum(r.end_ms - r.start_ms for r in silences),
        },
        "turnTaking": {
            "turns": len(turns),
            "speakerChanges": len(changes),
            "meanTurnMs": round(statistics.mean([t.end_ms - t.start_ms for t in turns]), 1) if turns else 0.0,
            "meanResponseLatencyMs": round(statistics.mean(latencies), 1) if latencies else None,
            "overlaps": len(overlaps),
            "questionAnswerExchanges": exchanges,
        },
        "expressiveness": {
            "hesitations": len(HESITATION_RES[language_of(language).code].findall(text)),
            "exclamations": text.count("!"),
            "questions": sum(1 for s in sentences if s.is_question),
        },
        **_vision_part(seen, duration_ms),
    }


def _vision_part(seen: SeenVideo | None, duration_ms: int) -> dict[str, Any]:
    if seen is None:
        return {"unavailable": {name: "needs the video's frames, which this analysis did not read"
                                for name in UNAVAILABLE}}
    vision = seen_profile(seen, duration_ms)
    if "summaries" not in vision:
        return {"vision": vision, "unavailable": {name: vision["note"] for name in UNAVAILABLE}}
    return {"vision": vision, "unavailable": {}}


# ---- what the picture shows (analysis_mode=behavioral with a video stream)
#
# The worker samples frames (``infra.vision``), finds in each the largest face, the body and the
# hands, and gives one ``Observation`` per frame (coordinates are fractions of the frame: x to the
# right, y down; "left" and "right" are the person's own). ``frame_rows`` turns one window's
# observations into bounded rows (an item result of the job), ``seen_profile`` the rows of every
# window into timelines and summaries. docs/analysis.md gives every definition and threshold.

NOT_VISIBLE = "not_visible"
SIGNALS = ("presence", "gaze", "expression", "posture", "gestures", "laterality", "proxemics")
VALUES = {
    "presence": ("person", "several_faces", "no_person"),
    "gaze": ("camera", "away", NOT_VISIBLE),
    "expression": ("smiling", "speaking", "neutral", NOT_VISIBLE),
    "posture": ("upright", "leaning", "turned", NOT_VISIBLE),
    "gestures": ("still", "moving", "animated", NOT_VISIBLE),
    "laterality": ("left", "right", "both", "none", NOT_VISIBLE),
    "proxemics": ("close", "medium", "far", NOT_VISIBLE),
    "placement": ("left", "center", "right", NOT_VISIBLE),
}
MAX_FACES = 20  # faces counted in one frame at most (more are counted as 20)
# gaze: iris offset within the eye (-1 to 1, 0 the middle) and head yaw (nose from the face's centre line)
GAZE_IRIS_X = 0.35
GAZE_IRIS_Y = 0.5
GAZE_YAW = 0.3
# expression: mouth geometry, as fractions of the mouth's width
SMILE_LIFT = 0.08  # the corners this far above the lips' centre...
SMILE_WIDTH = 0.40  # ...and the mouth at least this wide, as a fraction of the face's width
SPEAK_OPEN = 0.25  # lips parted this much (gap over width)...
SPEAK_CHANGE = 0.10  # ...or the opening changing this much since the previous frame
# posture
LEAN_TILT_DEG = 20.0  # the shoulder line tilted this much (the pose model errs by up to ~10° on a small person)
LEAN_OFFSET = 0.5  # the nose this far beside the shoulders' middle (in half shoulder widths)
TURN_YAW = 0.45  # the face turned this much (nose offset over half the face's width)
TURN_DEPTH = 1.0  # one shoulder this much nearer the camera than the other (depth over shoulder width)
# gestures: wrist speed in shoulder widths per second
STILL_SPEED = 0.5
ANIMATED_SPEED = 1.5
# proxemics: the face's height as a fraction of the frame's
CLOSE_FACE = 0.30
FAR_FACE = 0.12
MAX_GAP_MS = 1000  # two frames further apart than this are not compared (motion, speaking)
MAX_SEGMENTS = 300  # segments kept per timeline; the summary always covers every frame


@dataclass(frozen=True, slots=True)
class FaceSeen:
    box: tuple[float, float, float, float]  # x, y, width, height: fractions of the frame
    mouth_open: float  # inner lips' gap over the mouth's width
    mouth_width: float  # mouth's width over the face's width (cheek to cheek)
    corner_lift: float  # how far the mouth's corners sit above the lips' centre, over the mouth's width
    iris_x: float  # iris within the eyes, -1 (image left) to 1 (image right), 0 the middle
    iris_y: float  # -1 up to 1 down
    yaw: float  # nose tip from the face's centre line over half the face's width, -1 to 1


@dataclass(frozen=True, slots=True)
class BodySeen:
    nose: tuple[float, float]
    left_shoulder: tuple[float, float]  # the person's own left
    right_shoulder: tuple[float, float]
    shoulder_depth: float  # (left's depth - right's) over the shoulder width: positive, left further
    left_wrist: tuple[float, float] | None = None  # None: not visible
    right_wrist: tuple[float, float] | None = None


@dataclass(frozen=True, slots=True)
class HandSeen:
    side: str  # the person's own: left or right
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Observation:
    time_ms: int
    width: int  # the frame's pixels
    height: int
    faces: int = 0
    face: FaceSeen | None = None  # the largest face
    body: BodySeen | None = None  # the body of that face (never another person's)
    hands: tuple[HandSeen, ...] = ()


def _clamp(value: float, low: float = -1.0, high: float = 1.0) -> float:
    if value != value:  # NaN
        return 0.0
    return max(low, min(high, float(value)))


def _gaze(face: FaceSeen | None) -> str:
    if face is None:
        return NOT_VISIBLE
    ahead = abs(face.iris_x) <= GAZE_IRIS_X and abs(face.iris_y) <= GAZE_IRIS_Y and abs(face.yaw) <= GAZE_YAW
    return "camera" if ahead else "away"


def _expression(face: FaceSeen | None, before: FaceSeen | None) -> str:
    if face is None:
        return NOT_VISIBLE
    if face.corner_lift >= SMILE_LIFT and face.mouth_width >= SMILE_WIDTH:
        return "smiling"
    moved = before is not None and abs(face.mouth_open - before.mouth_open) >= SPEAK_CHANGE
    return "speaking" if face.mouth_open >= SPEAK_OPEN or moved else "neutral"


def _shoulder_width(body: BodySeen, aspect: float) -> float:
    """The shoulders' distance in frame widths (y scaled by the frame's height over width)."""
    dx = body.left_shoulder[0] - body.right_shoulder[0]
    dy = (body.left_shoulder[1] - body.right_shoulder[1]) * aspect
    return math.hypot(dx, dy)


def _posture(obs: Observation) -> str:
    body = obs.body
    if body is None:
        return NOT_VISIBLE
    aspect = obs.height / max(1, obs.width)
    width = _shoulder_width(body, aspect)
    if width <= 0:
        return NOT_VISIBLE
    if (obs.face is not None and abs(obs.face.yaw) >= TURN_YAW) or abs(body.shoulder_depth) >= TURN_DEPTH:
        return "turned"
    dx = abs(body.left_shoulder[0] - body.right_shoulder[0])
    dy = abs(body.left_shoulder[1] - body.right_shoulder[1]) * aspect
    tilt = math.degrees(math.atan2(dy, dx))
    middle = (body.left_shoulder[0] + body.right_shoulder[0]) / 2
    offset = abs(body.nose[0] - middle) / (width / 2)
    return "leaning" if tilt >= LEAN_TILT_DEG or offset >= LEAN_OFFSET else "upright"


def _wrists(obs: Observation) -> dict[str, tuple[float, float]]:
    """Each visible wrist or hand of the person, by side (the body's wrist, else the hand's centre)."""
    out: dict[str, tuple[float, float]] = {}
    for hand in obs.hands:
        out.setdefault(hand.side, (hand.x, hand.y))
    if obs.body is not None:
        for side, wrist in (("left", obs.body.left_wrist), ("right", obs.body.right_wrist)):
            if wrist is not None:
                out[side] = wrist
    return out


def _speeds(obs: Observation, before: Observation | None) -> dict[str, float]:
    """Each wrist's speed since the previous frame, in shoulder widths per second, measured from the
    middle of the shoulders: a person who moves (or a cut to another shot) is no gesture."""
    if (before is None or obs.body is None or before.body is None
            or not 0 < obs.time_ms - before.time_ms <= MAX_GAP_MS):
        return {}
    now, then = _relative_wrists(obs), _relative_wrists(before)
    seconds = (obs.time_ms - before.time_ms) / 1000
    return {side: math.hypot(now[side][0] - then[side][0], now[side][1] - then[side][1]) / seconds
            for side in now if side in then}


def _relative_wrists(obs: Observation) -> dict[str, tuple[float, float]]:
    """The wrists from the shoulders' middle, in shoulder widths (y scaled to x's unit)."""
    body = obs.body
    assert body is not None  # its one caller (_speeds) has checked it
    aspect = obs.height / max(1, obs.width)
    width = _shoulder_width(body, aspect)
    if width <= 0:
        return {}
    mx = (body.left_shoulder[0] + body.right_shoulder[0]) / 2
    my = (body.left_shoulder[1] + body.right_shoulder[1]) / 2
    return {side: ((x - mx) / width, (y - my) * aspect / width) for side, (x, y) in _wrists(obs).items()}


def _activity(speeds: dict[str, float], obs: Observation) -> str:
    if obs.body is None:
        return NOT_VISIBLE
    fastest = max(speeds.values(), default=0.0)
    return "animated" if fastest >= ANIMATED_SPEED else "moving" if fastest >= STILL_SPEED else "still"


def _laterality(speeds: dict[str, float], obs: Observation) -> str:
    if obs.body is None:
        return NOT_VISIBLE
    moving = [side for side in ("left", "right") if speeds.get(side, 0.0) >= STILL_SPEED]
    return "both" if len(moving) == 2 else moving[0] if moving else "none"


def _distance(face: FaceSeen | None) -> str:
    if face is None:
        return NOT_VISIBLE
    return "close" if face.box[3] >= CLOSE_FACE else "medium" if face.box[3] >= FAR_FACE else "far"


def _placement(face: FaceSeen | None) -> str:
    if face is None:
        return NOT_VISIBLE
    centre = face.box[0] + face.box[2] / 2
    return "left" if centre < 1 / 3 else "right" if centre > 2 / 3 else "center"


def _row(obs: Observation, before: Observation | None) -> dict[str, Any]:
    speeds = _speeds(obs, before)
    face, body = obs.face, obs.body
    faces = max(0, min(MAX_FACES, int(obs.faces)))
    wrists = _wrists(obs)
    above = 0
    if body is not None:
        top = min(body.left_shoulder[1], body.right_shoulder[1])
        above = sum(1 for point in wrists.values() if point[1] < top)
    person = face is not None or body is not None
    return {
        "t": max(0, int(obs.time_ms)),
        "faces": faces,
        "presence": ("several_faces" if faces > 1 else "person") if person else "no_person",
        "gaze": _gaze(face),
        "expression": _expression(face, before.face if before is not None and
                                  0 < obs.time_ms - before.time_ms <= MAX_GAP_MS else None),
        "posture": _posture(obs),
        "gestures": _activity(speeds, obs),
        "laterality": _laterality(speeds, obs),
        "proxemics": _distance(face),
        "placement": _placement(face),
        "hands": len(wrists) if person else 0,
        "handsAbove": above,
        "faceHeight": round(_clamp(face.box[3], 0.0, 1.0), 3) if face is not None else None,
        "shoulderWidth": (round(_clamp(_shoulder_width(body, obs.height / max(1, obs.width)), 0.0, 2.0), 3)
                          if body is not None else None),
        "moveLeft": round(_clamp(speeds["left"], 0.0, 100.0), 2) if "left" in speeds else None,
        "moveRight": round(_clamp(speeds["right"], 0.0, 100.0), 2) if "right" in speeds else None,
    }


def frame_rows(observations: Sequence[Observation]) -> list[dict[str, Any]]:
    """One window's observations (in time order) as rows of labelled, bounded values: what a job
    item stores. The first frame of a window has no motion and no mouth change measured (nothing
    before it in the window)."""
    ordered = sorted(observations, key=lambda o: o.time_ms)
    return [_row(obs, ordered[k - 1] if k else None) for k, obs in enumerate(ordered)]


ROW_KEYS = ("t", "faces", "presence", "gaze", "expression", "posture", "gestures", "laterality", "proxemics",
            "placement", "hands", "handsAbove", "faceHeight", "shoulderWidth", "moveLeft", "moveRight")


def clean_row(row: dict[str, Any]) -> dict[str, Any] | None:
    """A stored row checked again (an item result is read back from the log): known labels only,
    numbers clamped; None when it is not a row."""
    if not isinstance(row, dict) or not isinstance(row.get("t"), int) or isinstance(row.get("t"), bool):
        return None
    try:
        faces = int(row.get("faces") or 0)
        hands = int(row.get("hands") or 0)
        above = int(row.get("handsAbove") or 0)
    except (TypeError, ValueError):
        return None
    out: dict[str, Any] = {"t": max(0, row["t"]), "faces": max(0, min(MAX_FACES, faces))}
    for name, values in VALUES.items():
        out[name] = row.get(name) if row.get(name) in values else (
            "no_person" if name == "presence" else NOT_VISIBLE)
    out["hands"] = max(0, min(2, hands))
    out["handsAbove"] = max(0, min(out["hands"], above))
    for key, high in (("faceHeight", 1.0), ("shoulderWidth", 2.0), ("moveLeft", 100.0), ("moveRight", 100.0)):
        value: Any = row.get(key)
        numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
        out[key] = round(_clamp(float(value), 0.0, high), 3) if numeric else None
    return out


@dataclass(frozen=True, slots=True)
class SeenVideo:
    """What the worker saw: every window's rows, the sampling, and why nothing was seen (``note``)."""

    rows: tuple[dict[str, Any], ...] = ()
    fps: float = 3.0
    analysed_ms: int = 0  # the part of the video whose frames were sampled (from 0)
    note: str | None = None  # e.g. the video has no picture


def _timeline(rows: Sequence[dict[str, Any]], name: str, step_ms: int,
              end_ms: int) -> tuple[list[dict[str, Any]], bool]:
    """Consecutive frames with one value as segments (start, end in ms); at most ``MAX_SEGMENTS``."""
    segments: list[dict[str, Any]] = []
    for k, row in enumerate(rows):
        start = row["t"]
        after = rows[k + 1]["t"] if k + 1 < len(rows) else end_ms
        stop = min(after if after - start <= 2 * step_ms else start + step_ms, end_ms)
        if stop <= start:
            continue
        value = row[name]
        if segments and segments[-1]["value"] == value and segments[-1]["endMs"] >= start:
            segments[-1]["endMs"] = stop
        else:
            segments.append({"startMs": start, "endMs": stop, "value": value})
    return segments[:MAX_SEGMENTS], len(segments) > MAX_SEGMENTS


def _shares(rows: Sequence[dict[str, Any]], name: str, visible_only: bool = True) -> tuple[dict[str, float], int]:
    """Each value's share (percent) of the frames where it was measured, and how many those were."""
    values = [r[name] for r in rows if not visible_only or r[name] != NOT_VISIBLE]
    if not values:
        return {}, 0
    return {v: round(100 * values.count(v) / len(values), 1) for v in VALUES[name] if v in values}, len(values)


def _pct(value: float) -> str:
    return f"{value:.0f} %"


def _listing(shares: dict[str, float]) -> str:
    ordered = sorted(shares.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{name.replace('_', ' ')} {_pct(share)}" for name, share in ordered)


def _signal_summaries(rows: Sequence[dict[str, Any]]) -> dict[str, tuple[dict[str, Any], str]]:
    """Each signal's shares and the sentence a person reads."""
    out: dict[str, tuple[dict[str, Any], str]] = {}
    shares, _ = _shares(rows, "presence", visible_only=False)
    seen = 100 - shares.get("no_person", 0.0)
    out["presence"] = (shares, f"a person is visible {_pct(seen)} of the analysed time"
                       + (f", with several faces in view {_pct(shares['several_faces'])} of it"
                          if shares.get("several_faces") else "") if seen else "no person is visible")
    shares, n = _shares(rows, "gaze")
    out["gaze"] = (shares, f"looks at the camera {_pct(shares.get('camera', 0.0))} of the time the face is visible"
                   if n else "the face is never visible: gaze not measured")
    shares, n = _shares(rows, "expression")
    out["expression"] = (shares, f"{_listing(shares)} of the time the face is visible"
                         if n else "the face is never visible: expression not measured")
    shares, n = _shares(rows, "posture")
    out["posture"] = (shares, f"{_listing(shares)} of the time the shoulders are visible"
                      if n else "the shoulders are never visible: posture not measured")
    body = [r for r in rows if r["gestures"] != NOT_VISIBLE]
    shares, n = _shares(rows, "gestures")
    if n:
        hands = 100 * sum(1 for r in body if r["hands"]) / n
        above = 100 * sum(1 for r in body if r["handsAbove"]) / n
        text = (f"hands visible {_pct(hands)} of the time the body is visible, above the shoulders {_pct(above)}; "
                f"{_listing(shares)}")
        shares = {**shares, "handsVisible": round(hands, 1), "handsAboveShoulders": round(above, 1)}
    else:
        text = "the body is never visible: gestures not measured"
    out["gestures"] = (shares, text)
    out["laterality"] = _laterality_summary(rows)
    out["proxemics"] = _proxemics_summary(rows)
    return out


def _laterality_summary(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    left = sum(r["moveLeft"] or 0.0 for r in rows)
    right = sum(r["moveRight"] or 0.0 for r in rows)
    shares, n = _shares(rows, "laterality")
    if not n:
        return shares, "the body is never visible: laterality not measured"
    moved = left + right
    if moved <= 0 or not any(shares.get(v) for v in ("left", "right", "both")):
        return {**shares, "leftMovement": 0.0, "rightMovement": 0.0}, "no hand gesture measured"
    left_pct, right_pct = round(100 * left / moved, 1), round(100 * right / moved, 1)
    if max(left_pct, right_pct) < 60:
        text = f"gestures with both hands alike (left {_pct(left_pct)}, right {_pct(right_pct)} of hand movement)"
    else:
        side, share = ("left", left_pct) if left_pct > right_pct else ("right", right_pct)
        text = f"gestures mostly with the {side} hand ({_pct(share)} of hand movement)"
    return {**shares, "leftMovement": left_pct, "rightMovement": right_pct}, text


def _proxemics_summary(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    shares, n = _shares(rows, "proxemics")
    if not n:
        return shares, "the face is never visible: distance not measured"
    heights = [r["faceHeight"] for r in rows if r["faceHeight"] is not None]
    widths = [r["shoulderWidth"] for r in rows if r["shoulderWidth"] is not None]
    placement, _ = _shares(rows, "placement")
    mostly = max(shares.items(), key=lambda kv: kv[1])[0]
    face = statistics.median(heights) if heights else 0.0
    text = (f"mostly at a {mostly} distance (the face {_pct(100 * face)} of the frame's height"
            + (f", the shoulders {_pct(100 * statistics.median(widths))} of its width" if widths else "")
            + f"); placed {_listing(placement)}")
    return {**shares, "medianFaceHeight": round(face, 3),
            "medianShoulderWidth": round(statistics.median(widths), 3) if widths else None,
            "placement": placement}, text


RHYTHM_SIGNALS = ("gaze", "expression", "posture", "gestures")


def _rhythm(rows: Sequence[dict[str, Any]], step_ms: int) -> dict[str, Any]:
    """Changes of value per minute of visible time, for each of ``RHYTHM_SIGNALS`` and together
    (a change into or out of ``not_visible`` is not counted)."""
    visible_ms = sum(step_ms for r in rows if r["presence"] != "no_person")
    per: dict[str, float] = {}
    for name in RHYTHM_SIGNALS:
        values = [r[name] for r in rows if r[name] != NOT_VISIBLE]
        changes = sum(1 for a, b in zip(values, values[1:], strict=False) if a != b)
        per[name] = round(changes / (visible_ms / 60_000), 1) if visible_ms else 0.0
    total = round(sum(per.values()), 1)
    text = (f"{total:g} changes per minute of visible time ("
            + ", ".join(f"{k} {v:g}" for k, v in per.items()) + ")") if visible_ms else "no person visible: no rhythm"
    return {"changesPerMinute": total, "perSignal": per, "summary": text}


def seen_profile(seen: SeenVideo, duration_ms: int) -> dict[str, Any]:
    """The timelines and summaries of what the picture shows (see docs/analysis.md)."""
    rows = sorted((r for r in (unpack_row(x) if isinstance(x, list) else clean_row(x) for x in seen.rows)
                   if r is not None), key=lambda r: r["t"])
    step_ms = max(1, round(1000 / seen.fps)) if seen.fps > 0 else 1000
    end_ms = min(duration_ms, seen.analysed_ms) if duration_ms else seen.analysed_ms
    out: dict[str, Any] = {
        "source": "frames sampled from the video; face mesh, pose and hands (MediaPipe, on this machine)",
        "sampling": {"fps": seen.fps, "frames": len(rows), "analysedMs": end_ms, "durationMs": duration_ms}}
    if seen.note is not None or not rows:
        out["note"] = seen.note or "no frame could be sampled"
        return out
    summaries = _signal_summaries(rows)
    sentences = []
    for name in SIGNALS:
        shares, text = summaries[name]
        timeline, cut = _timeline(rows, name, step_ms, end_ms)
        out[name] = {"summary": text, "shares": shares, "timeline": timeline, **({"truncated": True} if cut else {})}
        sentences.append(text)
    placement, cut = _timeline(rows, "placement", step_ms, end_ms)
    out["proxemics"]["placementTimeline"] = placement
    out["rhythm"] = _rhythm(rows, step_ms)
    sentences.append(out["rhythm"]["summary"])
    out["summaries"] = sentences
    return out


def behaviour_elements(profile: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The visual elements of what the person does: one per signal, its summary and timeline."""
    vision = (profile or {}).get("vision") or {}
    if not vision or "summaries" not in vision:
        return []
    end = vision["sampling"]["analysedMs"]
    out = []
    for name in (*SIGNALS, "rhythm"):
        signal = vision[name]
        out.append({"id": f"vis_behaviour_{name}", "type": "behaviour", "signal": name, "startMs": 0, "endMs": end,
                    "durationMs": end, "description": signal["summary"],
                    **({"shares": signal["shares"], "timeline": signal["timeline"]} if "timeline" in signal
                       else {"changesPerMinute": signal["changesPerMinute"], "perSignal": signal["perSignal"]})})
    return out


# ---- the job's items: windows of the video, and their rows as stored


VISION_ITEM_RE = re.compile(r"^vision-(\d{5})-(\d{1,9})-(\d{1,9})$")


def vision_windows(limit_ms: int, window_ms: int) -> list[tuple[int, int]]:
    """``[0, limit_ms)`` cut into windows of ``window_ms`` (the last one shorter)."""
    if limit_ms <= 0 or window_ms <= 0:
        return []
    return [(start, min(limit_ms, start + window_ms)) for start in range(0, limit_ms, window_ms)]


def vision_item_name(index: int, window: tuple[int, int]) -> str:
    """A window's job item: its place and range, found again identically by a resumed job."""
    return f"vision-{index:05d}-{window[0]}-{window[1]}"


def vision_item_window(name: str) -> tuple[int, int]:
    match = VISION_ITEM_RE.match(name)
    if match is None:
        raise ValueError(f"not a vision window item: {name!r}")
    return int(match.group(2)), int(match.group(3))


def pack_row(row: dict[str, Any]) -> list[Any]:
    """A row as the list of its values in ``ROW_KEYS`` order (an item result stays small)."""
    return [row.get(key) for key in ROW_KEYS]


def unpack_row(values: Any) -> dict[str, Any] | None:
    """A stored row back, checked (``clean_row``); None when it is not one."""
    if not isinstance(values, list) or len(values) != len(ROW_KEYS):
        return None
    return clean_row(dict(zip(ROW_KEYS, values, strict=True)))
