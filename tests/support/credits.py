"""Credits as the API reports them, and events written in one transaction."""

from __future__ import annotations

import asyncio


async def credits_used(client, used: int, timeout: float = 10) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while (await client.get("/credits")).data["used"] != used:
        assert asyncio.get_running_loop().time() < deadline, f"credits used never reached {used}"
        await asyncio.sleep(0.05)


async def same_transaction(service, workspace_id, *types: str) -> bool:
    async with service.pool.acquire() as conn:
        txs = await conn.fetch("SELECT DISTINCT xmin::text FROM events WHERE workspace_id = $1 AND type = ANY($2)",
                               workspace_id, list(types))
    return len(txs) == 1
