"""What every command shares: conflict retries and loading an aggregate inside a workspace."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar
from uuid import UUID

from domain.base import NotFound
from infra.eventstore import ConcurrencyError, EventStore

T = TypeVar("T")
CONFLICT_RETRIES = 5
CHARGE_RETRIES = 10  # a workspace's charges race across API processes: more, short, jittered attempts


async def with_retries(command: Callable[[], Awaitable[T]], attempts: int = CONFLICT_RETRIES) -> T:
    """Run ``command`` again after a conflict, ``attempts`` times at most. Between attempts a short
    random pause (a few milliseconds, growing) lets the commands that collided go one after the
    other instead of colliding again at once."""
    for attempt in range(attempts):
        try:
            return await command()
        except ConcurrencyError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(random.uniform(0, 0.005 * (attempt + 1)))
    raise AssertionError("unreachable")


async def load_owned(store: EventStore, stream_id: UUID, cls: type, workspace_id: UUID, what: str, shown_id=None,
                     *, kept: bool = False):
    """The aggregate if it exists in this workspace; another workspace's answers exactly like none.

    The 404 names ``shown_id``, the id the client sent, when the stream id is derived from it.
    ``kept``: from this process's kept state (``EventStore.load_kept``), for a workspace's charges
    decided under its stream lock."""
    agg = await (store.load_kept(stream_id) if kept else store.load_aggregate(stream_id))
    if agg is None or not isinstance(agg, cls) or agg.workspace_id != workspace_id:
        raise missing(what, stream_id, shown_id)
    return agg


async def load_in(store: EventStore, stream_id: UUID, cls: type, workspace_id: UUID, environment: str | None,
                  what: str, shown_id=None):
    """Like ``load_owned``, and another environment's aggregate (sandbox vs production) is missing
    too: a key acts inside its workspace and its environment's data space. ``None``: any."""
    agg = await load_owned(store, stream_id, cls, workspace_id, what, shown_id)
    if environment is not None and agg.environment != environment:
        raise missing(what, stream_id, shown_id)
    return agg


def missing(what: str, stream_id: UUID, shown_id) -> NotFound:
    return NotFound(f"{what} not found", id=str(stream_id if shown_id is None else shown_id))
