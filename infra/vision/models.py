"""Loading MediaPipe: its system libraries, and its model files checked before any is used.

MediaPipe 0.10.21's legacy solutions read their TensorFlow Lite models from inside the installed
wheel (``mediapipe/modules/...``); nothing is downloaded. Each file the service's solutions open
(found by tracing the files the face detector, the face mesh with iris, the pose of complexity 1
and the hands open) is pinned here by its SHA-256, like the speech models (``infra.asr``): a wheel
whose models differ from those the service was tested with is refused, and the vision steps say
why instead of measuring with other weights.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType

from infra import provision
from infra.asr import ModelFile, package_dir, sha256_of

CV2_PACKAGES = ("libgl1", "libglib2.0-0")  # what OpenCV's wheel needs from the system (infra.provision.NEEDS)

MODEL_FILES = (
    ModelFile("mediapipe", "modules/face_detection/face_detection_full_range_sparse.tflite",
              "2c3728e6da56f21e21a320433396fb06d40d9088f2247c05e5635a688d45dfe1"),
    ModelFile("mediapipe", "modules/face_detection/face_detection_short_range.tflite",
              "bbff11cebd1eb27a1e004cae0b0e63ec8c551cbf34a4451148b4908b8db3eca8"),
    ModelFile("mediapipe", "modules/face_landmark/face_landmark_with_attention.tflite",
              "e06a804e0144f9929eda782122916b35d60c697c3c9344013ca2bbe76a6ce2b4"),
    ModelFile("mediapipe", "modules/pose_detection/pose_detection.tflite",
              "9ba9dd3d42efaaba86b4ff0122b06f29c4122e756b329d89dca1e297fd8f866c"),
    ModelFile("mediapipe", "modules/pose_landmark/pose_landmark_full.tflite",
              "e9a5c5cb17f736fafd4c2ec1da3b3d331d6edbe8a0d32395855aeb2cdfd64b9f"),
    ModelFile("mediapipe", "modules/palm_detection/palm_detection_full.tflite",
              "1b14e9422c6ad006cde6581a46c8b90dd573c07ab7f3934b5589e7cea3f89a54"),
    ModelFile("mediapipe", "modules/hand_landmark/hand_landmark_full.tflite",
              "11c272b891e1a99ab034208e23937a8008388cf11ed2a9d776ed3d01d0ba00e3"),
)

_checked = False
_lock = threading.Lock()


class VisionUnavailable(Exception):
    """The vision libraries or models cannot be used on this machine (the message says why)."""


def load_cv2() -> ModuleType:
    """OpenCV, which MediaPipe imports: on a fresh Debian machine its wheel lacks ``libGL.so.1`` and
    ``libglib-2.0``. ``vaeo up`` installs them (``infra.provision``); a worker started alone
    installs them here, once, and tries the import again."""
    try:
        return importlib.import_module("cv2")
    except ImportError as exc:
        if "libGL" not in str(exc) and "libg" not in str(exc):
            raise VisionUnavailable(f"OpenCV cannot be imported: {exc}") from exc
        try:
            provision.ensure(*CV2_PACKAGES)
        except provision.ProvisionError as failed:
            raise VisionUnavailable(f"OpenCV needs {' and '.join(CV2_PACKAGES)}: {failed}") from exc
        return importlib.import_module("cv2")


def check_model_files(files: tuple[ModelFile, ...] = MODEL_FILES) -> None:
    """Every model file present with its pinned SHA-256, else ``VisionUnavailable``."""
    for file in files:
        try:
            path = package_dir(file.package) / file.path
        except Exception as exc:  # the package is not installed
            raise VisionUnavailable(f"the vision models' package {file.package} is not installed") from exc
        if not path.is_file():
            raise VisionUnavailable(f"the vision model file {file.package}/{file.path} is missing")
        if sha256_of(path) != file.sha256:
            raise VisionUnavailable(f"the vision model file {file.package}/{file.path} does not have its pinned "
                                    f"SHA-256; refusing to load it")


def mediapipe() -> ModuleType:
    """The ``mediapipe`` module, its system libraries present and its model files checked (once per
    process)."""
    global _checked
    load_cv2()
    with _lock:
        if not _checked:
            check_model_files()
            _checked = True
    try:
        return importlib.import_module("mediapipe")
    except ImportError as exc:
        raise VisionUnavailable(f"MediaPipe cannot be imported: {exc}") from exc
