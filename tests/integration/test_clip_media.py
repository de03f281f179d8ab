"""Clip media work on real ffmpeg and real (short) media: runs killed with their process group on
cancellation, on timeout and when the worker dies; at most ``slots`` runs at once; outputs that
fail their probe refused; captions that stay inside the frame of every template."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from domain.clip_overlay import ass_script, title_layout
from domain.clips import SYSTEM_TEMPLATES, Caption, wrap_words
from infra.media.clips import (
    CLIP_TOLERANCE_MS,
    FONTS_DIR,
    caption_font,
    check_clip,
    clip_tolerance_ms,
    cut_argv,
    render_argv,
    thumbnail_argv,
)
from infra.media.ffmpeg import MediaError, run_killable
from infra.media.probe import probe
from tests.media_factory import LINES, ffmpeg_processes, run
from tests.support.clip_media import long_render
from tests.support.stack import ROOT


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """20 s of moving 640x360 video with a tone: long enough that a 1280x720 render takes seconds."""
    path = tmp_path_factory.mktemp("clipmedia") / "source.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=20", "-f", "lavfi", "-i",
         "sine=frequency=440:sample_rate=48000:duration=20", "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(path)])
    return path


@pytest.fixture(scope="module")
def gray(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gray") / "gray.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=0x404040:s=640x360:r=25:d=2", "-c:v", "libx264",
         "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(path)])
    return path


def ffmpeg_running(marker: str) -> list[int]:
    return ffmpeg_processes(marker)


async def wait_started(marker: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not ffmpeg_running(marker):
        assert time.monotonic() < deadline, "ffmpeg never started"
        await asyncio.sleep(0.02)


def test_ffmpeg_has_the_filters_and_encoders_clips_use():
    filters = subprocess.run(["ffmpeg", "-hide_banner", "-filters"], capture_output=True, text=True).stdout
    named = {line.split()[1] for line in filters.splitlines() if len(line.split()) > 2}
    assert {"ass", "scale", "crop", "split", "boxblur", "overlay", "setsar"} <= named  # libass for the captions
    encoders = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
    for encoder in ("libx264", "aac", "libvpx-vp9", "libopus", "libmp3lame", "mjpeg"):
        assert f" {encoder} " in encoders, encoder
    assert Path(FONTS_DIR, "DejaVuSans-Bold.ttf").is_file()


async def test_cancelling_the_task_kills_ffmpeg_at_once(source, tmp_path):
    task = asyncio.create_task(run_killable(long_render(source, tmp_path, "cancelme"), 120, "render"))
    await wait_started("cancelme-out")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ffmpeg_running("cancelme-out") == []


async def test_a_run_past_its_timeout_is_killed_and_says_so(source, tmp_path):
    t0 = time.monotonic()
    with pytest.raises(MediaError, match="took longer than 0.5 s"):
        await run_killable(long_render(source, tmp_path, "slow"), 0.5, "rendering the clip")
    assert time.monotonic() - t0 < 5 and ffmpeg_running("slow-out") == []


async def test_slots_bound_the_ffmpeg_processes_running_at_once(source, tmp_path):
    slots = asyncio.Semaphore(1)
    args = [cut_argv(source, "mov", 0, 8_000, "webm", tmp_path / f"slot{k}-out.webm") for k in range(2)]
    tasks = [asyncio.create_task(run_killable(a, 120, "cut", slots)) for a in args]
    most = 0
    while not all(t.done() for t in tasks):
        most = max(most, len(ffmpeg_running("slot")))
        await asyncio.sleep(0.02)
    await asyncio.gather(*tasks)
    assert most == 1
    for k in range(2):
        assert check_clip(tmp_path / f"slot{k}-out.webm", "webm", 8_000).duration_ms > 0


async def test_ffmpeg_dies_with_a_worker_killed_by_sigkill(source, tmp_path):
    script = tmp_path / "victim.py"
    script.write_text(textwrap.dedent(f"""
        import asyncio
        from pathlib import Path
        from infra.media.ffmpeg import run_killable
        from tests.support.clip_media import long_render
        asyncio.run(run_killable(long_render(Path({str(source)!r}), Path({str(tmp_path)!r}), "orphan"),
                                 120, "render"))
    """))
    victim = subprocess.Popen([sys.executable, str(script)], cwd=ROOT,
                              env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    try:
        await wait_started("orphan-out", timeout=20)
        victim.kill()
        victim.wait()
        deadline = time.monotonic() + 5
        while ffmpeg_running("orphan-out"):
            assert time.monotonic() < deadline, "ffmpeg outlived the killed worker"
            await asyncio.sleep(0.05)
    finally:
        if victim.poll() is None:
            victim.kill()


async def test_an_output_that_fails_its_probe_is_refused(source, tmp_path):
    cut = tmp_path / "cut.mp4"
    await run_killable(cut_argv(source, "mov", 1_000, 4_000, "mp4", cut), 60, "cut")
    assert check_clip(cut, "mp4", 3_000, size=(640, 360)).duration_ms == 3_000
    with pytest.raises(MediaError, match="lasts 3000 ms instead of 3200 ms"):
        check_clip(cut, "mp4", 3_200)
    with pytest.raises(MediaError, match="is 640x360 instead of 720x1280"):
        check_clip(cut, "mp4", 3_000, size=(720, 1280))
    audio_only = tmp_path / "audio.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-i", str(cut), "-vn", "-c:a", "copy", str(audio_only)])
    with pytest.raises(MediaError, match="no video stream"):
        check_clip(audio_only, "mp4", 3_000)
    mp3 = tmp_path / "cut.mp3"
    await run_killable(cut_argv(source, "mov", 1_000, 4_000, "mp3", mp3), 60, "cut")
    with pytest.raises(MediaError):
        check_clip(mp3, "mp4", 3_000)  # not the container it must be


async def test_a_range_off_the_frames_of_a_low_frame_rate_video_is_a_good_clip(tmp_path):
    """A 10 fps video's clip ends on a 100 ms frame: a range that is not a whole number of frames
    lasts up to a frame longer, which a clip of it may (the renders of a recognised talk's first
    sentence failed three times on it)."""
    slow = tmp_path / "slow.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=320x240:r=10:d=8", "-f", "lavfi", "-i",
         "sine=frequency=440:sample_rate=22050:duration=8", "-c:v", "libx264", "-preset", "ultrafast",
         "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(slow)])
    cut = tmp_path / "cut.mp4"
    await run_killable(cut_argv(slow, "mov", 0, 5_328, "mp4", cut), 60, "cut")
    lasts = probe(cut, demuxer="mov").duration_ms
    assert abs(lasts - 5_328) > CLIP_TOLERANCE_MS  # off by more than an audio frame
    assert check_clip(cut, "mp4", 5_328, tolerance_ms=clip_tolerance_ms(100)).duration_ms == lasts
    with pytest.raises(MediaError, match="instead of 5328 ms"):
        check_clip(cut, "mp4", 5_328, tolerance_ms=clip_tolerance_ms(None))


def _widest_lines(chars: int) -> list[str]:
    text = " ".join(line for _, _, line in LINES) + " Anticonstitutionnellement, l'intercommunalité réorganise"
    lines = wrap_words(text.split(), chars)
    return sorted(lines, key=len, reverse=True)[:2]


@pytest.mark.parametrize("t", SYSTEM_TEMPLATES, ids=lambda t: f"{t.id}-{t.format}")
async def test_a_full_caption_line_stays_inside_the_frame(t, gray, tmp_path):
    lines = tuple(_widest_lines(t.caption_chars))
    assert all(len(line) >= t.caption_chars - 3 for line in lines)
    script = tmp_path / "captions.ass"
    script.write_text(ass_script(t, [Caption(0, 2000, lines)], font=caption_font()))
    out = tmp_path / "out.mp4"
    await run_killable(render_argv(gray, "mov", 0, 1_000, t, script, out, has_audio=False), 60, "render")
    frame = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-ss", "0.5", "-i", str(out), "-vf", "format=gray",
                            "-frames:v", "1", "-f", "rawvideo", "-"], capture_output=True, check=True).stdout
    w, h = t.width, t.height
    band = range(h - t.caption_margin - 2 * t.caption_font_size * 2, h - t.caption_margin + 10)
    bright = [(x, y) for y in band for x in range(w) if frame[y * w + x] > 200]
    assert bright, "no caption drawn"
    xs = [x for x, _ in bright]
    assert min(xs) >= 16 and max(xs) <= w - 16, (min(xs), max(xs))


def _gray_frame(path: Path, *seek: str) -> bytes:
    """A picture's or video's (at ``seek``, "-ss", "0.2") first frame as 8-bit gray pixels, row by row."""
    return subprocess.run(["ffmpeg", "-nostdin", "-v", "error", *seek, "-i", str(path), "-vf", "format=gray",
                           "-frames:v", "1", "-f", "rawvideo", "-"], capture_output=True, check=True).stdout


def _edges_clear(frame: bytes, w: int, rows: range, background: int = 0x40) -> bool:
    """No pixel of the four columns at each side of the frame in ``rows`` differs from the
    background (the title's letters and its box are far from it)."""
    return all(abs(frame[y * w + x] - background) < 24 for y in rows for x in (*range(4), *range(w - 4, w)))


async def test_a_180_character_title_renders_inside_the_frame_and_its_thumbnail(gray, tmp_path):
    t = SYSTEM_TEMPLATES[0]  # 9:16: the narrowest
    word = "Wm" * 90
    title = title_layout(t, "\u202e" + word, caption_font())
    script = tmp_path / "title.ass"
    script.write_text(ass_script(t, [], title, font=caption_font(), title_ms=1000), encoding="utf-8")
    out = tmp_path / "title.mp4"
    await run_killable(render_argv(gray, "mov", 0, 500, t, script, out, has_audio=False), 60, "render")
    frame = _gray_frame(out, "-ss", "0.2")
    w, h = t.width, t.height
    band = range(t.title_font_size, t.title_font_size * 2 + len(title) * t.title_font_size * 2)
    assert any(frame[y * w + w // 2] != 0x40 for y in band), "no title drawn"
    assert _edges_clear(frame, w, band)

    cover = tmp_path / "cover.ass"
    cover_lines = title_layout(t, word, caption_font(), cover=True)
    cover.write_text(ass_script(t, [], font=caption_font(), centre=cover_lines), encoding="utf-8")
    jpeg = tmp_path / "cover.jpg"
    await run_killable(thumbnail_argv(gray, "mov", 200, t, cover, jpeg), 60, "thumbnail")
    picture = _gray_frame(jpeg)
    assert len(picture) == w * h
    middle = range(h // 2 - 2 * t.thumbnail_font_size, h // 2 + 2 * t.thumbnail_font_size)
    assert any(abs(picture[y * w + w // 2] - 0x40) > 24 for y in middle), "no title drawn"
    assert _edges_clear(picture, w, range(h))
