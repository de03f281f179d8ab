"""The reads of the ``event_counts`` read model: how many events of some types the log holds (/metrics)."""

from __future__ import annotations

from collections.abc import Iterable

from projections.reading import Pool, Row, rows

_OF_TYPES = "SELECT type, sum(count)::bigint AS n FROM event_counts WHERE type = ANY($1) GROUP BY type"


async def of_types(pool: Pool, types: Iterable[str]) -> list[Row]:
    return await rows(pool, _OF_TYPES, list(types))
