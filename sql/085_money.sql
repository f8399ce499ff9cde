-- One money: bds_currency_exponent answers what lib/core/money.c's table
-- says for every active ISO 4217 code (t/e2e/check_e2e_schema.c asks it
-- for each one). 016's version lacked UYW (4), so a UYW amount read at
-- four digits was shown at two: a hundred times off. Every code of the
-- table not named below has 2; a code not in the table (rows written
-- before codes were checked) has 2 as well, MONEY_EXP_FALLBACK in C.
-- Still IMMUTABLE, so bds_money_major keeps inlining it.
CREATE OR REPLACE FUNCTION bds_currency_exponent(code text) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN code IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW',
                      'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF',
                      'XPF') THEN 0
        WHEN code IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 3
        WHEN code IN ('CLF', 'UYW') THEN 4
        ELSE 2
    END
$$;

-- Bills in UYW stored their entity at two digits: 090_entity_order.sql,
-- which follows, rebuilds every bill's entity.
