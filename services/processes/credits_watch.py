"""The credits watch (``vaeo credits-watch``): appends ``CreditsLow`` once per downward crossing.

Why a process on the log rather than inside the command that charges: every charge, whichever
command or engine appends it (the API, a worker, an operator script), reaches the log, and this
process sees them all; a rule inside one command would miss the charges of the others. And why
not a projection: appending an event is a side effect, and projections have none (a rebuild must
never notify anybody again).

The rule: a ``CreditsCharged`` at stream version v crossed the threshold when the workspace had
at least ``alert_credits_warning_pct`` percent of its credits remaining before it (version v-1)
and less after it (version v), both folded from the workspace's stream. The CreditsLow it
appends names v (``crossing_version``) and the aggregate refuses a second one for the same or an
earlier crossing, so the at-least-once intake (redelivery, a restart, a replay, two watches at
once) appends exactly one: the append carries the stream's expected version, a concurrent append
makes it retry on the reloaded stream, which already holds the flag. Crossing again needs credits
back above the threshold first (a top-up, ``vaeo workspace credits W --add N``, or refunds).

A tracked reader (``services/processes/consuming.py``) under the name ``credits_watch``, in the consumer
group ``<consumer_group_prefix>credits_watch`` (several watches share the partitions). The
CreditsLow events a batch decides are appended in the transaction that stores the batch's
tracking: both commit or neither. Each carries in its ``meta`` the charge that crossed:
``causation_id`` ``event:<position>`` and the charge's chain as ``correlation_id``. Failure
policy: the runner's; a charge the watch cannot judge stops the watch at that charge (``vaeo
status``, ``vaeo projections list``) until the process restarts, and is never skipped.
"""

from __future__ import annotations

import logging
from uuid import UUID

import asyncpg

from domain.workspaces import Workspace, crosses_below
from infra.codec import EventRegistry, NewEvent, StoredEvent
from infra.consume import Message, ParsedBatch
from infra.eventstore import ConcurrencyError
from infra.settings import Settings
from services.application.context import Application
from services.lib.readers import CREDITS_WATCH
from services.processes.consuming import AppendingReader

log = logging.getLogger("vaeo.credits_watch")

NAME = CREDITS_WATCH
CONFLICT_RETRIES = 10


async def decide(app: Application, charges: list[StoredEvent], threshold_pct: float) -> list[NewEvent]:
    """The CreditsLow events due for ``charges`` (CreditsCharged events, in log order), from the
    workspaces' streams as committed now; each with its charge as its cause
    (``Application.reacting``)."""
    store = app.store
    by_workspace: dict[UUID, list[StoredEvent]] = {}
    for charge in charges:
        by_workspace.setdefault(charge.stream_id, []).append(charge)
    new: list[NewEvent] = []
    registry = store.registry
    for workspace_id, its in by_workspace.items():
        events = await store.read_stream(workspace_id)
        current = None
        for charge in its:
            version = charge.version
            if len(events) < version or events[version - 1].type != "CreditsCharged":
                continue
            before = registry.reconstruct(events[:version - 1])
            after = registry.reconstruct(events[:version])
            if not isinstance(after, Workspace) or not crosses_below(threshold_pct, before, after):
                continue
            if current is None:
                current = registry.reconstruct(events)
            # The event reports the balance at the crossing, not later moves; a crossing flagged
            # already (a redelivery, a replay, another watch) gives nothing.
            if current.flag_low_credits(threshold_pct, version):
                new.extend(app.reacting(charge).encoded(current, workspace_id=workspace_id))
    return new


class CreditsWatch(AppendingReader):
    name = NAME

    def __init__(self, settings: Settings, *, registry: EventRegistry | None = None) -> None:
        super().__init__(settings, registry=registry)
        self.appended = 0  # CreditsLow events committed by this watch
        self._batch: list[NewEvent] = []

    def handles_type(self, kind: str) -> bool:
        return kind == "CreditsCharged"

    async def apply(self, conn: asyncpg.Connection, batch: ParsedBatch, fresh: list[Message]) -> None:
        charges = [batch.payload(m) for m in fresh]
        self._batch = []
        self.last = 0
        for _ in range(CONFLICT_RETRIES):
            new = await decide(self.application, charges, self.settings.alert_credits_warning_pct)
            if not new:
                return
            try:
                async with conn.transaction():  # a savepoint: a conflict undoes this append alone
                    self.last = await self.store.save_within(conn, new)
            except ConcurrencyError:
                continue  # a workspace moved since it was loaded: decide again on its new stream
            self._batch = new
            return
        raise ConcurrencyError(f"CreditsLow not appended after {CONFLICT_RETRIES} conflicts")

    async def committed(self) -> None:
        for ev in self._batch:
            log.info("credits low in workspace %s (charge at version %d)", ev.stream_id, ev.data["crossing_version"])
        self.appended += len(self._batch)
        await self.announce()
        self._batch = []
