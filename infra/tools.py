"""External tools: ffmpeg, ffprobe and espeak-ng, and what some tests read with (kcat, node, npm).

The analysis engine shells out to ffmpeg/ffprobe (``infra.media``) and the tests synthesise speech
with espeak-ng. On a fresh Debian/Ubuntu machine they are installed with apt, once: ``vaeo up``
installs them (and the caption font) before it starts the processes, and the test fixtures before
they generate media. The test of the analytics example (docs/analytics.md) reads the topic with
kcat, a plain Kafka client, and the AsyncAPI validator runs on Node.js, installed with npm: their
fixtures install them the same way.
Installing needs root; without it the error says which command to run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from collections.abc import Iterable

# executable -> Debian package that provides it
PACKAGES: dict[str, str] = {"ffmpeg": "ffmpeg", "ffprobe": "ffmpeg", "espeak-ng": "espeak-ng", "kcat": "kcat",
                            "node": "nodejs", "npm": "npm"}
MEDIA_TOOLS = ("ffmpeg", "ffprobe")
ALL_TOOLS = ("ffmpeg", "ffprobe", "espeak-ng")

# apt can take minutes on a cold mirror; longer than this means a stuck lock or network.
APT_UPDATE_TIMEOUT_S = 300.0
APT_INSTALL_TIMEOUT_S = 900.0

_lock = threading.Lock()
_updated = False


class ToolsUnavailable(RuntimeError):
    """A required executable is missing and could not be installed."""


def missing(tools: Iterable[str] = ALL_TOOLS) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


def _apt(args: list[str], timeout: float) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(["apt-get", *args], capture_output=True, text=True, timeout=timeout, env=env,
                              check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolsUnavailable(f"apt-get {' '.join(args)} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise ToolsUnavailable(f"apt-get {' '.join(args)} exited {done.returncode}: {' / '.join(tail)}")


def ensure_tools(tools: Iterable[str] = ALL_TOOLS) -> None:
    """Install the missing tools with apt (``apt-get update`` at most once per process)."""
    global _updated
    wanted = list(tools)
    with _lock:
        absent = missing(wanted)
        if not absent:
            return
        packages = sorted({PACKAGES[tool] for tool in absent})
        if shutil.which("apt-get") is None:
            raise ToolsUnavailable(f"missing {', '.join(absent)} and no apt-get here: install {' '.join(packages)}")
        if os.geteuid() != 0:
            raise ToolsUnavailable(
                f"missing {', '.join(absent)}: run `sudo apt-get install -y {' '.join(packages)}`")
        if not _updated:
            _apt(["update"], APT_UPDATE_TIMEOUT_S)
            _updated = True
        _apt(["install", "-y", "--no-install-recommends", *packages], APT_INSTALL_TIMEOUT_S)
        still = missing(wanted)
        if still:
            raise ToolsUnavailable(f"apt-get installed {' '.join(packages)} but {', '.join(still)} is still missing")


# The font burned captions are drawn with (infra.media.clips.FONTS_DIR), and the package that has it.
CAPTION_FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
CAPTION_FONT_PACKAGE = "fonts-dejavu-core"


def ensure_caption_font() -> None:
    """Install the captions' font with apt when it is missing (as the media tools are)."""
    with _lock:
        if os.path.isfile(CAPTION_FONT):
            return
        if shutil.which("apt-get") is None or os.geteuid() != 0:
            raise ToolsUnavailable(f"missing the caption font {CAPTION_FONT}: run "
                                   f"`sudo apt-get install -y {CAPTION_FONT_PACKAGE}`")
        global _updated
        if not _updated:
            _apt(["update"], APT_UPDATE_TIMEOUT_S)
            _updated = True
        _apt(["install", "-y", "--no-install-recommends", CAPTION_FONT_PACKAGE], APT_INSTALL_TIMEOUT_S)
        if not os.path.isfile(CAPTION_FONT):
            raise ToolsUnavailable(f"apt-get installed {CAPTION_FONT_PACKAGE} but {CAPTION_FONT} is still missing")


def ensure_media_tools() -> None:
    """What the worker needs: ffmpeg and ffprobe."""
    ensure_tools(MEDIA_TOOLS)
