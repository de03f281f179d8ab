"""Pure CPU work in a child process with a CPU-time limit, so that a runaway can be stopped.

A thread cannot be stopped, and a process pool's workers add up the CPU time of every task they
run; so each call gets a fresh process (``spawn``: forking a process that runs an event loop and
threads is unsafe), whose ``RLIMIT_CPU`` is set before the work starts. At the limit the kernel
sends ``SIGXCPU``, which ends the process; a process that survived it would be killed at the hard
limit a few seconds later. The caller's task being cancelled (a cancelled job, a lost lease, a
shutdown) kills the child at once.

Starting the child costs a Python start-up and the imports of the work's module (a few hundred
milliseconds); it suits steps of seconds, not small calls. Arguments and the result travel
pickled through a pipe; an exception raised by the work is raised again in the caller.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import resource
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

HARD_LIMIT_GRACE_S = 5


class CpuLimitExceeded(Exception):
    """The work used its whole CPU-time allowance and was stopped."""

    def __init__(self, cpu_seconds: int) -> None:
        super().__init__(f"stopped after its CPU-time limit of {cpu_seconds} s")
        self.cpu_seconds = cpu_seconds


class WorkerProcessDied(Exception):
    """The child ended without an answer (killed by a signal other than the CPU limit's, out of memory)."""


def _run_limited(conn: Connection, cpu_seconds: int, fn: Callable[..., Any], args: tuple, kwargs: dict) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + HARD_LIMIT_GRACE_S))
    try:
        try:
            outcome = ("ok", fn(*args, **kwargs))
        except Exception as exc:  # handed to the caller, which raises it again
            outcome = ("error", exc)
        try:
            conn.send(outcome)
        except Exception as exc:  # a result or exception that does not pickle
            conn.send(("error", RuntimeError(f"{type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def _receive(conn: Connection) -> tuple[str, Any] | None:
    try:
        return conn.recv()
    except EOFError:  # the child died before it answered
        return None


async def run_with_cpu_limit(fn: Callable[..., Any], *args: Any, cpu_seconds: int, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a fresh process limited to ``cpu_seconds`` of CPU time.

    ``fn`` must be importable by name (a module-level function) and its arguments picklable.
    Raises ``CpuLimitExceeded`` at the limit, ``WorkerProcessDied`` when the child ends without an
    answer, or what ``fn`` raised.
    """
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_run_limited, args=(sending, cpu_seconds, fn, args, kwargs), daemon=True,
                            name="vaeo-cpu-limited")
    child.start()
    sending.close()
    try:
        outcome = await asyncio.to_thread(_receive, receiving)
        await asyncio.to_thread(child.join)
    except BaseException:
        child.kill()  # cancelled: the work is abandoned, its process with it
        child.join(1)
        raise
    finally:
        receiving.close()
    if outcome is not None:
        status, value = outcome
        if status == "error":
            raise value
        return value
    if child.exitcode == -signal.SIGXCPU:
        raise CpuLimitExceeded(cpu_seconds)
    raise WorkerProcessDied(f"the process ended without an answer (exit code {child.exitcode})")
