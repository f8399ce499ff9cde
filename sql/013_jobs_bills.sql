-- The jobs runner's queue (bds-jobs) and the bill store (DOMAIN.md
-- "Connectors and retrieval", "Bills and sync").

-- One table for every bds-jobs kind (retrieval, connect, later imports,
-- insights, expiry). The leased queue of lib/core/queue.c claims rows with
-- FOR UPDATE SKIP LOCKED: a claim sets status 'running' with a lease; a
-- running row whose lease ended is claimable again (its runner died). A
-- second enqueue of the same pending work (kind, subject) is a no-op; work
-- queued while the same subject runs is a new pending row.
CREATE TABLE jobs (
    id              text        PRIMARY KEY,                  -- job_<uuidv7>
    kind            text        NOT NULL,
    client_id       text        REFERENCES clients (id) ON DELETE CASCADE, -- NULL: global kinds
    environment     text        CHECK (environment IN ('sandbox', 'development', 'production')),
    subject_id      text        NOT NULL DEFAULT '',
    payload         jsonb       NOT NULL DEFAULT '{}',
    status          text        NOT NULL DEFAULT 'pending'
                                CHECK (status IN ('pending', 'running', 'done', 'dead')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    lease_until     timestamptz,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX jobs_pending_once ON jobs (kind, subject_id) WHERE status = 'pending';
-- the claim: due pending rows, and running rows whose lease ended
CREATE INDEX jobs_due ON jobs (next_attempt_at) WHERE status = 'pending';
CREATE INDEX jobs_leased ON jobs (lease_until) WHERE status = 'running';
CREATE INDEX jobs_client ON jobs (client_id, kind, subject_id);

-- NOTIFY is only a wake-up for bds-jobs; its poll finds everything.
CREATE FUNCTION jobs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('bds_jobs', 'jobs');
    RETURN NULL;
END $$;
CREATE TRIGGER jobs_notify AFTER INSERT ON jobs
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_notify();

-- The per-link change sequence of the bills sync: a bill write bumps it with
-- INSERT ... ON CONFLICT DO UPDATE ... RETURNING, whose row lock serialises
-- one link's writers, so commit order equals sequence order.
CREATE TABLE bill_seq (
    client_id text   NOT NULL,
    link_id   text   NOT NULL,
    last_seq  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (client_id, link_id)
);

-- Bills (DOMAIN.md "Bills and sync", the Bill entity). Money in integer minor
-- units with its ISO 4217 currency. No hard deletes: deleted_at is a
-- tombstone with its seq. link_id is NULL for imported bills without a link.
CREATE TABLE bills (
    client_id               text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                      text        NOT NULL,              -- bill_<uuidv7>
    environment             text        NOT NULL
                                        CHECK (environment IN ('sandbox', 'development', 'production')),
    link_id                 text,
    account_id              text,
    client_user_id          text        NOT NULL,
    biller_id               text        NOT NULL REFERENCES billers (id),
    biller_name             text        NOT NULL DEFAULT '',
    statement_ref           text        NOT NULL,              -- the biller's statement id
    status                  text        NOT NULL
                                        CHECK (status IN ('PENDING', 'PAID', 'PARTIALLY_PAID')),
    currency                text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    total_minor             bigint      NOT NULL,
    amount_due_minor        bigint      NOT NULL,
    previous_balance_minor  bigint,
    due_date                date,
    statement_date          date,
    period_start            date,
    period_end              date,
    bill_number             text,
    account_number_mask     text,
    line_items              jsonb       NOT NULL DEFAULT '[]',
    usage                   jsonb       NOT NULL DEFAULT '[]',
    paid_at                 timestamptz,
    paid_reason             text        CHECK (paid_reason IN ('portal_balance_zero',
                                        'portal_payment_observed', 'client_reported',
                                        'pay_succeeded')),
    match_status            text,
    matched_payment_ref     text,
    has_statement           boolean     NOT NULL DEFAULT false,
    source                  text        NOT NULL DEFAULT 'connector'
                                        CHECK (source IN ('connector', 'import', 'sandbox')),
    import_id               text,
    created_seq             bigint      NOT NULL,
    changed_seq             bigint      NOT NULL,
    deleted_at              timestamptz,
    deleted_seq             bigint,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    UNIQUE (client_id, link_id, statement_ref)
);
CREATE UNIQUE INDEX bills_by_id ON bills (id);
CREATE INDEX bills_list ON bills (client_id, environment, created_at, id);
CREATE INDEX bills_user ON bills (client_id, environment, client_user_id);
CREATE INDEX bills_sync ON bills (client_id, link_id, changed_seq);
CREATE INDEX bills_due ON bills (client_id, environment, due_date);

-- Payments seen on the biller portal; id derived from the biller's payment
-- reference (stable across retries).
CREATE TABLE observed_payments (
    client_id    text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id           text        NOT NULL,                     -- obp_...
    environment  text        NOT NULL
                             CHECK (environment IN ('sandbox', 'development', 'production')),
    link_id      text        NOT NULL,
    account_id   text,
    payment_ref  text        NOT NULL,
    statement_ref text,
    currency     text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    amount_minor bigint      NOT NULL,
    paid_at      timestamptz NOT NULL,
    bill_id      text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    UNIQUE (client_id, link_id, payment_ref)
);
