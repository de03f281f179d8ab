-- Rate limiting of the HTTP API: one fixed one-minute window per workspace, shared by every API
-- process. UNLOGGED: a counter lost in a crash only forgives part of one minute, and its commits
-- write no WAL (no fsync on the request path).
CREATE UNLOGGED TABLE api_rate_windows (
    workspace_id uuid    NOT NULL,
    window_start bigint  NOT NULL,   -- epoch minute (seconds since the epoch / 60)
    count        integer NOT NULL,
    PRIMARY KEY (workspace_id, window_start)
);
