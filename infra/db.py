"""PostgreSQL connections (asyncpg) and migrations."""

from __future__ import annotations

from importlib import resources

import asyncpg
import orjson

MIGRATION_LOCK = 0x7661656F  # "vaeo": serialises concurrent migrators


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=lambda v: orjson.dumps(v).decode(), decoder=orjson.loads,
                              schema="pg_catalog")
    await conn.set_type_codec("json", encoder=lambda v: orjson.dumps(v).decode(), decoder=orjson.loads,
                              schema="pg_catalog")


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Release without asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN, RESET ALL):
    one round trip saved per acquire. Pool connections of ours keep no session state: no SET, no
    LISTEN, no session advisory lock (those live on dedicated connections)."""


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10, **kw) -> asyncpg.Pool:
    return await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size, init=_init_connection,
                                     reset=_keep_session, **kw)


# For connections whose writes Kafka can always redo (projections, relay checkpoints): commit
# without waiting for the WAL flush. A crash may lose the last few milliseconds of such
# transactions, whole (never half): the read model and its offsets roll back together and are
# re-applied from Kafka; a lost relay checkpoint means a resend, deduplicated by position.
REPLAYABLE = {"synchronous_commit": "off"}


async def connect(dsn: str, **kw) -> asyncpg.Connection:
    conn = await asyncpg.connect(dsn, **kw)
    await _init_connection(conn)
    return conn


def _migration_files() -> list[tuple[str, str]]:
    folder = resources.files("infra") / "migrations"
    files = sorted((p.name, p.read_text()) for p in folder.iterdir() if p.name.endswith(".sql"))
    return files


async def migrate(dsn: str, extra_ddl: list[str] | None = None) -> list[str]:
    """Apply pending SQL migrations, then the (idempotent) DDL of the read models."""
    conn = await asyncpg.connect(dsn)
    applied_now = []
    try:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r["name"] for r in await conn.fetch("SELECT name FROM schema_migrations")}
            for name, sql in _migration_files():
                if name in done:
                    continue
                await conn.execute(sql)
                await conn.execute("INSERT INTO schema_migrations (name) VALUES ($1)", name)
                applied_now.append(name)
            for ddl in extra_ddl or []:
                await conn.execute(ddl)
    finally:
        await conn.close()
    return applied_now
