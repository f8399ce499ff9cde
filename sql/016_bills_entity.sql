-- The Bill entity as the API writes it (DOMAIN.md "Bills and sync"), built
-- in one place for GET /v1/bills, GET /v1/bills/{id}, the sync's buckets
-- and anything else that shows a bill.
--
-- Money: stored as integer minor units + ISO 4217 code; written as
-- {"value": decimal string with the currency's minor-unit exponent,
-- "currency": code}: JPY 12345 -> "12345", USD 12345 -> "123.45",
-- BHD 12345 -> "12.345". The exponents are ISO 4217's; a code not listed
-- has 2.

CREATE FUNCTION bds_currency_exponent(code text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN code IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW',
                      'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF',
                      'XPF') THEN 0
        WHEN code IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 3
        WHEN code = 'CLF' THEN 4
        ELSE 2
    END
$$;

-- minor units as major units, exactly (numeric), at the currency's exponent
CREATE FUNCTION bds_money_major(minor bigint, code text) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT round(minor::numeric / (10::numeric ^ bds_currency_exponent(code)),
                 bds_currency_exponent(code))
$$;

-- {value, currency}; NULL minor -> JSON null
CREATE FUNCTION bds_money(minor bigint, code text) RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN minor IS NULL THEN NULL
        ELSE jsonb_build_object('value', bds_money_major(minor, code)::text,
                                'currency', code) END
$$;

CREATE FUNCTION bds_iso(t timestamptz) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- The entity. Line items are stored with minor units
-- ({"description", "category", "amount": {"minor", "currency"}, "quantity",
-- "unit"}) and written with money objects; usage is stored as written.
CREATE FUNCTION bills_json(b bills) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT jsonb_build_object(
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
            THEN NULL ELSE jsonb_build_object(
                'start_date', to_char(b.period_start, 'YYYY-MM-DD'),
                'end_date', to_char(b.period_end, 'YYYY-MM-DD')) END,
        'bill_number', b.bill_number,
        'account_number_mask', b.account_number_mask,
        'line_items', (SELECT coalesce(jsonb_agg(jsonb_build_object(
                'description', li->'description',
                'amount', bds_money((li->'amount'->>'minor')::bigint,
                                    li->'amount'->>'currency'),
                'category', li->'category',
                'quantity', li->'quantity',
                'unit', li->'unit') ORDER BY n), '[]'::jsonb)
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

-- The entity is kept beside the row, written by every insert and update:
-- reads (GET, lists, the sync's pages) send it as stored, and a write pays
-- for building it once.
ALTER TABLE bills ADD COLUMN entity text;
CREATE FUNCTION bills_entity() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.entity := bills_json(NEW)::text;
    RETURN NEW;
END $$;
CREATE TRIGGER bills_entity BEFORE INSERT OR UPDATE ON bills
    FOR EACH ROW EXECUTE FUNCTION bills_entity();

-- Observed payments carry what payment.observed and the payments lists
-- show without a join; status follows the portal (posted, reversed).
ALTER TABLE observed_payments
    ADD COLUMN client_user_id text NOT NULL DEFAULT '',
    ADD COLUMN biller_id      text NOT NULL DEFAULT '',
    ADD COLUMN status         text NOT NULL DEFAULT 'posted'
                              CHECK (status IN ('posted', 'reversed')),
    ADD COLUMN reversed_at    timestamptz,
    ADD COLUMN updated_at     timestamptz NOT NULL DEFAULT now();
CREATE INDEX observed_payments_link ON observed_payments (client_id, link_id, paid_at, id);
CREATE INDEX observed_payments_bill ON observed_payments (client_id, bill_id) WHERE bill_id IS NOT NULL;

-- The payment entity (payment.observed's data.object and the payments lists).
CREATE FUNCTION payments_json(p observed_payments) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT jsonb_build_object(
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
