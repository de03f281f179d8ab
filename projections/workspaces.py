"""The workspaces read model: GET /me, GET /credits and the credit part of GET /usage."""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="workspaces",
    ddl=[
        """CREATE TABLE IF NOT EXISTS workspaces (
            id                 uuid PRIMARY KEY,
            name               text NOT NULL,
            plan               text NOT NULL,
            credits_total      integer NOT NULL,
            credits_used       integer NOT NULL,
            rate_limit_per_min integer NOT NULL,
            created_at         timestamptz NOT NULL,
            version            integer NOT NULL
        )""",
    ],
    tables=["workspaces"],
)


@projection.handles("WorkspaceCreated")
def _created(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO workspaces (id, name, plan, credits_total, credits_used, rate_limit_per_min, created_at,
                                        version)
                VALUES ($1, $2, $3, $4, 0, $5, $6, $7) ON CONFLICT (id) DO NOTHING""",
             (ev.stream_id, d["name"], d["plan"], d["credits_total"], d["rate_limit_per_min"], ev.recorded_at,
              ev.version))]


# Deltas guarded by the stream version: a replayed event is a no-op.
_CREDITS = """UPDATE workspaces SET credits_total = credits_total + $3, credits_used = credits_used + $4, version = $2
               WHERE id = $1 AND version < $2"""


@projection.handles("CreditsCharged")
def _charged(ev) -> list[Statement]:
    return [(_CREDITS, (ev.stream_id, ev.version, 0, ev.data["amount"]))]


@projection.handles("CreditsRefunded")
def _refunded(ev) -> list[Statement]:
    return [(_CREDITS, (ev.stream_id, ev.version, 0, -ev.data["amount"]))]


@projection.handles("CreditsAdded")
def _added(ev) -> list[Statement]:
    return [(_CREDITS, (ev.stream_id, ev.version, ev.data["amount"], 0))]
