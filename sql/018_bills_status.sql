-- The bill status lifecycle (SPEC.md "Bill status", DOMAIN.md
-- "Bills and sync" Status): what a status move records beside the row.
--
-- portal_status: the status the connector last reported for the statement.
--   A re-stored statement moves the bill's status only when the portal's
--   report changed, so a bill reverted by the reconciliation (or marked
--   paid by the client) is not flipped back by the same report.
-- revision: the biller's statement revision (PORTAL.md); a new one with
--   other figures is statement_refreshed.
-- status_at: when the status last moved (the reconciliation's reversal
--   window counts from it).
-- previous_status, revert_reason, reverted_at: the last status_reverted;
--   reverted_by: the bill whose statement showed the balance (the
--   reconciliation's idempotence: one revert per newer statement).
ALTER TABLE bills
    ADD COLUMN portal_status   text CHECK (portal_status IN ('PENDING', 'PAID', 'PARTIALLY_PAID')),
    ADD COLUMN revision        integer NOT NULL DEFAULT 1,
    ADD COLUMN status_at       timestamptz,
    ADD COLUMN previous_status text CHECK (previous_status IN ('PAID', 'PARTIALLY_PAID')),
    ADD COLUMN revert_reason   text CHECK (revert_reason IN ('next_statement_shows_balance',
                                   'manual_admin', 'observed_payment_reversed')),
    ADD COLUMN reverted_at     timestamptz,
    ADD COLUMN reverted_by     text,
    ADD CONSTRAINT bills_match_status CHECK (match_status IN ('MATCHED', 'UNMATCHED'));

UPDATE bills SET portal_status = status,
    status_at = CASE WHEN status <> 'PENDING' THEN updated_at END
    WHERE source <> 'import';

-- The reconciliation walks one account's bills in statement order.
CREATE INDEX bills_account_order ON bills (client_id, link_id, account_id, statement_date)
    WHERE deleted_at IS NULL;
