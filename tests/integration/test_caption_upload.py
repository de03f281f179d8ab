"""Captions at upload (``commands.ingest_video`` on the real event store, real ffprobe): parsed in
a thread, not on the event loop; bounded by the media's duration; control characters dropped."""

from __future__ import annotations

import shutil
import threading
import uuid
from pathlib import Path

import pytest

import infra.captions
from domain.analysis import Segment
from domain.base import DomainError
from infra.captions import read_captions, to_webvtt
from infra.storage import LocalStorage
from services.application.videos import IngestVideo
from tests.helpers import handle
from tests.media_factory import run

DURATION_S = 12


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("captions") / "clip.mp4"
    run(["ffmpeg", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=s=160x120:r=10:d={DURATION_S}",
         "-f", "lavfi", "-i", f"sine=frequency=300:sample_rate=16000:duration={DURATION_S}",
         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", str(path)])
    return path


def _captions(cues: list[tuple[int, int, str]]) -> bytes:
    return to_webvtt([Segment(a, b, text, "Anne") for a, b, text in cues]).encode()


async def _ingest(store, settings, clip: Path, captions: bytes, workspace_id: uuid.UUID | None = None):
    storage = LocalStorage.from_settings(settings)
    staged = storage.staging_path("test")
    shutil.copyfile(clip, staged)
    return await handle(store, IngestVideo(workspace_id or uuid.uuid4(), staged=staged, environment="production",
        filename="clip.mp4", captions=captions), storage=storage)


async def test_captions_are_parsed_off_the_event_loop(store, settings, clip, monkeypatch):
    loop_thread = threading.get_ident()
    parsed_in: list[int] = []
    parse = infra.captions.parse_captions

    def recording_parse(text: str):
        parsed_in.append(threading.get_ident())
        return parse(text)

    monkeypatch.setattr(infra.captions, "parse_captions", recording_parse)
    video, _ = await _ingest(store, settings, clip, _captions([(1000, 3000, "Bonjour à tous.")]))
    assert video.caption_cues == 1
    assert parsed_in and loop_thread not in parsed_in


async def test_control_characters_are_dropped_and_the_stored_file_reads_clean(store, settings, clip):
    raw = b"WEBVTT\n\n00:00:01.000 --> 00:00:03.000\n<v An\x00ne>Le b\x00\xc3\xa2timent\x07 consomme 44 %.\n"
    video, _ = await _ingest(store, settings, clip, raw)
    assert video.caption_cues == 1
    segments = read_captions(LocalStorage.from_settings(settings).path(video.captions_key))
    assert [(s.text, s.speaker) for s in segments] == [("Le bâtiment consomme 44 %.", "Anne")]


async def test_captions_must_fit_the_media(store, settings, clip):
    ws = uuid.uuid4()
    late = _captions([(1000, 3000, "Bonjour."), (600_000, 602_000, "Une autre vidéo.")])
    with pytest.raises(DomainError) as refused:
        await _ingest(store, settings, clip, late, ws)
    assert refused.value.details["field"] == "captions" and refused.value.details["cues_after_end"] == 1
    assert "after the end of the media" in refused.value.message

    # 2,000 cues in 12 s: more than anyone can say (the analysis would pay for every one of them)
    crowded = _captions([(k * 6, k * 6 + 5, f"mot {k}.") for k in range(2000)])
    with pytest.raises(DomainError) as refused:
        await _ingest(store, settings, clip, crowded, ws)
    assert refused.value.details["field"] == "captions" and refused.value.details["cues"] == 2000

    wordy = _captions([(1000, 11_000, "bla " * 1000)])
    with pytest.raises(DomainError) as refused:
        await _ingest(store, settings, clip, wordy, ws)
    assert refused.value.details["field"] == "captions" and "characters" in refused.value.details
    folder = LocalStorage.from_settings(settings).root / "videos" / str(ws)
    assert not folder.exists() or not any(p.is_file() for p in folder.rglob("*"))  # nothing half-stored
    ok, _ = await _ingest(store, settings, clip, _captions([(1000, 3000, "Bonjour."), (11_500, 13_000, "Fin.")]), ws)
    assert ok.caption_cues == 2  # a last cue may run past the end
