-- An idempotency key belongs to the API key that sent it, as the payment APIs that defined the
-- convention have it: a stored answer may hold a new API key or a webhook's signing secret, so it
-- is replayed to the API key that made the request and to no other key, even of the same
-- workspace. Another API key sending the same Idempotency-Key value has a key of its own.
--
-- The answers stored before this migration cannot be told apart by API key: they are dropped
-- (kept, any key of the workspace could still read them for the rest of their day).
DELETE FROM idempotency_keys;

ALTER TABLE idempotency_keys ADD COLUMN api_key_id uuid NOT NULL;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
-- The API key before the operation: a revocation deletes the key's rows by this prefix.
ALTER TABLE idempotency_keys ADD PRIMARY KEY (workspace_id, environment, api_key_id, operation, key);

DROP FUNCTION IF EXISTS vaeo_idempotency_complete(uuid, text, text, text, uuid, integer, jsonb, timestamptz);

-- Completes a claim with its answer, inside the caller's transaction. A claim this request no
-- longer holds (it lapsed and another request took the key, or the API key was revoked and its
-- keys deleted) raises VA002: the append that carries the completion is refused whole, so a key
-- never has two executions.
CREATE OR REPLACE FUNCTION vaeo_idempotency_complete(
    p_workspace_id uuid, p_environment text, p_api_key_id uuid, p_operation text, p_key text, p_owner uuid,
    p_status integer, p_body jsonb, p_at timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE idempotency_keys
       SET state = 'done', owner = NULL, claimed_until = NULL, status = p_status, body = p_body,
           completed_at = p_at
     WHERE workspace_id = p_workspace_id AND environment = p_environment AND api_key_id = p_api_key_id
       AND operation = p_operation AND key = p_key AND owner = p_owner AND state = 'in_flight';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the idempotency key % of % is no longer held by this request', p_key, p_operation
            USING ERRCODE = 'VA002';
    END IF;
END
$$;
