"""PostgreSQL connections (asyncpg) and migrations."""

from __future__ import annotations

from importlib import resources

import asyncpg
import orjson

MIGRATION_LOCK = 0x7661656F  # "vaeo": serialises concurrent migrators


# jsonb in PostgreSQL's binary format: a version byte (1) and the JSON text. In the text format a
# jsonb[] parameter (an append's events) is written as an array literal, every character of every
# element checked and escaped on both sides: for an append of two 25 KB events, 0.47 ms of the
# client's CPU and 0.56 ms of the server's, against 0.12 and 0.20 ms in the binary format, whose
# arrays carry each element as it is, behind its length.
_JSONB_VERSION = b"\x01"


def _jsonb_encode(value) -> bytes:
    return _JSONB_VERSION + orjson.dumps(value)


def _jsonb_decode(data: bytes):
    if data[:1] != _JSONB_VERSION:
        raise ValueError(f"jsonb binary format version {data[:1]!r} unknown")
    return orjson.loads(memoryview(data)[1:])


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=_jsonb_encode, decoder=_jsonb_decode, schema="pg_catalog",
                              format="binary")
    await conn.set_type_codec("json", encoder=lambda v: orjson.dumps(v).decode(), decoder=orjson.loads,
                              schema="pg_catalog")


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Release without asyncpg's reset query (advisory unlock, CLOSE ALL, UNLISTEN, RESET ALL):
    one round trip saved per acquire. Pool connections of ours keep no session state: no SET, no
    LISTEN, no session advisory lock (those live on dedicated connections)."""


# How this process's connections name themselves to PostgreSQL (``pg_stat_activity``'s
# ``application_name``): ``vaeo-<command>`` once ``vaeo <command>`` starts (``name_connections``).
APPLICATION_NAME = "vaeo"


def name_connections(process: str) -> None:
    global APPLICATION_NAME
    APPLICATION_NAME = f"vaeo-{process}"[:63]


def _named(kw: dict) -> dict:
    return {**kw, "server_settings": {"application_name": APPLICATION_NAME, **(kw.get("server_settings") or {})}}


async def create_pool(dsn: str, *, min_size: int = 1, max_size: int = 10, **kw) -> asyncpg.Pool:
    return await asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size, init=_init_connection,
                                     reset=_keep_session, **_named(kw))


# For connections whose writes Kafka can always redo (projections, relay checkpoints): commit
# without waiting for the WAL flush. A crash may lose the last few milliseconds of such
# transactions, whole (never half): the read model and its offsets roll back together and are
# re-applied from Kafka; a lost relay checkpoint means a resend, deduplicated by position.
REPLAYABLE = {"synchronous_commit": "off"}


async def connect(dsn: str, **kw) -> asyncpg.Connection:
    conn = await asyncpg.connect(dsn, **_named(kw))
    await _init_connection(conn)
    return conn


async def ping(db: asyncpg.Connection | asyncpg.Pool) -> None:
    """One round trip to the database (a health check; a connection that died silently fails it)."""
    await db.fetchval("SELECT 1")


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
