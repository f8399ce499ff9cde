-- The per-biller session limit, seen by the claim (docs/DECISIONS.md
-- "Per-biller limit"). A retrieval or connect job of a portal biller carries
-- the biller's id in slot_key, set here when the job is queued, so the claim
-- can pass over the jobs of a biller that already has biller_max_sessions
-- jobs running instead of claiming them only to defer them. The slot itself
-- is still taken in the job's transaction (pg_try_advisory_xact_lock): the
-- claim only keeps workers from spinning on a full biller.

ALTER TABLE jobs ADD COLUMN slot_key text;

-- The claim's count of running jobs per biller.
CREATE INDEX jobs_slot_running ON jobs (slot_key)
    WHERE status = 'running' AND slot_key IS NOT NULL;

-- The biller whose session a job of this kind and subject takes; NULL for
-- other kinds and for sandbox billers, which take no slot.
CREATE FUNCTION jobs_slot_of(kind text, client text, subject text) RETURNS text
LANGUAGE sql STABLE AS $$
    SELECT CASE kind
        WHEN 'retrieval' THEN
            (SELECT l.biller_id FROM links l JOIN billers b ON b.id = l.biller_id
              WHERE l.id = subject AND b.connector <> 'sandbox')
        WHEN 'connect' THEN
            (SELECT s.biller_id FROM link_sessions s JOIN billers b ON b.id = s.biller_id
              WHERE s.client_id = client AND s.id = subject AND b.connector <> 'sandbox')
    END
$$;

CREATE FUNCTION jobs_slot_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.slot_key := jobs_slot_of(NEW.kind, NEW.client_id, NEW.subject_id);
    RETURN NEW;
END $$;
CREATE TRIGGER jobs_slot_key BEFORE INSERT ON jobs
    FOR EACH ROW WHEN (NEW.kind IN ('retrieval', 'connect'))
    EXECUTE FUNCTION jobs_slot_key();

-- Jobs queued before this migration.
UPDATE jobs SET slot_key = jobs_slot_of(kind, client_id, subject_id)
 WHERE kind IN ('retrieval', 'connect') AND status IN ('pending', 'running');
