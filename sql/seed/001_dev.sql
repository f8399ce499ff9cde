-- Development data, loaded by `bdsctl seed`. Every statement is idempotent.

-- The legal registry: sign-up needs current terms and privacy documents.
INSERT INTO legal_documents (kind, version, effective_date) VALUES
    ('terms', '2026-01', '2026-01-01'),
    ('privacy', '2026-01', '2026-01-01')
ON CONFLICT DO NOTHING;
