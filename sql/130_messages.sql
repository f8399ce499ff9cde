-- Customer messages (SPEC "Customer message"; lib/messages/): what a
-- client sends its end users on a biller's behalf, the client's
-- suppression list and each end user's consents. docs/messages.md says
-- how a send is decided.

-- A message: accepted (customer.message.created) or suppressed (stored
-- the same, no event). A complaint is written once on its message.
CREATE TABLE customer_messages (
    client_id          text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                 uuid        NOT NULL,                 -- the bare UUID the spec names
    environment        text        NOT NULL
                                   CHECK (environment IN ('sandbox', 'development', 'production')),
    customer_user_aid  text        NOT NULL,
    biller_id          text        NOT NULL,
    category           text        NOT NULL CHECK (category IN ('marketing', 'account_update')),
    subject            text        NOT NULL,
    body               text        NOT NULL,
    metadata           json,
    delivery_status    text        NOT NULL CHECK (delivery_status IN ('accepted', 'suppressed')),
    suppression_reason text        CHECK (suppression_reason IN ('suppressed',
                                   'no_marketing_consent', 'no_account_update_consent')),
    complaint_reason   text,
    complained_at      timestamptz,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    CHECK ((delivery_status = 'suppressed') = (suppression_reason IS NOT NULL)),
    CHECK ((complaint_reason IS NULL) = (complained_at IS NULL))
);
CREATE UNIQUE INDEX customer_messages_by_id ON customer_messages (id);
-- the list, newest first, and the daily count of accepted ones
CREATE INDEX customer_messages_list ON customer_messages
    (client_id, environment, created_at, id);
-- the list of one end user
CREATE INDEX customer_messages_user ON customer_messages
    (client_id, environment, customer_user_aid, created_at, id);

-- The client's suppression list: an end user on it gets no message.
CREATE TABLE customer_suppressions (
    client_id          text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    environment        text        NOT NULL
                                   CHECK (environment IN ('sandbox', 'development', 'production')),
    customer_user_aid  text        NOT NULL,
    reason             text        NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    -- the user before the environment: a lookup of one user names both
    -- columns, the list's index only the client (plan-proof: the generic
    -- plan of a lookup cannot take the list's index)
    PRIMARY KEY (client_id, customer_user_aid, environment)
);
CREATE INDEX customer_suppressions_list ON customer_suppressions
    (client_id, environment, created_at, customer_user_aid);

-- An end user's consents; no row is the defaults (marketing opt-in:
-- false; account updates: true).
CREATE TABLE customer_consents (
    client_id          text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    environment        text        NOT NULL
                                   CHECK (environment IN ('sandbox', 'development', 'production')),
    customer_user_aid  text        NOT NULL,
    marketing          boolean     NOT NULL DEFAULT false,
    account_update     boolean     NOT NULL DEFAULT true,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, customer_user_aid, environment)
);

-- A message as the API shows it.
CREATE FUNCTION customer_message_json(m customer_messages) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'message_id', m.id,
        'object', 'customer_message',
        'delivery_status', m.delivery_status,
        'suppression_reason', m.suppression_reason,
        'client_id', m.client_id,
        'customer_user_aid', m.customer_user_aid,
        'biller_id', m.biller_id,
        'category', m.category,
        'subject', m.subject,
        'body', m.body,
        'metadata', m.metadata,
        'created_at', bds_iso(m.created_at))
$$;

-- A suppression as the API shows it.
CREATE FUNCTION customer_suppression_json(s customer_suppressions) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'object', 'customer_suppression',
        'customer_user_aid', s.customer_user_aid,
        'reason', s.reason,
        'created_at', bds_iso(s.created_at))
$$;

-- Accepted messages of a client per UTC day in [day_from, day_to], of one
-- environment (NULL: each): metering's messages_sent, read from the rows.
CREATE FUNCTION customer_messages_sent(client text, env text, day_from date, day_to date)
RETURNS TABLE (day date, environment text, value bigint)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT (m.created_at AT TIME ZONE 'UTC')::date, m.environment, count(*)
    FROM customer_messages m
    WHERE m.client_id = client
    AND (env IS NULL OR m.environment = env)
    AND m.created_at >= day_from::timestamp AT TIME ZONE 'UTC'
    AND m.created_at < (day_to + 1)::timestamp AT TIME ZONE 'UTC'
    AND m.delivery_status = 'accepted'
    GROUP BY 1, 2
$$;
