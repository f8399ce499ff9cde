-- The API-key check that rides with a request's first query (DESIGN.md
-- "Performance": one round trip). A worker that has seen a key keeps its
-- principal (client, environment, secret, owner: none of them changes for
-- a key) and sends this check in the same libpq pipeline as the handler's
-- first statement. A revoked key raises, which aborts the rest of the
-- pipeline: the handler's statement never runs and nothing commits.
CREATE FUNCTION bds_key_live(secret text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
    PERFORM 1 FROM client_secrets s JOIN clients c ON c.id = s.client_id
     WHERE s.id = secret AND s.revoked_at IS NULL;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'API key revoked' USING ERRCODE = 'BDSK1';
    END IF;
    RETURN true;
END $$;
