"""The route table: every operation of the API, gathered from the resource modules.

The app registers it, the OpenAPI document is generated from it and the scope-matrix test
iterates it: one declaration per operation, next to its handler.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict

from infra.asyncapi import document as asyncapi_document
from services.api import (
    agent,
    article_exports,
    articles,
    clips,
    files,
    jobs,
    keys,
    me,
    medias,
    monitoring,
    revival,
    usage,
    videos,
    webhooks,
)
from services.api.base import Call, Route
from services.api.openapi import OpenApiDocument, document_for


def openapi_document() -> dict:
    """The OpenAPI document of the route table, as GET /openapi.json serves it (built without any
    server: the tests validate it and generate a client from it)."""
    document = clips.describe_tracking(files.describe_download(
        videos.describe_transcript(videos.describe_upload(document_for(tuple(ROUTES))))))
    return article_exports.describe_exports(document)


async def get_openapi(call: Call) -> dict:
    return openapi_document()


class AsyncApiDocument(BaseModel):
    """The answer of GET /asyncapi.json: an AsyncAPI 3.0 document (its members as that specification
    defines them)."""

    model_config = ConfigDict(extra="allow")

    asyncapi: str
    info: dict[str, Any]
    channels: dict[str, Any]
    operations: dict[str, Any]
    components: dict[str, Any]


# Built once per process: the registry does not change while it runs, and a public route should
# not spend a tenth of a second of CPU per call.
_asyncapi = cache(asyncapi_document)


async def get_asyncapi(call: Call) -> dict:
    return _asyncapi()


ROUTES: list[Route] = [
    *me.ROUTES,
    *usage.ROUTES,
    *keys.ROUTES,
    *medias.ROUTES,
    *jobs.ROUTES,
    *webhooks.ROUTES,
    *videos.ROUTES,
    *articles.ROUTES,
    *monitoring.ROUTES,
    *files.ROUTES,
    *clips.ROUTES,
    *revival.ROUTES,
    *agent.ROUTES,
    Route("GET", "/openapi.json", get_openapi, scope=None, tag="Meta", response=OpenApiDocument,
          summary="This document (OpenAPI 3.1), generated from the route table"),
    Route("GET", "/asyncapi.json", get_asyncapi, scope=None, tag="Meta", response=AsyncApiDocument,
          summary="The event stream's contract (AsyncAPI 3.0): the Kafka topics of domain events and API "
                  "telemetry, one message per event type and schema, generated from the event registry"),
]
