"""System packages: what the project needs from the machine, and installing what is missing, once.

``NEEDS`` is the one table: each thing the project uses from the system (an executable on the
PATH, or a file), the Debian package that provides it, and who needs it (the service's processes,
the local stack's PostgreSQL or Kafka, the tests). ``provision`` installs the packages of what is
absent with one ``apt-get update`` and one ``apt-get install``; ``vaeo provision`` runs it for the
service (``make run`` and ``make test`` call it first, visibly), ``vaeo up`` and ``vaeo stack up``
run it before they start anything, and the test run's controller runs it before pytest-xdist
starts its workers. Later calls (a worker, a fixture, ``ensure`` before a render) find everything
present and take no lock; when something is missing they wait on one lock of the machine
(``LOCK_PATH``) and look again once they hold it, so two processes never run apt at once and the
second finds the first one's packages.

Installing needs root and apt-get; without them, or when apt cannot reach its mirrors, the error
names the command to run by hand.
"""

from __future__ import annotations

import fcntl
import glob
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SERVICE, POSTGRES, KAFKA, TESTS = "service", "postgres", "kafka", "tests"

# The font burned captions are drawn with (infra.media.clips.FONTS_DIR).
CAPTION_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
POSTGRES_INITDB = "/usr/lib/postgresql/*/bin/initdb"  # one directory per major version


@dataclass(frozen=True)
class Need:
    """One thing from the system: an executable on the PATH (a bare name) or a file (an absolute
    path; a glob where the path holds a version or an architecture), the Debian package that
    provides it, and who needs it (``SERVICE``, ``POSTGRES``, ``KAFKA`` or ``TESTS``)."""

    name: str
    package: str
    who: str

    def present(self) -> bool:
        if "/" in self.name:
            return bool(glob.glob(self.name))
        return shutil.which(self.name) is not None


NEEDS: tuple[Need, ...] = (
    Need("ffmpeg", "ffmpeg", SERVICE),  # every upload is probed, cut and rendered with it
    Need("ffprobe", "ffmpeg", SERVICE),
    Need(CAPTION_FONT, "fonts-dejavu-core", SERVICE),  # burned captions
    Need("/usr/lib/*/libGL.so.1", "libgl1", SERVICE),  # OpenCV's wheel (MediaPipe: infra/vision)
    Need("/usr/lib/*/libglib-2.0.so.0", "libglib2.0-0", SERVICE),
    Need("espeak-ng", "espeak-ng", SERVICE),  # the README's first talk; the tests' speech
    Need(POSTGRES_INITDB, "postgresql", POSTGRES),  # the local stack's database
    Need("java", "openjdk-17-jre-headless", KAFKA),  # the local stack's broker (and the tests' HTML checker)
    Need("mvn", "maven", KAFKA),  # resolves the broker's jars (infra/kafka/pom.xml)
    Need("kcat", "kcat", TESTS),  # the tests read the topic with another client than ours
    Need("node", "nodejs", TESTS),  # the AsyncAPI project's validator (tests/asyncapi_cli.py)
    Need("npm", "npm", TESTS),  # installs that validator, pinned by its lock file
)

LOCK_PATH = Path("/var/tmp/vaeo-provision.lock")
"""The machine's lock around installing. Its place is fixed, not under the stack directory:
what it guards (the machine's dpkg database) is one per machine, while stack directories differ
between checkouts, instances and tests (``VAEO_STACK_DIR``). ``/var/tmp`` exists on every Debian
machine and anyone may create a file there, so root and other users open the same lock."""

APT_LOCK_TIMEOUT_S = 300
"""How long apt waits for another apt (an unattended upgrade, another project's install) to let
go of its locks. Those take a few minutes at most; a lock held longer is a stuck apt (dpkg
waiting on a question in a terminal) that a person must look at, and then the error says so."""

APT_UPDATE_TIMEOUT_S = 300.0  # fetching the package lists; longer means a stalled network
APT_INSTALL_TIMEOUT_S = 900.0  # downloading and unpacking (ffmpeg and PostgreSQL are ~150 MB)
_LISTS_LOCKED = re.compile(r"Could not get lock (/var/lib/apt/lists/lock)\.?(?: It is (held by process [^\n]*))?")
_TAIL_LINES = 8
_PROGRESS = re.compile(r"\(Reading database \.\.\. \d+%")  # dpkg's progress, a line per 5 % without a terminal


class ProvisionError(RuntimeError):
    """A system package is missing and could not be installed (the message says what to run)."""


@dataclass(frozen=True)
class Apt:
    """How packages are installed: the apt-get to run, whether this process may (root), and how
    long to wait for another apt's lock."""

    executable: str = "apt-get"
    root: bool = field(default_factory=lambda: os.geteuid() == 0)
    lock_timeout_s: int = APT_LOCK_TIMEOUT_S
    retry_every_s: float = 5.0  # while apt's package lists are locked (below)


def wanted(*, local_postgres: bool = True, local_kafka: bool = True, tests: bool = False) -> tuple[Need, ...]:
    """The needs of the service, of the local stack's servers it runs, and of the tests."""
    who = {SERVICE: True, POSTGRES: local_postgres, KAFKA: local_kafka, TESTS: tests}
    return tuple(n for n in NEEDS if who[n.who])


def absent(needs: Iterable[Need]) -> list[Need]:
    return [n for n in needs if not n.present()]


def packages_of(needs: Iterable[Need]) -> list[str]:
    return sorted({n.package for n in needs})


def update_command(apt: Apt) -> list[str]:
    """``apt-get update``, failing when any list cannot be fetched (by default apt warns and exits 0,
    and the install then fails with "Unable to locate package")."""
    return [apt.executable, "-q", "-o", f"DPkg::Lock::Timeout={apt.lock_timeout_s}",
            "-o", "APT::Update::Error-Mode=any", "update"]


def install_command(apt: Apt, packages: Iterable[str]) -> list[str]:
    return [apt.executable, "-q", "-y", "--no-install-recommends", "-o", f"DPkg::Lock::Timeout={apt.lock_timeout_s}",
            "install", *packages]


def by_hand(packages: Iterable[str], root: bool) -> str:
    """The command a person runs to do what provisioning could not."""
    sudo = "" if root else "sudo "
    return f"{sudo}apt-get update && {sudo}apt-get install -y --no-install-recommends {' '.join(packages)}"


def refusal(missing: list[Need], apt: Apt, apt_found: bool) -> str | None:
    """Why this process cannot install ``missing`` (no apt-get, not root), or None."""
    names, packages = ", ".join(n.name for n in missing), packages_of(missing)
    if not apt_found:
        return (f"missing {names}, and this machine has no {apt.executable}: install the packages that "
                f"provide them (Debian: {' '.join(packages)})")
    if not apt.root:
        return f"missing {names}; installing needs root: run `{by_hand(packages, root=False)}`"
    return None


def failure(step: str, code: int, tail: str, packages: list[str], apt: Apt) -> str:
    """The error for an apt-get run that failed: what failed, apt's last words, and what to run."""
    if code < 0:
        what = f"`apt-get {step}` did not finish within its time"
    elif step == "update":
        what = (f"`apt-get update` could not fetch the package lists (exit {code}): is the network up and the "
                f"mirror reachable?")
    else:
        what = f"`apt-get install {' '.join(packages)}` failed (exit {code})"
    return f"{what}\n{tail}\nonce that is fixed, run `{by_hand(packages, apt.root)}`"


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def provision(needs: Iterable[Need], *, apt: Apt | None = None, lock_path: Path = LOCK_PATH,
              say: Callable[[str], None] = _say) -> list[str]:
    """Install the packages of the needs that are absent; the packages installed (none when all
    were present: then no lock is taken)."""
    needs = tuple(needs)
    if not absent(needs):
        return []
    apt = apt or Apt()
    refused = refusal(absent(needs), apt, shutil.which(apt.executable) is not None)
    if refused:
        raise ProvisionError(refused)
    with machine_lock(lock_path, say):
        missing = absent(needs)  # another process may have installed them while this one waited
        if not missing:
            return []
        packages = packages_of(missing)
        say(f"vaeo: installing {' '.join(packages)} (for {', '.join(n.name for n in missing)}) with apt-get; "
            f"if another apt holds its lock, this waits for it, {apt.lock_timeout_s} s at most")
        _update(apt, packages, say)
        code, tail = run_apt(install_command(apt, packages), apt.lock_timeout_s + APT_INSTALL_TIMEOUT_S, say)
        if code != 0:
            raise ProvisionError(failure("install", code, tail, packages, apt))
        still = absent(needs)
        if still:
            raise ProvisionError(f"apt-get installed {' '.join(packages)} but {', '.join(n.name for n in still)} "
                                 f"is still missing")
        return packages


def ensure(*packages: str) -> None:
    """Provision the needs these packages provide (a process that may run alone: a worker
    rendering captions, a fixture making media); nothing to do, and no lock, once provisioned."""
    unknown = set(packages) - {n.package for n in NEEDS}
    if unknown:
        raise ValueError(f"not in infra.provision.NEEDS: {sorted(unknown)}")
    provision(n for n in NEEDS if n.package in packages)


@contextmanager
def machine_lock(path: Path, say: Callable[[str], None]) -> Iterator[None]:
    """The machine's installing lock (``LOCK_PATH``), held until the block ends."""
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            say(f"vaeo: another process is installing system packages ({path}); waiting for it")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _update(apt: Apt, packages: list[str], say: Callable[[str], None]) -> None:
    """``apt-get update``, waiting while another apt holds the package lists' lock: apt's own lock
    timeout covers dpkg's locks but not that one (apt 2.6), so the command is tried again, every
    ``retry_every_s``, until the same bound."""
    deadline = time.monotonic() + apt.lock_timeout_s
    told = False
    while True:
        echo = say if not told else (lambda line: None if "/var/lib/apt/lists/" in line else say(line))
        code, tail = run_apt(update_command(apt), apt.lock_timeout_s + APT_UPDATE_TIMEOUT_S, echo)
        if code == 0:
            return
        locked = _LISTS_LOCKED.search(tail)
        if locked is None:
            raise ProvisionError(failure("update", code, tail, packages, apt))
        if time.monotonic() >= deadline:
            raise ProvisionError(f"another apt kept {locked.group(1)} locked for {apt.lock_timeout_s} s "
                                 f"({locked.group(2) or 'held'}); when it is done, run `{by_hand(packages, apt.root)}`")
        if not told:
            say(f"vaeo: waiting for another apt to release {locked.group(1)} ({locked.group(2) or 'held'}), "
                f"{apt.lock_timeout_s} s at most")
            told = True
        time.sleep(apt.retry_every_s)


def run_apt(command: list[str], timeout_s: float, say: Callable[[str], None]) -> tuple[int, str]:
    """Run an apt-get command, its output passed on as it comes (apt says what it waits for), and
    return its exit code (negative when killed at ``timeout_s``) and its last lines."""
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    tail: deque[str] = deque(maxlen=_TAIL_LINES)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                          text=True, env=env) as proc:
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                if not _PROGRESS.match(line):
                    say("  | " + line.rstrip())
                    tail.append(line.rstrip())
        finally:
            timer.cancel()
        return proc.wait(), "\n".join(tail)
