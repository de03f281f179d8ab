"""How a media tool's process is set up (``infra.media.confine``), without running it: the files of
the run handed as descriptors, the user, the environment; and the time a media pass may take, in
proportion to what was priced. The running child itself is observed in
``tests/integration/test_media_bounds.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from infra.media.confine import NOBODY_ID, confined, limits_for
from infra.settings import Settings


def _named(argv: list[str], fds: tuple[int, ...]) -> dict[str, str]:
    """Each ``/proc/self/fd/N`` the list names, and the file it is open on."""
    found = {}
    for fd in fds:
        name = f"/proc/self/fd/{fd}"
        assert any(name in arg for arg in argv), (name, argv)
        found[name] = os.readlink(name)
    return found


def test_the_files_of_a_run_are_handed_as_descriptors(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VAEO_SECRET_KEY", "0" * 64)
    source, script, out = tmp_path / "source.mkv", tmp_path / "captions.part", tmp_path / "clip.part"
    source.write_bytes(b"\x1a\x45\xdf\xa3")
    script.write_text("[Script Info]\n")
    args = ["ffmpeg", "-f", "matroska", "-t", "3.000", "-i", f"file:{source}", "-filter_complex",
            f"[0:v:0]trim=end_frame=3000,ass=filename={script}:fontsdir=/usr/share/fonts/truetype/dejavu[v]",
            "-map", "[v]", "-y", str(out)]
    with confined(args, 30) as launch:
        fds = launch.popen["pass_fds"]
        assert len(fds) == 3
        named = _named(launch.argv, fds)
        assert sorted(named.values()) == sorted([str(source), str(script), str(out)])
        assert launch.argv[launch.argv.index("-i") + 1].startswith("file:/proc/self/fd/")
        assert "fontsdir=/usr/share/fonts/truetype/dejavu" in launch.argv[launch.argv.index("-filter_complex") + 1]
        assert str(tmp_path) not in " ".join(launch.argv)  # no path through the service's directories
        assert set(launch.popen["env"]) <= {"PATH", "LANG", "LC_ALL", "TZ"}
        if os.geteuid() == 0:
            assert launch.popen["user"] == launch.popen["group"] == NOBODY_ID
            assert launch.popen["extra_groups"] == [] and out.stat().st_uid == NOBODY_ID
        else:
            assert "user" not in launch.popen  # a normal user has nothing to drop
    assert out.stat().st_uid == os.geteuid()  # the output is taken back
    for fd in fds:
        with pytest.raises(OSError):
            os.fstat(fd)  # this side's descriptors are closed once the run has ended


def test_a_missing_input_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError), confined(["ffprobe", f"file:{tmp_path / 'gone.mp4'}"], 5):
        pass


def test_the_cpu_limit_follows_the_run_s_timeout() -> None:
    assert limits_for(10).cpu_seconds == 10 * (os.cpu_count() or 1) + 10
    assert limits_for(None).cpu_seconds > limits_for(600).cpu_seconds


def test_a_media_pass_may_take_a_time_in_proportion_to_the_price() -> None:
    settings = Settings()
    assert settings.media_timeout(21_000) == pytest.approx(60 + 2 * 21)  # not a flat half hour
    assert settings.media_timeout(600_000) == pytest.approx(60 + 2 * 600)
    assert settings.media_timeout(0) == 60  # the floor
