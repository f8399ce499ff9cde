-- Requests to link and biller discovery (SPEC "Request to link",
-- DOMAIN.md "Identifiers"): a server-initiated request for an end user to
-- link a biller account (rtl_…), and the onboarding record (bdisc_…) of a
-- biller a client named by its URL when the catalog had no biller for it.
-- Both are a client's own rows in one environment; every key starts with
-- client_id.

-- One onboarding record per (client, environment, registrable domain): every
-- request to link that names a URL of that domain waits on it, and an
-- operator's approve or reject (bdsctl discovery) settles them all.
--   PENDING  waits for an operator
--   MATCHED  the catalog had a biller for the domain (biller_id)
--   APPROVED an operator bound it to a catalog biller (biller_id)
--   REJECTED an operator refused it (biller.unsupported sent)
CREATE TABLE biller_discoveries (
    client_id    text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id           text        NOT NULL,                   -- bdisc_<uuidv7>
    environment  text        NOT NULL
                 CHECK (environment IN ('sandbox', 'development', 'production')),
    biller_name  text        NOT NULL,                   -- as the client sent it
    biller_url   text        NOT NULL,                   -- canonical https URL
    domain       text        NOT NULL,                   -- its registrable domain
    status       text        NOT NULL DEFAULT 'PENDING'
                 CHECK (status IN ('PENDING', 'MATCHED', 'APPROVED', 'REJECTED')),
    biller_id    text        REFERENCES billers (id),
    decided_at   timestamptz,                            -- approve or reject
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    UNIQUE (client_id, environment, domain),
    CHECK ((status IN ('MATCHED', 'APPROVED')) = (biller_id IS NOT NULL))
);
CREATE UNIQUE INDEX biller_discoveries_by_id ON biller_discoveries (id);
CREATE INDEX biller_discoveries_list ON biller_discoveries (client_id, environment, created_at, id);
-- the operator's queue, and approve/reject of a domain across clients
CREATE INDEX biller_discoveries_pending ON biller_discoveries (domain) WHERE status = 'PENDING';

CREATE TABLE request_to_links (
    client_id       text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id              text        NOT NULL,                -- rtl_<uuidv7>
    environment     text        NOT NULL
                    CHECK (environment IN ('sandbox', 'development', 'production')),
    client_user_id  text        NOT NULL,
    biller_id       text        REFERENCES billers (id),
    status          text        NOT NULL DEFAULT 'PENDING'
                    CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'CANCELLED',
                           'EXPIRED')),
    link_token_id   text,                                -- the token whose flow runs
    -- the proceed's {link_url}/connect#ticket=…: the ticket is a bearer, so
    -- it is sealed (XChaCha20-Poly1305, AD = the id) and wiped when the
    -- request closes
    session_url     bytea,
    consents        text[]      NOT NULL DEFAULT '{}',
    metadata        json        NOT NULL DEFAULT '{}',  -- echoed back as sent
    onboarding_name text,                                -- onboarding: as sent
    onboarding_url  text,                                -- onboarding: canonical
    discovery_id    text,                                -- onboarding: its record
    cancel_reason   text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    FOREIGN KEY (client_id, discovery_id) REFERENCES biller_discoveries (client_id, id)
);
CREATE UNIQUE INDEX request_to_links_by_id ON request_to_links (id);
CREATE INDEX request_to_links_list ON request_to_links (client_id, environment, created_at, id);
-- the expiry sweep
CREATE INDEX request_to_links_open ON request_to_links (created_at)
    WHERE status IN ('PENDING', 'IN_PROGRESS');
-- requests waiting on a discovery record
CREATE INDEX request_to_links_waiting ON request_to_links (client_id, discovery_id)
    WHERE biller_id IS NULL AND status IN ('PENDING', 'IN_PROGRESS');
-- who hears biller.unsupported: open requests on a biller
CREATE INDEX request_to_links_biller ON request_to_links (biller_id)
    WHERE status IN ('PENDING', 'IN_PROGRESS');

-- The link tokens a request's proceed made, ended when it closes.
CREATE INDEX link_tokens_rtl ON link_tokens (client_id, request_to_link_id)
    WHERE request_to_link_id IS NOT NULL;
