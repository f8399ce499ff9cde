-- Retrieval cost per bill. A retrieval writes each bill three
-- times (insert, the payment match, the document's hash), and the bills
-- entity trigger (016) rebuilt the entity each time.
--
-- 1. bds_money and bds_iso were declared IMMUTABLE but call STABLE
--    functions (jsonb_build_object, to_char of a timestamp), so PostgreSQL
--    never inlined them: every call from bills_json (about 11 per entity),
--    payments_json, the billers' and the links' entities and the bills
--    status RETURNING ran as a separate SQL function, parsed and planned
--    again per call of the caller's query. Declared STABLE, as what they
--    call is, they are inlined into their callers; their results do not
--    change. No index or generated column uses them (IMMUTABLE would be
--    required there).
CREATE OR REPLACE FUNCTION bds_money(minor bigint, code text) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN minor IS NULL THEN NULL
        ELSE jsonb_build_object('value', bds_money_major(minor, code)::text,
                                'currency', code) END
$$;

CREATE OR REPLACE FUNCTION bds_iso(t timestamptz) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$$;

-- 2. An update that changes nothing the entity shows but the document's
--    hash (bills_statement_attach: statement_sha256 alone, no updated_at)
--    keeps the stored entity instead of building the same one again.
--    Every other update rebuilds it, as before; so does one that sets
--    entity itself (to have it rebuilt). Compared byte for byte (*=), so a
--    value written differently but equal only rebuilds it. bills_json does
--    not read statement_sha256: if it ever does, drop the shortcut.
CREATE OR REPLACE FUNCTION bills_entity() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    o bills;
    n bills;
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.entity IS NOT NULL
       AND NEW.entity IS NOT DISTINCT FROM OLD.entity
       AND NEW.statement_sha256 IS DISTINCT FROM OLD.statement_sha256 THEN
        o := OLD;
        n := NEW;
        o.statement_sha256 := NULL;
        n.statement_sha256 := NULL;
        IF o *= n THEN		-- the same bytes in every other column
            RETURN NEW;
        END IF;
    END IF;
    NEW.entity := bills_json(NEW)::text;
    RETURN NEW;
END $$;
