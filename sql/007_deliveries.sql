-- Webhook deliveries: one row per (event, subscription), written in the
-- transaction that emits the event (transactional outbox) and claimed by
-- bds-deliver with FOR UPDATE SKIP LOCKED and a lease. Every attempt is kept.

ALTER TABLE events ADD COLUMN api_version      text;
ALTER TABLE events ADD COLUMN producer_service text NOT NULL DEFAULT 'bds-api';
ALTER TABLE events ADD COLUMN correlation_id   text;

CREATE TABLE deliveries (
    client_id        text        NOT NULL,
    id               text        NOT NULL,              -- dlv_<uuidv7>
    event_id         text        NOT NULL,
    webhook_id       text        NOT NULL,
    status           text        NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'succeeded', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    lease_until      timestamptz,
    last_status_code integer,                           -- 0: no HTTP response
    last_error       text,
    replay_of        text,                              -- a replay: the delivery it repeats
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    FOREIGN KEY (client_id, event_id) REFERENCES events (client_id, id) ON DELETE CASCADE,
    FOREIGN KEY (client_id, webhook_id) REFERENCES webhooks (client_id, id) ON DELETE CASCADE
);
CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX deliveries_event ON deliveries (client_id, event_id);
CREATE INDEX deliveries_webhook ON deliveries (client_id, webhook_id);

CREATE TABLE delivery_attempts (
    client_id    text        NOT NULL,
    delivery_id  text        NOT NULL,
    attempt      integer     NOT NULL,
    attempted_at timestamptz NOT NULL DEFAULT now(),
    status_code  integer     NOT NULL DEFAULT 0,        -- 0: no HTTP response
    latency_ms   integer,
    error        text,                                  -- transport error, never a secret
    PRIMARY KEY (client_id, delivery_id, attempt),
    FOREIGN KEY (client_id, delivery_id) REFERENCES deliveries (client_id, id) ON DELETE CASCADE
);

-- NOTIFY is only a wake-up for bds-deliver; its poll finds everything.
CREATE FUNCTION deliveries_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bds_outbox', 'deliveries');
    RETURN NULL;
END $$;
CREATE TRIGGER deliveries_notify AFTER INSERT ON deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION deliveries_notify();
