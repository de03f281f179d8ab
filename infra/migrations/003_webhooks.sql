-- The dispatcher's own state, not read models: `vaeo projections rebuild` never
-- truncates them, so a rebuild or a replay of the log can never send a delivery again. The
-- dispatcher's intake fills them from Kafka in the same transaction as its offsets (kept in
-- projection_offsets under the name 'dispatcher'); its sender claims due deliveries.

-- Subscriptions as the dispatcher has read them from the log (WebhookRegistered/Deleted/Disabled).
CREATE TABLE webhook_targets (
    webhook_id       uuid PRIMARY KEY,
    workspace_id     uuid NOT NULL,
    environment      text NOT NULL,
    url              text NOT NULL,
    events           text[] NOT NULL,
    secret_encrypted text NOT NULL,            -- AES-GCM, associated data = webhook id; never plaintext
    status           text NOT NULL CHECK (status IN ('active', 'deleted', 'disabled')),
    version          integer NOT NULL
);
CREATE INDEX webhook_targets_by_workspace ON webhook_targets (workspace_id);

-- Jobs as the dispatcher needs them when they end: environment, type and per-request webhook_url.
CREATE TABLE webhook_jobs (
    job_id       uuid PRIMARY KEY,
    workspace_id uuid NOT NULL,
    environment  text NOT NULL,
    job_type     text NOT NULL,
    webhook_url  text
);

-- One row per delivery (target x source event x webhook event name), named by its uuid5.
-- pending (due at next_attempt_at), sending (claimed under a lease), succeeded, failed (given up
-- without exhausting the schedule: 410, webhook deleted or disabled), exhausted (schedule used up).
CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    workspace_id     uuid NOT NULL,
    environment      text NOT NULL,
    webhook_id       uuid,                    -- NULL: a job's per-request webhook_url
    url              text NOT NULL,
    event            text NOT NULL,
    source_position  bigint NOT NULL,
    payload          jsonb NOT NULL,          -- the body: {id, type, created_at, workspace_id, data}
    status           text NOT NULL CHECK (status IN ('pending', 'sending', 'succeeded', 'failed', 'exhausted')),
    attempts         integer NOT NULL DEFAULT 0,
    schedule_base    integer NOT NULL DEFAULT 0,  -- attempts made before the last resend
    stream_version   integer NOT NULL DEFAULT 0,  -- version of the delivery's event stream
    next_attempt_at  timestamptz NOT NULL,    -- for 'sending': when the lease expires
    lease_owner      text,
    last_status_code integer,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status IN ('pending', 'sending');
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at);
