-- The event store: the commit point of every change (docs/architecture.md, docs/events.md).
CREATE TABLE events (
    position     bigint      PRIMARY KEY,            -- global, gap-free, in commit order
    stream_id    uuid        NOT NULL,
    stream_type  text        NOT NULL,
    version      integer     NOT NULL CHECK (version >= 1),
    workspace_id uuid,
    type         text        NOT NULL,               -- stable name, e.g. JobQueued
    schema       integer     NOT NULL,
    data         jsonb       NOT NULL,
    meta         jsonb       NOT NULL DEFAULT '{}',
    recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (stream_id, version)
);

-- Append in one call: the expected-version check, position allocation and insert run under an
-- exclusive lock on the table, held until commit. A reader that sees position N has therefore
-- seen every position below N (no gap, commit order). The lock is taken last in the append
-- transaction so that other statements of the command do not lengthen it.
CREATE FUNCTION vaeo_append(
    p_stream_ids uuid[], p_stream_types text[], p_versions integer[], p_workspaces uuid[],
    p_types text[], p_schemas integer[], p_data jsonb[], p_meta jsonb[]
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    base bigint;
    conflict record;
BEGIN
    LOCK TABLE events IN EXCLUSIVE MODE;
    SELECT s.stream_id, s.first_version, coalesce(max(e.version), 0) AS current_version
      INTO conflict
      FROM (SELECT u.sid AS stream_id, min(u.v) AS first_version
              FROM unnest(p_stream_ids, p_versions) AS u(sid, v) GROUP BY u.sid) s
      LEFT JOIN events e ON e.stream_id = s.stream_id
     GROUP BY s.stream_id, s.first_version
    HAVING coalesce(max(e.version), 0) <> s.first_version - 1
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'stream % is at version %, the append expected %',
            conflict.stream_id, conflict.current_version, conflict.first_version - 1
            USING ERRCODE = 'VA001';
    END IF;
    SELECT coalesce(max(position), 0) INTO base FROM events;
    INSERT INTO events (position, stream_id, stream_type, version, workspace_id, type, schema, data, meta)
    SELECT base + u.ord, u.sid, u.st, u.v, u.ws, u.t, u.sc, u.d, u.m
      FROM unnest(p_stream_ids, p_stream_types, p_versions, p_workspaces, p_types, p_schemas, p_data, p_meta)
           WITH ORDINALITY AS u(sid, st, v, ws, t, sc, d, m, ord);
    RETURN base + coalesce(array_length(p_stream_ids, 1), 0);
END $$;

-- What the relay has seen acknowledged by Kafka.
CREATE TABLE relay_checkpoint (
    name       text PRIMARY KEY,
    position   bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Projection bookkeeping: per projection and Kafka partition, the next offset to read and the
-- highest event position applied (duplicates from an at-least-once relay are skipped by it).
CREATE TABLE projection_offsets (
    projection   text    NOT NULL,
    partition    integer NOT NULL,
    next_offset  bigint  NOT NULL,
    max_position bigint  NOT NULL,
    PRIMARY KEY (projection, partition)
);

-- Projection lifecycle: live, rebuilding (the live runner pauses), stopped (a failing event).
CREATE TABLE projection_state (
    projection     text PRIMARY KEY,
    status         text NOT NULL DEFAULT 'live' CHECK (status IN ('live', 'rebuilding', 'stopped')),
    generation     integer NOT NULL DEFAULT 0,
    error          text,
    error_position bigint,
    updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Integer ids of the spec's resources (media, articles, videos), allocated in the append
-- transaction. Gaps after a rolled-back command are harmless: ids are names, not positions.
CREATE SEQUENCE media_id_seq;

-- Write-side index of API key digests: authentication never waits for Kafka.
CREATE TABLE api_key_digests (
    digest       text PRIMARY KEY,   -- hex SHA-256 of the full key; the key itself is never stored
    key_id       uuid NOT NULL UNIQUE,
    workspace_id uuid NOT NULL
);
