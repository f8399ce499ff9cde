-- Links, what scheduled retrieval keeps: how long the link has
-- been failing (transient portal failures; CONNECTION_DEGRADED once that
-- lasts longer than degraded_after_s) and how many refreshes in a row
-- failed (the backoff before the next one), and the operator's corrections
-- of a failure reason (link.failure_reason_corrected), numbered per link and
-- family from 1.

ALTER TABLE links ADD COLUMN failing_since timestamptz;
ALTER TABLE links ADD COLUMN refresh_failures integer NOT NULL DEFAULT 0;

CREATE TABLE link_reason_corrections (
    client_id          text        NOT NULL,
    link_id            text        NOT NULL,
    target_family      text        NOT NULL
                       CHECK (target_family IN ('credentials_rejected_reason', 'reaped_reason')),
    correction_version integer     NOT NULL CHECK (correction_version >= 1),
    corrected_reason   text        NOT NULL,
    original_reason    text,
    corrected_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (client_id, link_id, target_family, correction_version),
    FOREIGN KEY (client_id, link_id) REFERENCES links (client_id, id) ON DELETE CASCADE
);
