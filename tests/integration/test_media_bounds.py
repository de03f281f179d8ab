"""Work bounded by what was priced, and ffmpeg confined: real ffmpeg on hostile files made here.

- A file whose packet timestamps lie (twenty minutes of audio stamped as twenty seconds; ten
  thousand frames stamped as four seconds) is priced for what its timestamps say, and every
  decoding pass stops there: the audio analysis, the speech finder, a recognition window, a clip.
- Audio at 1 Hz or 2 Hz (a 1.2 KB WAV that crashed the loudness filter) is analysed; 64 channels
  without a layout are mixed down.
- Every ffmpeg child runs as an unprivileged user (when the tests run as root), with its resource
  limits, without the service's environment, its descriptors or its network.
- Cuts and renders of a 1000 fps source are written at 30 fps at most.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from domain.clip_overlay import ass_script
from domain.clips import SYSTEM_TEMPLATES
from domain.videos import billable_duration_ms
from infra import asr
from infra.media.clips import MAX_OUTPUT_FPS, caption_font, cut_argv, render_argv
from infra.media.confine import FILE_BYTES, MEMORY_BYTES, NOBODY_ID, OPEN_FILES, limits_for
from infra.media.elements import analyse_audio, detect_scenes, media_facts
from infra.media.ffmpeg import audio_bound, ffmpeg_argv, piped, run_killable
from infra.media.posters import thumbnail
from infra.media.probe import measure_duration, probe
from services.jobs.speech import find_speech
from tests.media_factory import (
    ffmpeg_processes,
    make_fast_video,
    make_lying_audio,
    make_lying_video,
    write_wav,
)

pytestmark = pytest.mark.slow  # a minute of ffmpeg runs on hostile files

REAL_S, SQUEEZE = 1200, 60  # twenty minutes of audio whose timestamps say twenty seconds
VIDEO_REAL_S, VIDEO_SQUEEZE = 400, 100  # ten thousand frames whose timestamps say four seconds


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bounds")
    return {
        "lying": make_lying_audio(root, REAL_S, SQUEEZE),
        "lying_video": make_lying_video(root, VIDEO_REAL_S, VIDEO_SQUEEZE),
        "1hz": write_wav(root / "1hz.wav", 1, 1, 580),  # 1,204 bytes: ten minutes at one sample a second
        "2hz": write_wav(root / "2hz.wav", 2, 1, 580),
        "64ch": write_wav(root / "64ch.wav", 16_000, 64, 48_000),  # 3 s, no layout: WAVE_FORMAT_PCM
        "fast": make_fast_video(root, 1000, 3),
    }


def priced(path: Path) -> tuple[str, int]:
    """The demuxer and the duration an upload of ``path`` is priced and analysed by (the
    application's own measure: the header's figure, or the packets' end when they disagree)."""
    info = probe(path)
    return info.demuxer, billable_duration_ms(info.duration_ms, measure_duration(path, info.demuxer, 43_200_000))


# ---- a file whose timestamps lie is decoded no further than it was priced


def test_lying_timestamps_are_priced_for_what_they_say(hostile):
    _, priced_ms = priced(hostile["lying"])
    assert abs(priced_ms - REAL_S * 1000 // SQUEEZE) <= 1_000  # twenty seconds, for twenty minutes of audio


def test_the_audio_analysis_and_the_speech_finder_decode_no_more_than_was_priced(hostile):
    path = hostile["lying"]
    demuxer, priced_ms = priced(path)
    sound = analyse_audio(path, priced_ms, demuxer=demuxer)
    assert 0 < sound.frames <= priced_ms // 50 + 1  # 50 ms frames of what was decoded: 400, not 24,000
    facts = media_facts(path, demuxer=demuxer, limit_ms=priced_ms)
    assert facts.duration_ms == priced_ms and facts.loudness is not None
    decoded = sum(len(block) for block in asr.stream_audio(path, demuxer, priced_ms, block_s=5, timeout=120))
    assert 0 < decoded <= priced_ms * asr.SAMPLE_RATE // 1000 + 1
    has_audio, windows = find_speech(path, demuxer, priced_ms, 30_000, timeout=120)
    assert has_audio and all(end <= priced_ms for _, end in windows)
    window = asr.decode_audio(path, demuxer, 5_000, 15_000, timeout=120)
    assert 0 < len(window) <= 10_000 * asr.SAMPLE_RATE // 1000 + 1


async def test_a_clip_of_a_lying_file_holds_its_range_only(hostile, tmp_path):
    path = hostile["lying"]
    demuxer, _ = priced(path)
    out = tmp_path / "cut.mp3"
    await run_killable(cut_argv(path, demuxer, 0, 10_000, "mp3", out, has_video=False), 120, "cut")
    assert probe(out, demuxer="mp3").duration_ms <= 10_100  # ten seconds, not ten minutes


def test_the_scene_pass_decodes_no_more_frames_than_the_priced_duration_can_hold(hostile):
    path = hostile["lying_video"]
    demuxer, priced_ms = priced(path)
    assert priced_ms <= 4_100  # 400 s of frames, priced four seconds
    changes = detect_scenes(path, demuxer=demuxer, limit_ms=priced_ms)
    # A cut every two frames: half the frames decoded. At most 1000 frames a second of what was
    # priced are decoded (4,000), not the file's 10,000.
    assert 0 < len(changes) <= priced_ms // 2 + 1


def test_a_waveform_poster_of_a_lying_file_is_made(hostile):
    demuxer, priced_ms = priced(hostile["lying"])
    assert thumbnail(hostile["lying"], demuxer, priced_ms, has_video=False).startswith(b"\xff\xd8")


# ---- sample rates and channel layouts no filter was written for


@pytest.mark.parametrize("name", ["1hz", "2hz"])
def test_audio_at_one_or_two_hertz_is_analysed_without_a_crash(hostile, name):
    path = hostile[name]
    info = probe(path)
    assert info.duration_ms == 290_000 * (2 if name == "1hz" else 1)
    facts = media_facts(path, demuxer=info.demuxer, limit_ms=info.duration_ms)  # ebur128 crashed on it
    assert facts.loudness is not None and facts.audio_segments


def test_sixty_four_channels_without_a_layout_are_mixed_down(hostile, tmp_path):
    path = hostile["64ch"]
    info = probe(path)
    assert info.unnamed_channels == 64
    facts = media_facts(path, demuxer=info.demuxer, limit_ms=info.duration_ms)
    assert facts.loudness is not None and facts.loudness.integrated_lufs > -70  # the tone is heard
    has_audio, _ = find_speech(path, info.demuxer, info.duration_ms, 30_000, timeout=60)
    samples = asr.decode_audio(path, info.demuxer, 0, 3_000, timeout=60)
    assert has_audio and abs(len(samples) - 3 * asr.SAMPLE_RATE) <= asr.SAMPLE_RATE // 100
    assert thumbnail(path, info.demuxer, info.duration_ms, has_video=False,
                     mix=info.unnamed_channels).startswith(b"\xff\xd8")


# ---- the ffmpeg child: its user, limits, environment, descriptors and network


def _open_files(pid: int) -> list[str]:
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(FileNotFoundError):  # closed meanwhile
            found.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
    return found


def _exec_done(pid: int, path: Path | None = None, timeout: float = 10) -> None:
    """Wait until ``pid`` is ffmpeg (exec'd) and, given ``path``, has opened it itself (through the
    descriptor it inherited: two of its descriptors then name it), past its start-up."""
    deadline = time.monotonic() + timeout
    while Path(f"/proc/{pid}/comm").read_text().strip() != "ffmpeg" or (
            path is not None and _open_files(pid).count(str(path)) < 2):
        assert time.monotonic() < deadline, "ffmpeg never started"
        time.sleep(0.01)


def _status(pid: int) -> dict[str, str]:
    return dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)


def _limits(pid: int) -> dict[str, str]:
    """Each limit's soft value, by name (``Max address space``: ``8589934592``)."""
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    return {row[:26].strip(): row[26:].split()[0] for row in rows}


def _unprivileged_namespaces() -> bool:
    return subprocess.run(["unshare", "--user", "--net", "true"], capture_output=True,
                          user=NOBODY_ID if os.geteuid() == 0 else None).returncode == 0


def assert_confined(pid: int, path: Path, timeout: float) -> None:
    _exec_done(pid, path)
    status = _status(pid)
    expected = NOBODY_ID if os.geteuid() == 0 else os.geteuid()  # a normal user has nothing to drop
    assert status["Uid"].split() == [str(expected)] * 4, status["Uid"]
    if os.geteuid() == 0:
        assert status["Gid"].split() == [str(NOBODY_ID)] * 4 and status["Groups"].strip() == ""
    assert status["NoNewPrivs"].strip() == "1"
    limits = _limits(pid)
    assert limits["Max address space"] == str(MEMORY_BYTES)
    assert limits["Max cpu time"] == str(limits_for(timeout).cpu_seconds)
    assert limits["Max open files"] == str(OPEN_FILES)
    assert limits["Max file size"] == str(FILE_BYTES)
    assert limits["Max core file size"] == "0"
    environment = Path(f"/proc/{pid}/environ").read_bytes()
    assert b"VAEO_" not in environment and b"a-secret-no-child-sees" not in environment
    files = _open_files(pid)
    assert not [f for f in files if f.startswith("socket:")], files  # nothing of the service's connections
    # Of the service's files, the one of its run only (the machine's libraries pass by as they load).
    own = [f for f in files if f.startswith("/") and not f.startswith(("/dev/", "/usr/", "/lib"))]
    assert own and set(own) == {str(path)}, files
    if _unprivileged_namespaces():
        assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")


def test_a_piped_ffmpeg_runs_unprivileged_limited_and_alone(hostile, monkeypatch):
    monkeypatch.setenv("VAEO_SERVICE_KEY", "a-secret-no-child-sees")
    path = hostile["lying"]
    demuxer, priced_ms = priced(path)
    args = ffmpeg_argv(path, demuxer, priced_ms, ["-map", "0:a:0", "-af", audio_bound(priced_ms),
                                                  "-f", "f32le", "-"])
    with piped(args, 60) as decoding:  # nobody reads its pipe: it waits, and is looked at
        assert_confined(decoding.proc.pid, path, 60)


async def test_a_killable_ffmpeg_runs_unprivileged_limited_and_alone(hostile, monkeypatch, tmp_path):
    monkeypatch.setenv("VAEO_SERVICE_KEY", "a-secret-no-child-sees")
    path = hostile["lying"]
    demuxer, priced_ms = priced(path)
    out = tmp_path / "confined-out.mp3"
    args = cut_argv(path, demuxer, 0, priced_ms, "mp3", out, has_video=False)
    args.insert(args.index("-i"), "-re")  # read at the pace of playback: it runs long enough to be looked at
    work = asyncio.create_task(run_killable(args, 60, "cut"))
    try:
        deadline = time.monotonic() + 10
        while not (found := ffmpeg_processes("confined-out")):
            assert time.monotonic() < deadline, "ffmpeg never started"
            await asyncio.sleep(0.02)
        [pid] = found
        await asyncio.to_thread(assert_confined_with_output, pid, path, out)
    finally:
        work.cancel()
        await asyncio.gather(work, return_exceptions=True)
    assert out.stat().st_uid == os.geteuid()  # the output file is taken back when the run ends


def assert_confined_with_output(pid: int, path: Path, out: Path) -> None:
    """``assert_confined`` for a run that writes ``out``: the one file it may write, its own
    while it runs."""
    _exec_done(pid, path)
    files = set(_open_files(pid))
    assert str(out) in files and str(path) in files
    assert out.stat().st_uid == (NOBODY_ID if os.geteuid() == 0 else os.geteuid())
    status = _status(pid)
    assert status["Uid"].split()[0] == str(NOBODY_ID if os.geteuid() == 0 else os.geteuid())


def test_a_blocking_run_is_confined_too(hostile):
    """``run`` (the probe, the analysis passes): its child observed from another thread."""
    from infra.media.ffmpeg import run

    path = hostile["lying"]
    demuxer, priced_ms = priced(path)
    args = ffmpeg_argv(path, demuxer, priced_ms, ["-map", "0:a:0", "-af", audio_bound(priced_ms), "-f", "null",
                                                  "-"], extra_input=("-re",))
    seen: list[dict] = []

    def look() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not seen:
            for pid in ffmpeg_processes(str(path)):
                if Path(f"/proc/{pid}/stat").read_text().split()[3] == str(os.getpid()):  # its parent: this test
                    _exec_done(pid)
                    seen.append(_status(pid))
                    os.kill(pid, 9)
            time.sleep(0.02)

    watcher = threading.Thread(target=look)
    watcher.start()
    with pytest.raises(Exception):  # noqa: B017 - killed by the watcher, once seen
        run(args, 30, "looking")
    watcher.join()
    assert seen and seen[0]["Uid"].split()[0] == str(NOBODY_ID if os.geteuid() == 0 else os.geteuid())


# ---- frame rates of what is written


def _frames(path: Path) -> int:
    done = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_packets", "-show_entries",
                           "stream=nb_read_packets", "-of", "csv=p=0", str(path)], capture_output=True, text=True,
                          check=True)
    return int(done.stdout.strip())


async def test_a_1000_fps_source_is_cut_and_rendered_at_30_fps_at_most(hostile, tmp_path):
    source = hostile["fast"]
    assert probe(source).frame_rate == 1000
    cut = tmp_path / "cut.mp4"
    await run_killable(cut_argv(source, "mov", 0, 2_000, "mp4", cut), 120, "cut")
    script = tmp_path / "captions.ass"
    script.write_text(ass_script(SYSTEM_TEMPLATES[0], [], font=caption_font()))
    rendered = tmp_path / "render.mp4"
    await run_killable(render_argv(source, "mov", 0, 2_000, SYSTEM_TEMPLATES[0], script, rendered), 120, "render")
    for written in (cut, rendered):
        assert _frames(written) <= 2 * MAX_OUTPUT_FPS + 1  # 60 frames, not 2,000
        assert probe(written).frame_rate <= MAX_OUTPUT_FPS
