-- Core tables shared by every module.

-- Idempotency: (owner, route, key) -> the body's hash and the stored
-- response. owner_id is the client id (client API) or the user id (/v1/iam).
-- A one-time secret is never stored: replayable = false makes a retry 409
-- IDEMPOTENCY_KEY_NOT_REPLAYABLE. Keys expire after 24 hours.
CREATE TABLE idempotency_keys (
    owner_id     text        NOT NULL,
    route        text        NOT NULL,
    key          text        NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    body_sha256  bytea       NOT NULL,
    status       integer,
    response     jsonb,
    replayable   boolean     NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL DEFAULT now() + interval '24 hours',
    PRIMARY KEY (owner_id, route, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
