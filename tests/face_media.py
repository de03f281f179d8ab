"""Test videos with real faces: scikit-image's astronaut portrait (a real 512x512 photograph whose
face MediaPipe finds at relative x 0.35-0.53, y 0.16-0.35) placed on a 1280x720 canvas by ffmpeg,
still or moving, one or several copies, over a test pattern with no face in it."""

from __future__ import annotations

from pathlib import Path

from domain.analysis import Segment
from infra.captions import to_webvtt
from tests.media_factory import run

# Where the portrait's face is inside the portrait (relative), measured with MediaPipe.
FACE_X, FACE_Y = 0.44, 0.26


def portrait_png(root: Path) -> Path:
    """The astronaut portrait as a PNG file (scikit-image ships it: nothing is downloaded)."""
    import cv2
    from skimage import data

    path = root / "astronaut.png"
    if not path.exists():
        cv2.imwrite(str(path), cv2.cvtColor(data.astronaut(), cv2.COLOR_RGB2BGR))
    return path


def face_video(root: Path, name: str, seconds: float, portraits: list[tuple[str, int, int, str | None]], *,
               size: tuple[int, int] = (1280, 720), fps: int = 25, background: str = "testsrc2") -> Path:
    """A video of ``seconds`` with a tone: ``background`` (a lavfi source) under each portrait
    ``(x expression of t, y, side in pixels, enable expression or None)``."""
    png = portrait_png(root)
    w, h = size
    inputs = ["-f", "lavfi", "-i", f"{background}=s={w}x{h}:r={fps}:d={seconds}", "-f", "lavfi", "-i",
              f"sine=frequency=220:sample_rate=48000:duration={seconds}"]
    graph, last = [], "0:v"
    for k, (x, y, side, enable) in enumerate(portraits):
        inputs += ["-loop", "1", "-framerate", str(fps), "-i", str(png)]
        graph.append(f"[{k + 2}:v]scale={side}:{side}[p{k}]")
        when = f":enable='{enable}'" if enable else ""
        graph.append(f"[{last}][p{k}]overlay=x='{x}':y={y}:shortest=1{when}[v{k}]")
        last = f"v{k}"
    out = root / name
    run(["ffmpeg", "-nostdin", "-y", *inputs, "-filter_complex", ";".join(graph) if graph else "[0:v]null[v0]",
         "-map", f"[{last if graph else 'v0'}]", "-map", "1:a", "-t", str(seconds), "-c:v", "libx264", "-preset",
         "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", str(out)])
    return out


def captions(root: Path, seconds: float, name: str = "faces.vtt") -> Path:
    """English captions over the whole video, a cue every two seconds."""
    lines = ["Heat pumps move heat from the outside air into the house.",
             "They use far less electricity than a heater of the same power.",
             "Why does insulation matter so much?",
             "Because every watt that stays inside is a watt you do not pay for.",
             "Thank you for watching this short talk."]
    cues, t = [], 0
    while t + 1_800 <= seconds * 1000:
        cues.append(Segment(t, t + 1_800, lines[len(cues) % len(lines)], "Speaker"))
        t += 2_000
    path = root / name
    path.write_text(to_webvtt(cues))
    return path
