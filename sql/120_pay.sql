-- Pay (SPEC "Pay", DOMAIN "Pay"; lib/pay/): pay tokens, payment methods
-- (cards, the number sealed) and payment attempts. docs/pay.md says what
-- is stored and how it is sealed.

-- A pay token: what a client's server mints for one end user (and
-- optionally one bill, amount and payment method); the hosted card page
-- and the pay routes take it as a bearer. The secret is stored as its
-- SHA-256 only.
CREATE TABLE pay_tokens (
    client_id         text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                text        NOT NULL,                  -- pt_<uuidv7>
    environment       text        NOT NULL
                                  CHECK (environment IN ('sandbox', 'development', 'production')),
    token_sha256      bytea       NOT NULL,
    client_user_id    text        NOT NULL,
    bill_id           text,
    amount_minor      bigint      CHECK (amount_minor > 0),
    currency          text        CHECK (currency ~ '^[A-Z]{3}$'),
    payment_method_id text,
    metadata_json     text,
    expires_at        timestamptz NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    CHECK ((amount_minor IS NULL) = (currency IS NULL))
);
CREATE UNIQUE INDEX pay_tokens_by_id ON pay_tokens (id);
CREATE UNIQUE INDEX pay_tokens_secret ON pay_tokens (token_sha256);
CREATE INDEX pay_tokens_expiry ON pay_tokens (expires_at);

-- A card of a client's end user. The number is sealed (pan_sealed, under
-- the pay key ring's key pan_key_id, the row's id bound as associated
-- data) and fingerprinted with a keyed BLAKE2b (the same card of the same
-- user is the same row); only its brand, last four digits and expiry are
-- readable. The CVV is never stored. A deleted method keeps its row for
-- the attempts that name it, without the number.
CREATE TABLE payment_methods (
    client_id       text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id              text        NOT NULL,                    -- pm_<uuidv7>
    environment     text        NOT NULL
                                CHECK (environment IN ('sandbox', 'development', 'production')),
    client_user_id  text        NOT NULL,
    fingerprint     bytea       NOT NULL,
    brand           text        NOT NULL,
    last4           text        NOT NULL CHECK (last4 ~ '^[0-9]{4}$'),
    exp_month       integer     NOT NULL CHECK (exp_month BETWEEN 1 AND 12),
    exp_year        integer     NOT NULL CHECK (exp_year BETWEEN 1000 AND 9999),
    bucket          text,
    pan_sealed      bytea,
    pan_key_id      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    deleted_at      timestamptz,
    PRIMARY KEY (client_id, id),
    CHECK ((deleted_at IS NULL) = (pan_sealed IS NOT NULL)),
    CHECK ((pan_sealed IS NULL) = (pan_key_id IS NULL))
);
CREATE UNIQUE INDEX payment_methods_by_id ON payment_methods (id);
-- one live method per card of a client user
CREATE UNIQUE INDEX payment_methods_card ON payment_methods
    (client_id, environment, client_user_id, fingerprint) WHERE deleted_at IS NULL;
CREATE INDEX payment_methods_user ON payment_methods
    (client_id, environment, client_user_id, created_at, id) WHERE deleted_at IS NULL;
-- re-sealing under a new key walks the rows not under it
CREATE INDEX payment_methods_key ON payment_methods (pan_key_id, id) WHERE pan_sealed IS NOT NULL;

-- A payment attempt: SCHEDULED, then the processor's outcome.
CREATE TABLE payment_attempts (
    client_id           text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                  text        NOT NULL,                -- pay_<uuidv7>
    environment         text        NOT NULL
                                    CHECK (environment IN ('sandbox', 'development', 'production')),
    bill_id             text        NOT NULL,
    payment_method_id   text        NOT NULL,
    client_user_id      text        NOT NULL,
    amount_minor        bigint      NOT NULL CHECK (amount_minor > 0),
    currency            text        NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    -- what was owed when it was scheduled: a smaller amount pays it partly
    owed_minor          bigint      NOT NULL,
    status              text        NOT NULL DEFAULT 'SCHEDULED'
                                    CHECK (status IN ('SCHEDULED', 'SUCCEEDED', 'FAILED', 'ESCALATED')),
    confirmation_number text,
    failure_code        text,
    escalation_reason   text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    completed_at        timestamptz,
    PRIMARY KEY (client_id, id),
    CHECK ((status = 'SUCCEEDED') = (confirmation_number IS NOT NULL)),
    CHECK ((status = 'FAILED') = (failure_code IS NOT NULL)),
    CHECK ((status = 'ESCALATED') = (escalation_reason IS NOT NULL))
);
CREATE UNIQUE INDEX payment_attempts_by_id ON payment_attempts (id);
-- one attempt in flight per bill
CREATE UNIQUE INDEX payment_attempts_open ON payment_attempts (client_id, bill_id)
    WHERE status = 'SCHEDULED';

-- The attempt as the API shows it (SPEC "Payment attempt").
CREATE FUNCTION payment_attempt_json(a payment_attempts) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', a.id,
        'object', 'payment_attempt',
        'payment_attempt_id', a.id,
        'bill_id', a.bill_id,
        'payment_method_id', a.payment_method_id,
        'user_id', a.client_user_id,
        'status', a.status,
        'amount', bds_money_major(a.amount_minor, a.currency)::text,
        'currency', a.currency,
        'confirmation_number', a.confirmation_number,
        'failure_code', a.failure_code,
        'escalation_reason', a.escalation_reason,
        'created_at', bds_iso(a.created_at),
        'updated_at', bds_iso(a.updated_at))
$$;

-- A payment method as the API shows it (never the number).
CREATE FUNCTION payment_method_json(m payment_methods) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', m.id,
        'object', 'payment_method',
        'payment_method_id', m.id,
        'client_user_id', m.client_user_id,
        'bucket', m.bucket,
        'brand', m.brand,
        'last4', m.last4,
        'exp_month', m.exp_month,
        'exp_year', m.exp_year,
        'created_at', bds_iso(m.created_at))
$$;
