"""Face-following renders: ``python -m tests.benchmarks facecrop``.

The same 30 s range of a generated 1280x720 25 fps talk (scikit-image's astronaut portrait over a
moving test pattern, walking slowly across the frame and back) rendered to 9:16 with burned
captions, twice in each round, alternated:

- **centre**: template 1, the centre crop (the render's ffmpeg run alone);
- **follow**: template 5, everything the job adds: the face detection pass (ffmpeg samples
  5 fps, MediaPipe on the tiles of each: all three once a second, around the face between), the
  plan, then the render along the crop path.

Each variant runs in a child Python process of its own (the worker's import of MediaPipe is
counted once, outside the timing, as a worker pays it once), which reports its time, its peak
RSS and its ffmpeg children's. Printed: frames per second of each (output frames over wall
time), follow / centre (goal at most 1.5x: of the medians, and the median of each round's pair,
which a shared machine's drift moves less), and the detection pass's share. ``BENCH_RUNS`` rounds
(3), medians.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.benchmarks.bench_core import machine

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
START_MS, CLIP_MS, SOURCE_S, FPS = 5_000, 30_000, 40, 25


def make_source(root: Path) -> Path:
    from tests.face_media import face_video

    # the portrait walks from the left edge to the right and back in 40 s
    return face_video(root, "talk.mp4", SOURCE_S, [("440+400*sin(2*PI*t/40)", 160, 400, None)], fps=FPS)


def one(variant: str, source: str, root: str) -> dict:
    """One render in this process: the variant's whole cost, timed."""
    from domain.clip_framing import plan_framing
    from domain.clip_overlay import ass_script
    from domain.clips import Caption, template
    from infra.media.clips import caption_font, render_argv
    from infra.media.ffmpeg import run
    from infra.vision.faces import FaceDetector, face_samples

    FaceDetector().close()  # the import and first load, paid once per worker
    t = template(5 if variant == "follow" else 1)
    script = Path(root) / f"{variant}.ass"
    script.write_text(ass_script(t, [Caption(0, CLIP_MS, ("Heat pumps move heat", "into the house"))],
                                 font=caption_font()))
    out = Path(root) / f"{variant}.mp4"
    t0 = time.perf_counter()
    framing, detect_s = None, 0.0
    if variant == "follow":
        samples = face_samples(source, "mov", START_MS, START_MS + CLIP_MS, timeout=600).samples
        framing = plan_framing(samples, 1280, 720, t.width, t.height)
        detect_s = time.perf_counter() - t0
    run(render_argv(source, "mov", START_MS, START_MS + CLIP_MS, t, script, out, framing=framing), 600, "render")
    total = time.perf_counter() - t0
    return {"seconds": total, "detect_s": detect_s, "framing": framing.summary() if framing else None,
            "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "ffmpeg_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


def _child(variant: str, source: Path, root: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "tests.benchmarks.bench_facecrop", "--one", variant, str(source),
                           str(root)], capture_output=True, text=True, check=True, timeout=900,
                          env={**os.environ, "GLOG_minloglevel": "2", "TF_CPP_MIN_LOG_LEVEL": "2"})
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(args: list[str]) -> None:
    print(f"facecrop: {machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        source = make_source(root)
        results: dict[str, list[dict]] = {"centre": [], "follow": []}
        for k in range(RUNS):
            order = ("centre", "follow") if k % 2 == 0 else ("follow", "centre")
            for variant in order:
                results[variant].append(_child(variant, source, root))
        frames = CLIP_MS / 1000 * FPS
        med = {v: statistics.median(r["seconds"] for r in rs) for v, rs in results.items()}
        detect = statistics.median(r["detect_s"] for r in results["follow"])
        print(f"  30 s of 1280x720 25 fps to 9:16 with captions, median of {RUNS} alternated rounds")
        for v in ("centre", "follow"):
            rs = results[v]
            runs = ", ".join(f"{r['seconds']:.2f}" for r in rs)
            print(f"  {v:6s}: {med[v]:6.2f} s  {frames / med[v]:6.1f} frames/s  (runs {runs})  peak RSS python "
                  f"{max(r['rss_mb'] for r in rs):.0f} MB, ffmpeg {max(r['ffmpeg_rss_mb'] for r in rs):.0f} MB")
        render_alone = statistics.median(r["seconds"] - r["detect_s"] for r in results["follow"])
        print(f"  face detection pass (sampling, MediaPipe, plan): {detect:.2f} s "
              f"({100 * detect / med['follow']:.0f} % of the follow render); its render alone {render_alone:.2f} s")
        paired = [f["seconds"] / c["seconds"] for f, c in zip(results["follow"], results["centre"], strict=True)]
        pairs = ", ".join(f"{r:.2f}" for r in paired)
        print(f"  follow / centre: {med['follow'] / med['centre']:.2f}x of the medians, "
              f"{statistics.median(paired):.2f}x the median of each round's pair ({pairs}) (goal <= 1.5x)")
        print(f"  framing: {results['follow'][-1]['framing']}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(one(*sys.argv[2:5])))
    else:
        run(sys.argv[1:])
