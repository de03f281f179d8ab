"""Charges and waiting, as the monitoring and webhook tests use them."""

from __future__ import annotations

from tests.support import pipeline


async def wait_for(predicate, timeout: float = 60.0, what: str = "condition"):
    """``pipeline.wait_for`` with the longer wait the monitoring tests allow by default."""
    return await pipeline.wait_for(predicate, timeout, what)


async def charge(store, workspace_id, amount: int) -> int:
    ws = await store.fetch_for_writing(workspace_id)
    ws.charge(amount, "test")
    return await store.save(events=store.registry.to_new_events(ws.collect_events(), workspace_id=workspace_id))
