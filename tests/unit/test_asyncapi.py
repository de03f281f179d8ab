"""docs/asyncapi.json is generated from the event registry: it must equal what the code renders, and
describe every schema of every event on the events channel. The AsyncAPI project's own CLI validates
the document as the API serves it (tests/e2e/test_analytics.py), where the messages on the topics
are also checked against it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infra import asyncapi
from infra.codec import EventRegistry

DOC = Path(__file__).resolve().parents[2] / "docs" / "asyncapi.json"


@pytest.fixture(scope="module")
def document() -> dict:
    return asyncapi.document()


def test_committed_document_is_what_the_code_renders():
    assert DOC.read_text(encoding="utf-8") == asyncapi.render(), (
        "docs/asyncapi.json is out of date: run `python -m infra.asyncapi --write`")


def test_main_prints_the_document_and_write_writes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]):
    assert asyncapi.main([]) == 0
    assert capsys.readouterr().out == asyncapi.render()
    monkeypatch.setattr(asyncapi, "DOC_PATH", tmp_path / "asyncapi.json")
    assert asyncapi.main(["--write"]) == 0
    assert (tmp_path / "asyncapi.json").read_text(encoding="utf-8") == asyncapi.render()


def test_one_message_per_event_type_and_schema_on_the_events_channel(document: dict):
    registry = EventRegistry()
    messages = document["components"]["messages"]
    channel = document["channels"]["events"]
    expected = [asyncapi.message_id(n, k) for n in registry.names() for k in range(1, registry.current_schema(n) + 1)]

    assert document["asyncapi"] == "3.0.0"
    assert channel["address"] == "vaeo.events.v1" and channel["bindings"]["kafka"]["topic"] == "vaeo.events.v1"
    assert list(channel["messages"]) == expected
    assert [m["$ref"] for m in document["operations"]["publishEvents"]["messages"]] == [
        f"#/channels/events/messages/{i}" for i in expected]
    for name in registry.names():
        for schema in range(1, registry.current_schema(name) + 1):
            message = messages[asyncapi.message_id(name, schema)]
            payload = message["payload"]
            data = {k: v for k, v in registry.json_schema(name, schema).items() if k != "$schema"}
            assert payload["properties"]["data"] == data
            assert payload["properties"]["type"] == {"const": name}
            assert payload["properties"]["schema"] == {"const": schema}
            assert message["headers"]["properties"]["type"]["const"] == name
            assert set(message["headers"]["required"]) == {"type", "position"}
            assert message["bindings"]["kafka"]["key"]["type"] == "string"
            assert message["summary"], name


def test_each_earlier_schema_says_what_changed_and_where_a_missing_fact_is(document: dict):
    registry = EventRegistry()
    messages = document["components"]["messages"]

    uploaded_1 = messages["VideoUploaded.v1"]["description"]
    assert "Upcast to schema 2: `demuxer` = `null`." in uploaded_1 and "the current one is 3" in uploaded_1
    assert registry.schema_change("VideoUploaded", 2).description in messages["VideoUploaded.v2"]["description"]
    assert registry.schema_change("VideoUploaded", 3).description in messages["VideoUploaded.v3"]["description"]
    completed_1 = messages["JobCompleted.v1"]["description"]
    assert registry.schema_change("JobCompleted", 2).needs in completed_1 and "`JobQueued`" in completed_1
    assert messages["JobQueued.v1"]["description"] == "The event's first and only schema."


def test_the_telemetry_channel_carries_the_api_call_record(document: dict):
    channel = document["channels"]["telemetry"]

    assert channel["address"] == "vaeo.telemetry.v1"
    assert list(channel["messages"]) == ["ApiCall"]
    record = document["components"]["messages"]["ApiCall"]["payload"]
    assert record["additionalProperties"] is False
    assert {"workspace_id", "environment", "route", "status", "latency_ms", "ts"} <= set(record["required"])


def test_the_document_refers_to_nothing_outside_itself(document: dict):
    refs = [part.split('"')[0] for part in json.dumps(document).split('"$ref": "')[1:]]
    assert refs and all(ref.startswith("#/") for ref in refs)
    for ref in refs:
        node = document
        for key in ref[2:].split("/"):
            node = node[key]
