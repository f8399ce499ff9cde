-- Anonymous sandboxes (lib/sandboxes/, docs/sandboxes.md): a client made
-- without a developer, with a sandbox key, a claim token and a webhook
-- subscription whose deliveries land in an inbox; claimed by a developer,
-- or deleted with everything it made when it expires unclaimed.

-- An unclaimed sandbox's client has no developer yet. Every statement that
-- checks a developer's ownership compares user_id with the signed-in
-- developer's id (`user_id = $2`), which is never true of NULL: such a
-- client is nobody's, as an unknown one (docs/DECISIONS.md "Anonymous
-- sandboxes").
ALTER TABLE clients ALTER COLUMN user_id DROP NOT NULL;

-- A key replaced by a sandbox's claim keeps working until grace_until
-- (iam: revoked, but still found by the key lookup until then).
ALTER TABLE client_secrets ADD COLUMN grace_until timestamptz;

-- The sandbox. claim_sha256 is the SHA-256 of the claim token, shown once.
-- webhook_id: the subscription whose deliveries go to the inbox.
CREATE TABLE sandboxes (
    id           text        PRIMARY KEY,                  -- sbx_<uuidv7>
    client_id    text        NOT NULL UNIQUE REFERENCES clients (id) ON DELETE CASCADE,
    name         text,
    claim_sha256 bytea       NOT NULL,
    webhook_id   text        NOT NULL,
    expires_at   timestamptz NOT NULL,
    expiring_at  timestamptz,                              -- sandbox.expiring sent
    claimed_at   timestamptz,
    claimed_by   text        REFERENCES users (id) ON DELETE SET NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
-- The sweep's two walks: unclaimed sandboxes by their expiry.
CREATE INDEX sandboxes_unclaimed ON sandboxes (expires_at) WHERE claimed_at IS NULL;

-- webhooks: the inbox, a delivery target that keeps what would have been
-- sent (the exact body and headers, signature included) instead of
-- posting it. One row per delivery; a retried delivery replaces its row.
CREATE TABLE webhook_inbox (
    client_id   text        NOT NULL,
    id          text        NOT NULL,                      -- the delivery's dlv_ id
    webhook_id  text        NOT NULL,
    event_id    text        NOT NULL,
    event_type  text        NOT NULL,
    headers     jsonb       NOT NULL,                      -- {name: value} as sent
    body        text        NOT NULL,                      -- the raw signed body
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    FOREIGN KEY (client_id, webhook_id) REFERENCES webhooks (client_id, id) ON DELETE CASCADE
);
CREATE INDEX webhook_inbox_list ON webhook_inbox (client_id, webhook_id, received_at, id);

-- bills: the sync cycles a sandbox client completed (a sync page answered
-- has_more false), per link; synced_seq is the upper bound of the last
-- one, so a bill created at or below it has been synced. Sandbox keys only.
CREATE TABLE bill_sync_cycles (
    client_id   text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    link_id     text        NOT NULL,
    environment text        NOT NULL
                CHECK (environment IN ('sandbox', 'development', 'production')),
    cycles      bigint      NOT NULL DEFAULT 0,
    synced_seq  bigint      NOT NULL DEFAULT 0,
    first_at    timestamptz NOT NULL DEFAULT now(),
    last_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, link_id)
);
