-- Insights (SPEC "Insight", DOMAIN "Insights"; lib/insights/): what the rules
-- of bds-jobs found on a link's bills, with its lifecycle.
CREATE TABLE insights (
    client_id        text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id               text        NOT NULL,                  -- ins_<uuidv7>
    environment      text        NOT NULL
                                 CHECK (environment IN ('sandbox', 'development', 'production')),
    user_aid         text        NOT NULL,                  -- the client_user_id
    link_id          text        NOT NULL,
    account_id       text        NOT NULL,
    biller_id        text,
    bill_id          text,
    -- the rules' types, and any other a later engine writes: stored and
    -- answered as they are
    type             text        NOT NULL CHECK (type ~ '^[a-z][a-z0-9_.]{0,63}$'),
    -- the rule's key of what it is about ("bill:<id>", "item:<bill>:<line>")
    subject          text        NOT NULL,
    severity         text        NOT NULL CHECK (severity IN ('low', 'medium', 'high')),
    status           text        NOT NULL DEFAULT 'OPEN'
                                 CHECK (status IN ('OPEN', 'SNOOZED', 'DISMISSED', 'RESOLVED')),
    -- who resolved it: the engine (the condition went away) or the client
    resolved_by      text        CHECK (resolved_by IN ('engine', 'client')),
    evidence         jsonb       NOT NULL DEFAULT '{}',
    proposed_actions jsonb       NOT NULL DEFAULT '[]',
    reasoning        text        NOT NULL DEFAULT '',
    -- sha256 of what the engine wrote (severity, reasoning, evidence,
    -- actions): an evaluation that finds the same writes nothing
    fingerprint      text        NOT NULL DEFAULT '',
    -- counts the insight's changes from 1: an event older than one seen is stale
    lifecycle_version integer    NOT NULL DEFAULT 1,
    snoozed_until    timestamptz,
    resolved_at      timestamptz,
    dismissed_at     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    CHECK ((status = 'SNOOZED') = (snoozed_until IS NOT NULL)),
    CHECK (status <> 'RESOLVED' OR resolved_at IS NOT NULL)
);
CREATE UNIQUE INDEX insights_by_id ON insights (id);
-- one OPEN (or SNOOZED) insight per (type, subject) of a client user
CREATE UNIQUE INDEX insights_live ON insights (client_id, environment, user_aid, type, subject)
    WHERE status IN ('OPEN', 'SNOOZED');
-- a subject the user dismissed, or resolved themselves, is not raised again
CREATE INDEX insights_settled ON insights (client_id, environment, user_aid, type, subject)
    WHERE status = 'DISMISSED' OR resolved_by = 'client';
-- the list: newest first within a link's account
CREATE INDEX insights_list ON insights (client_id, environment, link_id, account_id, created_at, id);
-- the engine's read of a link's insights that it may still change
CREATE INDEX insights_link_live ON insights (client_id, link_id) WHERE status IN ('OPEN', 'SNOOZED');
CREATE INDEX insights_snoozed ON insights (snoozed_until) WHERE status = 'SNOOZED';

-- When each link was last evaluated: the row a run locks (one run of a link
-- at a time) and what the daily pass reads.
CREATE TABLE insight_runs (
    client_id     text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    link_id       text        NOT NULL,
    environment   text        NOT NULL,
    evaluated_at  timestamptz NOT NULL DEFAULT now(),
    queued_on     date,                 -- the UTC day the daily pass queued it
    PRIMARY KEY (client_id, link_id)
);
CREATE INDEX insight_runs_due ON insight_runs (evaluated_at);

-- The engine reads an account's newest bills by their day (the predicates
-- as below: only a statement naming the account can take it).
CREATE INDEX bills_account_day ON bills (client_id, link_id, account_id,
    (coalesce(statement_date, due_date)) DESC, id DESC)
    WHERE deleted_at IS NULL AND account_id IS NOT NULL;
-- ... and a client user's first bill of a biller (new_biller).
-- (biller_id IS NOT NULL: only a statement naming the biller can take it, so
-- no statement of a link's bills scans it whole on a small table)
CREATE INDEX bills_user_biller ON bills (client_id, environment, client_user_id, biller_id,
    (coalesce(statement_date, due_date)), created_at, id)
    WHERE deleted_at IS NULL AND biller_id IS NOT NULL;

-- The entity (SPEC "Insight"), in the order the spec lists its fields.
CREATE FUNCTION insights_json(i insights) RETURNS json
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT json_build_object(
        'id', i.id,
        'object', 'insight',
        'user_aid', i.user_aid,
        'account_link_id', i.link_id,
        'account_id', i.account_id,
        'biller_id', i.biller_id,
        'bill_id', i.bill_id,
        'type', i.type,
        'severity', i.severity,
        'status', i.status,
        'evidence', i.evidence,
        'proposed_actions', i.proposed_actions,
        'reasoning', i.reasoning,
        'lifecycle_version', i.lifecycle_version,
        'created_at', bds_iso(i.created_at),
        'updated_at', bds_iso(i.updated_at),
        'snoozed_until', bds_iso(i.snoozed_until),
        'resolved_at', bds_iso(i.resolved_at))
$$;
