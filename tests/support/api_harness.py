"""The API in process, on a real store and broker, with keys to call it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson
from aiohttp.test_utils import TestClient

from domain.workspaces import Workspace


@dataclass
class Api:
    client: TestClient
    token: str
    store: Any
    pool: Any
    workspace_id: Any
    sound: Path

    async def post(self, case_or_path, body: Any, key: str | None) -> tuple[int, Any, dict]:
        path = case_or_path
        headers = {"Authorization": f"Bearer {self.token}"}
        if key is not None:
            headers["Idempotency-Key"] = key
        if path == "/videos":
            form = aiohttp.FormData()
            form.add_field("file", self.sound.read_bytes(), filename="tone.mp4", content_type="video/mp4")
            for name, value in body.items():
                form.add_field(name, value)
            data: Any = form
        else:
            headers["Content-Type"] = "application/json"
            data = orjson.dumps(body) if body is not None else b""
        async with self.client.post(f"/v1{path}", data=data, headers=headers) as resp:
            raw = await resp.read()
            ctype = resp.headers.get("Content-Type", "")
            return resp.status, (orjson.loads(raw) if ctype.startswith("application/json") else raw.decode()), \
                dict(resp.headers)

    async def written(self) -> dict[str, int]:
        async with self.pool.acquire() as conn:
            rows = await conn.fetch("SELECT type, count(*) AS n FROM events WHERE workspace_id = $1 GROUP BY type",
                                    self.workspace_id)
        return {r["type"]: r["n"] for r in rows}

    async def balance(self) -> int:
        workspace: Workspace = await self.store.fetch_for_writing(self.workspace_id)
        return workspace.credits_balance
