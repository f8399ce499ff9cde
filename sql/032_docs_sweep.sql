-- The document store's sweep (bills_docs_sweep, `bdsctl jobs` once a day)
-- asks, for each stored file, whether any row names its hash. These
-- indexes answer that without walking the tables. Partial: most rows of
-- portal_unstructured, and bills without a document, hold NULL.

CREATE INDEX bills_statement_sha ON bills (statement_sha256)
    WHERE statement_sha256 IS NOT NULL;
CREATE INDEX portal_unstructured_sha ON portal_unstructured (document_sha256)
    WHERE document_sha256 IS NOT NULL;
