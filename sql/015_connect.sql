-- The connect flow (DOMAIN.md "Link tokens, the connect flow, links"): link
-- tokens, the single-use tickets that open a connect session, the sessions
-- themselves (a small state machine driven by the connect job of bds-jobs)
-- and the public tokens an embedded flow hands to the client. Bearer secrets
-- (tickets, session tokens, public tokens) are kept as SHA-256 only; the
-- biller credentials and the MFA answer a session carries to the connect job
-- are sealed (XChaCha20-Poly1305, AD = the session id) and wiped after use.

CREATE TABLE link_tokens (
    client_id          text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                 text        NOT NULL,            -- lt_<uuidv7>; the bearer of the ticket call
    environment        text        NOT NULL
                       CHECK (environment IN ('sandbox', 'development', 'production')),
    mode               text        NOT NULL CHECK (mode IN ('create', 'update')),
    client_user_id     text        NOT NULL,
    biller_id          text        REFERENCES billers (id),
    connectivity_type  text,
    consents           text[]      NOT NULL DEFAULT '{}',
    redirect_uri       text,
    request_to_link_id text,
    metadata_json      text,
    update_link_id     text,
    update_reason      text,
    hosted             boolean     NOT NULL DEFAULT false,
    language           text        NOT NULL DEFAULT 'en',
    finished_at        timestamptz,                     -- link.session_finished sent
    expires_at         timestamptz NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id)
);
CREATE UNIQUE INDEX link_tokens_by_id ON link_tokens (id);

-- bds_tkt_…: single use; 60 s, or the link token's lifetime for the ticket
-- of a hosted_url.
CREATE TABLE connect_tickets (
    token_sha256  bytea       PRIMARY KEY,
    client_id     text        NOT NULL,
    link_token_id text        NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (client_id, link_token_id) REFERENCES link_tokens (client_id, id)
        ON DELETE CASCADE
);

-- One connect session (bds_lst_…), 30 min idle. status:
--   awaiting_credentials -> connecting -> mfa_required -> connecting ...
--   -> connected | failed (retry allowed until 5 failed logins: ended)
--   exited (the user left), expired (idle; computed, never stored).
CREATE TABLE link_sessions (
    client_id         text        NOT NULL,
    id                text        NOT NULL,             -- lses_<uuidv7> (internal)
    token_sha256      bytea       NOT NULL UNIQUE,
    environment       text        NOT NULL,
    link_token_id     text        NOT NULL,
    status            text        NOT NULL DEFAULT 'awaiting_credentials'
                      CHECK (status IN ('awaiting_credentials', 'connecting',
                             'mfa_required', 'connected', 'failed', 'exited')),
    biller_id         text        REFERENCES billers (id),
    credentials       bytea,                             -- sealed {username, password}
    mfa_answer        bytea,                             -- sealed answer for the next run
    mfa_type          text,
    mfa_prompt        text,
    error_code        text,
    failed_logins     integer     NOT NULL DEFAULT 0,
    ended             boolean     NOT NULL DEFAULT false, -- 5 failed logins: no more connects
    public_token      bytea,                             -- sealed bds_pub_… until exchanged
    link_id           text,
    exit_reason       text,
    expires_at        timestamptz NOT NULL,              -- idle deadline, moved by each call
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    FOREIGN KEY (client_id, link_token_id) REFERENCES link_tokens (client_id, id)
        ON DELETE CASCADE
);
CREATE INDEX link_sessions_token ON link_sessions (client_id, link_token_id, created_at);

-- bds_pub_…: single use, 30 min; exchanged for a link access token.
CREATE TABLE public_tokens (
    token_sha256  bytea       PRIMARY KEY,
    client_id     text        NOT NULL,
    environment   text        NOT NULL,
    link_token_id text        NOT NULL,
    link_id       text        NOT NULL,
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (client_id, link_id) REFERENCES links (client_id, id) ON DELETE CASCADE
);
