"""What every query module of a read model shares: the pool it reads through and the rows it answers.

A query module (``projections/<name>_queries.py``, beside the read model it reads) holds the
SQL the API runs on that read model, as functions taking the pool and the request's values and
returning its rows (``Row``: read by column name) or None when there is none; the API turns a
None into its 404 (``services.api.errors.found``). The pool is anything with asyncpg's
``acquire()``, so this room needs no database driver.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

Row = Mapping[str, Any]


class Pool(Protocol):
    def acquire(self) -> Any: ...


async def rows(pool: Pool, sql: str, *args: Any) -> list[Row]:
    async with pool.acquire() as conn:
        return await conn.fetch(sql, *args)


async def row(pool: Pool, sql: str, *args: Any) -> Row | None:
    async with pool.acquire() as conn:
        return await conn.fetchrow(sql, *args)


async def value(pool: Pool, sql: str, *args: Any) -> Any:
    async with pool.acquire() as conn:
        return await conn.fetchval(sql, *args)
