"""Speech windows and recognised words as a transcript (pure), and its WebVTT / SRT downloads."""

from __future__ import annotations

from domain.analysis.model import Segment
from domain.analysis.speech import item_name, item_window, pad_windows, plan_windows, segments_from_words
from domain.pricing import analysis_price, speech_ms, speech_price
from infra.captions import parse_captions, transcript_srt, transcript_webvtt


def test_windows_group_regions_at_pauses_within_their_bound():
    regions = [(1000, 4000), (5000, 9000), (9500, 20000), (21000, 95000), (96000, 97000)]
    windows = plan_windows(regions, 30_000, 96_500)
    assert windows == [(1000, 20000), (21000, 51000), (51000, 81000), (81000, 96500)]
    assert all(b - a <= 30_000 for a, b in windows)
    assert plan_windows([], 30_000, 10_000) == []
    assert pad_windows([(1000, 4000), (4200, 9000)], 500, 9200) == [(500, 4200), (4200, 9200)]


def test_a_window_item_names_its_range():
    name = item_name(3, (51000, 81000))
    assert name == "speech-00003-51000-81000" and item_window(name) == (51000, 81000)


def test_words_become_caption_like_segments_at_sentence_ends_and_pauses():
    words = [[0, 300, "Solar", 1], [300, 600, "works.", 1], [700, 900, "Why", 1], [900, 1200, "not", 1],
             [3000, 3300, "Because", 1], [3300, 3600, "cheap.", 1]]
    assert segments_from_words(words) == [Segment(0, 600, "Solar works."), Segment(700, 1200, "Why not"),
                                          Segment(3000, 3600, "Because cheap.")]
    many = [[k * 100, k * 100 + 90, f"w{k}", 1] for k in range(40)]
    assert all(len(s.text.split()) <= 16 for s in segments_from_words(many))


def test_downloads_escape_what_would_break_a_cue():
    segments = [Segment(1000, 2500, "a <b> & c --> d"), Segment(3_723_004, 3_724_000, "next", "Ann")]
    vtt = transcript_webvtt(segments)
    assert "a &lt;b&gt; &amp; c -&gt; d" in vtt and "01:02:03.004 --> 01:02:04.000" in vtt
    assert [s.text for s in parse_captions(vtt)] == ["a <b> & c -> d", "next"]
    srt = transcript_srt(segments)
    assert srt.startswith("1\n00:00:01,000 --> 00:00:02,500\na <b> & c -> d\n")
    assert "Ann: next" in srt


def test_speech_is_priced_per_started_minute_of_audio_decoded_and_bounded():
    assert speech_price(0) == 0 and speech_price(1) == 1 and speech_price(61_000) == 2
    assert speech_ms(10 * 3_600_000, 4 * 3_600_000) == 4 * 3_600_000
    assert analysis_price(90_000, "standard", speech_ms(90_000, 14_400_000)) == 4
    assert analysis_price(90_000, "premium", 0) == 4
