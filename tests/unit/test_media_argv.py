"""infra.media's argument lists: every ffprobe and ffmpeg run reads its one input through the
protocol and container whitelists, as ``file:<absolute path>``; every ffmpeg run forces the
accepted demuxer and carries a read limit; a hand-built list without them is refused before
anything runs; ffmpeg's text reaches a client without any path.

The runs are recorded instead of executed (``subprocess.run`` replaced by a recorder that
answers what ffprobe/ffmpeg would): what is under test is the argument list, not ffmpeg.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from infra.media.elements import analyse_audio, detect_scenes, media_facts
from infra.media.ffmpeg import (
    CONTAINERS,
    FORMAT_WHITELIST,
    MediaError,
    UnsupportedContainer,
    audio_bound,
    checked_argv,
    ffmpeg_argv,
    ffprobe_argv,
    run,
    scrub,
    video_bound,
    without_paths,
)
from infra.media.probe import extract_subtitles, measure_duration, probe

PROBE_JSON = json.dumps({
    "format": {"format_name": "matroska,webm", "duration": "12.5", "size": "1000"},
    "streams": [
        {"index": 0, "codec_type": "video", "codec_name": "h264", "width": 320, "height": 240,
         "avg_frame_rate": "25/1"},
        {"index": 1, "codec_type": "audio", "codec_name": "aac"},
        {"index": 2, "codec_type": "subtitle", "codec_name": "subrip", "tags": {"language": "fra"}},
    ]}).encode()


def as_built(args: list[str], pass_fds: tuple[int, ...]) -> list[str]:
    """A started argument list with its handed descriptors (``/proc/self/fd/N``, each one the run
    inherits) named by the files they are open on: the list as the builders made it."""
    def named(arg: str) -> str:
        for fd in pass_fds:
            arg = arg.replace(f"/proc/self/fd/{fd}", os.readlink(f"/proc/self/fd/{fd}"))
        assert "/proc/self/fd/" not in arg, arg  # every descriptor it names is one it inherits
        return arg
    return [named(arg) for arg in args]


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[list[str]]:
    recorded: list[list[str]] = []

    def fake_run(args, **kwargs):
        recorded.append(as_built(list(args), kwargs["pass_fds"]))
        out = PROBE_JSON if args[0] == "ffprobe" else b"out_time_us=12500000\nprogress=end\n"
        return subprocess.CompletedProcess(args, 0, stdout=out, stderr=b"")

    monkeypatch.setattr(subprocess, "run", fake_run)
    return recorded


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.mkv"
    path.write_bytes(b"\x1a\x45\xdf\xa3")
    return path


def _option(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def _assert_whitelisted(args: list[str], source: Path) -> None:
    input_at = args.index("-i") if "-i" in args else len(args) - 1
    before = args[:input_at]
    assert _option(before, "-protocol_whitelist") == "file", args
    assert _option(before, "-format_whitelist") == FORMAT_WHITELIST, args
    assert args[input_at + 1 if "-i" in args else input_at] == f"file:{source}", args
    if args[0] == "ffmpeg":
        assert _option(before, "-f") == "matroska", args  # the demuxer the probe accepted, forced
        assert float(_option(before, "-t")) > 0, args  # the read limit is an input option


def test_every_run_of_the_analysis_is_whitelisted_forced_and_limited(runs, source) -> None:
    info = probe(source)
    measure_duration(source, info.demuxer, 60_000)
    extract_subtitles(source, 0, info=info, limit_ms=4_000)
    detect_scenes(source, demuxer="matroska", limit_ms=4_000)
    analyse_audio(source, 4_000, demuxer="matroska")
    media_facts(source, demuxer="matroska", limit_ms=4_000)

    assert info.demuxer == "matroska"
    assert [r[0] for r in runs] == ["ffprobe", "ffmpeg", "ffmpeg", "ffmpeg", "ffmpeg", "ffprobe", "ffmpeg",
                                    "ffmpeg"]
    for args in runs:
        _assert_whitelisted(args, source)
    limits = [float(_option(r, "-t")) for r in runs if r[0] == "ffmpeg"]
    assert limits == [61.0, 4.0, 4.0, 4.0, 4.0, 4.0]  # the measure reads one second past the maximum
    assert _option(runs[5], "-f") == "matroska"  # media_facts' probe forces the known demuxer too


def test_without_a_known_demuxer_or_limit_the_run_probes_first_whitelisted(runs, source) -> None:
    detect_scenes(source)
    analyse_audio(source, 0)

    assert [r[0] for r in runs] == ["ffprobe", "ffmpeg", "ffprobe", "ffmpeg"]
    assert "-f" not in runs[0]  # identification: among the whitelisted demuxers only
    for args in runs:
        _assert_whitelisted(args, source)
    assert _option(runs[1], "-t") == "12.500"  # the container's duration, when no limit is given


def test_a_probe_naming_a_container_outside_the_whitelist_is_refused(monkeypatch, source) -> None:
    def fake_run(args, **kwargs):
        out = json.dumps({"format": {"format_name": "hls", "duration": "3"},
                          "streams": [{"index": 0, "codec_type": "video", "codec_name": "h264"}]}).encode()
        return subprocess.CompletedProcess(args, 0, stdout=out, stderr=b"")

    monkeypatch.setattr(subprocess, "run", fake_run)
    with pytest.raises(UnsupportedContainer):
        probe(source)


@pytest.mark.parametrize("args", [
    ["ffmpeg", "-i", "/srv/x.mp4", "-f", "null", "-"],
    ["ffprobe", "-show_format", "/srv/x.mp4"],
    ["ffprobe", "-protocol_whitelist", "file", "-format_whitelist", "hls,mov", "file:/srv/x.mp4"],
    ["ffprobe", "-protocol_whitelist", "file,http", "-format_whitelist", FORMAT_WHITELIST, "file:/srv/x.mp4"],
    ["ffprobe", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-f", "hls", "file:/srv/x"],
    ["ffprobe", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "/srv/x.mp4"],
    # ffmpeg: no forced demuxer, no read limit, a second input, a demuxer outside the whitelist
    ["ffmpeg", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-t", "3", "-i",
     "file:/srv/x.mp4", "-f", "null", "-"],
    ["ffmpeg", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-f", "mov", "-i",
     "file:/srv/x.mp4", "-f", "null", "-"],
    ["ffmpeg", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-f", "mov", "-t", "3", "-i",
     "file:/srv/x.mp4", "-i", "file:/srv/y.m3u8", "-f", "null", "-"],
    ["ffmpeg", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-f", "concat", "-t", "3",
     "-i", "file:/srv/x.txt", "-f", "null", "-"],
    ["sh", "-c", "ffmpeg -i x"],
])
def test_a_run_built_by_hand_is_refused_before_it_starts(args: list[str], monkeypatch) -> None:
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(MediaError):
        run(args, 5, "testing")


def test_the_builders_refuse_a_demuxer_outside_the_whitelist_and_a_missing_limit(source) -> None:
    for demuxer in ("hls", "concat", "image2", "lavfi", "tee", "srt", "webvtt"):
        with pytest.raises(UnsupportedContainer):
            ffmpeg_argv(source, demuxer, 1000, ["-f", "null", "-"])
    with pytest.raises(MediaError):
        ffmpeg_argv(source, "mov", 0, ["-f", "null", "-"])
    assert checked_argv(ffmpeg_argv(source, "mov", 1000, ["-map", "0:a:0", "-af", audio_bound(1000), "-f", "null",
                                                          "-"]))
    assert checked_argv(ffprobe_argv(source, None, "-show_format"))


BOUNDED_HEAD = ["ffmpeg", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-f", "matroska",
                "-t", "20.000", "-i", "file:/srv/x.mkv"]


@pytest.mark.parametrize("outputs", [
    ["-f", "null", "-"],  # ffmpeg's own choice of streams, decoded without a bound
    ["-map", "0:a:0", "-ac", "1", "-f", "f32le", "-"],  # -t alone counts the file's timestamps
    ["-map", "0:v:0", "-vf", "scale=320:-2", "-f", "null", "-"],
    ["-filter_complex", "[0:a:0]ebur128[l]", "-map", "[l]", "-f", "null", "-"],
    ["-filter_complex", "[0:v:0]scale=64:-2[v]", "-map", "[v]", "-map", "0:a:0", "-af", audio_bound(20_000),
     "-f", "null", "-"],
    ["-map", "0:a:0", "-af", audio_bound(60_000), "-f", "null", "-"],  # a bound past the read limit
    ["-map", "0:v:0", "-vf", video_bound(60_000), "-f", "null", "-"],
])
def test_a_run_that_decodes_past_what_was_priced_is_refused(outputs: list[str], monkeypatch) -> None:
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("ran"))
    with pytest.raises(MediaError, match="bound"):
        run([*BOUNDED_HEAD, *outputs], 5, "testing")


def test_bounded_runs_and_stream_copies_pass() -> None:
    for outputs in (["-map", "0:a:0", "-af", audio_bound(20_000, rate=16_000, mix=64), "-f", "f32le", "-"],
                    ["-map", "0:v:0", "-vf", f"{video_bound(20_000)},fps=3", "-f", "null", "-"],
                    ["-map", "0:v?", "-map", "0:a?", "-c", "copy", "-f", "null", "-"],  # no decoding at all
                    ["-map", "0:s:0", "-f", "webvtt", "-"]):
        assert checked_argv([*BOUNDED_HEAD, *outputs])


def test_the_whitelist_holds_real_containers_only() -> None:
    never = {"hls", "applehttp", "concat", "image2", "image2pipe", "lavfi", "tee", "srt", "webvtt", "ass", "subviewer",
             "ffmetadata", "data", "tty", "m3u8", "playlist", "dash", "rtsp", "sdp", "http", "mpjpeg", "smjpeg"}
    assert not never & set(CONTAINERS)
    assert {"mov", "matroska", "mp3", "wav"} <= set(CONTAINERS)
    assert all(ext.startswith(".") and ext[1:].isalnum() for ext in CONTAINERS.values())


# ---- no path in what reaches a client

# ffprobe 5.1's words for a playlist whose relative segment is missing (probed without whitelists):
# the segment's path is derived from the playlist's, and is not the input argument.
PLAYLIST_STDERR = (
    b"[hls @ 0x55d0c3a4b280] Skip ('#EXT-X-VERSION:3')\n"
    b"[hls @ 0x55d0c3a4b280] Opening '/var/tmp/vaeo/test/storage/.staging/0b7e-c0ffee.part/../seg0.ts' for reading\n"
    b"[hls @ 0x55d0c3a4b280] Failed to open segment 0 of playlist 0\n"
    b"[file @ 0x55d0c3a4b9c0] Setting default whitelist 'file,crypto,data'\n"
    b"/var/tmp/vaeo/test/storage/.staging/seg0.ts: No such file or directory\n"
    b"file:/var/tmp/vaeo/test/storage/.staging/0b7e-c0ffee.part: Invalid data found when processing input\n"
    b"C:\\storage\\videos\\a.mkv and videos/ws/46/source.mkv and ../../etc/passwd too\n")


def test_ffmpeg_text_keeps_no_path_at_all() -> None:
    args = ["ffprobe", "-protocol_whitelist", "file", "file:/var/tmp/vaeo/test/storage/.staging/0b7e-c0ffee.part"]
    text = without_paths(PLAYLIST_STDERR, args)

    assert "/" not in text.replace("N/A", "") and "\\" not in text and "0x55d0" not in text, text
    assert "storage" not in text and "staging" not in text and "passwd" not in text, text
    assert "<input>: Invalid data found" in text and "Failed to open segment 0 of playlist 0" in text


def test_scrub_keeps_ratios_and_words() -> None:
    assert scrub("Stream #0:0: Video: h264, 25/1 fps, 1/1000 tbn, N/A bitrate") == \
        "Stream #0:0: Video: h264, 25/1 fps, 1/1000 tbn, N/A bitrate"
    assert scrub("[matroska,webm @ 0x5600aa] File ended prematurely") == "[matroska,webm] File ended prematurely"
    assert scrub("cannot open '/srv/a b/c.mkv'") == "cannot open '<path> <path>'"


def test_a_job_error_from_the_file_system_names_no_path() -> None:
    from services.jobs.errors import readable

    missing = FileNotFoundError(2, "No such file or directory", "/var/tmp/vaeo/test/storage/videos/w/1/source.mkv")
    assert readable(missing) == "FileNotFoundError: No such file or directory"
    assert readable(MediaError("extracting subtitles: no track 2")) == "extracting subtitles: no track 2"


def test_a_job_error_from_a_conflict_names_no_stream_nor_version() -> None:
    from infra.eventstore import ConcurrencyError
    from services.jobs.errors import CONFLICTED, readable

    conflict = ConcurrencyError("stream 19167c34-eb4a-5ef1-a4d3-cd827748b96b is at version 4, the append expected 3")
    assert readable(conflict) == CONFLICTED
    assert "19167c34" not in readable(conflict) and "version" not in readable(conflict)
