-- The dispatcher's webhook payloads show a job as GET /jobs/{id} does: it keeps, from the log, when
-- each job was queued, its last progress (JobProgressed, JobItemCompleted, guarded by the job
-- stream's version so a replay changes nothing) and an analysis job's video. Jobs taken in before
-- are filled from their events once, here.
ALTER TABLE webhook_jobs
    ADD COLUMN created_at timestamptz,
    ADD COLUMN progress   integer NOT NULL DEFAULT 0,
    ADD COLUMN video_id   integer,
    ADD COLUMN version    integer NOT NULL DEFAULT 1;

UPDATE webhook_jobs w
   SET created_at = e.recorded_at,
       video_id = CASE WHEN jsonb_typeof(e.data->'params'->'video_id') = 'number'
                       THEN (e.data->'params'->>'video_id')::integer END
  FROM events e
 WHERE e.stream_id = w.job_id AND e.version = 1 AND e.type = 'JobQueued';

UPDATE webhook_jobs w
   SET progress = p.progress, version = p.version
  FROM (SELECT DISTINCT ON (stream_id) stream_id, (data->>'progress')::integer AS progress, version
          FROM events WHERE type IN ('JobProgressed', 'JobItemCompleted')
         ORDER BY stream_id, version DESC) p
 WHERE p.stream_id = w.job_id;
