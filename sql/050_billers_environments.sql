-- Which environments may link a biller (docs/DECISIONS.md "Environments:
-- which connector links where"). A sandbox key never reaches a real biller
-- and a live key never links the sandbox fixtures: the biller's connector
-- decides. The sandbox connector links in the sandbox only; a portal biller
-- (a real biller's portal) in development and production only, and in the
-- sandbox too when the catalog sets sandbox_portal. Only the development
-- deployment's simulator billers carry that flag (sql/seed/002_biller_sim.sql,
-- `bdsctl seed`); production's catalog (data/billers.csv through `bdsctl
-- billers import`, which never writes the column) never sets it.

ALTER TABLE billers ADD COLUMN sandbox_portal boolean NOT NULL DEFAULT false
    CONSTRAINT billers_sandbox_portal_is_portal CHECK (NOT sandbox_portal OR connector = 'portal');

-- The one answer to "may environment env link biller b?", asked by every
-- gate: link-token creation, the connect picker, the connect call, the
-- connect job, the exchange and a link's retrieval. false for an unknown
-- environment or connector.
CREATE FUNCTION billers_linkable(env text, b billers) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT COALESCE(CASE b.connector
        WHEN 'sandbox' THEN env = 'sandbox'
        WHEN 'portal' THEN env IN ('development', 'production')
            OR (env = 'sandbox' AND b.sandbox_portal)
        END, false) $$;
