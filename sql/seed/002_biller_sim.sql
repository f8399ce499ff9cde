-- The biller simulator: the development catalog's portal billers, served by
-- tools/biller-sim, which scripts/dev-up starts on 127.0.0.1:8090 with
-- `--billers power,water,gas,tokyo-gas:JPY:gas`. Loaded by `bdsctl seed`
-- (dev-up only): not in data/billers.csv, because that file is the shipped
-- catalog every deployment and every e2e stack imports, and its import
-- requires https base URLs (a loopback http URL is a dev allowance only).
-- Ids: the blr_01900002-… range (gen-billers.py uses …00000 and …00001).
-- Idempotent: an upsert by id, search_text folded like `billers import`.
-- sandbox_portal: a sandbox key may link them too (sql/050_billers_environments.sql;
-- docs/DECISIONS.md "Environments: which connector links where"): they are
-- the simulator, no real biller's portal. Production's catalog never sets it.
INSERT INTO billers AS b (id, name, type, status, domains, website, login_url, logo_url,
    country, connectivity_types, consent_scopes, capabilities, connector, base_url,
    sandbox_portal, search_text)
SELECT v.id, v.name, v.type, 'ACTIVE', v.domains, 'https://' || v.domains[1],
    'https://' || v.domains[1] || '/login', NULL, v.country, '{credentials}',
    '{bills,statements,payment_history,usage,account_details,payments}',
    '{bills,statements,payment_history,usage,mfa}', 'portal', v.base_url,
    true, billers_fold(v.name || ' ' || array_to_string(v.domains, ' '))
FROM (VALUES
    ('blr_01900002-0000-7000-8000-000000000001', 'Simulated Power & Light', 'electric',
     '{sim-power.example}'::text[], 'US', 'http://127.0.0.1:8090/b/power'),
    ('blr_01900002-0000-7000-8000-000000000002', 'Simulated Water District', 'water',
     '{sim-water.example}'::text[], 'US', 'http://127.0.0.1:8090/b/water'),
    ('blr_01900002-0000-7000-8000-000000000003', 'Simulated Gas Service', 'gas',
     '{sim-gas.example}'::text[], 'US', 'http://127.0.0.1:8090/b/gas'),
    ('blr_01900002-0000-7000-8000-000000000004', 'Simulated Tokyo Gas (JPY)', 'gas',
     '{sim-tokyo-gas.example}'::text[], 'JP', 'http://127.0.0.1:8090/b/tokyo-gas')
) AS v (id, name, type, domains, country, base_url)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, type = EXCLUDED.type,
    status = EXCLUDED.status, domains = EXCLUDED.domains, website = EXCLUDED.website,
    login_url = EXCLUDED.login_url, logo_url = EXCLUDED.logo_url,
    country = EXCLUDED.country, connectivity_types = EXCLUDED.connectivity_types,
    consent_scopes = EXCLUDED.consent_scopes, capabilities = EXCLUDED.capabilities,
    connector = EXCLUDED.connector, base_url = EXCLUDED.base_url,
    sandbox_portal = EXCLUDED.sandbox_portal, search_text = EXCLUDED.search_text,
    updated_at = now()
WHERE (b.name, b.type, b.status, b.domains, b.website, b.login_url, b.logo_url, b.country,
       b.connectivity_types, b.consent_scopes, b.capabilities, b.connector, b.base_url,
       b.sandbox_portal, b.search_text) IS DISTINCT FROM
      (EXCLUDED.name, EXCLUDED.type, EXCLUDED.status, EXCLUDED.domains, EXCLUDED.website,
       EXCLUDED.login_url, EXCLUDED.logo_url, EXCLUDED.country, EXCLUDED.connectivity_types,
       EXCLUDED.consent_scopes, EXCLUDED.capabilities, EXCLUDED.connector, EXCLUDED.base_url,
       EXCLUDED.sandbox_portal, EXCLUDED.search_text);
