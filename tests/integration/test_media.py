"""infra.media and infra.captions on media the tests make with ffmpeg and espeak-ng.

The video: red until 4.0 s then blue (a hard cut); the audio: a 440 Hz tone until 3.0 s, silence
until 5.0 s, then two voices (two espeak-ng voices) reading the lines of a two-speaker WebVTT file
whose cue times are the real lengths of the synthesised lines. An mkv carries the same captions as
an embedded SRT track with ``NAME:`` prefixes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.analysis import MediaFacts, analyse, validate_chapters
from infra.captions import parse_captions, read_captions
from infra.media.elements import analyse_audio, detect_scenes, media_facts
from infra.media.ffmpeg import MediaError
from infra.media.probe import extract_subtitles, probe
from tests.media_factory import CUT_S, FPS, HEIGHT, SPEECH_START_S, TONE_END_S, WIDTH, make_interview, run


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("media")
    made = make_interview(root, "test.mp4")
    srt = root / "captions.srt"
    srt.write_text("".join(
        f"{k + 1}\n{_srt_time(a)} --> {_srt_time(b)}\n{speaker.upper()}: {text}\n\n"
        for k, (a, b, text, speaker) in enumerate(made["cues"])))
    mkv = root / "test.mkv"
    run(["ffmpeg", "-nostdin", "-y", "-i", str(made["video"]), "-i", str(srt), "-map", "0", "-map", "1", "-c", "copy",
         "-c:s", "srt", "-metadata:s:s:0", "language=fra", str(mkv)])
    return made | {"mkv": mkv}


def _srt_time(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"


def test_probe_reads_duration_streams_resolution_and_frame_rate(media: dict) -> None:
    info = probe(media["video"])
    assert abs(info.duration_ms - media["duration_ms"]) <= 150
    assert (info.width, info.height) == (WIDTH, HEIGHT)
    assert info.frame_rate == FPS
    assert info.has_video and info.has_audio
    assert info.video_codec == "h264" and info.audio_codec == "aac"
    assert info.subtitle_tracks == ()


def test_probe_lists_the_embedded_subtitle_track(media: dict) -> None:
    info = probe(media["mkv"])
    assert len(info.subtitle_tracks) == 1
    track = info.subtitle_tracks[0]
    assert (track.position, track.codec, track.language, track.text_based) == (0, "subrip", "fra", True)


def test_probe_refuses_what_is_not_media(media: dict, tmp_path: Path) -> None:
    with pytest.raises(MediaError, match="reading media metadata") as refused:
        probe(media["not_media"])
    # The refusal reaches clients (415, a job's error): ffmpeg's text without the server's paths.
    assert "Invalid data found" in str(refused.value)
    assert str(Path(media["not_media"]).parent) not in str(refused.value)
    assert "<input>" in str(refused.value)
    with pytest.raises(MediaError, match="does not exist") as absent:
        probe(tmp_path / "absent.mp4")
    assert str(tmp_path) not in str(absent.value)


def test_scene_change_found_within_half_a_second(media: dict) -> None:
    changes = detect_scenes(media["video"])
    assert len(changes) == 1
    assert abs(changes[0].time_ms - CUT_S * 1000) <= 500
    assert changes[0].score >= 0.3


def test_silence_found_and_loudness_measured(media: dict) -> None:
    audio = analyse_audio(media["video"], media["duration_ms"])
    found = [r for r in audio.silences if abs(r.start_ms - TONE_END_S * 1000) <= 300]
    assert found, audio.silences
    assert abs(found[0].end_ms - SPEECH_START_S * 1000) <= 300
    assert audio.loudness is not None and audio.loudness.integrated_lufs is not None
    assert -40 < audio.loudness.integrated_lufs < 0
    assert audio.loudness.true_peak_dbtp is not None and audio.loudness.true_peak_dbtp <= 0.5


def test_tone_is_music_like_and_voices_are_speech_like(media: dict) -> None:
    audio = analyse_audio(media["video"], media["duration_ms"])
    kinds_at = {}
    for second in (1, 4, 7, 10):
        covering = [s for s in audio.segments if s.start_ms <= second * 1000 < s.end_ms]
        kinds_at[second] = covering[0].kind if covering else None
    assert kinds_at == {1: "music", 4: "silence", 7: "speech", 10: "speech"}, audio.segments


def test_embedded_subtitle_track_extracted_with_speakers(media: dict) -> None:
    text = extract_subtitles(media["mkv"], 0)
    assert text.startswith("WEBVTT")
    segments = parse_captions(text)
    assert [s.text for s in segments] == [c[2] for c in media["cues"]]
    assert [s.speaker for s in segments] == [c[3] for c in media["cues"]]
    for segment, (start, _, _, _) in zip(segments, media["cues"], strict=True):
        assert abs(segment.start_ms - start) <= 100  # the container may shift by an audio priming delay


def test_extracting_a_missing_track_is_a_clear_error(media: dict) -> None:
    with pytest.raises(MediaError, match="no track 0"):
        extract_subtitles(media["video"], 0)


def test_media_facts_and_two_speaker_captions_give_the_content_graph(media: dict) -> None:
    facts = media_facts(media["video"])
    assert isinstance(facts, MediaFacts)
    segments = read_captions(media["vtt"])
    graph = analyse(segments, facts, language="fr")
    data = graph.to_dict()

    # speakers and their talk times match the captions
    expected: dict[str, int] = {}
    for start, end, _, speaker in media["cues"]:
        expected[speaker] = expected.get(speaker, 0) + end - start
    assert {s["name"]: s["talkTimeMs"] for s in data["speakers"]["speakers"]} == expected
    assert data["speakers"]["diarised"] is True

    # every claim's startMs lies inside the caption it came from
    assert graph.claims
    for claim in graph.claims:
        sentence = graph.sentences[claim.sentence]
        cue = graph.segments[sentence.first_segment]
        assert cue.start_ms <= claim.start_ms < cue.end_ms
        assert claim.text.rstrip(".") in " ".join(s.text for s in graph.segments)

    # chapters obey the rules; moments inside the video, on sentence boundaries
    assert validate_chapters(graph.chapters, graph.duration_ms) == []
    starts = {s.start_ms for s in graph.sentences}
    ends = {min(s.end_ms, graph.duration_ms) for s in graph.sentences}
    for moment in graph.moments:
        assert 0 <= moment.start_ms < moment.end_ms <= graph.duration_ms
        assert moment.start_ms in starts and moment.end_ms in ends

    # visual elements: two shots split at the cut; audio elements: the silence, tone and speech
    shots = [e for e in data["visualElements"] if e["type"] == "shot"]
    assert len(shots) == 2 and abs(shots[1]["startMs"] - CUT_S * 1000) <= 500
    kinds = {e["type"] for e in data["audioElements"]}
    assert {"silence", "music", "speech", "loudness"} <= kinds
    silence = next(e for e in data["audioElements"] if e["type"] == "silence")
    assert abs(silence["startMs"] - TONE_END_S * 1000) <= 300

    names = {e["name"] for e in data["entities"]}
    assert {"ITER", "Cadarache", "France"} <= names
    assert any(i["source"] == "question" for i in data["searchIntents"])
    assert 0 <= data["summary"]["geoReadinessScore"] <= 100


def test_a_path_ffmpeg_derives_from_its_input_never_reaches_a_client(tmp_path: Path) -> None:
    """A playlist naming a missing relative segment: ffmpeg names the segment by the absolute path
    it derived from the playlist's, which is not the input argument; no path of it survives."""
    import subprocess

    from infra.media.ffmpeg import UnsupportedContainer, without_paths

    staging = tmp_path / "storage" / ".staging"
    staging.mkdir(parents=True)
    playlist = staging / "ws-upload.part"
    playlist.write_text("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:3.0,\nmissing/segment0.ts\n#EXT-X-ENDLIST\n")
    # ffprobe as it was run before the whitelists (test tooling): the words a client used to get.
    args = ["ffprobe", "-v", "error", "-show_format", str(playlist)]
    unrestricted = subprocess.run(args, capture_output=True, check=False).stderr
    assert str(staging / "missing") in unrestricted.decode()  # ffmpeg did derive a path

    text = without_paths(unrestricted, args)
    assert "/" not in text and "staging" not in text and "segment0" not in text, text

    with pytest.raises(UnsupportedContainer) as refused:  # and today the playlist is not even opened
        probe(playlist)
    assert refused.value.format_name == "hls" and "/" not in str(refused.value)
