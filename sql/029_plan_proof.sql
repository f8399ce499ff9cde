-- Plan-proof statements (docs/DECISIONS.md "Plan-proof statements").
-- On a fresh database (tables never analysed) the planner rates
-- `client_id = $1` as selective as a unique key, so the generic plan a
-- prepared statement freezes after five runs may walk any index that leads
-- with client_id: all of the client's bills for one bill. The statements of
-- the retrieval now look rows up by a key unique on its own (a bill's or a
-- link's id; a link id and the biller's ref) and check the tenant on the
-- row, `(client_id = $1) IS TRUE`, which no index can serve. The keys they
-- use lead with link_id here; link ids are unique on their own (links_by_id),
-- so each new key is as strict as the one it replaces.

-- A link's statement, payment and account by the biller's ref.
ALTER TABLE bills DROP CONSTRAINT bills_client_id_link_id_statement_ref_key,
    ADD CONSTRAINT bills_link_statement UNIQUE (link_id, statement_ref);
ALTER TABLE observed_payments
    DROP CONSTRAINT observed_payments_client_id_link_id_payment_ref_key,
    ADD CONSTRAINT observed_payments_link_payment UNIQUE (link_id, payment_ref);
ALTER TABLE link_accounts DROP CONSTRAINT link_accounts_client_id_link_id_external_ref_key,
    ADD CONSTRAINT link_accounts_link_ref UNIQUE (link_id, external_ref);

-- The reconciliation's and the payment rule's walk of one link's bills now
-- takes bills_link_statement; nothing else read this one, and every bill
-- write paid for it.
DROP INDEX bills_account_order;

-- The link's entity: its accounts by the link (026's subquery led with the
-- tenant), and the account trigger's rewrite of the link by its id.
CREATE OR REPLACE FUNCTION links_json(l links) RETURNS json
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
            WHERE a.link_id = l.id AND (a.client_id = l.client_id) IS TRUE), '[]'::json),
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

CREATE OR REPLACE FUNCTION link_accounts_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        UPDATE links SET entity = NULL
         WHERE id = OLD.link_id AND (client_id = OLD.client_id) IS TRUE;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR NEW.client_id <> OLD.client_id
                              OR NEW.link_id <> OLD.link_id) THEN
        UPDATE links SET entity = NULL
         WHERE id = NEW.link_id AND (client_id = NEW.client_id) IS TRUE;
    END IF;
    RETURN NULL;
END $$;
