-- Idempotency keys of the write side: a client's key, scoped to its workspace, environment and
-- operation, with the hash of the request it came with and, once the request has run, its first
-- answer (status and body, refusals included), replayed to every later request with that key.
--
-- A request claims its key first, in a short transaction of its own (state in_flight, an owner, a
-- claim that lapses at claimed_until, so the key of a process that died in flight is usable
-- again). The claim is completed by vaeo_idempotency_complete in the transaction that appends the
-- command's events: the answer is stored if and only if the events are.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    workspace_id  uuid NOT NULL,
    environment   text NOT NULL,
    operation     text NOT NULL,
    key           text NOT NULL,
    request_hash  text NOT NULL,
    state         text NOT NULL CHECK (state IN ('in_flight', 'done')),
    owner         uuid,         -- the request holding the claim, while in flight
    claimed_until timestamptz,  -- while in flight: the claim lapses then
    status        integer,      -- once done: the first answer
    body          jsonb,
    created_at    timestamptz NOT NULL,
    completed_at  timestamptz,
    PRIMARY KEY (workspace_id, environment, operation, key),
    CONSTRAINT idempotency_keys_shape CHECK (
        (state = 'in_flight' AND owner IS NOT NULL AND claimed_until IS NOT NULL AND status IS NULL)
        OR (state = 'done' AND owner IS NULL AND status IS NOT NULL AND body IS NOT NULL))
);

CREATE INDEX IF NOT EXISTS idempotency_keys_created ON idempotency_keys (created_at);

-- Completes a claim with its answer, inside the caller's transaction. A claim this request no
-- longer holds (it lapsed and another request took the key) raises VA002: the append that carries
-- the completion is refused whole, so a key never has two executions.
CREATE OR REPLACE FUNCTION vaeo_idempotency_complete(
    p_workspace_id uuid, p_environment text, p_operation text, p_key text, p_owner uuid,
    p_status integer, p_body jsonb, p_at timestamptz) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    UPDATE idempotency_keys
       SET state = 'done', owner = NULL, claimed_until = NULL, status = p_status, body = p_body,
           completed_at = p_at
     WHERE workspace_id = p_workspace_id AND environment = p_environment AND operation = p_operation
       AND key = p_key AND owner = p_owner AND state = 'in_flight';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'the idempotency key % of % is no longer held by this request', p_key, p_operation
            USING ERRCODE = 'VA002';
    END IF;
END
$$;
