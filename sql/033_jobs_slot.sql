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

CREATE FUNCTION jobs_slot_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.kind = 'retrieval' THEN
        NEW.slot_key := (SELECT l.biller_id FROM links l JOIN billers b ON b.id = l.biller_id
                          WHERE l.id = NEW.subject_id AND b.connector <> 'sandbox');
    ELSIF NEW.kind = 'connect' THEN
        NEW.slot_key := (SELECT s.biller_id FROM link_sessions s JOIN billers b ON b.id = s.biller_id
                          WHERE s.client_id = NEW.client_id AND s.id = NEW.subject_id
                            AND b.connector <> 'sandbox');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER jobs_slot_key BEFORE INSERT ON jobs
    FOR EACH ROW WHEN (NEW.kind IN ('retrieval', 'connect'))
    EXECUTE FUNCTION jobs_slot_key();

-- Jobs queued before this migration.
UPDATE jobs j SET slot_key = l.biller_id
  FROM links l JOIN billers b ON b.id = l.biller_id
 WHERE j.kind = 'retrieval' AND j.status IN ('pending', 'running')
   AND l.id = j.subject_id AND b.connector <> 'sandbox';
UPDATE jobs j SET slot_key = s.biller_id
  FROM link_sessions s JOIN billers b ON b.id = s.biller_id
 WHERE j.kind = 'connect' AND j.status IN ('pending', 'running')
   AND s.client_id = j.client_id AND s.id = j.subject_id AND b.connector <> 'sandbox';
