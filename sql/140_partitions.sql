-- The event outbox and the webhook deliveries, partitioned by month with
-- pg_partman (native range partitions on their creation time), so that
-- retention drops a whole month instead of deleting rows (docs/DECISIONS.md
-- "Partitions with pg_partman"). bdsctl jobs runs partman.run_maintenance():
-- it makes the months ahead (premake) and drops the expired ones.
--
-- Keys include the partition key (PostgreSQL's rule for a partitioned
-- table): (client_id, id, created_at). An id is a UUIDv7, its time and a
-- random tail: unique in practice, and a lookup by (client_id, id) is an
-- index probe of the key's prefix in each of the few months kept.
--
-- Foreign keys between these tables would need the referenced key with
-- its time, so they go: the cascades they gave (an event's deliveries, a
-- delivery's attempts) are row triggers. A dropped month fires none; the
-- deliveries and attempts have their own retention of the same length.
-- Every row of an existing database is kept: the old tables are renamed,
-- their rows moved into the partitions, then dropped.

CREATE SCHEMA IF NOT EXISTS partman;
CREATE EXTENSION IF NOT EXISTS pg_partman SCHEMA partman;

ALTER TABLE delivery_attempts RENAME TO delivery_attempts_unpartitioned;
ALTER TABLE deliveries RENAME TO deliveries_unpartitioned;
ALTER TABLE events RENAME TO events_unpartitioned;

CREATE TABLE events (LIKE events_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (created_at);
CREATE TABLE deliveries (LIKE deliveries_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (created_at);
CREATE TABLE delivery_attempts
    (LIKE delivery_attempts_unpartitioned INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
    PARTITION BY RANGE (attempted_at);

-- Months from the oldest row kept (or this month) to 4 ahead, and a
-- default partition for what falls outside them.
DO $$
DECLARE
    t record;
    oldest timestamptz;
BEGIN
    FOR t IN SELECT * FROM (VALUES ('events', 'created_at'), ('deliveries', 'created_at'),
                                   ('delivery_attempts', 'attempted_at')) v(name, col) LOOP
        EXECUTE format('SELECT least(min(%I), now()) FROM %I', t.col, t.name || '_unpartitioned')
            INTO oldest;
        PERFORM partman.create_parent(p_parent_table := 'public.' || t.name,
            p_control := t.col, p_type := 'native', p_interval := '1 month',
            p_premake := 4, p_start_partition := date_trunc('month', oldest)::text);
    END LOOP;
END $$;

-- Retention: a month goes when all of it is older than 30 days (the feed
-- reads only the last 30 days, lib/events/events.h EVENTS_KEPT_SQL).
-- infinite_time_partitions: months ahead are made even while no rows come.
-- ignore_default_data: a row far off in the default partition (a clock
-- gone wrong) must not make maintenance try, and fail, to make its month.
UPDATE partman.part_config
   SET retention = '30 days', retention_keep_table = false, retention_keep_index = false,
       infinite_time_partitions = true, ignore_default_data = true
 WHERE parent_table IN ('public.events', 'public.deliveries', 'public.delivery_attempts');

INSERT INTO events SELECT * FROM events_unpartitioned;
INSERT INTO deliveries SELECT * FROM deliveries_unpartitioned;
INSERT INTO delivery_attempts SELECT * FROM delivery_attempts_unpartitioned;

DROP TABLE delivery_attempts_unpartitioned, deliveries_unpartitioned, events_unpartitioned;

ALTER TABLE events ADD PRIMARY KEY (client_id, id, created_at),
    ADD FOREIGN KEY (client_id) REFERENCES clients (id) ON DELETE CASCADE;
CREATE INDEX events_client_created ON events (client_id, created_at);

ALTER TABLE deliveries ADD PRIMARY KEY (client_id, id, created_at),
    ADD FOREIGN KEY (client_id, webhook_id) REFERENCES webhooks (client_id, id) ON DELETE CASCADE;
CREATE INDEX deliveries_due ON deliveries (next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX deliveries_event ON deliveries (client_id, event_id);
CREATE INDEX deliveries_webhook ON deliveries (client_id, webhook_id);

ALTER TABLE delivery_attempts ADD PRIMARY KEY (client_id, delivery_id, attempt, attempted_at);

-- The cascades the foreign keys gave, as row triggers: TG_ARGV is the
-- dependent table, its column holding this row's id, and this table. An
-- UPDATE of the time that moves a row to another month is a DELETE and an
-- INSERT to PostgreSQL: what still has its row keeps its dependents.
CREATE FUNCTION partitions_cascade() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('DELETE FROM %I WHERE client_id = $1 AND %I = $2'
                   ' AND NOT EXISTS (SELECT 1 FROM %I WHERE client_id = $1 AND id = $2)',
                   TG_ARGV[0], TG_ARGV[1], TG_ARGV[2])
        USING OLD.client_id, OLD.id;
    RETURN NULL;
END $$;
CREATE TRIGGER events_cascade AFTER DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION partitions_cascade('deliveries', 'event_id', 'events');
CREATE TRIGGER deliveries_cascade AFTER DELETE ON deliveries
    FOR EACH ROW EXECUTE FUNCTION partitions_cascade('delivery_attempts', 'delivery_id',
                                                     'deliveries');

-- NOTIFY is only a wake-up for bds-deliver (sql/007_deliveries.sql).
CREATE TRIGGER deliveries_notify AFTER INSERT ON deliveries
    FOR EACH STATEMENT EXECUTE FUNCTION deliveries_notify();
