-- The portal connector's records (docs/portal.md): what the
-- retrieval and connect jobs keep beside links and bills
-- (lib/jobs/connectors/connector_db.c).

-- Statements a biller lists as "structured": false: only the document is
-- authoritative, so no bill is made from the figures; the document is
-- stored content-addressed (data_dir) and recorded here until the import
-- extraction pipeline reads it.
CREATE TABLE portal_unstructured (
    client_id       text        NOT NULL,
    link_id         text        NOT NULL,
    statement_ref   text        NOT NULL,             -- the biller's statement id
    account_id      text        NOT NULL,             -- acct_…
    revision        integer     NOT NULL,
    statement_date  date        NOT NULL,
    document_sha256 text        CHECK (document_sha256 ~ '^[0-9a-f]{64}$'), -- NULL: none
    withdrawn_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, link_id, statement_ref),
    FOREIGN KEY (client_id, link_id) REFERENCES links (client_id, id) ON DELETE CASCADE
);

-- Per link: why the connector last disconnected it, beside the link's own
-- reason (mfa_required: a refresh met an MFA challenge; consent_expired,
-- invalid_credentials, account_locked), and the time its successful
-- retrievals spent inside the biller's calls against the whole run (the
-- benchmark's "our side" share).
CREATE TABLE portal_link_state (
    client_id       text        NOT NULL,
    link_id         text        NOT NULL,
    detail          text,
    detail_at       timestamptz,
    retrievals      bigint      NOT NULL DEFAULT 0,
    portal_ns       bigint      NOT NULL DEFAULT 0,
    run_ns          bigint      NOT NULL DEFAULT 0,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, link_id),
    FOREIGN KEY (client_id, link_id) REFERENCES links (client_id, id) ON DELETE CASCADE
);

-- The connect flow: a biller's MFA challenge waiting for the user's answer
-- (the portal's challenge id, sealed with secret_key, the session id bound
-- as associated data). Answered once, then deleted; a new login drops it.
CREATE TABLE portal_challenges (
    client_id       text        NOT NULL,
    session_id      text        NOT NULL,             -- the link session (lses_…)
    state           bytea       NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, session_id),
    FOREIGN KEY (client_id, session_id) REFERENCES link_sessions (client_id, id)
        ON DELETE CASCADE
);
