"""The bounds of an upload, decided in the domain before ``VideoUploaded`` exists: the maximum
duration, what the upload is priced by (the measure, not a header's word), and every value a read
model stores kept within its column, so that no accepted event can stop a projection."""

from __future__ import annotations

import re

import pytest

from domain.base import DomainError
from domain.pricing import analysis_price
from domain.videos import (
    DURATION_TOLERANCE_MS,
    INT32_MAX,
    INT64_MAX,
    MAX_DIMENSION,
    MAX_DURATION_MS,
    MAX_FRAME_RATE,
    MediaTooLong,
    billable_duration_ms,
    max_duration_ms,
)
from infra.codec import EventRegistry
from infra.settings import Settings
from projections import videos
from tests.support.video_aggregates import uploaded


def test_the_maximum_is_twelve_hours_and_a_setting_may_only_lower_it() -> None:
    assert MAX_DURATION_MS == 12 * 3600 * 1000
    assert max_duration_ms(None) == max_duration_ms(Settings().media_max_duration_s) == MAX_DURATION_MS
    assert max_duration_ms(60) == 60_000
    assert max_duration_ms(10 ** 9) == MAX_DURATION_MS
    with pytest.raises(ValueError):
        Settings(media_max_duration_s=43_201)


@pytest.mark.parametrize("duration_ms", [MAX_DURATION_MS + 1, 2 ** 31, 2 ** 40, 10 ** 15])
def test_longer_than_the_maximum_is_refused_400(duration_ms: int) -> None:
    with pytest.raises(MediaTooLong) as refused:
        uploaded(duration_ms=duration_ms)
    assert refused.value.status == 400 and refused.value.code == "media_too_long"
    assert refused.value.details["max_duration_seconds"] == 43_200


def test_a_lowered_maximum_is_the_one_enforced() -> None:
    assert uploaded(duration_ms=60_000, max_duration_ms=60_000).duration_ms == 60_000
    with pytest.raises(MediaTooLong) as refused:
        uploaded(duration_ms=60_001, max_duration_ms=60_000)
    assert refused.value.details["max_duration_seconds"] == 60


@pytest.mark.parametrize(("overrides", "field"), [
    ({"width": 0}, "width"), ({"width": MAX_DIMENSION + 1}, "width"), ({"height": 2 ** 31}, "height"),
    ({"height": -1}, "height"), ({"width": True}, "width"),
    ({"frame_rate": 0.0}, "frame_rate"), ({"frame_rate": MAX_FRAME_RATE + 1}, "frame_rate"),
    ({"frame_rate": float("nan")}, "frame_rate"), ({"frame_rate": float("inf")}, "frame_rate"),
    ({"size_bytes": 0}, "size_bytes"), ({"size_bytes": INT64_MAX + 1}, "size_bytes"),
    ({"video_id": INT32_MAX + 1}, "video_id"), ({"media_id": 0}, "media_id"), ({"media_id": 2 ** 31}, "media_id"),
    ({"subtitle_tracks": -1}, "subtitle_tracks"), ({"caption_cues": 2 ** 31}, "caption_cues"),
    ({"video_codec": "x" * 65}, "video_codec"), ({"audio_codec": "a\x00c"}, "audio_codec"),
])
def test_every_stored_value_out_of_range_is_refused(overrides: dict, field: str) -> None:
    with pytest.raises(DomainError) as refused:
        uploaded(**overrides)
    assert refused.value.status == 400 and refused.value.details["field"] == field


def test_the_extremes_the_domain_accepts_fit_the_videos_columns() -> None:
    """Every bound is within the PostgreSQL type of the column the videos projection stores it in."""
    ddl = videos.projection.ddl[0]
    column_max = {"integer": INT32_MAX, "bigint": INT64_MAX}
    types = dict(re.findall(r"^\s*(\w+)\s+(integer|bigint|double precision)", ddl, re.MULTILINE))
    bounds = {"id": INT32_MAX, "media_id": INT32_MAX, "duration_ms": MAX_DURATION_MS, "width": MAX_DIMENSION,
              "height": MAX_DIMENSION, "size_bytes": INT64_MAX}
    for column, bound in bounds.items():
        assert bound <= column_max[types[column]], (column, types[column])
    assert types["frame_rate"] == "double precision"
    video = uploaded(video_id=INT32_MAX, media_id=INT32_MAX, duration_ms=MAX_DURATION_MS, width=MAX_DIMENSION,
                     height=MAX_DIMENSION, size_bytes=INT64_MAX, frame_rate=MAX_FRAME_RATE)
    assert video.duration_ms == MAX_DURATION_MS


@pytest.mark.parametrize(("declared", "measured", "billed"), [
    (60_000, 60_016, 60_000),  # agree within the last packet: the header's exact figure
    (60_000, 59_200, 60_000),
    (500, 600_000, 600_000),  # half a second declared around ten minutes: ten minutes
    (3_600_000, 3_000, 3_000),  # an hour declared around three seconds: three seconds
    (10_000, 10_000 + DURATION_TOLERANCE_MS + 1, 10_000 + DURATION_TOLERANCE_MS + 1),
])
def test_the_billed_duration_is_the_measure_unless_the_header_agrees(declared, measured, billed) -> None:
    assert billable_duration_ms(declared, measured) == billed


def test_a_header_lying_short_is_priced_by_the_measure() -> None:
    assert analysis_price(billable_duration_ms(500, 600_000)) == 10


def test_a_schema_1_upload_is_upcast_without_a_demuxer() -> None:
    registry = EventRegistry()
    assert registry.current_schema("VideoUploaded") == 3
    assert registry.upcast("VideoUploaded", 1, {"video_id": 1})["demuxer"] is None
    assert uploaded(demuxer="mov").demuxer == "mov"
