"""Seeing the person: ``python -m tests.benchmarks vision [see] [small]``.

- ``see``: the behavioural analysis of a 60-second 1280 x 720 video of a real portrait (the test
  scenes of ``tests/vision_media.py``: left, right, medium, close, several faces, nobody, ten
  seconds each) with the worker's settings (3 frames a second, longest side 960, windows of 30 s),
  in a fresh process that first imports the worker as ``vaeo worker`` does: frames seen per second,
  seconds of work per second of video, and that process's peak resident memory before and after.
- ``small``: the same at a longest side of 640 pixels.

One function per figure; each prints its line and returns its numbers.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from tests.benchmarks.bench_core import core_speed_ms, machine
from tests.support.stack import ROOT
from tests.vision_media import make_scenes_video

SCENES = [("left", 10), ("right", 10), ("medium", 10), ("close", 10), ("crowd", 10), ("black", 10)]

CHILD = """
import sys, time, orjson
import services.processes.worker  # noqa: F401 - what the worker process holds before any vision
from infra.media.probe import probe
from infra.settings import Settings
from infra.vision.behaviour import see_window
from domain.analysis.behavioral import vision_windows

def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024

path, max_side = sys.argv[1], int(sys.argv[2])
settings = Settings()
before = hwm()
info = probe(path)
started, cpu = time.monotonic(), time.process_time()
frames = 0
for start, end in vision_windows(info.duration_ms, settings.vision_window_s * 1000):
    frames += len(see_window(path, info.demuxer, start, end, fps=settings.vision_fps, max_side=max_side,
                             max_frames=1000, timeout=600))
wall, cpu = time.monotonic() - started, time.process_time() - cpu
print(orjson.dumps({"frames": frames, "seconds": wall, "cpu_seconds": cpu, "video_seconds": info.duration_ms / 1000,
                    "rss_before_mb": before, "rss_peak_mb": hwm()}).decode())
"""


def _measure(video: Path, max_side: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(video), str(max_side)], capture_output=True, text=True,
                          cwd=ROOT, timeout=1800, check=True)
    out = orjson.loads(done.stdout.strip().splitlines()[-1])
    out["frames_per_second"] = out["frames"] / out["seconds"]
    out["seconds_per_second"] = out["seconds"] / out["video_seconds"]
    return out


def see(video: Path) -> dict:
    """Frames per second and peak RSS at the worker's settings (longest side 960)."""
    out = _measure(video, 960)
    print(f"see (960 px): {out['frames']} frames of {out['video_seconds']:.0f} s in {out['seconds']:.1f} s: "
          f"{out['frames_per_second']:.1f} frames/s, {out['seconds_per_second']:.2f} s per s of video "
          f"(CPU {out['cpu_seconds']:.1f} s); peak RSS {out['rss_before_mb']:.0f} MB before, "
          f"{out['rss_peak_mb']:.0f} MB after")
    return out


def small(video: Path) -> dict:
    """The same at a longest side of 640 pixels."""
    out = _measure(video, 640)
    print(f"small (640 px): {out['frames_per_second']:.1f} frames/s, {out['seconds_per_second']:.2f} s per s of "
          f"video; peak RSS {out['rss_peak_mb']:.0f} MB")
    return out


def run(which: list[str]) -> None:
    parts = {"see": see, "small": small}
    chosen = [p for p in parts if not which or p in which]
    results: dict = {"machine": machine(), "core_speed_ms_before": core_speed_ms()}
    print(f"machine: {results['machine']}; core loop {results['core_speed_ms_before']} ms")
    with tempfile.TemporaryDirectory() as tmp:
        video = make_scenes_video(Path(tmp), "sixty.mp4", SCENES)
        for name in chosen:
            results[name] = parts[name](video)
    results["core_speed_ms_after"] = core_speed_ms()
    print(f"core loop after: {results['core_speed_ms_after']} ms")
    print(orjson.dumps(results).decode(), file=sys.stderr)
