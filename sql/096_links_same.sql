-- Linking the same biller login again (lib/links/links_same.h): a link
-- keeps the keyed hash of its login (links_username_hash, as the connect
-- failures do), so the same end user linking the same biller with the same
-- login finds the ACTIVE link made the first time. Links made before this
-- have none and are never found.
ALTER TABLE links ADD COLUMN login_hash bytea;
CREATE INDEX links_same ON links (client_id, client_user_id, biller_id, login_hash)
    WHERE status = 'ACTIVE' AND login_hash IS NOT NULL;
