"""Clip jobs over the API, and what their rendered files hold (probe, frames, downloads)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path

import aiohttp

from domain.clip_overlay import ass_script
from domain.clips import SYSTEM_TEMPLATES
from infra.media.clips import caption_font, render_argv
from infra.storage import LocalStorage, storage_root


async def wait_job(client, job_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        r = await client.get(f"/jobs/{job_id}")
        assert r.status == 200, r.body
        if r.data["status"] in ("completed", "failed", "cancelled"):
            return r.data
        assert time.monotonic() < deadline, r.data
        await asyncio.sleep(0.1)


async def track(client, job_id: str, *, timeout: float = 120, every=None) -> dict:
    """Poll the tracking object until the job ends; ``every(tracking)`` sees each state."""
    deadline = time.monotonic() + timeout
    while True:
        r = await client.get(f"/production/clips/jobs/{job_id}")
        assert r.status == 200, r.body
        if every is not None:
            every(r.data)
        if r.data["status"] in ("completed", "failed", "cancelled"):
            return r.data
        assert time.monotonic() < deadline, r.data
        await asyncio.sleep(0.05)


async def download(http: aiohttp.ClientSession, url: str, path: Path) -> Path:
    async with http.get(url) as resp:
        assert resp.status == 200, await resp.text()
        path.write_bytes(await resp.read())
    return path


def ffprobe(path: Path) -> dict:
    done = subprocess.run(["ffprobe", "-v", "error", "-print_format", "json", "-show_format", "-show_streams",
                           str(path)], capture_output=True, check=True, timeout=30)
    return json.loads(done.stdout)


def gray_frame(path: Path, at_s: float, vf: str = "null", *, w: int, h: int) -> bytes:
    done = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-ss", f"{at_s:.3f}", "-i", str(path), "-vf",
                           f"{vf},format=gray", "-frames:v", "1", "-f", "rawvideo", "-"], capture_output=True,
                          check=True, timeout=30)
    assert len(done.stdout) == w * h
    return done.stdout


def render_clip(clip_id: str, start_ms: int, end_ms: int, **extra) -> dict:
    return {"id": clip_id, "title": f"Clip {clip_id}", "start_ms": start_ms, "end_ms": end_ms,
            "duration_ms": end_ms - start_ms, **extra}


def talk_source(svc, talk) -> str:
    """The stored source of the talk (the test reads the same bytes the worker cut)."""
    key = f"videos/{talk['ws'].id}/{talk['video_id']}/source.mp4"
    return str(LocalStorage(storage_root(svc.settings)).path(key))


def long_render(source: Path, tmp: Path, tag: str) -> list[str]:
    t = SYSTEM_TEMPLATES[3]  # 1280x720 over a blurred fill: the slowest graph
    script = tmp / f"{tag}.ass"
    script.write_text(ass_script(t, [], font=caption_font()))
    return render_argv(source, "mov", 0, 20_000, t, script, tmp / f"{tag}-out.mp4")
