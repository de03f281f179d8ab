-- Heartbeats of the processes of the stack (`vaeo status` and /metrics): each process of
-- ours upserts its row every VAEO_HEARTBEAT_INTERVAL_S and marks it stopped on a clean exit. A row
-- whose beat is older than three intervals belongs to a process that died without saying so.
-- (Numbered 005 since two migrations were numbered 004; IF NOT EXISTS makes the rename harmless
-- to a database that applied it under its former name.)
CREATE TABLE IF NOT EXISTS process_heartbeats (
    process_id  text PRIMARY KEY,            -- kind@host:pid
    kind        text NOT NULL,               -- api, relay, projector, worker, dispatcher, credits-watch
    host        text NOT NULL,
    pid         integer NOT NULL,
    started_at  timestamptz NOT NULL,
    beat_at     timestamptz NOT NULL,
    stopped_at  timestamptz
);
