"""Uploads and jobs over the public API, as the end-to-end tests drive them."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import aiohttp
import orjson

from infra.storage import STAGING, LocalStorage


async def upload(client, path: Path, *, captions: Path | None = None, **fields: str):
    form = aiohttp.FormData()
    form.add_field("file", path.read_bytes(), filename=path.name, content_type="video/mp4")
    if captions is not None:
        form.add_field("captions", captions.read_bytes(), filename=captions.name, content_type="text/vtt")
    for k, v in fields.items():
        form.add_field(k, v)
    headers = {"Authorization": f"Bearer {client.key}"}
    async with client.http.post(client.base + "/videos", data=form, headers=headers) as resp:
        raw = await resp.read()
        return resp.status, orjson.loads(raw) if raw else None


async def follow(client, job_id: str, *, until=("completed", "failed", "cancelled"), timeout: float = 120) -> tuple:
    """Poll the job until a final status; returns (last job, the distinct steps seen)."""
    deadline = time.monotonic() + timeout
    steps: list[str] = []
    while True:
        r = await client.get(f"/jobs/{job_id}")
        assert r.status == 200, r.body
        job = r.data
        if not steps or steps[-1] != job["step"]:
            steps.append(job["step"])
        if job["status"] in until:
            return job, steps
        assert time.monotonic() < deadline, job
        await asyncio.sleep(0.1)


async def events_of(service, workspace_id, *types: str) -> list:
    async with service.pool.acquire() as conn:
        return await conn.fetch("SELECT type, data FROM events WHERE workspace_id = $1 AND type = ANY($2) "
                                "ORDER BY position", workspace_id, list(types))


def storage_files(service, workspace_id) -> list[Path]:
    root = LocalStorage.from_settings(service.settings).root
    files = list((root / "videos" / str(workspace_id)).rglob("*")) if (root / "videos" / str(workspace_id)).exists() \
        else []
    staged = list((root / STAGING).glob(f"{workspace_id}-*"))
    return [f for f in files if f.is_file()] + staged
