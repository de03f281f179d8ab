"""How the stack tells a stopped broker from a running one (``infra.stack._running``)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

from infra.stack import _running


def test_a_child_that_exited_is_not_running_though_it_is_not_reaped_yet():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while _zombie_state(child.pid) != "Z":  # exited, not reaped: a signal 0 still reaches it
        assert time.monotonic() < deadline, "the child did not exit"
        time.sleep(0.01)
    os.kill(child.pid, 0)
    assert not _running(child.pid)
    assert not os.path.exists(f"/proc/{child.pid}")  # and reaped on the way


def test_a_running_child_and_a_process_that_is_not_a_child_are_running():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        assert _running(child.pid)
        assert _running(os.getppid())  # this process' parent: not a child of ours
    finally:
        child.kill()
        child.wait()
    assert not _running(child.pid)


def _zombie_state(pid: int) -> str:
    return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]


def test_a_service_started_by_a_test_ends_when_the_test_process_is_killed():
    """``tests.helpers.terminate_with_parent``: an interrupted benchmark leaves no service running."""
    parent = subprocess.Popen([sys.executable, "-c", (
        "import subprocess, sys, time\n"
        "from tests.helpers import terminate_with_parent\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'],"
        " preexec_fn=terminate_with_parent)\n"
        "print(child.pid, flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    try:
        child = int(parent.stdout.readline())
        assert _state(child) not in ("", "Z")  # running
        parent.kill()  # SIGKILL: no cleanup runs in the parent
        parent.wait()
        deadline = time.monotonic() + 10
        while _state(child) not in ("", "Z"):
            assert time.monotonic() < deadline, "the child outlived its parent"
            time.sleep(0.01)
    finally:
        parent.kill()


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return ""


def test_the_stack_ports_lie_outside_the_ephemeral_range():
    """An outgoing connection may hold any port of the kernel's ephemeral range: a server that
    starts again on such a port (the fault tests restart PostgreSQL) can find it taken."""
    from infra.settings import Settings
    from tests.support.stack import _base_settings

    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        low, high = (int(v) for v in f.read().split())
    fault = re.search(r"stack_pg_port=(\d+), stack_kafka_port=(\d+)",
                      open(os.path.join(os.path.dirname(__file__), "..", "integration", "test_faults.py")).read())
    ports = [Settings().stack_pg_port, Settings().stack_kafka_port, Settings().stack_kafka_port + 1,
             _base_settings().stack_pg_port, _base_settings().stack_kafka_port,
             *(int(p) for p in fault.groups())]
    assert not [p for p in ports if low <= p <= high], (ports, low, high)
