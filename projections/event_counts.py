"""Events per workspace and type: the volume read model behind usage and analytics.

Its SQL is deliberately not idempotent (``count = count + 1``): it relies on the runner's
exactly-once effect (positions stored in the same transaction, duplicates skipped by position),
which makes it the canary the fault tests read: any event applied twice shows as a count above
the number of events in the store.
"""

from __future__ import annotations

from uuid import UUID

from projections.base import Accumulate, Projection, Statement

NO_WORKSPACE = UUID(int=0)

projection = Projection(
    name="event_counts",
    ddl=[
        """CREATE TABLE IF NOT EXISTS event_counts (
            workspace_id  uuid   NOT NULL,
            type          text   NOT NULL,
            count         bigint NOT NULL,
            last_position bigint NOT NULL,
            PRIMARY KEY (workspace_id, type)
        )""",
    ],
    tables=["event_counts"],
    ordering="commutative",  # increments
)

_UPSERT = """INSERT INTO event_counts (workspace_id, type, count, last_position) VALUES ($1, $2, $4, $3)
             ON CONFLICT (workspace_id, type) DO UPDATE
             SET count = event_counts.count + excluded.count,
                 last_position = greatest(event_counts.last_position, excluded.last_position)"""


def _count(ev) -> list[Statement]:
    return [(_UPSERT, (ev.workspace_id or NO_WORKSPACE, ev.type, ev.position, 1))]


projection.default = _count
projection.accumulate = {_UPSERT: Accumulate(key=(0, 1), add=(3,), keep_max=(2,))}
