-- Developer accounts: users, their first client, sessions, one-time codes,
-- legal acceptance, verification and live access. No password, code or
-- refresh token is stored in plaintext: Argon2id for passwords, keyed
-- hashes for codes, SHA-256 for refresh tokens.

CREATE TABLE users (
    id              text        PRIMARY KEY,            -- usr_<uuidv7>
    email           text        NOT NULL,               -- lower-cased
    password_hash   text        NOT NULL,               -- crypto_pwhash_str (Argon2id)
    given_name      text        NOT NULL DEFAULT '',
    family_name     text        NOT NULL DEFAULT '',
    company_name    text,
    confirmed_at    timestamptz,                        -- confirm-signup
    email_verified  boolean     NOT NULL DEFAULT false, -- email/verify only
    billing_done_at timestamptz,
    live_access     text        NOT NULL DEFAULT 'none'
                    CHECK (live_access IN ('none', 'pending', 'granted', 'denied')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email ON users (email);

-- Clients (applications). Sign-up creates the first one; the clients module
-- owns the rest of their life.
CREATE TABLE clients (
    id              text        PRIMARY KEY,            -- cli_<uuidv7>
    user_id         text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            text        NOT NULL,
    description     text,
    redirect_uris   jsonb       NOT NULL DEFAULT '[]',
    allowed_origins jsonb       NOT NULL DEFAULT '[]',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX clients_user ON clients (user_id, created_at);

-- A sign-in. Access tokens carry its id (sid); every JWT request checks it
-- is not revoked, so sign-out really ends it. The refresh token rotates.
CREATE TABLE sessions (
    id                 text        PRIMARY KEY,          -- ses_<uuidv7>
    user_id            text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    refresh_hash       bytea       NOT NULL UNIQUE,      -- SHA-256 of the refresh token
    refresh_expires_at timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    refreshed_at       timestamptz,
    revoked_at         timestamptz
);
CREATE INDEX sessions_user ON sessions (user_id) WHERE revoked_at IS NULL;

-- One live code per (user, purpose); a new request replaces the old one.
CREATE TABLE email_codes (
    user_id      text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    purpose      text        NOT NULL
                 CHECK (purpose IN ('signup', 'verify_email', 'reset_password')),
    code_hash    bytea       NOT NULL,                  -- HMAC(secret_key, purpose, code)
    expires_at   timestamptz NOT NULL,
    sent_at      timestamptz NOT NULL DEFAULT now(),    -- request cooldown
    attempts     integer     NOT NULL DEFAULT 0,        -- wrong codes since sent
    locked_until timestamptz,                           -- after 5 wrong codes
    used_at      timestamptz,
    PRIMARY KEY (user_id, purpose)
);

-- The legal registry (bdsctl legal add). A document is offered from its
-- effective date; the newest effective version of each kind is current.
CREATE TABLE legal_documents (
    kind           text        NOT NULL CHECK (kind IN ('terms', 'privacy', 'dpa')),
    version        text        NOT NULL CHECK (length(version) BETWEEN 1 AND 64),
    effective_date date        NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, version)
);

-- Audit of what each user accepted at sign-up.
CREATE TABLE legal_acceptances (
    user_id        text        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind           text        NOT NULL,
    version        text        NOT NULL,
    effective_date date        NOT NULL,
    accepted_at    timestamptz NOT NULL,                -- when the user accepted
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    source         text        NOT NULL,                -- acceptance_source
    remote_addr    text,
    PRIMARY KEY (user_id, kind, version)
);

CREATE TABLE verification_requests (
    user_id      text        PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    company_name text        NOT NULL,
    website      text,
    use_case     text        NOT NULL,
    country      text        NOT NULL,
    contact_name text        NOT NULL,
    submitted_at timestamptz NOT NULL DEFAULT now()
);

-- The operator queue for live access in production (bdsctl live-access).
CREATE TABLE live_access_requests (
    user_id      text        PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    status       text        NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'approved', 'denied')),
    requested_at timestamptz NOT NULL DEFAULT now(),
    decided_at   timestamptz,
    reason       text
);
CREATE INDEX live_access_pending ON live_access_requests (requested_at)
    WHERE status = 'pending';

-- Failed sign-ins per account and per address, for throttling.
CREATE TABLE auth_throttle (
    scope        text        NOT NULL CHECK (scope IN ('account', 'addr')),
    key          text        NOT NULL,
    failures     integer     NOT NULL DEFAULT 0,
    window_start timestamptz NOT NULL DEFAULT now(),
    locked_until timestamptz,
    PRIMARY KEY (scope, key)
);
