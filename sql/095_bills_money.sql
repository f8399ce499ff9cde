-- Money that reconciles (docs/DECISIONS.md "A bill's money"): every bill
-- shows the statement's figures, previous_balance - payments_received +
-- current_charges = amount_due, whatever its source, and beside them
-- balance_remaining, what is still owed on it now.
--
-- payments_received_minor, current_charges_minor: the statement's, NULL
--   when the source does not give them.
-- balance_minor: what the source last said is still owed on it (the
--   portal's balance_remaining; the sandbox's), or what a partial payment
--   left; NULL: not known, the amount due. The entity shows 0 for a PAID
--   bill, whatever is stored.
ALTER TABLE bills
    ADD COLUMN payments_received_minor bigint,
    ADD COLUMN current_charges_minor   bigint,
    ADD COLUMN balance_minor           bigint;

-- The sandbox wrote a paid statement's amount due as what was left (0):
-- the statement asked for its total.
UPDATE bills SET amount_due_minor = total_minor
 WHERE source = 'sandbox' AND amount_due_minor < total_minor;

CREATE OR REPLACE FUNCTION bills_json(b bills) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', b.id,
        'object', 'bill',
        -- the spec's sync loop upserts by bill_id: the same value as id
        'bill_id', b.id,
        'link_id', b.link_id,
        'account_id', b.account_id,
        'user_id', b.client_user_id,
        'biller_id', b.biller_id,
        'biller_name', b.biller_name,
        'status', b.status,
        'total_amount', bds_money(b.total_minor, b.currency),
        'amount_due', bds_money(b.amount_due_minor, b.currency),
        'previous_balance', bds_money(b.previous_balance_minor, b.currency),
        'payments_received', bds_money(b.payments_received_minor, b.currency),
        'current_charges', bds_money(b.current_charges_minor, b.currency),
        'balance_remaining', bds_money(CASE WHEN b.status = 'PAID' THEN 0
            ELSE coalesce(b.balance_minor, b.amount_due_minor) END, b.currency),
        'due_date_iso', to_char(b.due_date, 'YYYY-MM-DD'),
        'statement_date', to_char(b.statement_date, 'YYYY-MM-DD'),
        'service_period', CASE WHEN b.period_start IS NULL AND b.period_end IS NULL
            THEN NULL ELSE json_build_object(
                'start_date', to_char(b.period_start, 'YYYY-MM-DD'),
                'end_date', to_char(b.period_end, 'YYYY-MM-DD')) END,
        'bill_number', b.bill_number,
        'account_number_mask', b.account_number_mask,
        'line_items', (SELECT coalesce(json_agg(json_build_object(
                'description', li->'description',
                'amount', bds_money((li->'amount'->>'minor')::bigint,
                                    li->'amount'->>'currency'),
                'category', li->'category',
                'quantity', li->'quantity',
                'unit', li->'unit') ORDER BY n), '[]'::json)
            FROM jsonb_array_elements(b.line_items) WITH ORDINALITY AS t(li, n)),
        'usage', b.usage,
        'paid_at', bds_iso(b.paid_at),
        'paid_reason', b.paid_reason,
        'match_status', b.match_status,
        'matched_payment_ref', b.matched_payment_ref,
        'has_statement', b.has_statement,
        -- the route that answers the signed download URL
        'statement_url', CASE WHEN b.has_statement
            THEN '/v1/bills/' || b.id || '/statement' END,
        'source', b.source,
        'import_id', b.import_id,
        'created_at', bds_iso(b.created_at),
        'updated_at', bds_iso(b.updated_at),
        -- deprecated, kept equal to their successors
        'amount', bds_money_major(b.total_minor, b.currency),
        'currency', b.currency,
        'due_date', to_char(b.due_date, 'YYYY-MM-DD'))
$$;

UPDATE bills SET entity = NULL;
