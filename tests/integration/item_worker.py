"""A worker process whose only job type is defined here, for the kill -9 test of jobs with items.

``python -m tests.integration.item_worker`` runs ``Worker`` like ``vaeo worker`` does (settings
from the environment, stopped by SIGTERM) with the job type ``slow_items``: its items are the
``params.items``; each appends ``start <item> <attempt>`` to the file ``params.trace``, works
``params.item_s`` seconds, then appends ``end <item> <attempt>`` and returns its result.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from infra.settings import Settings
from services.jobs.context import ItemDone, JobContext, JobHandlers
from services.lib.common import run_until_signalled, setup_logging
from services.processes.worker import Worker

ITEM_JOB = "slow_items"


def trace(path: str, line: str) -> None:
    with Path(path).open("a") as f:
        f.write(line + "\n")


def handlers() -> JobHandlers:
    registered = JobHandlers()

    @registered.register(ITEM_JOB)
    async def slow_items(ctx: JobContext) -> dict:
        p = ctx.params

        async def work(item: str) -> ItemDone:
            trace(p["trace"], f"start {item} {ctx.attempt}")
            await asyncio.sleep(p["item_s"])
            trace(p["trace"], f"end {item} {ctx.attempt}")
            return ItemDone({"item": item, "attempt": ctx.attempt})

        results = await ctx.run_items(p["items"], work)
        return {"items": len(results)}

    return registered


def main() -> None:
    setup_logging()
    settings = Settings()
    run_until_signalled(Worker(settings, handlers()).run)


if __name__ == "__main__":
    main()
