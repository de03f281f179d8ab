"""How every ffprobe and ffmpeg process is started: with as little as the machine lets it have.

ffmpeg parses untrusted bytes with a large amount of C; a file made to crash it (a 1 Hz WAV made
the loudness filter corrupt its heap) could as well be made to run code in it. So whatever runs it
(``infra.media.ffmpeg``'s ``run``, ``run_killable`` and ``piped``) starts it through
:func:`confined`, which gives the process:

- **A user of its own.** When the service runs as root the tool runs as ``MEDIA_USER``
  (``nobody``), without supplementary groups, and with ``PR_SET_NO_NEW_PRIVS`` (no set-uid program
  gives anything back). A service that runs as a normal user has nothing to drop, nor one that is
  root only inside a user namespace where ``nobody`` does not exist: the rest holds.
- **Only the files of its run.** The input, the output file and any other file the argument list
  names (a render's caption script) are opened here and inherited as descriptors; the argument
  list names them ``/proc/self/fd/N``. The tool needs no path through the service's directories,
  which may be closed to it, and cannot name another tenant's files through them. An output file
  belongs to the tool's user for the run and is given back afterwards, so that no later run can
  change what was stored.
- **No network.** A user and network namespace of its own when the kernel lets an unprivileged
  process make one (most do; else it runs in the machine's network, and the limits still hold).
- **Limits** (``setrlimit``): address space ``MEMORY_BYTES``, CPU time from the run's own timeout
  (every core busy for all of it, plus a little), ``OPEN_FILES`` descriptors, files written up
  to ``FILE_BYTES``, and no core dump (a crash writes nothing of the media anywhere).
- **A clean environment**: ``PATH`` and the locale, none of the service's settings (a key, a
  password) within its reach.
- **Death with its parent** (``PR_SET_PDEATHSIG``): no run outlives the process that asked for it.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import math
import os
import pwd
import re
import resource
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

MEDIA_USER = "nobody"  # the user a media tool runs as when the service runs as root
NOBODY_ID = 65534  # its id on a machine that has no such user
MEMORY_BYTES = 8 * 1024 ** 3  # address space: a 16000x16000 picture decodes in well under it
OPEN_FILES = 256  # descriptors: its input and outputs, libraries and fonts, threads' pipes
FILE_BYTES = 8 * 1024 ** 3  # the largest file it may write (a clip is megabytes)
CPU_SECONDS_UNTIMED = 6 * 3600  # CPU time of a run that has no timeout of its own
ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "TZ")  # what the tool inherits of the service's environment

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
# A file named inside another argument (``ass=filename=/.../captions.part:fontsdir=...``).
_NAMED_FILE_RE = re.compile(r"(?<![\w.])/[A-Za-z0-9._/-]+")


@dataclass(frozen=True, slots=True)
class Limits:
    memory_bytes: int
    cpu_seconds: int
    open_files: int = OPEN_FILES
    file_bytes: int = FILE_BYTES


def limits_for(timeout: float | None) -> Limits:
    """The limits of a run that may take ``timeout`` seconds: its CPU time is what every core
    could spend in that time, plus ten seconds (the wall-clock timeout stays the tighter bound;
    this one holds when nobody watches the clock)."""
    cpu = CPU_SECONDS_UNTIMED if timeout is None else math.ceil(timeout * (os.cpu_count() or 1)) + 10
    return Limits(MEMORY_BYTES, cpu)


@dataclass(frozen=True, slots=True)
class MediaUser:
    uid: int
    gid: int


def media_user() -> MediaUser | None:
    """Whom the tools run as: ``MEDIA_USER`` when this process is root and may become it, None when
    it is not root (a normal user has nothing to give up), or is the root of a user namespace in
    which that user does not exist or groups cannot be set (``unshare -r``)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(MEDIA_USER)
        user = MediaUser(entry.pw_uid, entry.pw_gid)
    except KeyError:
        user = MediaUser(NOBODY_ID, NOBODY_ID)
    return user if _may_become(user) else None


_CAP_SETGID, _CAP_SETUID = 6, 7


@functools.cache
def _may_become(user: MediaUser) -> bool:
    """Whether this process can take ``user``'s ids: it holds CAP_SETUID and CAP_SETGID, both ids
    exist in its user namespace, and it may set its groups."""
    try:
        status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
        capabilities = int(status["CapEff"].strip(), 16)
        setgroups = Path("/proc/self/setgroups").read_text().strip() if Path("/proc/self/setgroups").exists() \
            else "allow"
        mapped = all(_mapped(Path(f"/proc/self/{name}_map").read_text(), value)
                     for name, value in (("uid", user.uid), ("gid", user.gid)))
    except (OSError, KeyError, ValueError):
        return False
    able = capabilities >> _CAP_SETUID & 1 and capabilities >> _CAP_SETGID & 1
    return bool(able and mapped and setgroups == "allow")


def _mapped(table: str, value: int) -> bool:
    """Whether ``value`` lies in one of the ranges of a ``/proc/self/uid_map`` (``inside outside count``)."""
    for row in table.splitlines():
        inside, _, count = (int(x) for x in row.split())
        if inside <= value < inside + count:
            return True
    return False


@dataclass(slots=True)
class Launch:
    """A run ready to start: its argument list naming handed descriptors (``argv``), the keyword
    arguments of ``subprocess.Popen`` that confine it (``popen``)."""

    argv: list[str]
    popen: dict
    _fds: list[int] = field(default_factory=list)
    _given: list[int] = field(default_factory=list)

    def close(self) -> None:
        """Take the output files back and close this side's descriptors (the run has ended)."""
        for fd in self._given:
            with contextlib.suppress(OSError):
                os.fchown(fd, os.geteuid(), os.getegid())
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()
        self._given.clear()


def _hand(launch: Launch, path: str, flags: int, user: MediaUser | None) -> str:
    """Open ``path`` here and name it as the child will see it (a FIFO is opened without waiting
    for its writer: the tool's own opening waits, under its timeout)."""
    fd = os.open(path, flags | os.O_CLOEXEC | (os.O_NONBLOCK if not flags & os.O_WRONLY else 0), 0o644)
    launch._fds.append(fd)
    if flags & os.O_WRONLY and user is not None:
        os.fchown(fd, user.uid, user.gid)
        launch._given.append(fd)
    return f"/proc/self/fd/{fd}"


def _handed_argv(launch: Launch, args: list[str], user: MediaUser | None) -> None:
    """The input (``file:/...``), an ffmpeg run's output file (its last argument, when it is a
    path) and every existing file named inside another argument, as inherited descriptors."""
    argv = list(args)
    last = len(argv) - 1
    for k, arg in enumerate(argv):
        if arg.startswith("file:/"):
            argv[k] = "file:" + _hand(launch, arg[len("file:"):], os.O_RDONLY, user)
        elif k == last and argv[0] == "ffmpeg" and arg.startswith("/"):
            argv[k] = _hand(launch, arg, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, user)
        elif k > 0 and "/" in arg:
            argv[k] = _NAMED_FILE_RE.sub(
                lambda m: _hand(launch, m.group(0), os.O_RDONLY, user)
                if Path(m.group(0)).is_file() and not _is_system(m.group(0)) else m.group(0), arg)
    launch.argv = argv


def _is_system(path: str) -> bool:
    """A file of the machine's (fonts, libraries): readable by every user, named as it is."""
    return path.startswith(("/usr/", "/etc/", "/lib", "/proc/"))


@contextlib.contextmanager
def confined(args: list[str], timeout: float | None) -> Iterator[Launch]:
    """The confined launch of a checked argument list (see the module's text); leaving the block
    (once the process has ended) gives the output files back and closes the descriptors."""
    user = media_user()
    launch = Launch(list(args), {})
    try:
        _handed_argv(launch, args, user)
        env = {name: os.environ[name] for name in ENVIRONMENT if name in os.environ}
        launch.popen = {"pass_fds": tuple(launch._fds), "env": env, "close_fds": True,
                        "preexec_fn": _ChildSetup(limits_for(timeout))}
        if user is not None:
            launch.popen |= {"user": user.uid, "group": user.gid, "extra_groups": []}
        yield launch
    finally:
        launch.close()


class _ChildSetup:
    """Run in the child between fork and exec (after subprocess has changed its user): only
    system calls, nothing that takes a lock of the parent's threads."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def __call__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        for limit, value in ((resource.RLIMIT_CORE, 0), (resource.RLIMIT_AS, self.limits.memory_bytes),
                             (resource.RLIMIT_CPU, self.limits.cpu_seconds),
                             (resource.RLIMIT_NOFILE, self.limits.open_files),
                             (resource.RLIMIT_FSIZE, self.limits.file_bytes)):
            _, hard = resource.getrlimit(limit)
            value = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(limit, (value, value))
        libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET)  # refused where unprivileged namespaces are off: no harm
