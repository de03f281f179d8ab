"""The HTTP API (aiohttp). The foundation endpoints arrive with the API issue; the core serves
health and readiness so that ``vaeo up`` has every process in place."""

from __future__ import annotations

import asyncpg
import orjson
from aiohttp import web

from infra.db import create_pool
from infra.settings import Settings

POOL = web.AppKey("pool", asyncpg.Pool)


def json_response(payload: dict, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(payload), status=status, content_type="application/json")


async def healthz(request: web.Request) -> web.Response:
    try:
        async with request.app[POOL].acquire() as conn:
            await conn.fetchval("SELECT 1")
    except Exception as exc:
        return json_response({"error": {"code": "unavailable", "message": str(exc), "details": {}}}, 503)
    return json_response({"data": {"status": "ok"}})


def build_app(settings: Settings) -> web.Application:
    app = web.Application()

    async def pool_ctx(app: web.Application):
        app[POOL] = await create_pool(settings.resolved_database_url(), max_size=10)
        yield
        await app[POOL].close()

    app.cleanup_ctx.append(pool_ctx)
    app.router.add_get("/healthz", healthz)
    return app


def serve(settings: Settings) -> None:
    web.run_app(build_app(settings), host=settings.api_host, port=settings.api_port, print=None)
