-- Two things the append now does itself.
--
-- 1. An event's recorded_at is the service's clock (Settings.now), sent with the append, not the
--    database's: a job's due time (the JobQueued event's recorded_at) and a worker's claim of it
--    are then read from one clock, even when the service's clock is fixed or shifted, or the
--    database runs on another machine. The column has no default any more, so nothing can stamp
--    an event from the database's clock.
-- 2. A stream an event names (its class's stream_name, such as article:123) is recorded in
--    stream_names in the same statement: the write side finds an article by its integer id
--    without reading a read model (the same lookup works in the in-memory store).
CREATE TABLE stream_names (
    name      text PRIMARY KEY,
    stream_id uuid NOT NULL
);
INSERT INTO stream_names (name, stream_id)
SELECT DISTINCT ON (data->>'article_id') 'article:' || (data->>'article_id'), stream_id
  FROM events WHERE type IN ('ArticleGenerated', 'ArticleTranslated')
 ORDER BY data->>'article_id', position
ON CONFLICT (name) DO NOTHING;
-- The events' index of article ids (migration 011) served that lookup only; stream_names replaces it.
DROP INDEX IF EXISTS events_article_ids;

DROP FUNCTION vaeo_append(uuid[], text[], integer[], uuid[], text[], integer[], jsonb[], jsonb[]);
CREATE FUNCTION vaeo_append(
    p_stream_ids uuid[], p_stream_types text[], p_versions integer[], p_workspaces uuid[],
    p_types text[], p_schemas integer[], p_data jsonb[], p_meta jsonb[], p_names text[],
    p_recorded_at timestamptz
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
    INSERT INTO events (position, stream_id, stream_type, version, workspace_id, type, schema, data, meta,
                        recorded_at)
    SELECT base + u.ord, u.sid, u.st, u.v, u.ws, u.t, u.sc, u.d, u.m, p_recorded_at
      FROM unnest(p_stream_ids, p_stream_types, p_versions, p_workspaces, p_types, p_schemas, p_data, p_meta)
           WITH ORDINALITY AS u(sid, st, v, ws, t, sc, d, m, ord);
    INSERT INTO stream_names (name, stream_id)
    SELECT u.n, u.sid FROM unnest(p_names, p_stream_ids) AS u(n, sid) WHERE u.n IS NOT NULL
    ON CONFLICT (name) DO NOTHING;
    RETURN base + coalesce(array_length(p_stream_ids, 1), 0);
END $$;
ALTER TABLE events ALTER COLUMN recorded_at DROP DEFAULT;
