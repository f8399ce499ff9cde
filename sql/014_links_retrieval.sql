-- Links, what retrieval and the API keep beside sql/011: how many
-- retrievals succeeded (the sandbox connector's "next refresh" fixtures
-- answer by it), and an index for the sandbox replay record a revoke drops.

ALTER TABLE links ADD COLUMN refresh_count integer NOT NULL DEFAULT 0;

-- DELETE /v1/links/{id} drops the sandbox account link's replay record: the
-- stored 201 names the link.
CREATE INDEX idempotency_keys_link ON idempotency_keys ((response ->> 'link_id'))
    WHERE response ? 'link_id';
