-- The dispatcher's own state, as 003: the versions of each workspace's job-notification secrets,
-- per environment, as the dispatcher's intake has read them from the log (JobSecretRotated). No
-- secret here: the secret of a version is derived from the service key. A workspace and
-- environment without a row is at version 1. Not a read model: never rebuilt.
CREATE TABLE webhook_job_secrets (
    workspace_id         uuid NOT NULL,
    environment          text NOT NULL,
    version              integer NOT NULL,      -- the current version: signs both schemes
    previous_version     integer,               -- also signs webhook-signature until previous_valid_until
    previous_valid_until timestamptz,
    PRIMARY KEY (workspace_id, environment)
);

-- Mapped events the dispatcher delivered to nobody because their environment could not be told
-- (neither the event nor its job says it): a sandbox webhook must never receive production data,
-- nor the reverse, so such an event is recorded here (and logged), never fanned out to both.
CREATE TABLE webhook_unrouted (
    source_position bigint PRIMARY KEY,
    workspace_id    uuid,
    event_type      text NOT NULL,
    reason          text NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now()
);
