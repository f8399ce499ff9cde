-- E-mail outbox. The API inserts a row in the same transaction as the
-- change that causes the message (sign-up, e-mail verification, password
-- reset); bds-deliver claims due rows, sends them and records the outcome.
-- The message (headers and body, codes included) is sealed at rest with
-- XChaCha20-Poly1305 under secret_key, bound to the row id, and wiped once
-- the row is done (sent or failed).

CREATE TABLE outbox_email (
    id              text        PRIMARY KEY,            -- eml_<uuidv7>
    kind            text        NOT NULL,               -- signup_confirm, verify_email...
    to_addr         text        NOT NULL,
    sealed          bytea,                              -- NULL once sent or failed
    status          text        NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'sent', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,     -- claims so far
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until     timestamptz,                        -- claimed by a deliverer until
    last_error      text,                               -- what failed; never content
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz,
    CHECK (status = 'pending' OR sealed IS NULL)
);

-- The claim's scan: due pending rows in order. Sent and failed rows, which
-- are nearly all of the table, are not in the index.
CREATE INDEX outbox_email_due ON outbox_email (next_attempt_at)
    WHERE status = 'pending';

-- Wake every bds-deliver listening. pg_notify is delivered at commit, so a
-- rolled-back insert wakes nobody, and the notifications of one transaction
-- fold into one. The payload names the queue; deliverers treat any
-- notification as a wake-up and find the rows by polling.
CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bds_outbox', TG_TABLE_NAME);
    RETURN NULL;
END;
$$;

CREATE TRIGGER outbox_email_notify
    AFTER INSERT ON outbox_email
    FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify();
