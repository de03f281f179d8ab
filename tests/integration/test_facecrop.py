"""Face-following renders on real pictures (scikit-image's astronaut portrait on a 1280x720 canvas),
real ffmpeg and MediaPipe: the face is found in the source, the rendered 9:16 clip is read back
and the face is found again inside its frame (while the centre crop loses it), the crop moves
smoothly, a picture with no person falls back to the centre crop, two people far apart are
shown in two panels, and hostile sources (240 fps, faces in every corner) end in a bounded plan.

Tolerance: outside the ``FOLLOW_DELAY_S`` after the portrait jumps, the face's centre is found
in every sampled output frame, within the middle half of the output's width."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from domain.clip_framing import FOLLOW_DELAY_S, MAX_SPEED, oriented, plan_framing
from domain.clip_overlay import ass_script
from domain.clips import template
from infra.media.clips import caption_font, check_clip, render_argv, thumbnail_argv
from infra.media.ffmpeg import run_killable
from infra.vision.faces import FaceDetector, face_samples
from tests.face_media import face_video

pytestmark = pytest.mark.slow

JUMP_S = 3.0  # the portrait jumps from the left third to the right third at this time
PORTRAIT = 400  # pixels: its face is about 70 pixels wide on the 1280-pixel canvas


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("faces")


@pytest.fixture(scope="module")
def moving(root) -> Path:
    return face_video(root, "moving.mp4", 6, [(f"if(lt(t,{JUMP_S}),100,780)", 160, PORTRAIT, None)])


@pytest.fixture(scope="module")
def detector():
    found = FaceDetector()
    yield found
    found.close()


@pytest.fixture(scope="module")
def script(root) -> Path:
    path = root / "empty.ass"
    path.write_text(ass_script(template(5), [], font=caption_font()))
    return path


def output_faces(path: Path, w: int, h: int, detector: FaceDetector, fps: int | None = 5) -> list[tuple]:
    """The faces found in ``fps`` frames per second of a rendered clip (its frames read back; a
    picture's one frame with ``fps`` None)."""
    vf = f"fps={fps}" if fps else "null"
    raw = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", str(path), "-vf", vf, "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True, check=True, timeout=60).stdout
    size = w * h * 3
    return [detector.faces(np.frombuffer(raw[k * size:(k + 1) * size], np.uint8).reshape(h, w, 3))
            for k in range(len(raw) // size)]


async def test_a_9_16_render_keeps_the_moving_face_in_its_frame_and_moves_smoothly(moving, root, script, detector):
    start, end = 500, 5_500  # a range that does not start at 0: the crop's times are the clip's
    track = face_samples(moving, "mov", start, end, timeout=60)
    samples = track.samples
    assert track.frame_size == (512, 288) and [s.t for s in samples[:3]] == [0.0, 0.2, 0.4]
    assert len(samples) == 25 and sum(1 for s in samples if s.faces) == 25
    framing = plan_framing(samples, 1280, 720, 720, 1280)
    assert (framing.mode, framing.faces, framing.faces_seen_pct) == ("follow_face", 1, 100)
    [path] = framing.paths
    xs = [path.at(k / 25)[0] for k in range(125)]
    assert max(abs(b - a) for a, b in zip(xs, xs[1:], strict=False)) <= MAX_SPEED * path.width / 25 + 1
    assert len(set(xs[:int((JUMP_S - 0.5) * 25) - 5])) == 1  # still while the portrait is still

    followed, centred = root / "followed.mp4", root / "centred.mp4"
    await run_killable(render_argv(moving, "mov", start, end, template(5), script, followed, framing=framing), 120,
                       "render")
    await run_killable(render_argv(moving, "mov", start, end, template(1), script, centred), 120, "render")
    jump = JUMP_S - start / 1000
    seen = output_faces(followed, 720, 1280, detector)
    assert len(seen) == 25
    for k, faces in enumerate(seen):
        t = k / 5
        if jump <= t < jump + FOLLOW_DELAY_S:
            continue  # the portrait jumped: the window is on its way
        assert len(faces) == 1, (t, faces)
        assert 0.25 <= faces[0].x <= 0.75, (t, faces[0])
    steady = [faces[0].x for k, faces in enumerate(seen) if k / 5 < jump - 0.2]
    assert max(steady) - min(steady) < 0.02  # the face does not move in the frame: no jitter
    lost = output_faces(centred, 720, 1280, detector)
    assert sum(1 for faces in lost if faces) <= 5  # the centre crop shows the face only while passing by

    thumb = root / "thumb.jpg"
    await run_killable(thumbnail_argv(moving, "mov", start + 1_000, template(5), script, thumb,
                                      framing=framing.still(1.0)), 60, "thumbnail")
    [face] = output_faces(thumb, 720, 1280, detector, fps=None)[0]
    assert 0.25 <= face.x <= 0.75


async def test_a_picture_without_a_person_falls_back_to_the_centre_crop(root, script):
    empty = face_video(root, "nobody.mp4", 3, [])
    framing = plan_framing(face_samples(empty, "mov", 0, 3_000, timeout=60).samples, 1280, 720, 720, 1280)
    assert framing.mode == "centre_fallback" and framing.summary()["faces_seen_pct"] == 0
    assert framing.summary()["samples"] == 15 and "0 %" in framing.reason
    out = root / "nobody-9x16.mp4"
    args = render_argv(empty, "mov", 0, 3_000, template(5), script, out, framing=framing)
    assert args == render_argv(empty, "mov", 0, 3_000, template(1), script, out)  # the template's centre crop
    await run_killable(args, 60, "render")
    assert out.stat().st_size > 0


async def test_two_people_far_apart_are_shown_one_above_the_other(root, script, detector):
    pair = face_video(root, "pair.mp4", 3, [("0", 160, PORTRAIT, None), ("880", 160, PORTRAIT, None)])
    framing = plan_framing(face_samples(pair, "mov", 0, 3_000, timeout=60).samples, 1280, 720, 720, 1280)
    assert (framing.mode, framing.faces, framing.stack) == ("two_faces", 2, "vertical")
    out = root / "pair-9x16.mp4"
    await run_killable(render_argv(pair, "mov", 0, 3_000, template(5), script, out, framing=framing), 60, "render")
    for faces in output_faces(out, 720, 1280, detector):
        assert len(faces) == 2, faces
        top, bottom = sorted(faces, key=lambda f: f.y)
        assert top.y < 0.5 < bottom.y  # one in each panel
        assert 0.25 <= top.x <= 0.75 and 0.25 <= bottom.x <= 0.75
    square = plan_framing(face_samples(pair, "mov", 0, 3_000, timeout=60).samples, 1280, 720, 720, 720)
    out = root / "pair-1x1.mp4"
    await run_killable(render_argv(pair, "mov", 0, 3_000, template(6), script, out, framing=square), 60, "render")
    faces = output_faces(out, 720, 720, detector)[5]
    left, right = sorted(faces, key=lambda f: f.x)
    assert square.stack == "horizontal" and left.x < 0.5 < right.x


async def test_hostile_sources_end_in_a_bounded_plan(root, script):
    fast = face_video(root, "fast.mp4", 2, [("440", 160, PORTRAIT, None)], fps=240)
    samples = face_samples(fast, "mov", 0, 2_000, timeout=60).samples
    assert len(samples) == 10  # 5 per second, whatever the frame rate
    assert plan_framing(samples, 1280, 720, 720, 1280).mode == "follow_face"
    corners = face_video(root, "corners.mp4", 2, [(x, y, 240, None) for x in ("0", "1040") for y in (0, 480)])
    framing = plan_framing(face_samples(corners, "mov", 0, 2_000, timeout=60).samples, 1280, 720, 720, 1280)
    assert framing.mode in ("two_faces", "follow_face") and framing.summary()["keyframes"] <= 40
    out = root / "corners-9x16.mp4"
    await run_killable(render_argv(corners, "mov", 0, 2_000, template(5), script, out, framing=framing), 60,
                       "render")
    assert out.stat().st_size > 0


async def test_a_video_its_container_rotates_is_framed_as_it_is_decoded(moving, root, script):
    """A phone's video: stored 1280x720 with a quarter-turn in its container, decoded 720x1280."""
    rotated = root / "rotated.mp4"
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", str(moving), "-c", "copy", "-metadata:s:v:0",
                    "rotate=90", "-t", "2", str(rotated)], check=True, timeout=60)
    track = face_samples(rotated, "mov", 0, 2_000, timeout=60)
    assert track.frame_size == (288, 512)  # the face lies on its side: found in some frames only
    size = oriented((1280, 720), track.frame_size)
    assert size == (720, 1280)
    framing = plan_framing(track.samples, *size, 720, 720)
    assert all(p.width == p.height == 720 for p in framing.paths)  # the window of the decoded frame
    out = root / "rotated-1x1.mp4"
    await run_killable(render_argv(rotated, "mov", 0, 2_000, template(6), script, out, framing=framing), 60,
                       "render")
    assert check_clip(out, "mp4", 2_000, size=(720, 720)).duration_ms > 0
