-- Videos and articles: integer ids allocated in the command, like media ids.
CREATE SEQUENCE IF NOT EXISTS video_id_seq;
CREATE SEQUENCE IF NOT EXISTS article_id_seq;

-- Write-side record of credits refunded per job: the refund's append inserts here in the same
-- transaction, so a job is refunded at most once whichever attempt or worker gets there.
CREATE TABLE IF NOT EXISTS credit_refunds (
    job_id       uuid PRIMARY KEY,
    workspace_id uuid NOT NULL,
    amount       integer NOT NULL,
    refunded_at  timestamptz NOT NULL DEFAULT now()
);
