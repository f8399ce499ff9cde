-- A replay record keeps no bearer secret readable: the members of a stored
-- response that carry one (a sandbox account link's access token) are
-- stored as null in `response` and sealed together in `secrets` under the
-- credential vault's current key (`secrets_key_id`), bound to the record's
-- owner, route and key. A replay opens them and puts them back in place.
ALTER TABLE idempotency_keys ADD COLUMN secrets bytea, ADD COLUMN secrets_key_id text,
    ADD CONSTRAINT idempotency_keys_secrets_key CHECK ((secrets IS NULL) = (secrets_key_id IS NULL));

-- Records written before this migration held the token in the clear: the
-- token goes, the link id stays (a revoke still finds and drops the record),
-- and a retry under such a key is 409 IDEMPOTENCY_KEY_NOT_REPLAYABLE.
UPDATE idempotency_keys
    SET response = json_build_object('link_id', response -> 'link_id'), replayable = false
    WHERE (response ->> 'access_token') LIKE 'bds\_%';
