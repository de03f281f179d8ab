"""services.lib.cpu_limit: work in a fresh child process under RLIMIT_CPU (real processes, no servers)."""

from __future__ import annotations

import asyncio
import os

import pytest

from services.lib.cpu_limit import CpuLimitExceeded, run_with_cpu_limit


def spin_forever() -> None:
    while True:
        pass


def add(a: int, b: int, *, times: int = 1) -> tuple[int, int]:
    return (a + b) * times, os.getpid()


def refuse(reason: str) -> None:
    raise ValueError(reason)


def write_pid_and_spin(path: str) -> None:
    with open(path, "w") as f:
        f.write(str(os.getpid()))
    spin_forever()


async def test_the_result_comes_back_from_another_process() -> None:
    value, pid = await run_with_cpu_limit(add, 2, 3, times=4, cpu_seconds=5)
    assert value == 20 and pid != os.getpid()


async def test_an_exception_of_the_work_is_raised_in_the_caller() -> None:
    with pytest.raises(ValueError, match="not a caption"):
        await run_with_cpu_limit(refuse, "not a caption", cpu_seconds=5)


async def test_a_runaway_is_stopped_at_its_cpu_time_limit() -> None:
    with pytest.raises(CpuLimitExceeded) as stopped:
        await run_with_cpu_limit(spin_forever, cpu_seconds=1)
    assert stopped.value.cpu_seconds == 1


async def test_cancelling_the_caller_kills_the_child(tmp_path) -> None:
    pid_file = tmp_path / "pid"
    task = asyncio.create_task(run_with_cpu_limit(write_pid_and_spin, str(pid_file), cpu_seconds=60))
    for _ in range(300):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.05)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped
