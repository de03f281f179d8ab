"""Following a face (``domain.clip_framing``): the filter steadies a jittery track, follows a step
within its documented delay at a bounded speed, holds through short gaps and goes back to the
centre after a long one; the decision falls back to the centre crop, follows one face, frames a
close pair together and shows a far pair in two panels; the crop path becomes an ffmpeg expression
that computes the same positions; the framing summary is bounded."""

from __future__ import annotations

import random

import pytest

from domain.base import DomainError
from domain.clip_framing import (
    DEAD_ZONE,
    FOLLOW_DELAY_S,
    HOLD_S,
    MAX_KEYFRAMES,
    MAX_SPEED,
    MIN_FACES_SEEN_PCT,
    SAMPLE_FPS,
    CropPath,
    Face,
    Sample,
    crop_window,
    oriented,
    plan_framing,
)
from domain.clips import SYSTEM_TEMPLATES, ClipRender, check_framing, template
from infra.media.clips import path_expr, reframe_filter

SRC = (1280, 720)
VERTICAL = (720, 1280)
DT = 1 / SAMPLE_FPS


def track(xs, y: float = 0.35, w: float = 0.06) -> list[Sample]:
    """One face at relative x ``xs[k]`` (None: not seen) in sample k."""
    return [Sample(round(k * DT, 3), (Face(x, y, w, w * 16 / 9),) if x is not None else ()) for k, x in enumerate(xs)]


def positions(p: CropPath, seconds: float, fps: int = 25) -> list[int]:
    """The window's x at each output frame."""
    return [p.at(k / fps)[0] for k in range(int(seconds * fps) + 1)]


def face_x(rel: float) -> int:
    """The window's x that centres a face at relative x ``rel`` (clamped)."""
    w, _ = crop_window(*SRC, *VERTICAL)
    return min(max(0, round(rel * SRC[0] - w / 2)), SRC[0] - w)


def test_the_window_is_the_largest_of_the_output_aspect_inside_the_source():
    assert crop_window(1280, 720, 720, 1280) == (404, 720)
    assert crop_window(1280, 720, 720, 720) == (720, 720)
    assert crop_window(720, 1280, 720, 720) == (720, 720)
    assert crop_window(720, 1280, 720, 1280) == (720, 1280)
    assert crop_window(1, 1, 720, 1280) == (2, 2)


def test_the_source_is_framed_the_way_its_frames_are_decoded():
    assert oriented((1280, 720), (512, 288)) == (1280, 720)
    assert oriented((1280, 720), (288, 512)) == (720, 1280)  # a container's quarter-turn
    assert oriented((1280, 720), None) == (1280, 720)
    assert oriented((720, 720), (288, 512)) == (720, 720)


def test_a_jittery_track_gives_a_steady_crop():
    rng = random.Random(7)
    jitter = [0.5 + rng.uniform(-0.025, 0.025) for _ in range(100)]  # +-32 px of a 1280 frame, every sample
    outliers = [x if k % 13 else 0.9 for k, x in enumerate(jitter)]  # and a wrong detection now and then
    framing = plan_framing(track(outliers), *SRC, *VERTICAL)
    assert framing.mode == "follow_face" and framing.faces == 1
    [p] = framing.paths
    xs = positions(p, 20)
    w = p.width
    moves = [abs(b - a) for a, b in zip(xs, xs[1:], strict=False)]
    raw = sum(abs(b - a) for a, b in zip(outliers, outliers[1:], strict=False)) * SRC[0]
    assert sum(moves) <= 2 * DEAD_ZONE * w < raw / 30, (sum(moves), raw)  # at most a small move or two in 20 s
    assert max(xs) - min(xs) <= 2 * DEAD_ZONE * w, (min(xs), max(xs))
    assert max(moves) <= 3  # and each one a slow glide: no jump, no jitter
    assert abs(xs[len(xs) // 2] - face_x(0.5)) <= DEAD_ZONE * w


def test_a_step_move_is_followed_within_the_documented_delay_at_a_bounded_speed():
    xs = [0.2] * 15 + [0.8] * 35  # left third for 3 s, then the right third
    [p] = plan_framing(track(xs), *SRC, *VERTICAL).paths
    assert p.at(0)[0] == p.at(2.9)[0] == face_x(0.2)  # still before the move, no anticipation
    fps = 25
    frames = positions(p, 10, fps)
    moves = [abs(b - a) for a, b in zip(frames, frames[1:], strict=False)]
    assert max(moves) <= MAX_SPEED * p.width / fps + 1  # frame to frame: at most the maximum pan speed
    target = face_x(0.8)
    settled = next(k for k, x in enumerate(frames) if k / fps >= 3 and abs(x - target) <= 0.05 * p.width)
    assert settled / fps - 3.0 <= FOLLOW_DELAY_S, settled / fps
    assert abs(frames[-1] - target) <= 0.05 * p.width


def test_a_short_gap_is_held_and_a_long_one_goes_back_to_the_centre():
    short = [0.2] * 10 + [None] * 4 + [0.2] * 10  # 0.8 s unseen
    [p] = plan_framing(track(short), *SRC, *VERTICAL).paths
    assert {x for x in positions(p, 4.6)} == {face_x(0.2)}
    long_gap = [0.2] * 10 + [None] * 40  # unseen from 2 s on
    [p] = plan_framing(track(long_gap), *SRC, *VERTICAL).paths
    assert p.at(2.0 + HOLD_S)[0] == face_x(0.2)  # held
    assert p.at(9.8)[0] == face_x(0.5)  # then the centre


def test_the_window_stays_inside_the_frame():
    [p] = plan_framing(track([0.01] * 10 + [0.99] * 20), *SRC, *VERTICAL).paths
    for t in (0, 1, 2, 3, 5, 6):
        x, y = p.at(t)
        assert 0 <= x <= SRC[0] - p.width and y == 0
    assert p.at(0)[0] == 0 and p.at(6)[0] == SRC[0] - p.width


def test_too_few_faces_fall_back_to_the_centre_with_the_reason():
    rare = [0.3 if k % 10 == 0 else None for k in range(50)]  # 10 % of the samples
    framing = plan_framing(track(rare), *SRC, *VERTICAL)
    assert framing.mode == "centre_fallback" and framing.paths == ()
    assert framing.summary() == {"mode": "centre_fallback", "faces_seen_pct": 10, "samples": 50, "faces": 0,
                                 "keyframes": 0, "reason": framing.reason}
    assert f"{MIN_FACES_SEEN_PCT} %" in framing.reason
    assert plan_framing([], *SRC, *VERTICAL).mode == "centre_fallback"
    check_framing(framing.summary())
    # A face in the background (much smaller than the subject) is not counted as a second person.
    small = [Sample(k * DT, (Face(0.3, 0.4, 0.1, 0.18), Face(0.8, 0.2, 0.03, 0.05))) for k in range(20)]
    assert plan_framing(small, *SRC, *VERTICAL).faces == 1


def test_two_people_far_apart_are_shown_in_two_panels_and_a_close_pair_together():
    far = [Sample(k * DT, (Face(0.2, 0.35, 0.08, 0.14), Face(0.8, 0.35, 0.08, 0.14))) for k in range(25)]
    framing = plan_framing(far, *SRC, *VERTICAL)
    assert (framing.mode, framing.faces, framing.stack, len(framing.paths)) == ("two_faces", 2, "vertical", 2)
    left, right = framing.paths
    assert left.width * 640 == pytest.approx(left.height * 720, rel=0.02)  # a 720x640 panel's aspect
    assert left.at(1)[0] + left.width / 2 == pytest.approx(0.2 * 1280, abs=2)
    assert right.at(1)[0] + right.width / 2 == pytest.approx(0.8 * 1280, abs=2)
    square = plan_framing(far, *SRC, 720, 720)
    assert square.stack == "horizontal" and square.paths[0].width * 720 == pytest.approx(
        square.paths[0].height * 360, rel=0.02)
    close = [Sample(k * DT, (Face(0.45, 0.35, 0.04, 0.07), Face(0.55, 0.35, 0.04, 0.07))) for k in range(25)]
    together = plan_framing(close, *SRC, *VERTICAL)
    assert (together.mode, together.faces, len(together.paths)) == ("follow_face", 2, 1)
    assert together.paths[0].at(1)[0] == face_x(0.5)


def test_faces_in_every_corner_give_a_bounded_plan():
    corners = (Face(0.05, 0.05, 0.05, 0.09), Face(0.95, 0.05, 0.05, 0.09), Face(0.05, 0.95, 0.05, 0.09),
               Face(0.95, 0.95, 0.05, 0.09), Face(0.5, 0.5, 0.05, 0.09))
    rng = random.Random(3)
    samples = [Sample(k * DT, tuple(rng.sample(corners, 5))) for k in range(1_500)]
    framing = plan_framing(samples, *SRC, *VERTICAL)
    assert framing.mode == "two_faces" and all(len(p.keys) <= MAX_KEYFRAMES for p in framing.paths)
    check_framing(framing.summary())


def test_a_long_wandering_track_is_thinned_to_bounded_keyframes():
    rng = random.Random(11)
    x, xs = 0.5, []
    for _ in range(1_500):  # 300 s of a speaker walking about
        x = min(0.95, max(0.05, x + rng.uniform(-0.04, 0.04)))
        xs.append(x)
    [p] = plan_framing(track(xs), *SRC, *VERTICAL).paths
    assert len(p.keys) <= MAX_KEYFRAMES
    assert len(path_expr(p.keys, 1)) < 40_000  # far under the 128 KiB of one command-line argument


def _evaluate(expr: str, t: float) -> float:
    """ffmpeg's expression, evaluated with ffmpeg's meaning of clip()."""
    return eval(expr, {"__builtins__": {}}, {"t": t, "clip": lambda v, lo, hi: min(max(v, lo), hi)})


def test_the_crop_expression_computes_the_path():
    xs = [0.2] * 15 + [0.8] * 10 + [None] * 15 + [0.6] * 10
    [p] = plan_framing(track(xs), *SRC, *VERTICAL).paths
    expr = path_expr(p.keys, 1)
    for k in range(250):
        assert _evaluate(expr, k / 25) == pytest.approx(p.at(k / 25)[0], abs=1)
    assert path_expr(((0.0, 40, 0), (3.0, 40, 0)), 1) == "40"  # still: one number
    graph = reframe_filter(template(5), plan_framing(track(xs), *SRC, *VERTICAL))
    assert graph.startswith("[0:v:0]crop=w=404:h=720:x='") and graph.endswith("scale=720:1280,setsar=1")
    two = plan_framing([Sample(k * DT, (Face(0.2, 0.35, 0.08, 0.14), Face(0.8, 0.35, 0.08, 0.14)))
                        for k in range(5)], *SRC, *VERTICAL)
    graph = reframe_filter(template(5), two)
    assert "split=2" in graph and "vstack=inputs=2" in graph and graph.count("scale=720:640") == 2
    centre = plan_framing([], *SRC, *VERTICAL)
    assert reframe_filter(template(5), centre) == reframe_filter(template(1))  # the fallback is the centre crop


def test_the_face_following_templates_and_the_bounded_framing_of_a_rendered_clip():
    following = [t for t in SYSTEM_TEMPLATES if t.reframe == "follow_face"]
    assert [(t.id, t.format) for t in following] == [(5, "9:16"), (6, "1:1")]
    assert not any(t.is_default for t in following)
    render = ClipRender.queue(job_id=__import__("uuid").uuid4(), workspace_id=__import__("uuid").uuid4(),
                              environment="production", video_id=1, template_id=5,
                              clips=[{"id": "a", "start_ms": 0, "end_ms": 1000}])
    summary = plan_framing(track([0.3] * 10), *SRC, *VERTICAL).summary()
    render.record_rendered("a", attempt=1, file_key="k", thumbnail_key=None, duration_ms=1000, size_bytes=1,
                           width=720, height=1280, framing=summary)
    [_, rendered] = render.collect_events()
    assert rendered.framing == summary
    for bad in ({**summary, "mode": "zoom"}, {**summary, "faces_seen_pct": 101}, {**summary, "extra": 1},
                {**summary, "reason": "x" * 201}, {**summary, "samples": True}):
        with pytest.raises(DomainError):
            check_framing(bad)
