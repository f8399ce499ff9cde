-- Clients and their secrets. The tables come from 002 and 004;
-- this adds what the clients module's queries need.

-- Deleting a client cascades to every one of its secrets, revoked ones
-- included; the live-secret index (004) covers only live rows.
CREATE INDEX client_secrets_client ON client_secrets (client_id);

-- A rotation names the secret it replaced; a secret is replaced at most once.
CREATE UNIQUE INDEX client_secrets_rotated_from ON client_secrets (rotated_from)
    WHERE rotated_from IS NOT NULL;
