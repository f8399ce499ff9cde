-- A job remembers the request that queued it (an API request's id and its
-- Idempotency-Key, or an operator command's id), so the events the job
-- emits carry them as the envelope's request.id and
-- request.idempotency_key (SPEC.md "Envelope"): the bills of a sandbox
-- account link answer the POST that made it. NULL for a job a scheduler
-- sweep queued; its events then carry the job's own id.

ALTER TABLE jobs ADD COLUMN request_id text, ADD COLUMN idempotency_key text;
