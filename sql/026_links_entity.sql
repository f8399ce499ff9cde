-- The link entity (DOMAIN.md "Link entity") kept beside the row, like the
-- bills' (016) and the billers' (021): GET /v1/links/{id} and the list send
-- it as stored (building it per read cost ~120 µs of PostgreSQL
-- CPU), and a write pays for building it once.
--
-- links_json is the one definition (lib/links/links_entity.h reads
-- l.entity). It reads the link's biller (name, type) and accounts, so three
-- triggers keep the stored value current:
--   links         BEFORE INSERT OR UPDATE: rebuilt from NEW on every write;
--   link_accounts AFTER INSERT/UPDATE/DELETE: the parent link rewritten
--                 (entity only: updated_at stays the link's own);
--   billers       AFTER UPDATE OF name, type: that biller's links rewritten.
-- No recursion: the links trigger writes no other table.

CREATE FUNCTION links_json(l links) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', l.id,
        'object', 'link',
        'client_id', l.client_id,
        'client_user_id', l.client_user_id,
        'biller', (SELECT json_build_object('id', b.id, 'name', b.name, 'type', b.type)
                     FROM billers b WHERE b.id = l.biller_id),
        'biller_id', l.biller_id,
        'status', l.status,
        'disconnect_reason', l.disconnect_reason,
        'credential_rejection_reason', l.credential_rejection_reason,
        'scopes', to_json(l.scopes),
        'accounts', coalesce((SELECT json_agg(json_build_object('id', a.id, 'name', a.name,
                'type', a.type, 'account_number_mask', a.account_number_mask,
                'service_address', a.service_address, 'status', a.status)
                ORDER BY a.created_at, a.id) FROM link_accounts a
            WHERE a.client_id = l.client_id AND a.link_id = l.id), '[]'::json),
        'sync', json_build_object(
            'status', l.sync_status,
            'last_attempt_at', bds_iso(l.last_attempt_at),
            'last_success_at', bds_iso(l.last_success_at),
            'next_at', bds_iso(l.next_sync_at),
            'first_sync_completed_at', bds_iso(l.first_sync_completed_at),
            'bill_count', l.bill_count),
        'consent_expires_at', bds_iso(l.consent_expires_at),
        'created_at', bds_iso(l.created_at),
        'updated_at', bds_iso(l.updated_at))
$$;

ALTER TABLE links ADD COLUMN entity text;

-- Every insert and update, whatever it set entity to (the other two
-- triggers set it NULL to have it rebuilt).
CREATE FUNCTION links_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.entity := links_json(NEW)::text;
    RETURN NEW;
END $$;
CREATE TRIGGER links_entity BEFORE INSERT OR UPDATE ON links
    FOR EACH ROW EXECUTE FUNCTION links_entity();

-- An account added, changed or dropped: the link's entity rebuilt. A no-op
-- upsert (a retrieval seeing the same account again) changes nothing and
-- rewrites nothing. A link being deleted (cascade) is no longer there to
-- update.
CREATE FUNCTION link_accounts_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE links SET entity = NULL
         WHERE client_id = OLD.client_id AND id = OLD.link_id;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.client_id <> OLD.client_id
                              OR NEW.link_id <> OLD.link_id) THEN
        UPDATE links SET entity = NULL
         WHERE client_id = NEW.client_id AND id = NEW.link_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER link_accounts_entity AFTER INSERT OR DELETE ON link_accounts
    FOR EACH ROW EXECUTE FUNCTION link_accounts_entity();
CREATE TRIGGER link_accounts_entity_update AFTER UPDATE ON link_accounts
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*)
    EXECUTE FUNCTION link_accounts_entity();

-- A biller renamed or retyped (rare, an operator's change): its links'
-- entities rebuilt (revoked ones too: they are still read).
CREATE FUNCTION billers_links_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE links SET entity = NULL WHERE biller_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER billers_links_entity AFTER UPDATE OF name, type ON billers
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name OR OLD.type IS DISTINCT FROM NEW.type)
    EXECUTE FUNCTION billers_links_entity();

-- Backfill (the trigger builds it), then every row has one.
UPDATE links SET entity = NULL;
ALTER TABLE links ALTER COLUMN entity SET NOT NULL;
