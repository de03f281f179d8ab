"""Charges and waiting, as the monitoring and webhook tests use them."""

from __future__ import annotations

import asyncio
import time


async def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await predicate()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise TimeoutError(what)


async def charge(store, workspace_id, amount: int) -> int:
    ws = await store.fetch_for_writing(workspace_id)
    ws.charge(amount, "test")
    return await store.save(events=store.registry.to_new_events(ws.collect_events(), workspace_id=workspace_id))
