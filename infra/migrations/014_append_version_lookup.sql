-- The append's version check looks up each stream's last version through the (stream_id, version)
-- index: one index entry per stream. It used to aggregate over a join with every event of the
-- stream, so an append to a long stream (a busy workspace gains an event per charge) read the
-- whole stream while it held the table's lock: the charges of a workspace slowed down as it aged.
CREATE OR REPLACE FUNCTION vaeo_append(
    p_stream_ids uuid[], p_stream_types text[], p_versions integer[], p_workspaces uuid[],
    p_types text[], p_schemas integer[], p_data jsonb[], p_meta jsonb[]
) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    base bigint;
    conflict record;
BEGIN
    LOCK TABLE events IN EXCLUSIVE MODE;
    SELECT s.stream_id, s.first_version, coalesce(last.version, 0) AS current_version
      INTO conflict
      FROM (SELECT u.sid AS stream_id, min(u.v) AS first_version
              FROM unnest(p_stream_ids, p_versions) AS u(sid, v) GROUP BY u.sid) s
      LEFT JOIN LATERAL (SELECT e.version FROM events e WHERE e.stream_id = s.stream_id
                          ORDER BY e.version DESC LIMIT 1) last ON true
     WHERE coalesce(last.version, 0) <> s.first_version - 1
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
