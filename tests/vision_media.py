"""Videos of a real person for the behavioural analysis' tests and benchmark, made with ffmpeg from
scikit-image's astronaut portrait (a real 512 x 512 photograph: a woman facing the camera, smiling,
her shoulders in view; her face at x 0.35-0.53, y 0.16-0.35 of the photo).

Each scene is a still 1280 x 720 picture (the portrait placed on a black canvas), held for some
seconds; a video is scenes one after the other (H.264, 25 fps unless said)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from tests.media_factory import run

W, H = 1280, 720


def portrait(side: int) -> np.ndarray:
    from skimage import data

    return np.asarray(Image.fromarray(data.astronaut()).resize((side, side), Image.LANCZOS))


def canvas(*placed: tuple[np.ndarray, int, int]) -> np.ndarray:
    """A black 1280 x 720 picture with each ``(image, x, y)`` pasted on it."""
    out = np.zeros((H, W, 3), dtype=np.uint8)
    for image, x, y in placed:
        out[y:y + image.shape[0], x:x + image.shape[1]] = image
    return out


def scenes() -> dict[str, np.ndarray]:
    """left: the portrait (420 px) in the left third; right: in the right third; black: nobody;
    medium: the portrait the frame's height; close: her face filling it; crowd: a 400 px portrait in
    the top-left corner and three of 300 px in the other corners (four faces, the largest left)."""
    from skimage import data

    small = portrait(420)
    face = np.asarray(Image.fromarray(data.astronaut()[20:250, 110:340]).resize((720, 720), Image.LANCZOS))
    other = portrait(300)
    return {
        "left": canvas((small, 0, 150)),
        "right": canvas((small, W - 420, 150)),
        "black": canvas(),
        "medium": canvas((portrait(720), 280, 0)),
        "close": canvas((face, 280, 0)),
        "crowd": canvas((portrait(400), 0, 0), (other, W - 300, 0), (other, 0, H - 300), (other, W - 300, H - 300)),
    }


def make_scenes_video(root: Path, name: str, parts: list[tuple[str, float]], *, fps: int = 25,
                      vf: str | None = None, size: tuple[int, int] | None = None) -> Path:
    """``parts`` (scene name, seconds) one after the other; ``vf`` an ffmpeg filter applied after
    (hflip: the mirrored video); ``size`` a final scale (a 2 x 2 video)."""
    made = scenes()
    inputs: list[str] = []
    for k, (scene, seconds) in enumerate(parts):
        still = root / f"{name}-{k}.png"
        Image.fromarray(made[scene]).save(still)
        inputs += ["-loop", "1", "-framerate", str(fps), "-t", f"{seconds:g}", "-i", str(still)]
    chain = "".join(f"[{k}:v]" for k in range(len(parts))) + f"concat=n={len(parts)}:v=1:a=0"
    if vf:
        chain += f",{vf}"
    if size:
        chain += f",scale={size[0]}:{size[1]}"
    out = root / name
    run(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", *inputs, "-filter_complex", chain + ",format=yuv420p",
         "-r", str(fps), "-c:v", "libx264", "-preset", "ultrafast", str(out)], timeout=120)
    return out
