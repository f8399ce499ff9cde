-- Bill imports (DOMAIN.md "Bill imports"; docs/DECISIONS.md "Bill imports"):
-- a document a client uploads for one of its users, or a PDF-only statement
-- a portal gave, extracted by bds-jobs into a draft, reviewed, and committed
-- to one bill.

CREATE TABLE bill_imports (
    client_id           text        NOT NULL REFERENCES clients (id) ON DELETE CASCADE,
    id                  text        NOT NULL,             -- bimp_<uuidv7>
    environment         text        NOT NULL
                                    CHECK (environment IN ('sandbox', 'development', 'production')),
    client_user_id      text        NOT NULL,
    -- upload: POST /v1/bill_imports; portal: a link's PDF-only statement
    source              text        NOT NULL DEFAULT 'upload'
                                    CHECK (source IN ('upload', 'portal')),
    biller_id           text        REFERENCES billers (id),
    link_id             text,                             -- source portal: the statement's
    account_id          text,                             -- link, account and ref
    statement_ref       text,
    file_name           text        NOT NULL,
    content_type        text        NOT NULL
                                    CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg')),
    size_bytes          bigint      NOT NULL CHECK (size_bytes BETWEEN 1 AND 20971520),
    status              text        NOT NULL DEFAULT 'AWAITING_UPLOAD'
                                    CHECK (status IN ('AWAITING_UPLOAD', 'PROCESSING', 'NEEDS_REVIEW',
                                           'READY_TO_COMMIT', 'POSSIBLE_DUPLICATE', 'REJECTED',
                                           'COMMITTED', 'EXPIRED', 'CANCELLED')),
    lifecycle_version   integer     NOT NULL DEFAULT 1,   -- every status move: +1
    draft_version       integer     NOT NULL DEFAULT 0,   -- every draft write: +1
    draft               jsonb       NOT NULL DEFAULT '{}',
    extraction          jsonb,                            -- bds-extract's facts: kind, pages, ms
    duplicate_of        text,                             -- bimp_… or bill_…
    rejection_reason    text,
    committed_bill_id   text,
    -- the document: received by nginx into <data_dir>/imports/ (upload_path),
    -- hashed by the extraction job
    upload_expires_at   timestamptz NOT NULL,
    uploaded_at         timestamptz,
    document_path       text,
    document_sha256     text        CHECK (document_sha256 ~ '^[0-9a-f]{64}$'),
    document_deleted_at timestamptz,
    expires_at          timestamptz NOT NULL,             -- uncommitted after it: EXPIRED
    committed_at        timestamptz,
    cancelled_at        timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, id),
    UNIQUE (id)
);
CREATE INDEX bill_imports_user ON bill_imports (client_id, environment, client_user_id, created_at);
-- duplicate detection: the same file for the same user
CREATE INDEX bill_imports_sha ON bill_imports (client_id, environment, client_user_id, document_sha256)
    WHERE document_sha256 IS NOT NULL;
-- the sweeps: uncommitted imports to expire, documents to delete
CREATE INDEX bill_imports_open ON bill_imports (expires_at)
    WHERE status NOT IN ('COMMITTED', 'EXPIRED', 'CANCELLED', 'REJECTED');
CREATE INDEX bill_imports_doc_gone ON bill_imports (updated_at)
    WHERE document_path IS NOT NULL AND document_deleted_at IS NULL
      AND status IN ('EXPIRED', 'CANCELLED');
-- one import per portal statement
CREATE UNIQUE INDEX bill_imports_portal ON bill_imports (client_id, link_id, statement_ref)
    WHERE source = 'portal';

-- A bill from an import: the catalog may not know its payee (biller_id
-- NULL, biller_name the payee), and its document may be an image.
ALTER TABLE bills ALTER COLUMN biller_id DROP NOT NULL;
ALTER TABLE bills ADD COLUMN statement_type text NOT NULL DEFAULT 'application/pdf'
    CHECK (statement_type IN ('application/pdf', 'image/png', 'image/jpeg'));
