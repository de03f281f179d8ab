"""A job's long blocking pass that ends when the job is cancelled, not when the pass ends.

A job observes its cancellation between steps (``JobContext.checkpoint``); a single step that
decodes a whole file (finding speech in four hours of audio) would otherwise run to its end after
the job was cancelled, its ffmpeg and its thread holding the worker's CPU. ``until_cancelled``
runs such a pass on the worker's executor with a ``stop`` event, reads the job's stream every
``CANCEL_CHECK_S`` meanwhile, and sets ``stop`` as soon as the job is cancelled (or the calling task
is: a lost lease, a worker stopping); the pass kills its ffmpeg and returns at its next check, and
the job ends as cancelled.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from services.jobs.context import JobContext

CANCEL_CHECK_S = 1.0  # how often the job's stream is read while a pass runs
STOP_WAIT_S = 30.0  # how long a stopped pass is waited for (it ends at its next block: about a second)


async def until_cancelled(ctx: JobContext, fn: Callable[..., Any], *args: Any,
                          every_s: float = CANCEL_CHECK_S) -> Any:
    """``fn(*args, stop=event)``'s result, run on the worker's executor; ``JobCancelledError`` once
    the job is found cancelled, after ``stop`` was set and the pass has ended."""
    stop = threading.Event()
    work = asyncio.ensure_future(ctx.run_blocking(partial(fn, *args, stop=stop)))
    try:
        while True:
            done, _ = await asyncio.wait({work}, timeout=every_s)
            if done:
                return work.result()
            await ctx.checkpoint()
    except BaseException:
        stop.set()
        try:  # the pass's ffmpeg is gone before the job is reported stopped
            await asyncio.wait({work}, timeout=STOP_WAIT_S)
        except asyncio.CancelledError:
            pass
        if work.done() and not work.cancelled():
            work.exception()  # the pass's own Stopped: retrieved, the cancellation is the news
        raise
