"""Clip benchmarks: ``python -m tests.benchmarks clips [cut] [render] [detect]`` (all three by default).

1. cut: a 30 s mp4 cut from a generated 10-minute 720p video. The job's ffmpeg run (its checked
   argument list, through ``run_killable``) against the bare ffmpeg command with the same encoder
   settings on the same file, alternated, median of ``BENCH_RUNS`` (3) each: goal at most 1.2x.
   Then the whole request-to-download time through the real processes: POST /videos/{id}/clips,
   the job, GET /jobs/{id} until completed, and the download of the signed URL.
2. render: 30 s 9:16 clips with burned captions from the same 720p source. Clips per minute of
   the render job (three clips, through the real processes: request to the tracking object's
   ``completed``, thumbnails and probes included) against bare ffmpeg running the same filter
   graph on the same ranges one after the other: goal at least 85 %. Peak RSS of the worker
   process (VmHWM) and of the bare ffmpeg runs.
3. detect: the detection over the article of a 60-minute captioned talk (the interview fixture
   end to end): sentences and detection as the job runs them (goal at most 2 s), and the same for
   the widest request (180 s clips, a 50 % margin either way, 50 clips).

Every figure is printed beside its baseline, measured in the same run on the same machine.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from domain.analysis import analyse
from domain.analysis.sentences import split_sentences
from domain.clip_detection import DetectionRequest, detect
from domain.clip_overlay import ass_script, title_layout
from domain.clips import caption_pages, template
from infra import stack
from infra.captions import parse_captions, read_captions
from infra.media.clips import ENCODERS, caption_font, check_clip, cut_argv, render_graph
from infra.media.ffmpeg import run_killable
from tests.benchmarks.bench_analysis import hour_of_captions, make_video
from tests.benchmarks.bench_core import TEMPLATE, fresh, machine, peak_rss_mb
from tests.support.stack import _base_settings, drop_isolated

RUNS = int(os.environ.get("BENCH_RUNS", "3"))
CUT_START_MS, CLIP_MS = 120_000, 30_000
RENDER_STARTS_MS = (60_000, 240_000, 420_000)


def _children_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def _bare_cut(source: Path, out: Path) -> list[str]:
    """What a person would type: no whitelists, no forced demuxer, the same encoders."""
    return ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-ss", f"{CUT_START_MS / 1000:.3f}", "-i", str(source),
            "-map", "0:v:0", "-map", "0:a:0", "-c:v", "libx264", "-preset", "veryfast", "-crf", "21", "-pix_fmt",
            "yuv420p", "-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-t", f"{CLIP_MS / 1000:.3f}",
            "-f", "mp4", str(out)]


async def _timed(coro) -> float:
    t0 = time.perf_counter()
    await coro
    return time.perf_counter() - t0


async def bench_cut_ffmpeg(source: Path, tmp: Path) -> dict:
    job_times, bare_times = [], []
    for _ in range(RUNS):
        job_out, bare_out = tmp / "job.mp4", tmp / "bare.mp4"
        args = cut_argv(source, "mov", CUT_START_MS, CUT_START_MS + CLIP_MS, "mp4", job_out)
        job_times.append(await _timed(run_killable(args, 600, "cut")))
        t0 = time.perf_counter()
        subprocess.run(_bare_cut(source, bare_out), check=True, timeout=600)
        bare_times.append(time.perf_counter() - t0)
        check_clip(job_out, "mp4", CLIP_MS)
    job, bare = statistics.median(job_times), statistics.median(bare_times)
    print(f"cut 30 s of 720p to mp4: job's ffmpeg {job:.2f} s, bare ffmpeg {bare:.2f} s (medians of {RUNS}) "
          f"-> {job / bare:.2f}x (goal <= 1.2x)")
    return {"cut_job_s": job, "cut_bare_s": bare, "cut_ratio": job / bare}


def _bare_render(source: Path, start_ms: int, ass: Path, out: Path) -> list[str]:
    t = template(1)
    return ["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-ss", f"{start_ms / 1000:.3f}", "-i", str(source),
            "-filter_complex", render_graph(t, ass), "-map", "[v]", "-map", "0:a:0",
            *ENCODERS["mp4"], "-t", f"{CLIP_MS / 1000:.3f}", str(out)]


def bench_render_bare(source: Path, captions: Path, tmp: Path, *, with_rss: bool = True) -> dict:
    segments = read_captions(captions)
    t = template(1)
    t0 = time.perf_counter()
    for k, start in enumerate(RENDER_STARTS_MS):
        ass = tmp / f"bare{k}.ass"
        ass.write_text(ass_script(t, caption_pages(segments, start, start + CLIP_MS, t),
                                  title_layout(t, f"Clip {k}", caption_font()), font=caption_font(), title_ms=3000))
        subprocess.run(_bare_render(source, start, ass, tmp / f"bare{k}.mp4"), check=True, timeout=600)
    elapsed = time.perf_counter() - t0
    per_minute = len(RENDER_STARTS_MS) / (elapsed / 60)
    # The children's peak RSS is ffmpeg's only before the service's processes (children too) have run.
    rss = f"; peak RSS of an ffmpeg {_children_rss_mb():.0f} MB" if with_rss else ""
    print(f"render 9:16 with captions, bare ffmpeg: {len(RENDER_STARTS_MS)} clips of 30 s in {elapsed:.1f} s = "
          f"{per_minute:.1f} clips/min{rss}")
    return {"render_bare_per_min": per_minute}


async def _wait(http, base: str, key: str, path: str, field: str = "status", timeout: float = 900) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        async with http.get(base + path, headers={"Authorization": f"Bearer {key}"}) as resp:
            data = (await resp.json())["data"]
        if data[field] in ("completed", "failed", "cancelled"):
            return data
        if time.monotonic() > deadline:
            raise TimeoutError(path)
        await asyncio.sleep(0.05)


async def bench_service(source: Path, captions: Path, which: list[str]) -> dict:
    from tests.support.service import running_service

    base = _base_settings()
    await asyncio.to_thread(stack.up, base)
    scratch = await fresh(base)  # migrates the benchmark template; this copy of it is not used
    await drop_isolated(base, scratch)
    out: dict = {}
    with tempfile.TemporaryDirectory() as logs:
        async with running_service(base, TEMPLATE, Path(logs), processes=("relay", "projector", "worker"),
                                   apis=1) as svc:
            ws = await svc.workspace(credits=100_000)
            form = aiohttp.FormData()
            form.add_field("file", source.read_bytes(), filename="talk.mp4", content_type="video/mp4")
            form.add_field("captions", captions.read_bytes(), filename="talk.vtt", content_type="text/vtt")
            t0 = time.perf_counter()
            async with svc.http.post(svc.base + "/videos", data=form,
                                     headers={"Authorization": f"Bearer {ws.key}"}) as resp:
                video_id = (await resp.json())["data"]["id"]
            print(f"upload of the 10-minute video (probe and measure included): {time.perf_counter() - t0:.1f} s")
            if "cut" in which:
                t0 = time.perf_counter()
                r = await ws.client.post(f"/videos/{video_id}/clips", {"start_ms": CUT_START_MS,
                                                                       "end_ms": CUT_START_MS + CLIP_MS})
                job = await _wait(svc.http, svc.base, ws.key, f"/jobs/{r.data['job_id']}")
                async with svc.http.get(job["result"]["url"]) as resp:
                    size = len(await resp.read())
                elapsed = time.perf_counter() - t0
                print(f"request to download, 30 s mp4 cut: {elapsed:.2f} s ({size / 1e6:.1f} MB downloaded)")
                out["cut_request_to_download_s"] = elapsed
            if "render" in which:
                r = await ws.client.post(f"/videos/{video_id}/analyze", {})
                job = await _wait(svc.http, svc.base, ws.key, f"/jobs/{r.data['job_id']}")
                clips = [{"id": f"c{k}", "title": f"Clip {k}", "start_ms": s, "end_ms": s + CLIP_MS,
                          "duration_ms": CLIP_MS} for k, s in enumerate(RENDER_STARTS_MS)]
                t0 = time.perf_counter()
                r = await ws.client.post("/production/clips/render", {"article_id": job["article_id"],
                                                                      "template_id": 1, "clips": clips})
                tracking = await _wait(svc.http, svc.base, ws.key, f"/production/clips/jobs/{r.data['job_id']}")
                elapsed = time.perf_counter() - t0
                assert tracking["status"] == "completed", tracking
                per_minute = len(clips) / (elapsed / 60)
                worker_rss = peak_rss_mb(svc.procs["worker"].pid)
                print(f"render job, 9:16 with captions: {len(clips)} clips of 30 s in {elapsed:.1f} s = "
                      f"{per_minute:.1f} clips/min (request to completed, thumbnails and probes included); "
                      f"worker peak RSS {worker_rss:.0f} MB")
                out.update(render_job_per_min=per_minute, worker_peak_rss_mb=worker_rss)
    return out


def bench_detect() -> dict:
    text = hour_of_captions(60)
    segments = parse_captions(text)
    graph = analyse(segments, language="fr").to_dict()
    out = {}
    for label, request in [("30 s clips, 10 asked", DetectionRequest(target_ms=30_000)),
                           ("180 s clips, +-50 %, 50 asked",
                            DetectionRequest(target_ms=180_000, requested_clip_count=50, duration_margin_percent=50,
                                             allow_longer_duration=True)),
                           ("30 s clips, 50 asked, with a prompt",
                            DetectionRequest(target_ms=30_000, requested_clip_count=50, prompt="isolation des murs"))]:
        t0 = time.perf_counter()
        sentences = split_sentences(segments, "fr")
        found = detect(sentences, graph, request)
        elapsed = time.perf_counter() - t0
        print(f"detection over a 60-minute article ({len(segments)} cues, {len(sentences)} sentences), {label}: "
              f"{elapsed:.3f} s, {len(found.clips)} clips (goal <= 2 s)")
        out[label] = elapsed
    return out


async def main(which: list[str]) -> dict:
    which = which or ["cut", "render", "detect"]
    results: dict = {"machine": machine()}
    if "detect" in which:
        results["detect_s"] = bench_detect()
    if "cut" in which or "render" in which:
        from infra.provision import ensure

        ensure("ffmpeg", "fonts-dejavu-core")
        with tempfile.TemporaryDirectory() as tmp_name:
            tmp = Path(tmp_name)
            source, captions = tmp / "talk720p.mp4", tmp / "talk.vtt"
            t0 = time.perf_counter()
            make_video(source, 10)
            captions.write_text(hour_of_captions(10), encoding="utf-8")
            print(f"source: 10 minutes of 1280x720 H.264 + AAC, generated in {time.perf_counter() - t0:.0f} s")
            if "cut" in which:
                results.update(await bench_cut_ffmpeg(source, tmp))
            bare_runs = []
            if "render" in which:  # bare before and after the job: the machine's drift shows in both
                bare_runs.append(bench_render_bare(source, captions, tmp)["render_bare_per_min"])
            results.update(await bench_service(source, captions, which))
            if "render" in which:
                bare_runs.append(bench_render_bare(source, captions, tmp, with_rss=False)["render_bare_per_min"])
                results["render_bare_per_min"] = statistics.mean(bare_runs)
                results["render_bare_runs"] = bare_runs
        if "render_job_per_min" in results:
            share = results["render_job_per_min"] / results["render_bare_per_min"]
            results["render_share_of_bare"] = share
            print(f"render job / bare ffmpeg (the mean of the runs before and after): {share:.0%} (goal >= 85 %)")
    return results


def run(which: list[str]) -> None:
    results = asyncio.run(main(which))
    print(orjson.dumps(results).decode(), file=sys.stderr)


if __name__ == "__main__":
    run(sys.argv[1:])
