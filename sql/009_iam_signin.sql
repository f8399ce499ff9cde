-- Sign-in throttling per (account, client address).
--
-- 'pair' rows (key: e-mail, a space, address) lock one address out of one
-- account with a progressive delay; 'addr' rows keep the per-address
-- ceiling; 'account' rows only count failures account-wide and, past a
-- much higher ceiling, raise an alert (alerted_at) instead of locking the
-- owner out.
ALTER TABLE auth_throttle DROP CONSTRAINT auth_throttle_scope_check;
ALTER TABLE auth_throttle ADD CONSTRAINT auth_throttle_scope_check
    CHECK (scope IN ('account', 'addr', 'pair'));
ALTER TABLE auth_throttle ADD COLUMN alerted_at timestamptz;

-- The operator's view: accounts whose failures passed the account-wide
-- ceiling, newest alert first (bdsctl reads it through iam_signin_alerts).
CREATE VIEW signin_alerts AS
    SELECT key AS email, failures, window_start, alerted_at
    FROM auth_throttle
    WHERE scope = 'account' AND alerted_at IS NOT NULL;
