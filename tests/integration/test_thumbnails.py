"""Thumbnails made with ffmpeg through the whitelisted argument builder: a frame of a video, the
waveform of an audio file, JPEG either way, and a refusal (MediaError) for what is not media."""

from __future__ import annotations

import pytest

from infra.media.ffmpeg import MediaError
from infra.media.posters import thumbnail
from infra.media.probe import probe
from tests.media_factory import run


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("thumbnails")
    video, audio = root / "clip.mp4", root / "voice.mp3"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=s=320x240:r=10:d=6", "-c:v", "libx264",
         "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(video)])
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=300:duration=4", str(audio)])
    return {"video": video, "audio": audio}


@pytest.mark.parametrize("kind", ["video", "audio"])
def test_a_thumbnail_is_a_jpeg_of_the_media(files, kind):
    info = probe(files[kind])
    picture = thumbnail(files[kind], info.demuxer, info.duration_ms, has_video=info.has_video, width=160)
    assert picture[:2] == b"\xff\xd8" and picture[-2:] == b"\xff\xd9" and len(picture) > 500


def test_no_picture_is_a_media_error(files, tmp_path):
    silent = tmp_path / "silent.mp4"
    silent.write_bytes(files["video"].read_bytes()[:2000])  # cut short: no frame to decode
    with pytest.raises(MediaError):
        thumbnail(silent, "mov", 6000, has_video=True)
