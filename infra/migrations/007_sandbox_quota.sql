-- Write-side count of the jobs a workspace's sandbox keys queued per UTC day. The append that
-- queues a sandbox job increments it in the same transaction; the CHECK refuses the increment
-- past the quota, which refuses the append whole (the job is not queued): the quota holds under
-- any concurrency, across API processes.
CREATE TABLE IF NOT EXISTS sandbox_job_quota (
    workspace_id uuid NOT NULL,
    day          date NOT NULL,
    jobs         integer NOT NULL,
    quota        integer NOT NULL,
    PRIMARY KEY (workspace_id, day),
    CONSTRAINT sandbox_job_quota_within CHECK (jobs <= quota)
);
