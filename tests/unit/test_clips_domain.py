"""Clips in the domain: templates, request rules, caption layout, the two aggregates, prices; and
the pure parts of the media adapter (argument lists, filter graphs, the ASS script) and of the
clip jobs read model."""

from __future__ import annotations

import re
import uuid
import xml.etree.ElementTree as ET
from datetime import UTC, datetime

import pytest

from domain.analysis import Segment
from domain.base import DomainError, InvalidTransition
from domain.clip_overlay import _ass_time, ass_script, title_box, title_layout
from domain.clips import (
    MAX_RENDER_CLIP_MS,
    REFRAMES,
    SYSTEM_TEMPLATES,
    Caption,
    ClipDetection,
    ClipRefused,
    ClipRender,
    Font,
    caption_pages,
    check_format,
    check_range,
    check_render_clips,
    clip_slug,
    default_template,
    drawable,
    frame_ms,
    preview_svg,
    template,
    title_lines,
    wrap_words,
)
from domain.pricing import clip_price, detection_price, render_clip_price
from infra.codec import EventRegistry, StoredEvent
from infra.media.clips import (
    caption_font,
    clip_timeout,
    cut_argv,
    filter_path,
    reframe_filter,
    render_argv,
    thumbnail_argv,
)
from infra.media.ffmpeg import checked_argv
from projections import clip_jobs

WORKSPACE = uuid.UUID("11111111-1111-4111-8111-111111111111")
AT = datetime(2030, 1, 1, tzinfo=UTC)


# ------------------------------------------------------------------------------------ templates


def test_system_templates_cover_the_three_formats_with_one_default() -> None:
    assert {t.format for t in SYSTEM_TEMPLATES} == {"9:16", "1:1", "16:9"}
    assert [t for t in SYSTEM_TEMPLATES if t.is_default] == [default_template()]
    assert len({t.id for t in SYSTEM_TEMPLATES}) == len(SYSTEM_TEMPLATES)
    assert {t.reframe for t in SYSTEM_TEMPLATES} == set(REFRAMES) == {"crop", "blur_fill", "follow_face"}
    for t in SYSTEM_TEMPLATES:
        assert 5 <= t.target_duration_seconds <= 180 and t.width % 2 == 0 and t.height % 2 == 0
        shown = t.to_dict()
        assert (shown["is_system"], shown["is_customized"], shown["thumbnail_available"]) == (True, False, True)
        svg = ET.fromstring(preview_svg(t))
        assert svg.get("viewBox") == f"0 0 {t.width} {t.height}"
    assert template(99) is None and template(1).format == "9:16"


# ------------------------------------------------------------------------------------ request rules


@pytest.mark.parametrize(("start", "end", "rule"), [(5000, 5000, "greater_than"), (6000, 5000, "greater_than"),
                                                    (0, 50, "too_short"), (0, 10_001, "less_than_equal")])
def test_a_range_must_fit_the_video(start, end, rule) -> None:
    with pytest.raises(ClipRefused) as err:
        check_range(start, end, 10_000)
    assert err.value.details["rule"] == rule and err.value.details["field"] == "end_ms"


def test_a_range_of_the_whole_video_is_accepted_and_render_clips_are_bounded() -> None:
    check_range(0, 10_000, 10_000)
    with pytest.raises(ClipRefused):
        check_range(0, MAX_RENDER_CLIP_MS + 1, 10**9, max_ms=MAX_RENDER_CLIP_MS)


@pytest.mark.parametrize(("fmt", "audio", "video", "rule"), [
    ("mp3", False, True, "no_audio"), ("mp4", True, False, "no_video"), ("webm", True, False, "no_video"),
])
def test_a_format_needs_the_streams_it_encodes(fmt, audio, video, rule) -> None:
    with pytest.raises(ClipRefused) as err:
        check_format(fmt, has_audio=audio, has_video=video)
    assert (err.value.details["field"], err.value.details["rule"]) == ("format", rule)
    check_format("mp4", has_audio=False, has_video=True)  # a silent video still makes an mp4
    check_format("mp3", has_audio=True, has_video=False)


def test_render_clips_have_unique_ids_and_durations_within_one_frame() -> None:
    ok = {"id": "a", "start_ms": 1000, "end_ms": 6000, "duration_ms": 5000}
    check_render_clips([ok, {**ok, "id": "b", "duration_ms": 5040}], 10_000, 40)
    for clips, field in [([ok, ok], "clips.1.id"), ([{**ok, "duration_ms": 5041}], "clips.0.duration_ms"),
                         ([{**ok, "end_ms": 10_001, "duration_ms": 9001}], "clips.0.end_ms")]:
        with pytest.raises(ClipRefused) as err:
            check_render_clips(clips, 10_000, 40)
        assert err.value.details["field"] == field
    assert frame_ms(25.0) == 40 and frame_ms(60.0) == 17 and frame_ms(None) == 40


def test_a_clip_slug_is_a_safe_file_name_part_unique_per_id() -> None:
    for clip_id in ("../../etc/passwd", "a b", "é/€", "x" * 100, "..", ""):
        slug = clip_slug(clip_id)
        assert re.fullmatch(r"[A-Za-z0-9_-]+", slug), slug
    assert clip_slug("a/b") != clip_slug("a-b")


# ------------------------------------------------------------------------------------ captions


def test_wrap_words_breaks_between_words_and_splits_only_overlong_words() -> None:
    words = "La fusion nucléaire est une réaction qui libère anticonstitutionnellement".split()
    lines = wrap_words(words, 22)
    assert all(len(line) <= 22 for line in lines)
    assert " ".join(lines).replace("- ", "").replace("-", "") == " ".join(words).replace("-", "")
    assert lines[:2] == ["La fusion nucléaire", "est une réaction qui"]
    assert any(line.endswith("-") for line in lines)  # the 26-letter word is split


MONO = Font({chr(c): 0.5 for c in range(32, 127)} | {"…": 0.5})  # every character half the size wide


def test_a_title_longer_than_its_lines_ends_in_an_ellipsis() -> None:
    lines = title_lines("one two three four five six seven eight nine ten eleven", MONO, 20, 100, max_lines=2)
    assert len(lines) == 2 and lines[-1].endswith("…") and all(len(x) <= 10 for x in lines)
    assert title_lines("short", MONO, 20, 100) == ("short",)


def test_a_title_drops_bidi_controls_and_characters_its_font_cannot_draw() -> None:
    font = caption_font()
    assert drawable("\u202eRTL\u202c and \u2066x\u2069\u200f", font) == "RTL and x"
    assert drawable("{a} \\ b", font) == "{a} \\ b"  # the font has braces and the backslash: kept
    assert drawable("ＡＢＣ 東京 ok", font) == "ABC ok"  # full-width letters as letters; no glyph: dropped
    [line] = title_lines("\u202eRTL {x} \\N", font, 56, 640)
    assert line == "RTL {x} \\N" and all(font.has(ch) for ch in line)


@pytest.mark.parametrize("t", SYSTEM_TEMPLATES, ids=lambda t: f"{t.id}-{t.format}")
def test_a_180_character_word_is_split_into_lines_that_fit_the_frame(t) -> None:
    font = caption_font()
    for word in ("W" * 180, "Wm" * 90, "i" * 180):
        for cover in (False, True):
            size, width = title_box(t, cover=cover)
            assert width < t.width
            lines = title_layout(t, word, font, cover=cover)
            assert 1 <= len(lines) <= 3
            assert all(font.width(line, size) <= width for line in lines), (word[:4], cover)
            assert all(line.endswith("-") for line in lines[:-1])
    short = title_layout(t, "A short title", font)
    assert short == ("A short title",)


def test_captions_keep_only_the_words_spoken_in_the_range_by_cue_relative_to_the_clip() -> None:
    t = template(1)
    segments = [Segment(0, 4000, "one two three four", "Alice"),
                Segment(4000, 10_000, "five six seven eight nine ten eleven twelve", "Bob"),
                Segment(12_000, 13_000, "after", "Alice")]
    pages = caption_pages(segments, 2000, 9000, t)
    words = " ".join(" ".join(p.lines) for p in pages).split()
    assert words[:2] == ["three", "four"] and "one" not in words and "after" not in words
    assert "twelve" not in words  # spoken after 9 s
    assert all(0 <= p.start_ms < p.end_ms <= 7000 for p in pages)
    assert all(a.end_ms <= b.start_ms for a, b in zip(pages, pages[1:], strict=False))
    assert {p.speaker for p in pages if "three" in p.lines[0]} == {"Alice"}
    assert all(p.speaker == "Bob" for p in pages if "five" in " ".join(p.lines))
    for p in pages:
        assert len(p.lines) <= t.caption_lines and all(len(line) <= t.caption_chars for line in p.lines)
    assert caption_pages(segments, 10_500, 11_500, t) == []


def test_a_long_cue_is_paged_within_the_line_budget() -> None:
    t = template(4)
    text = " ".join(f"word{k}" for k in range(200))
    pages = caption_pages([Segment(0, 60_000, text, None)], 0, 60_000, t)
    assert len(pages) > 5
    assert all(len(p.lines) <= t.caption_lines for p in pages)
    assert " ".join(" ".join(p.lines) for p in pages) == text


# ------------------------------------------------------------------------------------ aggregates


def render_job(**overrides) -> ClipRender:
    args = dict(job_id=uuid.uuid4(), workspace_id=WORKSPACE, environment="production", video_id=3,
                clips=[{"id": "a", "start_ms": 0, "end_ms": 5000, "duration_ms": 5000}], template_id=1)
    render = ClipRender.queue(**{**args, **overrides})
    render.collect_events()
    return render


def test_a_clip_is_rendered_at_most_once_and_only_if_requested() -> None:
    render = render_job()
    render.record_failed("a", attempt=1, error_message="x" * 900)
    render.record_rendered("a", attempt=2, file_key="k", thumbnail_key=None, duration_ms=5000, size_bytes=9,
                           width=720, height=1280)
    failed, done = render.collect_events()
    assert isinstance(failed, ClipRender.RenderFailed) and len(failed.error_message) == 500
    assert isinstance(done, ClipRender.Rendered) and (done.clip_id, done.attempt, done.environment) == ("a", 2,
                                                                                                       "production")
    with pytest.raises(InvalidTransition):
        render.record_rendered("a", attempt=3, file_key="k2", thumbnail_key=None, duration_ms=5000, size_bytes=9,
                               width=720, height=1280)
    with pytest.raises(InvalidTransition):
        render.record_failed("a", attempt=3, error_message="late")
    with pytest.raises(DomainError):
        render.record_failed("zzz", attempt=1, error_message="not one of the job's")


@pytest.mark.parametrize("clips", [[], [{"id": str(k)} for k in range(51)]])
def test_a_render_has_one_to_fifty_clips(clips) -> None:
    with pytest.raises(DomainError):
        render_job(clips=clips)


def test_a_detection_records_once_and_at_most_fifty_clips() -> None:
    detection = ClipDetection(job_id=uuid.uuid4(), workspace_id=WORKSPACE, environment="sandbox", article_id=1,
                              video_id=2, template_id=1, target_duration_seconds=30, options={})
    with pytest.raises(DomainError):
        detection.record([{}] * 51, None, [])
    detection.record([], "none", ["audio"])
    with pytest.raises(InvalidTransition):
        detection.record([], None, [])
    names = [type(e).__name__ for e in detection.collect_events()]
    assert names == ["Queued", "Detected"]


def test_clip_events_round_trip_through_the_codec() -> None:
    registry = EventRegistry()
    render = ClipRender.queue(job_id=uuid.uuid4(), workspace_id=WORKSPACE, environment="production", video_id=3,
                              clips=[{"id": "a", "start_ms": 0, "end_ms": 5000, "duration_ms": 5000}])
    render.record_rendered("a", attempt=1, file_key="clips/w/j/a.1.mp4", thumbnail_key=None, duration_ms=5000,
                           size_bytes=9, width=None, height=None)
    new = registry.to_new_events(render.collect_events(), workspace_id=WORKSPACE)
    assert [e.type for e in new] == ["ClipRenderQueued", "ClipRendered"]
    stored = [StoredEvent(k + 1, e.stream_id, e.stream_type, e.version, e.workspace_id, e.type, e.schema, e.data,
                          {}, AT) for k, e in enumerate(new)]
    again = registry.reconstruct(stored)
    assert again.rendered["a"]["file_key"] == "clips/w/j/a.1.mp4" and again.format == "mp4"


# ------------------------------------------------------------------------------------ prices


def test_prices_follow_the_processed_duration() -> None:
    assert [clip_price(ms) for ms in (1, 60_000, 60_001, 600_000)] == [1, 1, 2, 10]
    assert [render_clip_price(ms) for ms in (30_000, 61_000)] == [2, 4]
    assert [detection_price(ms) for ms in (1, 600_000, 600_001, 3_600_000)] == [1, 1, 2, 6]


# ------------------------------------------------------------------------------------ media argv


def test_cut_arguments_read_the_accepted_container_for_the_range_only() -> None:
    args = cut_argv("/data/src.mp4", "mov", 5_217, 12_454, "mp4", "/tmp/out.part")
    checked_argv(args)
    before_input = args[:args.index("-i")]
    assert before_input[before_input.index("-f") + 1] == "mov"
    assert before_input[before_input.index("-t") + 1] == "7.237"  # the read limit: the range
    assert before_input[before_input.index("-ss") + 1] == "5.217"  # input seek: accurate when re-encoding
    assert args[args.index("-movflags") + 1] == "+faststart" and args[-2:] == ["-y", "/tmp/out.part"]
    mp3 = cut_argv("/data/src.mp4", "mov", 0, 1000, "mp3", "/tmp/o")
    assert "-vn" in mp3 and "0:v:0" not in mp3 and mp3[mp3.index("-ar") + 1] == "48000"
    webm = cut_argv("/data/src.mp4", "mov", 0, 1000, "webm", "/tmp/o")
    assert webm[webm.index("-c:v") + 1] == "libvpx-vp9" and webm[webm.index("-c:a") + 1] == "libopus"
    silent = cut_argv("/data/src.mp4", "mov", 0, 1000, "mp4", "/tmp/o", has_audio=False)
    assert "0:a:0" not in silent


def test_render_and_thumbnail_graphs_reframe_to_the_template_and_burn_the_script() -> None:
    crop, blur = template(1), template(3)
    assert "crop=720:1280" in reframe_filter(crop) and "boxblur" not in reframe_filter(crop)
    assert "boxblur" in reframe_filter(blur) and "overlay" in reframe_filter(blur)
    args = render_argv("/data/src.mp4", "mov", 1000, 31_000, crop, "/tmp/captions.part", "/tmp/o.part")
    checked_argv(args)
    graph = args[args.index("-filter_complex") + 1]
    assert graph.endswith("[v]") and "ass=filename=/tmp/captions.part" in graph
    thumb = thumbnail_argv("/data/src.mp4", "mov", 2000, blur, "/tmp/t.part", "/tmp/t.jpg")
    checked_argv(thumb)
    assert thumb[thumb.index("-frames:v") + 1] == "1"


def test_a_path_with_graph_syntax_is_escaped_in_the_filter() -> None:
    assert filter_path("/var/tmp/a.ass") == "/var/tmp/a.ass"
    escaped = filter_path("/tmp/x:y,z[1];'q'/c.ass")
    assert ":" not in escaped.replace("\\:", "") and "," not in escaped.replace("\\,", "")
    assert "[" not in escaped.replace("\\[", "") and ";" not in escaped.replace("\\;", "")


def test_the_ass_script_shows_client_text_as_text_only() -> None:
    t = template(1)
    font = caption_font()
    script = ass_script(t, [Caption(0, 1500, ("{\\pos(0,0)}hack", "line \\N two"), "A"),
                        Caption(1500, 3000, ("second speaker",), "B")],
                        title_layout(t, "My {title} \\ \u202eRTL", font), font=font, title_ms=3000)
    events = [line for line in script.splitlines() if line.startswith("Dialogue:")]
    assert len(events) == 3
    text = "".join(events)
    blocks = re.findall(r"(?<!\\)\{[^}]*\}", text)  # override blocks: only our own colour of the second speaker
    assert blocks in (["{\\c&HFFFF80&}"], ["{\\c&H80FFFF&}"]), blocks
    assert "line \\N two" not in text and "\u202e" not in text
    assert events[0].endswith("My \\{title\\} \\ RTL")  # braces escaped for libass: drawn as braces
    assert events[1].endswith("\\{\\pos(0,0)\\}hack\\Nline \\\u2060N two")  # our break; theirs a backslash
    assert "{\\c&HFFFF80&}" in events[2] or "{\\c&H80FFFF&}" in events[2]  # the second speaker's colour
    assert f"PlayResX: {t.width}" in script and "WrapStyle: 2" in script
    assert _ass_time(3_723_450) == "1:02:03.45"


def test_clip_timeout_scales_with_the_clip() -> None:
    assert clip_timeout(30_000, 60, 10) == 360 and clip_timeout(0, 60, 10) == 60


# ------------------------------------------------------------------------------------ read model


def stored(ev_type: str, data: dict, version: int = 1, stream: uuid.UUID | None = None) -> StoredEvent:
    return StoredEvent(1, stream or uuid.uuid4(), "Job", version, WORKSPACE, ev_type, 1, data, {}, AT)


def test_the_clip_jobs_read_model_keeps_clip_jobs_only_and_guards_each_stream_by_version() -> None:
    other = stored("JobQueued", {"environment": "production", "job_type": "analyze_video", "params": {},
                                 "max_attempts": 3})
    assert clip_jobs.projection.apply(other) == []
    queued = stored("JobQueued", {"environment": "production", "job_type": "clip_render",
                                  "params": {"credits": 6}, "max_attempts": 3})
    [(sql, args)] = clip_jobs.projection.apply(queued)
    assert "ON CONFLICT (job_id) DO NOTHING" in sql and args[3:6] == ("clip_render", 3, 6)
    job_id = str(uuid.uuid4())
    for ev_type, data in [("ClipRendered", {"job_id": job_id, "clip_id": "a", "file_key": "k", "thumbnail_key": None,
                                            "format": "mp4", "duration_ms": 1, "size_bytes": 2, "width": 1,
                                            "height": 1, "attempt": 1}),
                          ("ClipRenderFailed", {"job_id": job_id, "clip_id": "a", "error_message": "x",
                                                "attempt": 1})]:
        [(sql, args)] = clip_jobs.projection.apply(stored(ev_type, data, version=4))
        assert "clip_version < $2" in sql and args[:2] == (job_id, 4)
    [(sql, args)] = clip_jobs.projection.apply(stored("JobAttemptFailed", {
        "attempt": 1, "error_message": "boom", "retry_at": "2030-01-01T00:00:05+00:00"}, version=5))
    assert "job_version < $2" in sql and args[4] == datetime(2030, 1, 1, 0, 0, 5, tzinfo=UTC)
    assert args[5] == {"message": "boom", "attempt": 1, "final": False}
    assert set(clip_jobs.projection.handlers) >= {"ClipDetectionQueued", "ClipsDetected", "ClipRenderQueued",
                                                  "ClipRendered", "ClipRenderFailed", "JobItemCompleted",
                                                  "JobItemFailed", "CreditsRefunded"}
