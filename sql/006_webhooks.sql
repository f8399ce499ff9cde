-- Webhook subscriptions and the activity events table.
--
-- A subscription belongs to one client and one environment. Its signing
-- secret is sealed at rest (XChaCha20-Poly1305 under secret_key, bound to
-- the row id); the plaintext is shown once. During a rotation's grace
-- window the previous secret still signs (a second v1 in Service-Signature).
-- Keys start with client_id (DESIGN "Tenancy"): every query filters by it.

CREATE TABLE webhooks (
    client_id                  text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                         text        NOT NULL,            -- whk_<uuidv7>
    environment                text        NOT NULL
                               CHECK (environment IN ('sandbox', 'development', 'production')),
    url                        text        NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
    events                     jsonb       NOT NULL             -- stored names, normalised
                               CHECK (jsonb_typeof(events) = 'array'),
    enabled                    boolean     NOT NULL DEFAULT true,
    secret                     bytea       NOT NULL,            -- sealed, ad = id
    previous_secret            bytea,                           -- sealed, ad = id
    previous_secret_expires_at timestamptz,
    disabled_reason            text,                            -- why it was disabled (a 410...)
    created_at                 timestamptz NOT NULL DEFAULT now(),
    updated_at                 timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
-- Listing, the primary webhook (oldest enabled) and fan-out to the
-- subscriptions of (client, environment).
CREATE INDEX webhooks_client_env ON webhooks (client_id, environment, created_at);

-- Activity events: what happened to a client's resources, in the envelope's
-- terms (type, mode = environment, data). Written in the same transaction
-- as the change. The events module (lib/events, 007) extends this table
-- with its delivery state; webhook_endpoint.deleted is recorded here.
CREATE TABLE events (
    client_id       text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id              text        NOT NULL,                       -- evt_<uuidv7>
    environment     text                                        -- NULL: internal paths
                    CHECK (environment IN ('sandbox', 'development', 'production')),
    type            text        NOT NULL,
    data            jsonb       NOT NULL,                       -- the envelope's data member
    request_id      text,                                       -- the originating request
    idempotency_key text,                                       -- its Idempotency-Key
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id)
);
CREATE INDEX events_client_created ON events (client_id, created_at);
