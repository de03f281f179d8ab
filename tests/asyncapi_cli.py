"""The AsyncAPI project's own validator (``asyncapi validate``), installed by the tests themselves.

``@asyncapi/cli`` is pinned by ``tests/tools/asyncapi/package.json`` and its ``package-lock.json``
(every package of its tree, with its integrity hash) and installed with ``npm ci`` into
``~/.cache/vaeo/asyncapi-cli/<first 12 hex digits of the lock's SHA-256>/``, once per machine: a
file lock makes a second process wait for the first one's install and find it (as the local stack
builds SeaweedFS, ``infra.stack.seaweedfs_binary``). A new lock is a new folder. The install takes
minutes and about 1.5 GB from a cold npm cache (``install-seconds`` in the folder says how long it
took there). Node.js and npm come from apt when missing (``infra.provision``). The CLI's usage metrics
are turned off: a test sends nothing anywhere.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from infra import provision

TOOL = Path(__file__).resolve().parent / "tools" / "asyncapi"
CACHE = Path.home() / ".cache" / "vaeo" / "asyncapi-cli"
INSTALL_TIMEOUT_S = 1800.0  # 7 minutes measured from a cold npm cache on a shared two-core machine
VALIDATE_TIMEOUT_S = 300.0


def install_dir() -> Path:
    return CACHE / hashlib.sha256((TOOL / "package-lock.json").read_bytes()).hexdigest()[:12]


def cli() -> Path:
    """The ``asyncapi`` executable of the pinned version, installed first if it is not yet."""
    target = install_dir()
    binary = target / "node_modules" / ".bin" / "asyncapi"
    if (target / ".complete").exists():
        return binary
    target.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{target.name}.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not (target / ".complete").exists():
            _install(target)
    return binary


def _install(target: Path) -> None:
    provision.ensure("nodejs", "npm")
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(TOOL / name, target / name)
    started = time.monotonic()
    # --ignore-scripts: nothing of the tree runs at install (the CLI's own postinstall only sets up
    # shell completion, and one dependency's reports its download).
    done = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
                          cwd=target, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"npm ci of {TOOL} failed ({done.returncode}):\n{(done.stdout + done.stderr)[-3000:]}")
    (target / "install-seconds").write_text(f"{time.monotonic() - started:.0f}\n")
    (target / ".complete").touch()


def validate(document: Path) -> subprocess.CompletedProcess[str]:
    """``asyncapi validate`` of ``document``, failing on warnings as well as errors."""
    binary = cli()
    metrics = install_dir() / "metrics.json"
    metrics.write_text(json.dumps({"analyticsEnabled": "false", "infoMessageShown": "true", "userID": "vaeo-tests"}))
    env = dict(os.environ, ASYNCAPI_METRICS_CONFIG_PATH=str(metrics))
    return subprocess.run([str(binary), "validate", str(document), "--fail-severity", "warn"], capture_output=True,
                          text=True, timeout=VALIDATE_TIMEOUT_S, env=env, check=False)
