-- How many times update mode repaired a link (links_repair). The sandbox
-- fixtures that fail "on the next refresh" (user_expiring,
-- user_rejects_later) fail only until the link is repaired, so a client can
-- rehearse the whole round: disconnected, repaired, retrieving again.

ALTER TABLE links ADD COLUMN repairs int NOT NULL DEFAULT 0;
