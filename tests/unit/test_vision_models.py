"""The vision models are the files the service was tested with: each pinned by its SHA-256, the
whole list exactly the files MediaPipe's solutions open, and a changed file refused."""

from __future__ import annotations

import dataclasses

import pytest

from infra.asr import ModelFile, package_dir
from infra.vision.models import MODEL_FILES, VisionUnavailable, check_model_files


def test_every_pinned_model_file_is_in_the_wheel_with_its_hash():
    check_model_files()
    assert len({f.path for f in MODEL_FILES}) == len(MODEL_FILES) == 7


def test_a_model_file_with_another_hash_is_refused():
    changed = dataclasses.replace(MODEL_FILES[0], sha256="0" * 64)
    with pytest.raises(VisionUnavailable, match="pinned SHA-256"):
        check_model_files((changed,))


def test_a_missing_model_file_or_package_is_refused():
    with pytest.raises(VisionUnavailable, match="missing"):
        check_model_files((ModelFile("mediapipe", "modules/pose_landmark/pose_landmark_heavy.tflite", "0" * 64),))
    with pytest.raises(VisionUnavailable, match="not installed"):
        check_model_files((ModelFile("no_such_vision_package", "m.tflite", "0" * 64),))


def test_the_wheel_holds_no_other_model_of_the_solutions_used():
    """The lighter and heavier pose and hand models are not pinned: the service never asks for them
    (a pose of complexity 0 or 2 would download its model, which must never happen)."""
    shipped = {p.relative_to(package_dir("mediapipe")).as_posix()
               for p in (package_dir("mediapipe") / "modules").rglob("*.tflite")}
    assert {f.path for f in MODEL_FILES} <= shipped
    assert "modules/pose_landmark/pose_landmark_heavy.tflite" not in shipped
    assert "modules/pose_landmark/pose_landmark_lite.tflite" not in shipped
