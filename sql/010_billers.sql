-- The biller catalog (DOMAIN.md "Billers"): reference data shared by every
-- client, loaded from data/billers.csv by `bdsctl billers import` (upsert by
-- id). Search is case- and accent-insensitive over name words and domains.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS unaccent;

-- unaccent() is STABLE (its dictionary could change); the catalog folds
-- names once, on write, with the dictionary named explicitly, so the folded
-- text can be indexed.
CREATE FUNCTION billers_fold(text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
    AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, $1)) $$;

CREATE TABLE billers (
    id                 text        PRIMARY KEY,          -- blr_<uuidv7>
    name               text        NOT NULL CHECK (name <> ''),
    type               text        NOT NULL CHECK (type IN ('electric', 'gas', 'water',
                                   'sewer', 'waste', 'internet', 'mobile', 'phone', 'cable',
                                   'insurance', 'other')),
    status             text        NOT NULL DEFAULT 'ACTIVE'
                                   CHECK (status IN ('ACTIVE', 'DEGRADED', 'UNSUPPORTED')),
    domains            text[]      NOT NULL DEFAULT '{}', -- lower-case host names
    website            text,
    login_url          text,
    logo_url           text,
    country            text        NOT NULL,              -- ISO 3166 alpha-2
    connectivity_types text[]      NOT NULL DEFAULT '{}', -- credentials, oauth, document
    consent_scopes     text[]      NOT NULL DEFAULT '{}',
    capabilities       text[]      NOT NULL DEFAULT '{}', -- names of the true flags
    connector          text        NOT NULL DEFAULT 'portal'
                                   CHECK (connector IN ('sandbox', 'portal')),
    base_url           text,                              -- portal billers
    search_text        text        NOT NULL DEFAULT '',   -- billers_fold(name || ' ' || domains)
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX billers_search_trgm ON billers USING gin (search_text gin_trgm_ops);
CREATE INDEX billers_name ON billers (name, id);
CREATE INDEX billers_created ON billers (created_at, id);
CREATE INDEX billers_domains ON billers USING gin (domains);
