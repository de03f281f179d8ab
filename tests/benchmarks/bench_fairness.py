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

``python -m tests.benchmarks fairness lying``: tenant A fills both slots with the analyses of two
uploads whose packet timestamps lie (``LYING_HOURS`` hours of audio stamped as about 21 s, a
~100 KB Matroska, priced as 21 s); once both run, tenant B asks for the analysis of a 5 s
captioned video. The figure is B's wait, from its request to its job ``completed``, and how long
A's analyses took: bounded by what was priced (``audio_bound``) they take seconds; before, each
decoded all the hours in every pass.
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
from tests.media_factory import make_lying_audio
from tests.media_factory import run as run_command
from tests.support.stack import _base_settings, drop_isolated

CLIPS, CLIP_S, VIDEO_S = 20, 10, 240
LYING_HOURS, LYING_SQUEEZE = 6, 1000  # six hours of audio stamped as 21.6 s, as the probe's file was


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


async def _upload(svc, ws, video: Path, captions: Path | None = None) -> int:
    form = aiohttp.FormData()
    form.add_field("file", video.read_bytes(), filename=video.name, content_type="application/octet-stream")
    if captions is not None:
        form.add_field("captions", captions.read_bytes(), filename="talk.vtt", content_type="text/vtt")
    async with svc.http.post(svc.base + "/videos", data=form, headers={"Authorization": f"Bearer {ws.key}"}) as resp:
        body = await resp.json()
        assert resp.status == 201, body
        return body["data"]["id"]


async def _upload_and_analyse(svc, ws, video: Path, captions: Path) -> tuple[int, int]:
    video_id = await _upload(svc, ws, video, captions)
    r = await ws.client.post(f"/videos/{video_id}/analyze", {})
    job = await _wait(svc.http, svc.base, ws.key, f"/jobs/{r.data['job_id']}")
    assert job["status"] == "completed", job
    return video_id, job["article_id"]


async def _one_run(base: Settings, label: str, video: Path, captions: Path, **env: str) -> dict:
    from tests.support.service import running_service

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


async def _lying_run(base: Settings, label: str, lying: Path, video: Path, captions: Path) -> dict:
    """Tenant A's two analyses of files whose timestamps lie, then tenant B's analysis of a short
    captioned video: B's wait and A's analyses' durations."""
    from tests.support.service import running_service

    with tempfile.TemporaryDirectory() as logs:
        async with running_service(base, TEMPLATE, Path(logs), processes=("relay", "projector", "worker"),
                                   apis=1) as svc:
            noisy, quiet = await svc.workspace(credits=100_000), await svc.workspace(credits=100)
            quiet_video = await _upload(svc, quiet, video, captions)
            lying_videos = [await _upload(svc, noisy, lying) for _ in range(2)]
            priced_s = (await noisy.client.get(f"/videos/{lying_videos[0]}")).data["duration_seconds"]
            t_lying = time.perf_counter()
            jobs = [(await noisy.client.post(f"/videos/{v}/analyze", {"language": "en"})).data["job_id"]
                    for v in lying_videos]
            while [(await noisy.client.get(f"/jobs/{j}")).data["status"] for j in jobs] != ["running", "running"]:
                await asyncio.sleep(0.1)
            t0 = time.perf_counter()
            r = await quiet.client.post(f"/videos/{quiet_video}/analyze", {})
            job = await _wait(svc.http, svc.base, quiet.key, f"/jobs/{r.data['job_id']}", timeout=3600)
            waited = time.perf_counter() - t0
            assert job["status"] == "completed", job
            ends = []
            for j in jobs:
                done = await _wait(svc.http, svc.base, noisy.key, f"/jobs/{j}", timeout=3600)
                ends.append((done["status"], time.perf_counter() - t_lying))
    print(f"{label}: the other tenant's analysis of a 5 s video waited {waited:.1f} s behind two analyses of "
          f"files priced {priced_s:g} s holding {LYING_HOURS} h of audio, which ended "
          f"{', '.join(f'{status} after {s:.0f} s' for status, s in ends)}")
    return {"short_job_wait_s": waited, "priced_s": priced_s, "lying_jobs": ends}


async def main_lying() -> dict:
    from infra import provision

    provision.ensure("ffmpeg")
    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    scratch = await fresh(base)
    await drop_isolated(base, scratch)
    results: dict = {"machine": machine()}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        lying = make_lying_audio(tmp, LYING_HOURS * 3600, LYING_SQUEEZE)
        video, captions = make_source(tmp, 5)
        results["lying_file_bytes"] = lying.stat().st_size
        results["lying"] = await _lying_run(base, "two lying files ahead", lying, video, captions)
    return results


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
    results = asyncio.run(main_lying() if "lying" in which else main())
    print(orjson.dumps(results).decode(), file=sys.stderr)
