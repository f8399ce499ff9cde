-- Development data, loaded by `bdsctl seed`. Every statement is idempotent.
-- Modules add their fixtures here (legal documents, sandbox billers...).
SELECT 1;
