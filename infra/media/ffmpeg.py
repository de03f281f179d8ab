"""The only way this project runs ffprobe and ffmpeg: the argument lists, their check, the runs.

Only the uploaded bytes are ever read. ffmpeg opens whatever its demuxers name: an HLS or concat
playlist, an image sequence or a subtitle format would make it read other local files (another
workspace's media, the host's) and return their text as this upload's transcript. So every run
goes through :func:`ffprobe_argv` / :func:`ffmpeg_argv`, the only builders of an argument list,
and :func:`run` and :func:`run_killable` refuse one that did not (:func:`checked_argv`): the input
is opened with ``-protocol_whitelist file`` and ``-format_whitelist`` of the real audio/video
containers in ``CONTAINERS``, addressed as ``file:<absolute path>``; the probe names the demuxer it
accepted, and every later run forces it with ``-f`` (a file swapped for a playlist afterwards is
read as that container, and fails).

Never more media than was priced is decoded, whatever the file's timestamps say: every ffmpeg run
carries a read limit (``-t``), and since ``-t`` counts timestamps, which the file chooses (six hours
of audio stamped as 21 s), every decoded stream also starts its filters with a bound that counts
what was really decoded: :func:`audio_bound` (samples, after a resampling that also keeps rates no
filter was written for, 1 Hz say, away from every filter) and :func:`video_bound` (frames, at most
``MAX_FRAME_RATE`` a second). :func:`checked_argv` refuses a run that decodes a stream without it.

Every call is a subprocess with an argument list (never a shell) and a timeout, started confined
(``infra.media.confine``: an unprivileged user when the service is root, the run's files handed as
descriptors, no network, resource limits, a clean environment); any failure is a ``MediaError``
whose message names the tool and ends with ffmpeg's own last lines. :func:`run`
blocks (the worker calls it through ``JobContext.run_blocking``, the API through a thread);
:func:`run_killable` is the asyncio run of clip work: its own process group, a kill of the whole
group on timeout or when the job's task is cancelled, and at most ``slots`` ffmpeg processes of a
worker at once.

Messages reach clients (a 415/400 refusal, a failed job's error): ffmpeg derives paths from its
input (a playlist's missing segment is named by its absolute path), so ``scrub`` removes every
path-like word from its text, not only the input argument, and the ``[demuxer @ 0x...]`` prefixes
with their memory addresses.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from domain.videos import MAX_FRAME_RATE
from infra.media.confine import Launch, confined

# The demuxers a media file may be read with (ffmpeg's short names) and the extension its stored
# copy gets: containers of real audio and video, none of which opens another file (the mov
# demuxer's external data references are off by default and stay off). Never hls, concat, image2
# and other image sequences, subtitle or playlist formats, tee, lavfi, data or raw text readers.
CONTAINERS: dict[str, str] = {
    "mov": ".mp4",  # mov, mp4, m4a, 3gp, 3g2, mj2
    "matroska": ".mkv",  # matroska, webm
    "avi": ".avi",
    "flv": ".flv",
    "mpegts": ".ts",
    "mpeg": ".mpg",
    "asf": ".asf",  # wmv, wma
    "mp3": ".mp3",
    "wav": ".wav",
    "ogg": ".ogg",
    "flac": ".flac",
    "aac": ".aac",
    "aiff": ".aiff",
}
FORMAT_WHITELIST = ",".join(CONTAINERS)
PROTOCOL_WHITELIST = "file"


class MediaError(Exception):
    """A media file could not be read or analysed; the message is fit for a job's error_message."""


class UnsupportedContainer(MediaError):
    """The file is not in one of the accepted containers (a playlist, an image, subtitles, ...)."""

    def __init__(self, message: str, format_name: str | None = None) -> None:
        super().__init__(message)
        self.format_name = format_name


class DamagedMedia(MediaError):
    """The container's packets end early or are corrupt (a truncated or zero-filled file)."""


class Stopped(MediaError):
    """A run was stopped before its end because nobody wants its result any more (its job was
    cancelled)."""



def last_lines(text: str, lines: int = 4) -> str:
    kept = [line.strip() for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept)  # no slash: a client may take any slash for a path


def _input_url(path: str | Path) -> str:
    """``file:`` and an absolute path: a name with a colon is never taken for another protocol."""
    return "file:" + str(Path(path).absolute())


def _input_options(demuxer: str | None) -> list[str]:
    if demuxer is not None and demuxer not in CONTAINERS:
        raise UnsupportedContainer(f"{demuxer} is not an accepted container", demuxer)
    return ["-protocol_whitelist", PROTOCOL_WHITELIST, "-format_whitelist", FORMAT_WHITELIST,
            *(["-f", demuxer] if demuxer else [])]


def ffprobe_argv(path: str | Path, demuxer: str | None, *options: str) -> list[str]:
    """ffprobe on one file: the whitelists, ``-f demuxer`` when it is known (None: the probe that
    identifies it, among the whitelisted demuxers only), then ``options``."""
    return ["ffprobe", "-v", "error", *_input_options(demuxer), *options, _input_url(path)]


def ffmpeg_argv(path: str | Path, demuxer: str, limit_ms: int, outputs: list[str], *,
                loglevel: str = "error", extra_input: tuple[str, ...] = ()) -> list[str]:
    """ffmpeg reading one accepted file: the whitelists, ``-f demuxer`` (required) and the read
    limit ``-t`` (required: no run processes more media than was priced), ``extra_input`` (more
    input options, such as a clip's seek ``-ss``), then ``outputs``."""
    if not demuxer:
        raise MediaError("an ffmpeg run needs the demuxer its probe accepted")
    if limit_ms is None or limit_ms <= 0:
        raise MediaError("an ffmpeg run needs a positive read limit")
    return ["ffmpeg", "-nostdin", "-hide_banner", "-nostats", "-loglevel", loglevel, *_input_options(demuxer),
            "-t", f"{limit_ms / 1000:.3f}", *extra_input, "-i", _input_url(path), *outputs]


# Every decoded audio stream is resampled to this rate before any other filter sees it (a stream's
# own rate may be anything a container can state: 1 Hz crashed the loudness filter).
DECODE_RATE = 48_000


def audio_bound(limit_ms: int, *, rate: int = DECODE_RATE, mix: int | None = None) -> str:
    """The head of a decoded audio stream's filters: resampled to ``rate``, ended after
    ``limit_ms`` worth of samples (``atrim=end_sample``: a count of what was decoded, where ``-t``
    trusts the file's timestamps), and, for ``mix`` channels without a layout (ffmpeg's own
    mixing needs one: 64 unnamed channels), mixed down to mono with equal weights."""
    chain = f"aresample={rate},atrim=end_sample={max(1, limit_ms * rate // 1000)}"
    if mix:
        chain += ",pan=mono|c0<" + "+".join(f"c{k}" for k in range(mix))
    return chain


def video_bound(limit_ms: int) -> str:
    """The head of a decoded video stream's filters: ended after ``limit_ms`` worth of frames at
    ``MAX_FRAME_RATE`` (a count, where ``-t`` trusts the timestamps): a file whose timestamps lie
    decodes no more frames than an honest one of the priced duration could hold."""
    return f"trim=end_frame={max(1, math.ceil(limit_ms * MAX_FRAME_RATE / 1000))}"


_AUDIO_BOUND_RE = re.compile(r"aresample=(\d+),atrim=end_sample=(\d+)")
_VIDEO_BOUND_RE = re.compile(r"trim=end_frame=(\d+)")


def _decodes(outputs: list[str], kind: str) -> bool:
    """Whether a run maps the input's streams of ``kind`` (a, v) for decoding (not a stream copy)."""
    copied = any(outputs[k] in ("-c", "-codec") and outputs[k + 1] == "copy" for k in range(len(outputs) - 1))
    mapped = any(outputs[k] == "-map" and outputs[k + 1].startswith(f"0:{kind}") for k in range(len(outputs) - 1))
    in_graph = any(f"[0:{kind}" in arg for arg in outputs)
    return in_graph or (mapped and not copied)


def _bounded(outputs: list[str], limit_s: float) -> bool:
    """Every decoded stream passes its bound, which decodes no more than the read limit."""
    text = " ".join(outputs)
    if not any(arg in ("-map", "-filter_complex") for arg in outputs):
        return False  # ffmpeg's own choice of streams would decode them unbounded
    for kind, pattern, per_second in (("a", _AUDIO_BOUND_RE, None), ("v", _VIDEO_BOUND_RE, MAX_FRAME_RATE)):
        if not _decodes(outputs, kind):
            continue
        found = pattern.findall(text)
        if not found:
            return False
        for groups in found:
            rate, count = (int(groups[0]), int(groups[1])) if per_second is None else (per_second, int(groups))
            if count > math.ceil(limit_s * rate) + 1:
                return False
    return True


def checked_argv(args: list[str]) -> list[str]:
    """The argument list if it reads its input the one safe way; MediaError otherwise.

    Every ffprobe/ffmpeg run of the project passes here (``_run``), so a call built by hand,
    without the whitelists, a forced demuxer (ffmpeg) or a read limit (ffmpeg), or whose decoded
    streams miss their bound (``audio_bound``, ``video_bound``), fails loudly."""
    tool = args[0] if args else ""
    if tool not in ("ffprobe", "ffmpeg"):
        raise MediaError(f"not a media tool: {tool!r}")

    def value(option: str) -> str | None:
        return args[args.index(option) + 1] if option in args[:-1] else None

    inputs = [k for k, arg in enumerate(args) if arg == "-i"]
    if tool == "ffmpeg" and len(inputs) != 1:
        raise MediaError("an ffmpeg run reads exactly one input")
    before_input = args[:inputs[0]] if inputs else args[:-1]
    source = args[inputs[0] + 1] if inputs else args[-1]
    ok = (value("-protocol_whitelist") == PROTOCOL_WHITELIST and value("-format_whitelist") == FORMAT_WHITELIST
          and "-protocol_whitelist" in before_input and "-format_whitelist" in before_input
          and source.startswith("file:/"))
    if tool == "ffmpeg":
        ok = ok and value("-f") in CONTAINERS and "-t" in before_input and "-f" in before_input
        if ok and not _bounded(args[inputs[0] + 2:], _seconds(value("-t"))):
            raise MediaError(f"{tool} refused: a decoded stream must pass its bound (audio_bound, video_bound)")
    elif "-f" in before_input:
        ok = ok and value("-f") in CONTAINERS
    if not ok:
        raise MediaError(f"{tool} refused: its input must be read through the container whitelist")
    return args


def _seconds(value: str | None) -> float:
    try:
        return float(value or "")
    except ValueError:
        return 0.0


@contextlib.contextmanager
def _launch(args: list[str], timeout: float | None, what: str) -> Iterator[Launch]:
    """The confined launch of a checked list; a file of the run that cannot be opened is a MediaError."""
    checked_argv(args)
    with contextlib.ExitStack() as stack:
        try:
            launch = stack.enter_context(confined(args, timeout))
        except FileNotFoundError as exc:
            raise MediaError(f"{what}: a file of the run does not exist") from exc
        except OSError as exc:
            raise MediaError(f"{what}: a file of the run cannot be opened ({exc.strerror})") from exc
        yield launch


def run(args: list[str], timeout: float, what: str) -> subprocess.CompletedProcess:
    with _launch(args, timeout, what) as launch:
        try:
            done = subprocess.run(launch.argv, capture_output=True, timeout=timeout, check=False,
                                  stdin=subprocess.DEVNULL, **launch.popen)
        except FileNotFoundError as exc:
            raise MediaError(f"{what}: {args[0]} is not installed") from exc
        except subprocess.TimeoutExpired as exc:
            raise MediaError(f"{what}: {args[0]} took longer than {timeout:.0f} s") from exc
    done.args = args  # as built: a message names the run's files by the paths it was given
    if done.returncode != 0:
        text = without_paths(done.stderr, [*args, *launch.argv])
        if "Format not on whitelist" in text:
            found = _REFUSED_FORMAT_RE.search(done.stderr.decode("utf-8", "replace"))
            name = found.group(1) if found else None
            raise UnsupportedContainer(f"{what}: the file is {'a ' + name + ' file' if name else 'in a format'}, "
                                       f"not one of the accepted audio and video containers", name)
        raise MediaError(f"{what}: {args[0]} exited {done.returncode}: {last_lines(text)}")
    return done


_REFUSED_FORMAT_RE = re.compile(r"\[([a-z0-9_]+)(?:,[a-z0-9_,]+)? @ 0x[0-9a-f]+\] Format not on whitelist")
# "[hls @ 0x55d0c3a4b280] ": the memory address tells a client nothing and is dropped.
_CONTEXT_RE = re.compile(r"\[([^\]@\s]+) @ 0x[0-9a-fA-F]+\]")
# A word with a slash or backslash: a path, a URL, a file: name... A plain ratio (25/1, N/A) stays.
_PATHLIKE_RE = re.compile(r"[^\s'\"`()\[\]<>,;]*[/\\][^\s'\"`()\[\]<>,;]*")
_HARMLESS_RE = re.compile(r"\d+(?:\.\d+)?/\d+(?:\.\d+)?|N/A|[A-Za-z]/[A-Za-z]")


def scrub(text: str) -> str:
    """ffmpeg's words without any path: each path-like word becomes ``<path>``."""
    text = _CONTEXT_RE.sub(r"[\1]", text)
    return _PATHLIKE_RE.sub(lambda m: m.group(0) if _HARMLESS_RE.fullmatch(m.group(0)) else "<path>", text)


def without_paths(stderr: bytes, args: list[str]) -> str:
    """ffmpeg names its input by path; a refusal reaches clients (400/415, a job's error), where
    the server's directories have no business: the input becomes ``<input>``, and any other path
    ffmpeg derived from it (a playlist's segments, say) ``<path>``."""
    text = stderr.decode("utf-8", "replace")
    for arg in args[1:]:
        if arg.startswith("/") or arg.startswith("file:"):
            text = text.replace(arg, "<input>")
    return scrub(text)



async def run_killable(args: list[str], timeout: float, what: str,
                       slots: asyncio.Semaphore | None = None) -> None:
    """Run a checked ffmpeg argument list without blocking the loop: at most ``slots`` at once,
    in a process group of its own, killed with all its children when ``timeout`` passes or the
    calling task is cancelled (a cancelled job, a lost lease, a worker shutting down), and by the
    kernel when the worker itself dies. Failures are ``MediaError`` with ffmpeg's last lines and no
    path."""
    checked_argv(args)
    async with slots if slots is not None else contextlib.nullcontext():
        with _launch(args, timeout, what) as launch:
            try:
                proc = await asyncio.create_subprocess_exec(*launch.argv, stdin=subprocess.DEVNULL,
                                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                                            start_new_session=True, **launch.popen)
            except FileNotFoundError as exc:
                raise MediaError(f"{what}: {args[0]} is not installed") from exc
            try:
                _, stderr = await asyncio.wait_for(proc.communicate(), timeout)
            except TimeoutError:
                await _kill_group(proc)
                raise MediaError(f"{what}: {args[0]} took longer than {timeout:g} s") from None
            except BaseException:
                await asyncio.shield(_kill_group(proc))
                raise
    if proc.returncode != 0:
        text = without_paths(stderr or b"", [*args, *launch.argv])
        raise MediaError(f"{what}: {args[0]} exited {proc.returncode}: {last_lines(text)}")


STDERR_KEPT = 16_384  # bytes of a piped ffmpeg's messages kept for an error
STOP_CHECK_S = 0.2  # how often a piped run's watchdog looks at its caller's stop


class PipedRun:
    """A checked ffmpeg run whose output a blocking reader takes from its pipe as it decodes (the
    frame sampler, the speech finder), made by ``piped``: ``proc.stdout`` to read, ``expired`` set
    once the watchdog killed it at its timeout, ``stopped`` once it killed it because the caller's
    ``stop`` was set, ``messages()`` ffmpeg's last ``STDERR_KEPT`` bytes, paths removed, once it
    has ended."""

    def __init__(self, args: list[str], proc: subprocess.Popen, launched: list[str] | None = None):
        self.args, self.proc = args, proc
        self.launched = launched or args  # the list as started: its files named as descriptors
        self.expired = threading.Event()
        self.stopped = threading.Event()
        self._kept: list[bytes] = []
        self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
        self._drain.start()

    def _drain_stderr(self) -> None:
        """Drained on a thread, so a chatty ffmpeg (a damaged file's decoding errors can run to
        megabytes) never blocks on a full pipe while its output is read; only the end is kept."""
        kept = b""
        while chunk := self.proc.stderr.read(65536):
            kept = (kept + chunk)[-STDERR_KEPT:]
        self._kept.append(kept)

    def expire(self) -> None:
        self.expired.set()
        self.proc.kill()

    def stop(self) -> None:
        self.stopped.set()
        self.proc.kill()

    def watch(self, timeout: float | None, stop: threading.Event | None, ended: threading.Event) -> None:
        """The watchdog: kill the run at ``timeout``, or as soon as ``stop`` is set (checked
        every ``STOP_CHECK_S``), whichever comes first; nothing once the run has ``ended``."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not ended.wait(STOP_CHECK_S if stop is not None else None if deadline is None
                             else max(0.0, deadline - time.monotonic())):
            if stop is not None and stop.is_set():
                self.stop()
                return
            if deadline is not None and time.monotonic() >= deadline:
                self.expire()
                return

    def messages(self) -> str:
        self._drain.join(5)
        return without_paths(b"".join(self._kept), [*self.args, *self.launched])


@contextlib.contextmanager
def piped(args: list[str], timeout: float | None, stop: threading.Event | None = None) -> Iterator[PipedRun]:
    """Start a checked ffmpeg argument list with its output on a pipe, for a blocking reader on a
    worker thread. The run is in a process group of its own and gets SIGKILL from the kernel when
    the worker dies, even by kill -9 (a reader's death alone would end it only at its next write to
    the closed pipe, and between two sparse samples it may decode for long); a watchdog kills it
    after ``timeout`` seconds (``expired`` says so, the reader raises) or within ``STOP_CHECK_S``
    of ``stop`` being set (``stopped``); leaving the block kills it if it still runs and closes
    its pipes."""
    with _launch(args, timeout, "decoding") as launch:
        proc = subprocess.Popen(launch.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, **launch.popen)
        run = PipedRun(args, proc, launch.argv)
        ended = threading.Event()
        watchdog = None
        if timeout is not None or stop is not None:
            watchdog = threading.Thread(target=run.watch, args=(timeout, stop, ended), daemon=True)
            watchdog.start()
        try:
            yield run
        finally:
            ended.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            run._drain.join(5)
            proc.stderr.close()


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    await proc.wait()
