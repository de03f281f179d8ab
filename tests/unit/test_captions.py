"""infra.captions: WebVTT and SRT to segments, with speakers from voice spans and NAME: prefixes."""

from __future__ import annotations

from pathlib import Path

import pytest

from domain.analysis import Segment
from infra.captions import CaptionError, parse_captions, parse_timestamp, read_captions, to_webvtt

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "renovation_podcast_fr.vtt"


def test_timestamps_in_every_form() -> None:
    assert parse_timestamp("00:01:02.345") == 62_345
    assert parse_timestamp("01:02.5") == 62_500
    assert parse_timestamp("1:00:00,001") == 3_600_001
    assert parse_timestamp("00:00:07") == 7_000


def test_webvtt_voice_spans_markup_and_entities() -> None:
    vtt = """\ufeffWEBVTT
Kind: captions

NOTE this block is ignored

STYLE
::cue { color: yellow }

intro
00:00:00.000 --> 00:00:03.500 align:start position:10%
<v Alice>Bonjour et <i>bienvenue</i>.</v>

00:03.500 --> 00:06.000
<v.loud Bob>Merci <c.yellow>Alice</c> &amp; bonjour.
<v Alice>Alors, <00:00:05.000>on commence ?
"""
    segments = parse_captions(vtt)
    assert [(s.speaker, s.text) for s in segments] == [
        ("Alice", "Bonjour et bienvenue."), ("Bob", "Merci Alice & bonjour."), ("Alice", "Alors, on commence ?")]
    # a cue with two voices is shared by text length, contiguously
    assert segments[1].start_ms == 3500 and segments[2].end_ms == 6000
    assert segments[1].end_ms == segments[2].start_ms
    assert 3500 < segments[1].end_ms < 6000


def test_srt_name_prefixes_continue_until_the_next_label() -> None:
    srt = """1
00:00:01,000 --> 00:00:04,000
JEAN DUPONT : Bonjour à tous.

2
00:00:04,000 --> 00:00:07,000
<i>Aujourd'hui on parle d'énergie.</i>

3
00:00:07,000 --> 00:00:09,000
Marie: Merci Jean.

4
00:00:09,000 --> 00:00:12,000
Note: une remarque, pas un nom.

5
00:00:12,000 --> 00:00:14,000
Marie: Deuxième réplique.

6
00:00:14,000 --> 00:00:16,000
>> BOB: Et moi aussi.
"""
    segments = parse_captions(srt)
    assert [s.speaker for s in segments] == ["Jean Dupont", "Jean Dupont", "Marie", "Marie", "Marie", "Bob"]
    assert segments[3].text == "Note: une remarque, pas un nom."  # a one-off Title Case prefix is text
    assert segments[1].text == "Aujourd'hui on parle d'énergie."


def test_no_speaker_labels_means_no_speaker() -> None:
    segments = parse_captions("WEBVTT\n\n00:00.000 --> 00:02.000\nJust text, at 10:30 sharp.\n")
    assert segments == [Segment(0, 2000, "Just text, at 10:30 sharp.", None)]


def test_what_is_not_captions_is_refused() -> None:
    with pytest.raises(CaptionError):
        parse_captions("this is not a caption file\nat all\n")
    assert parse_captions("   ") == []


def test_round_trip_through_webvtt() -> None:
    segments = [Segment(0, 1500, "Bonjour.", "Alice"), Segment(1500, 4000, "Salut, ça va ?", "Bob"),
                Segment(4000, 5000, "Oui.", None)]
    assert parse_captions(to_webvtt(segments))[:2] == segments[:2]


def test_the_twenty_minute_fixture_reads_with_two_speakers() -> None:
    segments = read_captions(FIXTURE)
    assert len(segments) > 150
    assert {s.speaker for s in segments} == {"Claire Martin", "Paul Lefèvre"}
    assert 18 * 60_000 <= segments[-1].end_ms <= 22 * 60_000
    assert all(a.start_ms <= b.start_ms for a, b in zip(segments, segments[1:], strict=False))


def test_windows_1252_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "old.srt"
    path.write_bytes("1\n00:00:01,000 --> 00:00:02,000\nÉté à Paris.\n".encode("cp1252"))
    assert read_captions(path)[0].text == "Été à Paris."


def test_control_characters_are_never_caption_text() -> None:
    from infra.captions import parse_captions

    text = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n<v Ann\x00e>Hel\x00lo\x01 wor\x7fld\x9b.\n"
    assert [(s.text, s.speaker) for s in parse_captions(text)] == [("Hello world.", "Anne")]


def test_utf16_captions_with_a_byte_order_mark_are_read() -> None:
    from infra.captions import read_caption_upload

    data = "1\n00:00:01,000 --> 00:00:02,500\nMARIE : Bonjour à tous.\n".encode("utf-16")
    segments, ext = read_caption_upload(data)
    assert ext == ".srt" and [(s.text, s.speaker) for s in segments] == [("Bonjour à tous.", "Marie")]


def test_captions_fit_the_media_they_came_with() -> None:
    from domain.captions import CUE_ALLOWANCE, MAX_CUES_PER_SECOND, CaptionsDoNotFit, check_captions_fit

    check_captions_fit([Segment(0, 2000, "Bonjour."), Segment(9_500, 11_000, "Fin.")], 10_000)  # ends late: fine
    with pytest.raises(CaptionsDoNotFit, match="start after the end of the media"):
        check_captions_fit([Segment(0, 2000, "Bonjour."), Segment(11_001, 12_000, "Encore.")], 10_000)
    most = 10 * MAX_CUES_PER_SECOND + CUE_ALLOWANCE
    check_captions_fit([Segment(k, k + 1, "a") for k in range(most)], 10_000)
    with pytest.raises(CaptionsDoNotFit, match="more than anyone can say") as refused:
        check_captions_fit([Segment(k, k + 1, "a") for k in range(most + 1)], 10_000)
    assert refused.value.details["max_cues"] == most and refused.value.status == 400
    with pytest.raises(CaptionsDoNotFit, match="characters"):
        check_captions_fit([Segment(0, 9000, "x" * 3000)], 10_000)
