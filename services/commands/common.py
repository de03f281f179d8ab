"""What every command shares: conflict retries and loading an aggregate inside a workspace."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar
from uuid import UUID

from domain.base import InsufficientCredits, NotFound
from domain.workspaces import Workspace
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
    return _owned(agg, stream_id, cls, workspace_id, what, shown_id)


def _owned(agg, stream_id: UUID, cls: type, workspace_id: UUID, what: str, shown_id=None):
    """``agg`` when it is a ``cls`` of this workspace, else 404 (``missing``)."""
    if agg is None or not isinstance(agg, cls) or agg.workspace_id != workspace_id:
        raise missing(what, stream_id, shown_id)
    return agg


async def charged_workspace(store: EventStore, workspace_id: UUID, amount: int, reason: str, *,
                            job_id: UUID | None = None):
    """The workspace with ``amount`` charged, to save with ``save_in_turn``; call it under the
    workspace's ``stream_lock``. 402 (``InsufficientCredits``) when the balance is short.

    The charge is decided on this process's kept state, without a query: a charge it allows is
    checked by the append's expected version. A refusal appends nothing, so nothing would ever tell
    that the kept state missed a top-up or a refund another process appended (the CLI, another API
    process, a worker ending a job failed): before a refusal stands, the charge is decided again
    on the stream as committed (``EventStore.load_committed``, one query on the refusing path only).
    """
    workspace = await load_owned(store, workspace_id, Workspace, workspace_id, "workspace", kept=True)
    try:
        workspace.charge(amount, reason, job_id=job_id)
    except InsufficientCredits:
        workspace = _owned(await store.load_committed(workspace_id), workspace_id, Workspace, workspace_id,
                           "workspace")
        workspace.charge(amount, reason, job_id=job_id)
    return workspace


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
