"""``vaeo up`` says the service is up when it is: an API process answers ready for commands."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Callable

# How long ``vaeo up`` waits for an API process to take commands before it says the service is up: an API
# process imports the whole service first, seconds on a quiet machine, up to a minute on a busy one.
API_READY_TIMEOUT_S = 180


def wait_for_api(root: str, apis: list[subprocess.Popen], timeout_s: float, stopped: Callable[[], bool]) -> bool:
    """Poll ``root``/healthz until an API process answers it ready for commands (PostgreSQL answers, the
    link to Kafka is up): a user who pastes the curl line ``vaeo up`` prints is answered, not refused.
    False at the deadline, when every API process has exited (the restart loop takes over) or on Ctrl-C."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not stopped() and any(p.poll() is None for p in apis):
        try:
            with urllib.request.urlopen(f"{root}/healthz", timeout=2) as resp:  # noqa: S310 (our own loopback URL)
                if resp.status == 200 and json.loads(resp.read()).get("data", {}).get("kafka"):
                    return True
        except (OSError, ValueError):
            pass  # not listening yet, or answering 503 while PostgreSQL or Kafka is not linked
        time.sleep(0.2)
    return False
