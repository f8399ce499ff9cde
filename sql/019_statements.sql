-- Statement documents: the SHA-256 of a bill's document in
-- the content-addressed store, <data_dir>/statements/<aa>/<sha256>.pdf.
-- Set by bds-jobs after the file is durable; NULL: no document stored.
-- Not part of the entity: has_statement already says a document exists,
-- and recording the hash moves neither the bill's seq nor updated_at.
ALTER TABLE bills ADD COLUMN statement_sha256 text
    CHECK (statement_sha256 ~ '^[0-9a-f]{64}$');
