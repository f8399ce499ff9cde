-- Bounded guessing in the connect flow (docs/DECISIONS.md "Bounded guessing
-- in the connect flow"). Failed logins and wrong MFA answers are counted per
-- link token (link_tokens.failed_attempts, over the token's life) and per
-- (client, biller, username) over a sliding window (connect_failures, one row
-- per failure). The username is kept only as a keyed hash (HMAC-SHA-256 under
-- secret_key of the trimmed, lower-cased name), never in the clear.

ALTER TABLE link_tokens ADD COLUMN failed_attempts integer NOT NULL DEFAULT 0;

CREATE TABLE connect_failures (
    client_id      text        NOT NULL,
    link_token_id  text        NOT NULL,
    biller_id      text        NOT NULL,
    username_hash  bytea       NOT NULL,
    error_code     text        NOT NULL,    -- INVALID_CREDENTIALS, MFA_FAILED,
                                            -- INVALID_UPDATED_USERNAME
    at             timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (client_id, link_token_id) REFERENCES link_tokens (client_id, id)
        ON DELETE CASCADE
);
CREATE INDEX connect_failures_username
    ON connect_failures (client_id, biller_id, username_hash, at);
CREATE INDEX connect_failures_token ON connect_failures (client_id, link_token_id);
CREATE INDEX connect_failures_at ON connect_failures (at);

-- username_hash: the keyed hash of the username the session's last connect
-- sent (its MFA answers count against it). fresh_challenges: logins the
-- connect job made for a new challenge after a wrong answer (at most one).
ALTER TABLE link_sessions ADD COLUMN username_hash bytea,
    ADD COLUMN fresh_challenges integer NOT NULL DEFAULT 0;
