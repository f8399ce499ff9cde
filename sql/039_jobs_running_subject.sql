-- The jobs runner keeps no transaction open while a job talks to a biller
-- (lib/jobs/jobs_loop.c), so no row lock serialises two runs of one
-- subject any more: the claim passes over a job whose kind and subject
-- already run under a live lease. This index answers that question.
CREATE INDEX jobs_running_subject ON jobs (kind, subject_id) WHERE status = 'running';
