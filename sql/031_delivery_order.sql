-- Deliveries leave in the order they were made. SPEC.md promises no
-- order (a webhook is a hint to sync), but a client that gets the events
-- of one change in the order they happened has less to reconcile.
--
-- Every delivery made in one transaction has the same next_attempt_at
-- (now()), so the claim breaks the tie by id. Until now a delivery id's
-- time was whole milliseconds and the rest random: two events of one
-- transaction emitted within the same millisecond (a fast machine) left
-- in either order. The id now carries the microseconds within the
-- millisecond in its 12 rand_a bits (RFC 9562, 6.2 method 3), read from
-- one clock_timestamp(), so ids made by successive statements sort in the
-- order they were made. It is still a UUIDv7, still unique by its random
-- tail.

CREATE FUNCTION bds_delivery_id() RETURNS text LANGUAGE sql VOLATILE AS $$
    SELECT 'dlv_' || (lpad(to_hex(us / 1000), 12, '0') || '7'
        || lpad(to_hex(us % 1000), 3, '0')
        || substr(replace(gen_random_uuid()::text, '-', ''), 17))::uuid::text
      FROM (SELECT floor(extract(epoch FROM clock_timestamp()) * 1000000)::bigint AS us) t
$$;

DROP INDEX deliveries_due;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
