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
    -- json, not jsonb: written and answered in the rules' order of keys
    evidence         json        NOT NULL DEFAULT '{}',
    proposed_actions json        NOT NULL DEFAULT '[]',
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
-- the engine's read of a link's insights that it may still change, by the
-- link's key alone (the tenant a row check: docs/DECISIONS.md "Plan-proof
-- statements")
CREATE INDEX insights_link_live ON insights (link_id) WHERE status IN ('OPEN', 'SNOOZED');
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

-- Each client user's first bill of each biller as the engine first saw it
-- (new_biller), found by its key alone.
CREATE TABLE insight_billers (
    client_id     text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    environment   text        NOT NULL,
    user_aid      text        NOT NULL,
    biller_id     text        NOT NULL,
    first_bill_id text        NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, environment, user_aid, biller_id)
);

-- The engine reads an account's newest bills by their day, by the link's key
-- alone (docs/DECISIONS.md "Plan-proof statements": the tenant is a row
-- check, so no index of the client's bills can be taken for it).
CREATE INDEX bills_account_day ON bills (link_id, account_id,
    (coalesce(statement_date, due_date)) DESC, id DESC)
    WHERE deleted_at IS NULL AND account_id IS NOT NULL;

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
