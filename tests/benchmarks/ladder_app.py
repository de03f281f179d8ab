"""The lower rungs of the API cost ladder (``python -m tests.benchmarks api ladder``).

A bare aiohttp server whose ``POST /`` runs only the core of ``POST /v1/medias``: the domain
command and its grouped, durable append (synchronous commit), with the API's ``EventStore``
settings. Nothing else: no key, no rate-limit window, no body model, no error envelope, no
telemetry, no metrics, no read-your-writes wait. What it costs is the floor under the API.

    python -m tests.benchmarks.ladder_app PORT WORKSPACE_ID   (settings from the VAEO_ environment)
"""

from __future__ import annotations

import sys
from uuid import UUID

import orjson
from aiohttp import web

from infra.codec import EventRegistry
from infra.db import create_pool
from infra.eventstore import EventStore
from infra.eventstore_postgres import PostgresEventStore
from infra.settings import Settings
from services.application.media import CreateMedia
from tests.helpers import handle

STORE = web.AppKey("store", EventStore)


def build(settings: Settings, workspace_id: UUID) -> web.Application:
    app = web.Application()

    async def database(app: web.Application):
        pool = await create_pool(settings.resolved_database_url(), max_size=settings.api_pool_size)
        app[STORE] = PostgresEventStore(pool, EventRegistry(), notify=settings.notify_on_append,
                                group_commit=settings.api_group_commit, id_block=settings.api_id_block)
        yield
        await pool.close()

    async def create(request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        media, _ = await handle(request.app[STORE], CreateMedia(workspace_id, environment="production",
            name=body["name"]))
        return web.Response(status=201, body=orjson.dumps({"data": {"id": media.media_id, "name": media.name}}),
                            content_type="application/json")

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app.cleanup_ctx.append(database)
    app.router.add_post("/", create)
    app.router.add_get("/healthz", healthz)
    return app


if __name__ == "__main__":
    web.run_app(build(Settings(), UUID(sys.argv[2])), host="127.0.0.1", port=int(sys.argv[1]), print=None,
                access_log=None)
