-- Links (DOMAIN.md "Link tokens, the connect flow, links"): one row per
-- linked biller account of a client's end user, in one environment. Every
-- key starts with client_id (DESIGN.md "Tenancy"). Credentials are sealed
-- (XChaCha20-Poly1305, key id beside them so keys rotate) and dropped on
-- revoke. (The per-link change sequence of the bills sync is the bills
-- module's own table.)

CREATE TABLE links (
    client_id                   text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                          text        NOT NULL,     -- link_<uuidv7>
    environment                 text        NOT NULL
                                CHECK (environment IN ('sandbox', 'development', 'production')),
    client_user_id              text        NOT NULL,
    biller_id                   text        NOT NULL REFERENCES billers (id),
    status                      text        NOT NULL DEFAULT 'ACTIVE'
                                CHECK (status IN ('ACTIVE', 'DISCONNECTED', 'REVOKED')),
    disconnect_reason           text
                                CHECK (disconnect_reason IN ('expired', 'credentials_rejected', 'revoked')),
    credential_rejection_reason text
                                CHECK (credential_rejection_reason IN ('INVALID_CREDENTIALS',
                                       'CONNECTION_DEGRADED')),
    scopes                      text[]      NOT NULL DEFAULT '{}',
    link_token_id               text,                     -- the token that made it (NULL: sandbox API)
    credentials                 bytea,                    -- sealed; NULL once revoked
    credentials_key_id          text,
    sync_status                 text        NOT NULL DEFAULT 'pending'
                                CHECK (sync_status IN ('pending', 'syncing', 'ok', 'error')),
    last_attempt_at             timestamptz,
    last_success_at             timestamptz,
    next_sync_at                timestamptz,
    first_sync_completed_at     timestamptz,
    bill_count                  integer     NOT NULL DEFAULT 0,
    refresh_requested_at        timestamptz,              -- POST .../refresh: 429 within 10 min
    completed_event_at          timestamptz,              -- link.completed sent (once)
    ready_event_at              timestamptz,              -- connection.ready sent (once)
    consent_expires_at          timestamptz,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id)
);
-- GET /v1/links/{id} answers 403 for another client's link: find it by id.
CREATE UNIQUE INDEX links_by_id ON links (id);
CREATE INDEX links_list ON links (client_id, environment, created_at, id);
CREATE INDEX links_user ON links (client_id, environment, client_user_id);
CREATE INDEX links_biller ON links (biller_id) WHERE status <> 'REVOKED';
CREATE INDEX links_due ON links (next_sync_at) WHERE status = 'ACTIVE';

CREATE TABLE link_accounts (
    client_id           text        NOT NULL,
    id                  text        NOT NULL,             -- acct_<uuidv7>
    link_id             text        NOT NULL,
    external_ref        text        NOT NULL,             -- the connector's account id
    name                text,
    type                text,
    account_number_mask text,
    service_address     text,
    status              text        NOT NULL DEFAULT 'ACTIVE',
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    UNIQUE (client_id, link_id, external_ref),
    FOREIGN KEY (client_id, link_id) REFERENCES links (client_id, id) ON DELETE CASCADE
);

-- Link access tokens (bds_lat_…): SHA-256 only; expires_at NULL for the one
-- an exchange returns, 1 h for POST /v1/links/{id}/access-token.
CREATE TABLE link_access_tokens (
    token_sha256 bytea       PRIMARY KEY,
    client_id    text        NOT NULL,
    link_id      text        NOT NULL,
    environment  text        NOT NULL,
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (client_id, link_id) REFERENCES links (client_id, id) ON DELETE CASCADE
);
