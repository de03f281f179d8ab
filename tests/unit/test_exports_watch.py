"""What the exports watch appends for a telemetry record: an ExportReady per first export a GET
served and answered, with the request's meta; nothing for another method or a failed call."""

from __future__ import annotations

from uuid import uuid4

from infra.codec import EventRegistry
from infra.memory_store import MemoryDatabase, MemoryEventStore
from services.application.context import Application
from services.processes.exports_watch import reported_exports

APP = Application(MemoryEventStore(EventRegistry(), MemoryDatabase()))


def _record(**changes) -> dict:
    export = {"article_id": 5, "format": "html", "content_type": "text/html; charset=utf-8", "etag": '"e"',
              "bytes": 10, "path": "/v1/articles/5/export/html", "environment": "production"}
    return {"kind": "api_call", "workspace_id": str(uuid4()), "environment": "production", "key_id": str(uuid4()),
            "method": "GET", "route": "/v1/articles/{id}/export/{format}", "status": 200, "latency_ms": 3.0,
            "ts": 0, "request_id": "req-1", "first_exports": [export, {**export, "format": "txt"}], **changes}


def test_each_reported_first_export_is_one_export_ready_with_the_requests_meta() -> None:
    record = _record()
    appends = reported_exports(APP, record)
    assert [len(a) for a in appends] == [1, 1]
    html = appends[0][0]
    assert html.type == "ExportReady" and html.data["format"] == "html" and html.data["etag"] == '"e"'
    assert html.meta["request_id"] == "req-1" and html.meta["key_id"] == record["key_id"]
    assert str(html.workspace_id) == record["workspace_id"] and appends[1][0].data["format"] == "txt"
    assert reported_exports(APP, _record(status=304))  # a conditional GET served it too


def test_nothing_for_another_method_a_failed_call_or_a_call_that_reports_nothing() -> None:
    assert reported_exports(APP, _record(method="HEAD")) == []
    assert reported_exports(APP, _record(method="POST")) == []
    assert reported_exports(APP, _record(status=500)) == []
    assert reported_exports(APP, _record(first_exports=[])) == []
