"""Fair sharing of the workers: ``python -m tests.benchmarks fairness``.

One tenant (A) fills both slots of the worker with two template renders of ``CLIPS`` clips of
``CLIP_S`` seconds each; once both run, another tenant (B) asks for a 2 s clip of its own video.
The figure is B's wait, from its request to its clip's job ``completed``, measured twice in the
same run on the same machine through the real processes (relay, projector, worker, API):

- without slot sharing (``VAEO_WORKER_TIME_SLICE_S`` so large that no job ever gives its slot up:
  how the worker behaved before), where B waits for one whole render;
- with the default time slice, where B waits about one slice and one clip of A's render.

Printed beside it: how long A's renders took in each run (the cost of sharing to the tenant that
shares).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from infra import stack
from infra.settings import Settings
from tests.benchmarks.bench_clips import _wait
from tests.benchmarks.bench_core import TEMPLATE, fresh, machine
from tests.conftest import _base_settings, drop_isolated
from tests.media_factory import run as run_command

CLIPS, CLIP_S, VIDEO_S = 20, 10, 240


def make_source(tmp: Path, seconds: int = VIDEO_S) -> tuple[Path, Path]:
    """A generated captioned talk of ``seconds`` (a cue every 5 s): the benchmarks' analysis input."""
    video, captions = tmp / "talk.mp4", tmp / "talk.vtt"
    run_command(["ffmpeg", "-nostdin", "-y", "-loglevel", "error", "-f", "lavfi", "-i",
                 f"testsrc2=s=640x360:r=25:d={seconds}", "-f", "lavfi", "-i",
                 f"sine=frequency=330:sample_rate=48000:duration={seconds}", "-c:v", "libx264", "-preset",
                 "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(video)])
    cues = ["WEBVTT", ""]
    for k in range(seconds // 5):
        start, end = k * 5, k * 5 + 5
        cues += [f"00:{start // 60:02d}:{start % 60:02d}.000 --> 00:{end // 60:02d}:{end % 60:02d}.000",
                 f"Part {k}: heat pumps move heat from outside air into the house, and insulation keeps it.", ""]
    captions.write_text("\n".join(cues), encoding="utf-8")
    return video, captions


async def _upload_and_analyse(svc, ws, video: Path, captions: Path) -> tuple[int, int]:
    form = aiohttp.FormData()
    form.add_field("file", video.read_bytes(), filename="talk.mp4", content_type="video/mp4")
    form.add_field("captions", captions.read_bytes(), filename="talk.vtt", content_type="text/vtt")
    async with svc.http.post(svc.base + "/videos", data=form, headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        video_id = (await resp.json())["data"]["id"]
    r = await ws.client.post(f"/videos/{video_id}/analyze", {})
    job = await _wait(svc.http, svc.base, ws.key, f"/jobs/{r.data['job_id']}")
    assert job["status"] == "completed", job
    return video_id, job["article_id"]


async def _one_run(base: Settings, label: str, video: Path, captions: Path, **env: str) -> dict:
    from tests.e2e.conftest import running_service

    with tempfile.TemporaryDirectory() as logs:
        async with running_service(base, TEMPLATE, Path(logs), processes=("relay", "projector", "worker"), apis=1,
                                   **env) as svc:
            noisy, quiet = await svc.workspace(credits=100_000), await svc.workspace(credits=100)
            _, noisy_article = await _upload_and_analyse(svc, noisy, video, captions)
            quiet_video, _ = await _upload_and_analyse(svc, quiet, video, captions)
            renders = []
            t_renders = time.perf_counter()
            for n in range(2):
                clips = [{"id": f"r{n}c{k}", "title": f"Clip {k}", "start_ms": k * CLIP_S * 1000,
                          "end_ms": (k + 1) * CLIP_S * 1000, "duration_ms": CLIP_S * 1000} for k in range(CLIPS)]
                r = await noisy.client.post("/production/clips/render",
                                            {"article_id": noisy_article, "template_id": 1, "clips": clips})
                renders.append(r.data["job_id"])
            while True:  # both renders hold a slot
                states = [(await noisy.client.get(f"/jobs/{j}")).data["status"] for j in renders]
                if states == ["running", "running"]:
                    break
                await asyncio.sleep(0.1)
            t0 = time.perf_counter()
            r = await quiet.client.post(f"/videos/{quiet_video}/clips", {"start_ms": 5000, "end_ms": 7000})
            job = await _wait(svc.http, svc.base, quiet.key, f"/jobs/{r.data['job_id']}")
            waited = time.perf_counter() - t0
            assert job["status"] == "completed", job
            for j in renders:
                done = await _wait(svc.http, svc.base, noisy.key, f"/jobs/{j}", timeout=1800)
                assert done["status"] == "completed", done
            renders_s = time.perf_counter() - t_renders
    print(f"{label}: the other tenant's 2 s clip waited {waited:.1f} s; the two renders of {CLIPS} clips of "
          f"{CLIP_S} s took {renders_s:.0f} s")
    return {"short_clip_wait_s": waited, "renders_s": renders_s}


async def main() -> dict:
    from infra.provision import ensure

    ensure("ffmpeg", "fonts-dejavu-core")
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    scratch = await fresh(base)  # migrates the benchmark template; this copy of it is not used
    await drop_isolated(base, scratch)
    results: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory() as tmp_name:
        video, captions = make_source(Path(tmp_name))
        results["without_sharing"] = await _one_run(base, "without slot sharing (before)", video, captions,
                                                    VAEO_WORKER_TIME_SLICE_S="1000000")
        results["with_sharing"] = await _one_run(base, f"with slot sharing (slice {Settings().worker_time_slice_s} s)",
                                                 video, captions)
    return results


def run(which: list[str]) -> None:
    results = asyncio.run(main())
    print(orjson.dumps(results).decode(), file=sys.stderr)
