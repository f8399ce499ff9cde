-- The bill and payment entities start with "id", "object", as every other
-- entity does. bills_json and payments_json were built as jsonb, which
-- stores an object's keys sorted (shortest first: "id", "usage", "amount",
-- "object", ...) and prints them so; built as json (json_build_object)
-- they keep the order written here, as links_json (026) and billers_json
-- (021) do. Same members, same values. The whitespace PostgreSQL puts
-- between tokens is not the API's: a response copies the text without it
-- (json_compact, in db_json_raw).
DROP FUNCTION bills_json(bills);
CREATE FUNCTION bills_json(b bills) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', b.id,
        'object', 'bill',
        'link_id', b.link_id,
        'account_id', b.account_id,
        'user_id', b.client_user_id,
        'biller_id', b.biller_id,
        'biller_name', b.biller_name,
        'status', b.status,
        'total_amount', bds_money(b.total_minor, b.currency),
        'amount_due', bds_money(b.amount_due_minor, b.currency),
        'previous_balance', bds_money(b.previous_balance_minor, b.currency),
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
        'source', b.source,
        'import_id', b.import_id,
        'created_at', bds_iso(b.created_at),
        'updated_at', bds_iso(b.updated_at),
        -- deprecated, kept equal to their successors
        'amount', bds_money_major(b.total_minor, b.currency),
        'currency', b.currency,
        'due_date', to_char(b.due_date, 'YYYY-MM-DD'))
$$;

DROP FUNCTION payments_json(observed_payments);
CREATE FUNCTION payments_json(p observed_payments) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', p.id,
        'object', 'payment',
        'user_id', p.client_user_id,
        'link_id', p.link_id,
        'account_id', p.account_id,
        'biller_id', p.biller_id,
        'amount', bds_money(p.amount_minor, p.currency),
        'paid_at', bds_iso(p.paid_at),
        'status', p.status,
        'bill_id', p.bill_id,
        'created_at', bds_iso(p.created_at))
$$;

-- Every stored bill entity rebuilt in the new order (the trigger builds
-- it: an update that sets entity rebuilds it, sql/027).
UPDATE bills SET entity = NULL;
