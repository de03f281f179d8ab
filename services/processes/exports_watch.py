"""The exports watch: ``ExportReady`` for the first export of an article in a format, appended on
the write side from what the API's export route reported in its telemetry.

Why not in the GET that served the export: a GET writes nothing (docs/architecture.md). The export
route reports, in its call's telemetry record (``first_exports``), each export it served that the
``article_exports`` read model did not know of yet; this reader appends one ``ExportReady`` for
each, with the request's own meta (request id, key, chain), so the event and its ``export.ready``
webhook are the ones the GET itself used to record, a moment later. An assistant's export is
recorded by the assistant's own request, a POST (``services.api.article_exports.record_first_exports``).

Exactly one per article and format: the event opens the export's own stream (its id derived from
the article and the format), so a report seen twice (a redelivery, a replay, two watches, two
first exports served at once, a read model behind) conflicts on append and is dropped. A tracked
reader (``services/processes/consuming.py``) of the telemetry topic under the name ``exports_watch``, in the
consumer group ``<consumer_group_prefix>exports_watch``; the appends are committed in the
transaction that stores the batch's tracking. It runs in the worker process (``vaeo worker``).
Failure policy: the runner's (a report it cannot record stops the watch there, never skipped).
"""

from __future__ import annotations

from uuid import UUID

import asyncpg

from domain.articles import ArticleExport
from infra.codec import EventRegistry, NewEvent
from infra.consume import Message, ParsedBatch
from infra.eventstore import ConcurrencyError
from infra.settings import Settings
from services.application.context import Application
from services.application.meta import request_meta
from services.lib.readers import EXPORTS_WATCH
from services.processes.consuming import AppendingReader

NAME = EXPORTS_WATCH
REPORTS = "first_exports"  # the telemetry field (services.api.article_exports.FIRST_EXPORTS)


def reported_exports(app: Application, record: dict) -> list[list[NewEvent]]:
    """The ``ExportReady`` appends (one list per export) that an API call's telemetry record asks
    for: the first exports a GET served and answered (2xx or 304), encoded by the context of that
    request (its meta)."""
    if record.get("method") != "GET" or not 200 <= int(record.get("status", 500)) < 400:
        return []
    workspace_id = UUID(record["workspace_id"])
    ctx = app.context(request_meta(record["request_id"], record["key_id"]))
    out = []
    for export in record.get(REPORTS) or []:
        recorded = ArticleExport.record(article_id=export["article_id"], workspace_id=workspace_id,
                                        environment=export["environment"], export_format=export["format"],
                                        content_type=export["content_type"], etag=export["etag"],
                                        size=export["bytes"], path=export["path"])
        out.append(ctx.encoded(recorded, workspace_id=workspace_id))
    return out


class ExportsWatch(AppendingReader):
    name = NAME
    source = "telemetry"

    def __init__(self, settings: Settings, *, registry: EventRegistry | None = None) -> None:
        super().__init__(settings, registry=registry)
        self.appended = 0  # ExportReady events committed by this watch
        self._batch = 0

    def handles_type(self, kind: str) -> bool:
        return True  # telemetry records have no type: each is looked at

    async def apply(self, conn: asyncpg.Connection, batch: ParsedBatch, fresh: list[Message]) -> None:
        self._batch = 0
        self.last = 0
        for message in fresh:
            record = batch.payload(message)
            if not isinstance(record, dict) or not record.get(REPORTS):
                continue
            for events in reported_exports(self.application, record):
                try:
                    async with conn.transaction():  # a savepoint: a conflict undoes this append alone
                        self.last = await self.store.save_within(conn, events)
                except ConcurrencyError:
                    continue  # recorded already: the first export's record is the one kept
                self._batch += 1

    async def committed(self) -> None:
        self.appended += self._batch
        await self.announce()
        self._batch = 0
