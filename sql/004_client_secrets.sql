-- Client secrets (API keys): one live secret per (client, environment).
-- Only the SHA-256 of a key is stored; the plaintext is shown once.
ALTER TABLE clients ADD COLUMN pci_approved boolean NOT NULL DEFAULT false;

CREATE TABLE client_secrets (
    id           text        PRIMARY KEY,                  -- sec_<uuidv7>
    client_id    text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    environment  text        NOT NULL
                 CHECK (environment IN ('sandbox', 'development', 'production')),
    key_hash     bytea       NOT NULL UNIQUE,              -- SHA-256 of the key
    key_prefix   text        NOT NULL,                     -- first characters, for display
    created_at   timestamptz NOT NULL DEFAULT now(),
    rotated_from text,                                     -- the secret this one replaced
    revoked_at   timestamptz
);
CREATE UNIQUE INDEX client_secrets_live ON client_secrets (client_id, environment)
    WHERE revoked_at IS NULL;
