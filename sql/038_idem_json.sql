-- A replay answers the stored response as it was first sent: json keeps the
-- text (member order included), where jsonb re-orders the members (a
-- client's metadata came back sorted). The link_id lookup of a revoke
-- (idem_forget) reads it with ->>, which json has too; its index, partial
-- on jsonb's `?`, becomes one on the member being there.

DROP INDEX idempotency_keys_link;
ALTER TABLE idempotency_keys ALTER COLUMN response TYPE json USING response::json;
CREATE INDEX idempotency_keys_link ON idempotency_keys ((response ->> 'link_id'))
    WHERE (response ->> 'link_id') IS NOT NULL;
