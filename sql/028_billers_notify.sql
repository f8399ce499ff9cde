-- The biller catalog tells the API workers when it changed: each
-- worker keeps the catalog answers it gave (lib/billers/billers_cache.c) and
-- LISTENs on bds_billers; any statement that writes billers notifies it at
-- commit (one notification per transaction: PostgreSQL folds repeats), so
-- every worker drops its answers before it serves the next request.

CREATE FUNCTION billers_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bds_billers', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER billers_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON billers
    FOR EACH STATEMENT EXECUTE FUNCTION billers_notify();
