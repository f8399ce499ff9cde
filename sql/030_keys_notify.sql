-- API keys tell the API workers when one stops working:
-- each worker keeps what a key resolved to (lib/core/auth.c) and LISTENs on
-- bds_keys; any statement that revokes or deletes a client secret (a
-- revoke, a rotation, a client's delete cascading to its secrets) notifies
-- it at commit, before the revoking request is answered, so no worker
-- serves the key to a request that starts afterwards. Creating a secret
-- changes no cached key and notifies nothing.
--
-- One trigger function for every cache channel: the channel is the
-- trigger's argument (028's billers trigger moves to it).

CREATE FUNCTION bds_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify(TG_ARGV[0], '');
    RETURN NULL;
END
$$;

CREATE TRIGGER keys_notify AFTER UPDATE OR DELETE OR TRUNCATE ON client_secrets
    FOR EACH STATEMENT EXECUTE FUNCTION bds_notify('bds_keys');

DROP TRIGGER billers_notify ON billers;
CREATE TRIGGER billers_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON billers
    FOR EACH STATEMENT EXECUTE FUNCTION bds_notify('bds_billers');
DROP FUNCTION billers_notify();
