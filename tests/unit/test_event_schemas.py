"""Every schema an event was ever written with is described: each change of schema is a row beside its
upcaster (``domain.base.SchemaChange``), the earlier JSON Schemas are derived from those rows, and the
catalogue (docs/events.md) prints them all. Old events shaped as earlier builds wrote them fit their
documented schema, and upcast one step at a time into data that fits the next."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator, ValidationError

from domain.base import PUBLISHED, SCHEMA_CHANGES
from infra import eventdocs
from infra.codec import EventRegistry, UnknownEventType

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
WS, JOB = str(uuid.uuid4()), str(uuid.uuid4())

# Data as the builds before each change wrote it (the shapes the upcasting tests have always used).
WRITTEN_BY_EARLIER_BUILDS: list[tuple[str, int, dict]] = [
    ("VideoUploaded", 1, {"video_id": 7, "workspace_id": WS, "environment": "production", "media_id": None,
                          "name": "v", "description": None, "language": "fr", "storage_key": "k", "captions_key": None,
                          "size_bytes": 10, "duration_ms": 1000, "width": 640, "height": 360, "frame_rate": 25.0,
                          "video_codec": "h264", "audio_codec": "aac", "subtitle_tracks": 0, "caption_cues": 0}),
    ("VideoUploaded", 2, {"video_id": 8, "workspace_id": WS, "environment": "sandbox", "media_id": 3, "name": "w",
                          "description": "d", "language": "en", "storage_key": "k2", "captions_key": "c",
                          "size_bytes": 11, "duration_ms": 2000, "width": None, "height": None, "frame_rate": None,
                          "video_codec": None, "audio_codec": "aac", "subtitle_tracks": 1, "caption_cues": 4,
                          "demuxer": "mov,mp4,m4a,3gp,3g2,mj2"}),
    ("VideoAnalyzed", 1, {"job_id": JOB, "analysis_mode": "standard", "article_id": None, "geo_readiness_score": 0.1,
                          "counts": {}}),
    ("JobCompleted", 1, {"result": {"video_id": 7}, "article_id": 3}),
    ("JobFailed", 1, {"error_message": "boom", "attempts": 3}),
    ("CreditsLow", 1, {"balance": 1, "total": 10, "remaining_pct": 10.0, "threshold_pct": 20.0,
                       "crossing_version": 4}),
    ("ArticleGenerated", 1, {"article_id": 5, "workspace_id": WS, "environment": "production", "job_id": JOB,
                             "video_id": 7, "media_id": None, "title": "t", "language": "fr",
                             "writing_style": "interview", "aeo_score": 60, "geo_score": 70, "composite_score": 67.0,
                             "keywords_primary": ["fusion"], "has_transcript": True, "content": {}, "markdown": "# t"}),
    ("ClipRendered", 1, {"job_id": JOB, "environment": "production", "clip_id": "c1", "attempt": 1, "format": "mp4",
                         "file_key": "f", "thumbnail_key": None, "duration_ms": 5000, "size_bytes": 99, "width": 1080,
                         "height": 1920}),
]


def undescribed(registry: EventRegistry) -> list[str]:
    """The schemas of published events that no ``SchemaChange`` describes."""
    missing = []
    for name in registry.names():
        for schema in range(2, registry.current_schema(name) + 1):
            try:
                registry.schema_change(name, schema)
            except UnknownEventType:
                missing.append(f"{name} schema {schema}")
    return missing


def documented_schemas(text: str) -> dict[tuple[str, int], dict]:
    """(event, schema) -> the JSON Schema printed under ``#### <event> schema <n>`` in the catalogue."""
    found = re.findall(r"^#### (\w+) schema (\d+)(?: \(current\))?\n.*?```json\n(.*?)\n```", text,
                       flags=re.MULTILINE | re.DOTALL)
    return {(name, int(n)): json.loads(block) for name, n, block in found}


def test_every_schema_of_every_event_is_described_by_the_change_that_made_it():
    registry = EventRegistry()

    assert undescribed(registry) == []
    for (name, from_schema), change in SCHEMA_CHANGES.items():
        assert from_schema < registry.current_schema(name), f"{name}: a change to schema {from_schema + 1}, " \
                                                            "which the event does not have"
        assert len(change.description.split()) >= 10, f"{name} schema {from_schema + 1}: say what changed and why"
        after = registry.json_schema(name, from_schema + 1)["properties"]
        before = registry.json_schema(name, from_schema)["properties"]
        assert set(change.added) <= set(after) and not set(change.added) & set(before)
        assert set(after) - set(before) == set(change.added)


def test_an_event_given_a_new_schema_without_its_description_is_refused(monkeypatch: pytest.MonkeyPatch):
    cls, schema, stream_type = PUBLISHED["JobQueued"]
    monkeypatch.setitem(PUBLISHED, "JobQueued", (cls, schema + 1, stream_type))
    registry = EventRegistry()

    assert undescribed(registry) == [f"JobQueued schema {schema + 1}"]
    with pytest.raises(UnknownEventType, match=f"no description of JobQueued schema {schema + 1}"):
        eventdocs.render()
    with pytest.raises(UnknownEventType):
        registry.json_schema("JobQueued", schema)


def test_the_catalogue_shows_every_earlier_schema_of_the_events_that_have_one():
    documented = documented_schemas(DOC.read_text(encoding="utf-8"))
    registry = EventRegistry()
    several = {name: registry.current_schema(name) for name in registry.names() if registry.current_schema(name) > 1}

    assert {"ArticleGenerated": 2, "ClipRendered": 2, "CreditsLow": 2, "JobCompleted": 2, "JobFailed": 2,
            "VideoAnalyzed": 2, "VideoUploaded": 3}.items() <= several.items()
    assert set(documented) == {(name, k) for name, n in several.items() for k in range(1, n + 1)}
    for (name, schema), printed in documented.items():
        assert printed == registry.json_schema(name, schema)


@pytest.mark.parametrize(("name", "schema", "data"), WRITTEN_BY_EARLIER_BUILDS,
                         ids=[f"{n}-{s}" for n, s, _ in WRITTEN_BY_EARLIER_BUILDS])
def test_old_data_fits_its_documented_schema_and_each_upcast_fits_the_next(name: str, schema: int, data: dict):
    documented = documented_schemas(DOC.read_text(encoding="utf-8"))
    registry = EventRegistry()
    upcast = data

    Draft202012Validator(documented[(name, schema)]).validate(data)
    for k in range(schema, registry.current_schema(name)):
        upcast = registry.schema_change(name, k + 1).upcast(upcast)
        Draft202012Validator(documented[(name, k + 1)]).validate(upcast)
    assert upcast == registry.upcast(name, schema, data)  # step by step as the codec does it in one go
    with pytest.raises(ValidationError, match="Additional properties"):  # the documented schemas differ
        Draft202012Validator(documented[(name, schema)]).validate(upcast)


def test_where_an_upcast_needs_another_event_its_schema_says_which():
    registry = EventRegistry()

    for name in ("JobCompleted", "JobFailed", "VideoAnalyzed"):
        change = registry.schema_change(name, 2)
        assert change.fills() == "`environment` = `null`"
        assert change.needs and "`JobQueued`" in change.needs
        assert change.needs in registry.json_schema(name, 1)["description"]
    assert registry.schema_change("CreditsLow", 2).needs is None  # its type alone tells it: production
    assert registry.schema_change("ArticleGenerated", 2).fills().count("the value of `job_id`") == 1
    assert registry.upcast("ArticleGenerated", 1, {"job_id": JOB})["graph_job_id"] == JOB
