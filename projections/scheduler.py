"""The job scheduler: queued jobs become rows of ``job_queue``, which workers claim.

Ownership is split so that a lagging projection can never undo a worker's claim: the projection
creates rows (JobQueued), raises ``attempts`` monotonically (JobStarted) and moves rows to an
absorbing final state (JobCompleted, JobFailed, JobCancelled). Workers own the transitions
between ``queued`` and ``running`` (claim, lease, retry time). A rebuild recreates every row of
an unfinished job as claimable with its attempts so far; leases are not history.
"""

from __future__ import annotations

from projections.base import Projection, Statement

projection = Projection(
    name="scheduler",
    ddl=[
        """CREATE TABLE IF NOT EXISTS job_queue (
            job_id           uuid PRIMARY KEY,
            workspace_id     uuid NOT NULL,
            environment      text NOT NULL,
            job_type         text NOT NULL,
            params           jsonb NOT NULL,
            state            text NOT NULL CHECK (state IN ('queued', 'running', 'completed', 'failed', 'cancelled')),
            attempts         integer NOT NULL DEFAULT 0,
            max_attempts     integer NOT NULL,
            next_attempt_at  timestamptz NOT NULL,
            lease_owner      text,
            lease_expires_at timestamptz,
            last_error       text,
            queued_at        timestamptz NOT NULL,
            updated_at       timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE INDEX IF NOT EXISTS job_queue_claimable ON job_queue (next_attempt_at)
             WHERE state IN ('queued', 'running')""",
        # The claim's fair order counts each workspace's running jobs.
        """CREATE INDEX IF NOT EXISTS job_queue_running ON job_queue (workspace_id) WHERE state = 'running'""",
    ],
    tables=["job_queue"],
    ordering="per_stream",
)


@projection.handles("JobQueued")
def _queued(ev) -> list[Statement]:
    d = ev.data
    return [("""INSERT INTO job_queue (job_id, workspace_id, environment, job_type, params, state, max_attempts,
                                       next_attempt_at, queued_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7, $7, $7) ON CONFLICT (job_id) DO NOTHING""",
             (ev.stream_id, ev.workspace_id, d["environment"], d["job_type"], d["params"], d["max_attempts"],
              ev.recorded_at))]


@projection.handles("JobStarted")
def _started(ev) -> list[Statement]:
    return [("UPDATE job_queue SET attempts = greatest(attempts, $2) WHERE job_id = $1",
             (ev.stream_id, ev.data["attempt"]))]


def _final(state: str):
    def handler(ev) -> list[Statement]:
        return [(f"""UPDATE job_queue SET state = '{state}', lease_owner = NULL, lease_expires_at = NULL
                      WHERE job_id = $1 AND state IN ('queued', 'running')""", (ev.stream_id,))]

    return handler


projection.handles("JobCompleted")(_final("completed"))
projection.handles("JobFailed")(_final("failed"))
projection.handles("JobCancelled")(_final("cancelled"))
