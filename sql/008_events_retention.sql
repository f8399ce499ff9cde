-- bdsctl jobs deletes events older than 30 days: find them by index, not by
-- scanning every client's events.
CREATE INDEX events_created ON events (created_at);
