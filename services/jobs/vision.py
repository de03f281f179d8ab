"""The behavioural stage of an analysis (``analysis_mode=behavioral``): what the person in the
picture does, seen window by window.

The video's first ``vision_max_duration_s`` (what was priced) is cut into windows of
``vision_window_s`` seconds. Each window is an item of the job (``JobContext.run_items``), as the
speech windows are: its frames are sampled (``infra.vision.frames``: ``vision_fps`` per second,
at most ``vision_max_side`` pixels), each frame is seen (``infra.vision.behaviour``: the largest
face, its body, its hands), and the window's rows (``domain.analysis.behavioral.frame_rows``,
labelled and bounded values) are the item's result, appended the moment the window is done. A
window that fails is recorded with its error and retried alone on the job's schedule (a window
that ran past ``vision_window_timeout_s``, too); a cancellation stops between two windows; a
resumed job skips the windows already done (their names are their time ranges). An unreadable
picture fails the window for good (another attempt reads the same file).

The seeing runs on the worker's executor (``ctx.run_blocking``), with the process's one set of
models (``Seer.shared``), loaded at the first window the worker sees.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from domain.analysis.behavioral import SeenVideo, pack_row, vision_item_name, vision_item_window, vision_windows
from infra.media.ffmpeg import MediaError, scrub
from infra.settings import Settings
from services.jobs.context import ItemDone, JobContext
from services.jobs.errors import PermanentJobError

NO_PICTURE = "the video has no picture"


class WindowTimeout(Exception):
    """A window's frames took longer than their bound to sample and see; another attempt may finish."""


def _see(path: Path, demuxer: str, start_ms: int, end_ms: int, settings: Settings) -> list[list]:
    from infra.vision.behaviour import VisionUnavailable, see_window

    frames = int(-(-(end_ms - start_ms) * settings.vision_fps // 1000)) + 1
    try:
        rows = see_window(path, demuxer, start_ms, end_ms, fps=settings.vision_fps,
                          max_side=settings.vision_max_side, max_frames=frames,
                          timeout=settings.vision_window_timeout_s)
    except MediaError as exc:
        if "took longer than" in str(exc):
            raise WindowTimeout(scrub(str(exc))) from None
        raise PermanentJobError(f"reading the frames: {scrub(str(exc))}") from None
    except VisionUnavailable as exc:
        raise PermanentJobError(f"seeing the frames: {exc}") from None
    return [pack_row(row) for row in rows]


async def see(ctx: JobContext, settings: Settings, path: Path, demuxer: str, duration_ms: int, has_picture: bool,
              *, progress: tuple[int, int] = (22, 58)) -> SeenVideo:
    """What the picture shows, window by window (see the module's text)."""
    fps = settings.vision_fps
    if not has_picture:
        return SeenVideo(fps=fps, note=NO_PICTURE)
    limit_ms = min(duration_ms, int(settings.vision_max_duration_s * 1000))
    windows = vision_windows(limit_ms, settings.vision_window_s * 1000)
    if not windows:
        return SeenVideo(fps=fps, note="the video is empty")
    names = [vision_item_name(k, w) for k, w in enumerate(windows)]
    await ctx.progress(progress[0], "watching the person in the picture")

    async def work(name: str) -> ItemDone:
        start, end = vision_item_window(name)
        await ctx.progress(ctx.job.progress, f"watching the person: window {names.index(name) + 1} of {len(names)}")
        rows = await ctx.run_blocking(partial(_see, path, demuxer, start, end, settings))
        return ItemDone({"rows": rows, "window": [start, end], "frames": len(rows)})

    results = await ctx.run_items(names, work, progress=progress)
    rows = tuple(row for name in names for row in (results[name].get("rows") or []))
    return SeenVideo(rows=rows, fps=fps, analysed_ms=limit_ms)
